"""Plays legal move 0 for three turns, then exits with status 1 on the fourth."""

import sys

from _common import Msg, move, serve

TURNS = 3
count = 0


def on_turn(turn: Msg) -> Msg:
    global count
    count += 1
    if count > TURNS:
        sys.exit(1)
    return move(turn)


serve("crash_midgame", on_turn)
