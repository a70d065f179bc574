"""Passes its hand to a partner at the same table through a FIFO made beforehand in a
folder both bots see. Role `a` writes the hand of its first turn into the FIFO and says
on stderr what it sent; role `b` reads the FIFO from the start of the game and says on
stderr what came through, as JSON lines. Both play legal move 0 throughout. A
read-only view of the folder does not close a FIFO: only refusing such a bot does.

    python fifo.py ROLE FIFO_PATH
"""

from __future__ import annotations

import json
import sys
import threading

from _common import Msg, move, serve

role, path = sys.argv[1:3]
turns = 0


def say(key: str, value: object) -> None:
    sys.stderr.write(json.dumps({key: value}) + "\n")
    sys.stderr.flush()


def give(hand: object) -> None:
    with open(path, "w") as pipe:  # waits for the partner to open its end
        pipe.write(json.dumps(hand) + "\n")
    say("sent", hand)


def take() -> None:
    with open(path) as pipe:  # waits for the partner to open its end
        line = pipe.readline()
    say("got", json.loads(line) if line else None)


reader = threading.Thread(target=take, daemon=True)


def on_hello(hello: Msg) -> None:
    if role == "b":
        reader.start()


def on_turn(turn: Msg) -> Msg:
    global turns
    turns += 1
    if role == "a" and turns == 1:
        threading.Thread(target=give, args=(turn["view"]["hand"],), daemon=True).start()
    if role == "b" and turns == 2:
        reader.join(2.0)  # the partner has had a turn by now: its hand is on its way
    return move(turn)


serve(f"fifo-{role}", on_turn, on_hello=on_hello)
