"""Answers every turn after a fixed delay: argv[1] seconds (hello and ping at once)."""

import sys
import time

from _common import Msg, move, serve

DELAY_S = float(sys.argv[1])


def on_turn(turn: Msg) -> Msg:
    time.sleep(DELAY_S)
    return move(turn)


serve("slow", on_turn)
