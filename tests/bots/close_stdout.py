"""Answers hello, then closes its stdout but stays alive reading stdin until its end."""

import os
import sys

from _common import ready

for raw in sys.stdin.buffer:
    if b'"hello"' in raw:
        ready("close_stdout")
        sys.stdout.flush()
        os.close(1)
        break
for _ in sys.stdin.buffer:
    pass
