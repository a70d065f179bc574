"""An ordinary bot (legal move 0) with a child process and a thread that never stop
computing: each counts as fast as it can, as a covert channel through CPU timing
would. The child's pid goes to stderr as `child PID`.
"""

from __future__ import annotations

import os
import sys
import threading

from _common import serve


def spin() -> None:
    count = 0
    while True:
        count += 1


pid = os.fork()
if pid == 0:
    spin()
sys.stderr.write(f"child {pid}\n")
sys.stderr.flush()
threading.Thread(target=spin, daemon=True).start()
serve("spinner")
