"""Answers hello, then on its first turn burns CPU forever without answering."""

from _common import Msg, serve


def on_turn(turn: Msg) -> None:
    n = 0
    while True:
        n += 1


serve("spin", on_turn)
