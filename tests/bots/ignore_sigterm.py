"""Ignores SIGTERM, plays legal move 0, and never exits: not on bye, not at end of input."""

import signal
import time

from _common import serve

signal.signal(signal.SIGTERM, signal.SIG_IGN)
serve("ignore_sigterm", exit_on_bye=False)
while True:
    time.sleep(3600)
