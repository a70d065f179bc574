"""Plays legal move 0, with unsolicited valid messages before ready and around replies."""

from _common import Msg, move, send, serve


def on_hello(hello: Msg) -> None:
    send({"type": "pong", "nonce": 1})


def on_turn(turn: Msg) -> Msg:
    send({"type": "pong", "nonce": 1})
    send({"type": "ready", "name": "chatty again", "version": "2"})
    return move(turn)


serve("chatty", on_turn, on_hello=on_hello)
