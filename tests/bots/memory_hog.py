"""Plays legal move 0, but on its first turn first allocates (and touches) argv[1]
megabytes (default 512), which fails under a smaller address-space limit."""

import sys

from _common import Msg, move, serve

MEGABYTES = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 512
hog: list[bytearray] = []


def on_turn(turn: Msg) -> Msg:
    if not hog:
        block = bytearray(MEGABYTES << 20)
        block[::4096] = b"x" * len(block[::4096])
        hog.append(block)
    return move(turn)


serve("memory_hog", on_turn)
