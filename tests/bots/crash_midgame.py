"""Plays legal move 0 for three turns, then exits with status 1 on the fourth.

With the argument `raise` it dies there of an uncaught exception instead, as a
buggy bot does: a Python traceback on stderr, whose last line says why.
"""

import sys

from _common import Msg, move, serve

TURNS = 3
count = 0


def on_turn(turn: Msg) -> Msg:
    global count
    count += 1
    if count > TURNS:
        if "raise" in sys.argv[1:]:
            raise RuntimeError(f"crash_midgame: a bug on turn {count}")
        sys.exit(1)
    return move(turn)


serve("crash_midgame", on_turn)
