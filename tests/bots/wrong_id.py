"""Sends a reply to a request that is not open (id + 1000) before each right reply."""

from _common import Msg, move, send, serve


def on_turn(turn: Msg) -> Msg:
    send({"type": "move", "id": turn["id"] + 1000, "index": 0})
    return move(turn)


serve("wrong_id", on_turn)
