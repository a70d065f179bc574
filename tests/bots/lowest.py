"""A weak bot on purpose: it always plays the tile with the fewest pips it may, so it
keeps its heavy tiles to the end (the opposite of greedy). The arena's final tests
rank it below the random bot."""

from _common import Msg, serve


def on_turn(turn: Msg) -> Msg:
    def weight(option: Msg) -> float:
        tile = option.get("tile")
        return float(sum(tile)) if tile else float("inf")

    best = min(range(len(turn["legal"])), key=lambda k: weight(turn["legal"][k]))
    return {"type": "move", "id": turn["id"], "index": best}


serve("lowest", on_turn)
