"""Writes ready at once without ever reading its input, then sleeps and never reads or
answers anything (not hello, not turns, not bye, not the end of its input)."""

import time

from _common import ready

ready("deaf")
while True:
    time.sleep(3600)
