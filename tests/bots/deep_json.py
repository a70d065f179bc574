"""Answers a turn with a 4 KB line: a move whose unknown field nests 2000 arrays deep."""

import sys

from _common import Msg, serve

DEPTH = 2000


def on_turn(turn: Msg) -> None:
    pad = "[" * DEPTH + "]" * DEPTH
    sys.stdout.write(f'{{"type":"move","id":{turn["id"]},"index":0,"x_pad":{pad}}}\n')
    sys.stdout.flush()


serve("deep_json", on_turn)
