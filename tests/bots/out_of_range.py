"""Answers with a number outside its field's range (spec/PROTOCOL.md, "Integer
ranges"), which is `malformed`, never `illegal` or stale. Mode argv[1]: "index"
(default) sends index -1; "id" echoes id 2**53, past the largest request id; "tile"
spells out a play of its first legal play with a pip of 19, past double-18's."""

import sys

from _common import Msg, serve

MODES = ("index", "id", "tile")
MODE = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in MODES else "index"


def on_turn(turn: Msg) -> Msg:
    if MODE == "id":
        return {"type": "move", "id": 2**53, "index": 0}
    if MODE == "tile":
        play = next((mv for mv in turn["legal"] if mv["action"] == "play"), None)
        train = play["train"] if play is not None else turn["seat"]
        return {"type": "move", "id": turn["id"], "action": "play", "tile": [19, 0], "train": train}
    return {"type": "move", "id": turn["id"], "index": -1}


serve("out_of_range", on_turn)
