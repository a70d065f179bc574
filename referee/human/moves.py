"""What a person typed, as one of a turn request's legal moves, or why it is not one.

A move is chosen by its number in the list shown (1 to N), by `draw`, `pass` or
`end`, or by a tile and a train: `6-4 on mexican`, `6-4 on 2` (the train's number as
shown), `6-4 on mine`, `6-4 on NAME` (a seat's train), or a tile alone when it fits
one train only. A trailing `!` (or `announce`) picks the move that announces one
tile left, where the rules have announcements. Everything else gets one line saying
why, and the same turn goes on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from protocol.messages import MoveSpec, Turn

from ..text import shown

HELP = "type a move's number, a tile and a train (6-4 on mexican, 6-4 on 2), draw or pass"
_TILE = re.compile(r"(\d{1,2})\s*[-|/]\s*(\d{1,2})(?:\s+(?:on\s+)?(.+?))?")
_ACTIONS = ("draw", "pass", "end")
_MEXICAN = ("mexican", "mex", "m")
_MINE = ("mine", "me", "my", "own", "you")


def tile_text(tile: Sequence[int] | None) -> str:
    """A tile as people write it: `6-4`."""
    return "?" if tile is None else f"{tile[0]}-{tile[1]}"


def mexican_train(turn: Turn) -> int | None:
    """The Mexican train's index in this turn's view, if the rules have one."""
    for train in turn.view.trains:
        if train.owner == -1 and train.parent == -1:
            return train.train
    return None


def move_text(move: MoveSpec, turn: Turn, names: Sequence[str]) -> str:
    """A legal move in words, its train named as the board names it (no markup)."""
    if move.action != "play":
        return move.action
    text = f"{tile_text(move.tile)} on {train_name(move.train, turn, names)}"
    return text + " (announce one tile left)" if move.announce else text


def train_name(index: int | None, turn: Turn, names: Sequence[str]) -> str:
    """`2 (mexican)`, `0 (yours)`, `1 (bob)`, `5 (branch of 3)`: a train's number and
    whose it is, escaped for a terminal (`shown`)."""
    if index is None:
        return "?"
    for train in turn.view.trains:
        if train.train != index:
            continue
        if train.parent != -1:
            return f"{index} (branch of {train.parent})"
        if train.owner == -1:
            return f"{index} (mexican)"
    if index == turn.seat:
        return f"{index} (yours)"
    if index < len(names):
        return f"{index} ({shown(names[index])})"
    return str(index)


def _trains(word: str, turn: Turn, names: Sequence[str]) -> set[int] | str:
    """The trains a word names (a set), or why it names none (a line)."""
    if word.isdigit():
        index = int(word)
        if any(t.train == index for t in turn.view.trains):
            return {index}
        return f"there is no train {index}"
    if word in _MEXICAN:
        mexican = mexican_train(turn)
        return {mexican} if mexican is not None else "these rules have no Mexican train"
    if word in _MINE:
        return {turn.seat}
    seats = {i for i, name in enumerate(names) if name.lower() == word}
    if seats:
        return seats
    return f"no train '{shown(word)}': say mexican, mine, a train's number or a seat's name"


def choose(text: str, turn: Turn, names: Sequence[str]) -> int | str:
    """The index into `turn.legal` that `text` chooses, or the one line that says why it
    chooses none (the turn goes on)."""
    legal = turn.legal
    typed = " ".join(text.strip().lower().split())
    if not typed:
        return HELP
    announce = typed.endswith("!") or typed.endswith(" announce")
    if announce:
        typed = typed.removesuffix("!").removesuffix(" announce").strip()
    if typed.isdigit():
        number = int(typed)
        if 1 <= number <= len(legal):
            return number - 1
        return f"there is no move {number}: choose 1 to {len(legal)}"
    if typed in _ACTIONS:
        for i, move in enumerate(legal):
            if move.action == typed:
                return i
        return f"you may not {typed} now"
    found = _TILE.fullmatch(typed)
    if found is None:
        return f"not a move: '{shown(text.strip())}'; {HELP}"
    tile = (int(found.group(1)), int(found.group(2)))
    shape = sorted(tile)
    plays = [
        i
        for i, move in enumerate(legal)
        if move.action == "play" and move.tile is not None and sorted(move.tile) == shape
    ]
    written = tile_text(tile)
    if not plays:
        held = any(sorted(t) == shape for t in turn.view.hand)
        return f"{written} cannot be played now" if held else f"you do not hold {written}"
    if (word := found.group(3)) is not None:
        trains = _trains(word.removeprefix("the ").removesuffix(" train"), turn, names)
        if isinstance(trains, str):
            return trains
        plays = [i for i in plays if legal[i].train in trains]
        if not plays:
            where = " or ".join(train_name(t, turn, names) for t in sorted(trains))
            return f"{written} cannot go on {where} now"
    if len({legal[i].announce for i in plays}) > 1:
        plays = [i for i in plays if legal[i].announce == announce]
    if len(plays) > 1:
        options = ", ".join(f"{written} on {legal[i].train}" for i in plays)
        return f"{written} fits several trains: say which ({options})"
    return plays[0]
