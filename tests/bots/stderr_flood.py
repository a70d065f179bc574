"""Plays legal move 0, writing 2 MB to stderr at startup and 64 KB before every reply."""

import sys

from _common import Msg, move, serve

BLOCK = ("flood " * 1000 + "\n").encode()


def flood(size: int) -> None:
    for _ in range(size // len(BLOCK) + 1):
        sys.stderr.buffer.write(BLOCK)
    sys.stderr.buffer.flush()


def on_turn(turn: Msg) -> Msg:
    flood(64 * 1024)
    return move(turn)


flood(2 * 1024 * 1024)
serve("stderr_flood", on_turn)
