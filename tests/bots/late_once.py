"""Answers its first turn late: after move_ms plus a third of bank_ms (from hello's time),
which the bank covers; every later turn at once."""

import time

from _common import Msg, move, serve

delay_s = 0.0
late = True


def on_hello(hello: Msg) -> None:
    global delay_s
    clock = hello["time"]
    delay_s = (clock["move_ms"] + clock["bank_ms"] / 3) / 1000


def on_turn(turn: Msg) -> Msg:
    global late
    if late:
        late = False
        time.sleep(delay_s)
    return move(turn)


serve("late_once", on_turn, on_hello=on_hello)
