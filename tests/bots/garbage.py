"""Answers a turn request with a line that is not JSON."""

import sys

from _common import Msg, serve


def on_turn(turn: Msg) -> None:
    sys.stdout.write("move zero, please\n")
    sys.stdout.flush()


serve("garbage", on_turn)
