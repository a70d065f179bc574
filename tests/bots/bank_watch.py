"""Answers every turn after argv[1] seconds, and writes to stderr the bank each request
shows (`bank REQUEST BANK_MS`), so a test sees the clock as the bot does."""

import sys
import time

from _common import Msg, move, serve

DELAY_S = float(sys.argv[1])


def on_turn(turn: Msg) -> Msg:
    print(f"bank {turn['id']} {turn['clock']['bank_ms']}", file=sys.stderr, flush=True)
    time.sleep(DELAY_S)
    return move(turn)


serve("bank_watch", on_turn)
