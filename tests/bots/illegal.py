"""Answers an illegal move. Mode argv[1]: "tile" (default) spells out a play of a tile
it does not hold on its own train; "index" sends index = len(legal)."""

import sys

from _common import Msg, serve

MODE = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("tile", "index") else "tile"


def not_held(turn: Msg) -> list[int]:
    view = turn["view"]
    held = {tuple(sorted(t)) for t in view["hand"]}
    top = max(view["engine"], *(max(t) for t in view["hand"]))
    for a in range(top + 1):
        for b in range(a + 1):
            if (b, a) not in held:
                return [a, b]
    raise AssertionError("holds every tile")


def on_turn(turn: Msg) -> Msg:
    if MODE == "index":
        return {"type": "move", "id": turn["id"], "index": len(turn["legal"])}
    return {
        "type": "move",
        "id": turn["id"],
        "action": "play",
        "tile": not_held(turn),
        "train": turn["seat"],
    }


serve("illegal", on_turn)
