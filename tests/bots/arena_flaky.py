"""Behaves while it is checked, misbehaves in the arena: it plays the first legal move
in check-bot's games (against "random0", ...) and in its validation game (against copies
of itself, named ENTRY@K#N), and answers an illegal index in any game against other
arena versions (ENTRY@K). The arena must suspend it for its fault rate."""

from _common import Msg, serve

arena_game = False


def on_game_start(message: Msg) -> None:
    global arena_game
    me = message["names"][message["seat"]]
    others = [n for k, n in enumerate(message["names"]) if k != message["seat"]]
    arena_game = "#" not in me and all("@" in n and "#" not in n for n in others)


def on_turn(turn: Msg) -> Msg:
    index = len(turn["legal"]) if arena_game else 0
    return {"type": "move", "id": turn["id"], "index": index}


serve("flaky", on_turn, on_game_start=on_game_start)
