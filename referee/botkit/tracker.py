"""A seat's `Knowledge` built from the protocol's messages, for a bot process.

A bot sees `game_start`, then per round `round_start`, the events (`played`,
`drew`, `passed`, `marker`) and `round_end`, and its own turn requests. `Tracker`
turns those into the same `Knowledge` that `Knowledge.from_moves` builds
in-process (tests/botkit holds the two equal over whole games), so the
determinizer and the search run unchanged in a bot. A turn's `end` is sent to
nobody; the determinizer infers it when the next seat acts.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from protocol import messages as m

from ..rules import (
    DRAW,
    END,
    PASS,
    Move,
    MoveKind,
    RoundEnd,
    RoundResult,
    Rules,
    Tile,
    tile,
)
from .knowledge import Knowledge, Step


def rules_of(info: m.RulesInfo) -> Rules:
    """The engine's rules from the wire's."""
    return Rules.from_dict(msgspec.structs.asdict(info))


def move_of_spec(spec: m.MoveSpec) -> Move:
    """The engine move a turn request's legal entry names."""
    if spec.action == "play":
        assert spec.tile is not None and spec.train is not None
        return Move(MoveKind.PLAY, tile(*spec.tile), spec.train, spec.announce)
    return {"draw": DRAW, "pass": PASS, "end": END}[spec.action]


class Tracker:
    """Follows one game on one connection; `knowledge` is the current round's."""

    def __init__(self, start: m.GameStart) -> None:
        self.rules = rules_of(start.rules)
        self.seat = start.seat
        self.results: list[RoundResult] = []
        self.knowledge: Knowledge | None = None
        self._round: m.RoundStart | None = None
        self._seen = 0  # events of the game's list already taken in

    def feed(self, events: Iterable[m.Message]) -> None:
        """Take in messages in the order they arrived (those fed before are skipped
        when the same growing list is fed again, as `protocol.bot.Game.events` is)."""
        items = list(events)
        for message in items[self._seen :]:
            self.take(message)
        self._seen = len(items)

    def take(self, message: m.Message) -> None:
        """Take in one message."""
        k = self.knowledge
        if isinstance(message, m.RoundStart):
            self._round = message
            self.knowledge = Knowledge(
                rules=self.rules,
                seat=self.seat,
                round_index=message.round,
                results=tuple(self.results),
                hand=tuple(sorted(tile(a, b) for a, b in message.hand)),
                counts=tuple(message.hand_counts),
                boneyard=message.boneyard,
                holder=message.holder,
                starter=message.starter,
                engine_draws=tuple(message.engine_draws),
            )
        elif isinstance(message, m.RoundEnd):
            start = self._round
            assert start is not None
            self.results.append(
                RoundResult(
                    number=message.round,
                    engine=start.engine,
                    starter=start.starter,
                    end=RoundEnd(message.reason),
                    out=tuple(message.out),
                    hands=tuple(tuple(tile(a, b) for a, b in h) for h in message.hands),
                    values=tuple(message.values),
                    scores=tuple(message.scores),
                )
            )
            self.knowledge = None
        elif k is None:
            return
        elif isinstance(message, m.Played):
            t = tile(*message.tile)
            k.steps.append(
                Step(message.seat, Move(MoveKind.PLAY, t, message.train, message.announce))
            )
        elif isinstance(message, m.Drew):
            seen: Tile | None = tile(*message.tile) if message.tile is not None else None
            mine = message.seat == self.seat
            drawn = seen if mine else None
            if message.reason == "penalty":
                k.steps.append(Step(message.seat, None, drawn))
            else:
                k.steps.append(Step(message.seat, DRAW, drawn))
        elif isinstance(message, m.Passed):
            k.steps.append(Step(message.seat, PASS))
