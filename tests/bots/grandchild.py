"""Forks a grandchild that sleeps forever (keeping the stdio pipes open), then plays
legal move 0 and exits on bye."""

import os
import time

from _common import serve

if os.fork() == 0:
    while True:
        time.sleep(3600)

serve("grandchild")
