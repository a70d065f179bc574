"""What one seat has seen of the current round: enough to rebuild worlds from.

A `Knowledge` holds the round's public start (engine, holder, starter, the hand
counts and the boneyard's size), the seat's own starting hand, and every step since:
each decision of any seat as an engine `Move` (a play names its tile, a draw does
not, except the seat's own draws, whose tiles it saw), and each penalty draw. An
`end` of a multi-tile turn is not a step: no message tells it, and the next seat's
step implies it. It
never holds a tile of another hand: `Knowledge.from_moves` builds it from the real
game's states and hides what the seat could not see, and `referee.botkit.tracker`
builds the same from the protocol's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..rules import Move, MoveKind, RoundResult, Rules, State, Tile, apply


@dataclass(frozen=True, slots=True)
class Step:
    """One thing that happened in the round, as `Knowledge.seat` saw it.

    `move` is the decision, or None for a tile the engine made `seat` draw as a
    penalty (an unannounced last tile). `drawn` is the tile drawn, when the drawer is
    the seat that knows (a draw or a penalty); None otherwise.
    """

    seat: int
    move: Move | None
    drawn: Tile | None = None


@dataclass
class Knowledge:
    """One seat's record of the current round. `steps` grows as the round goes on."""

    rules: Rules
    seat: int
    round_index: int
    results: tuple[RoundResult, ...]  # the rounds before this one
    hand: tuple[Tile, ...]  # the seat's hand at the round's first decision
    counts: tuple[int, ...]  # every seat's hand count then
    boneyard: int  # the boneyard's size then
    holder: int | None
    starter: int
    engine_draws: tuple[int, ...] = ()
    steps: list[Step] = field(default_factory=list)

    @classmethod
    def at_start(cls, state: State, seat: int) -> Knowledge:
        """What `seat` knows at the round's first decision `state`."""
        return cls(
            rules=state.rules,
            seat=seat,
            round_index=state.round_index,
            results=state.results,
            hand=state.hands[seat],
            counts=tuple(len(h) for h in state.hands),
            boneyard=len(state.boneyard),
            holder=state.holder,
            starter=state.starter,
            engine_draws=state.engine_draws,
        )

    @classmethod
    def from_moves(cls, start: State, moves: Sequence[Move], seat: int) -> Knowledge:
        """What `seat` knows after `moves` were applied to the round's first decision
        `start` (all within that round): the moves, its own draws' tiles, and the
        penalty draws, and nothing of the other hands."""
        knowledge = cls.at_start(start, seat)
        state = start
        for move in moves:
            after = apply(state, move)
            if after.round_index != start.round_index or after.outcome is not None:
                raise ValueError("from_moves: the moves run past the end of the round")
            knowledge.record(state, move, after)
            state = after
        return knowledge

    def record(self, before: State, move: Move, after: State) -> None:
        """Add the step `before` -> `after` (one decision of the real game) as this seat
        sees it, with the penalty draws the engine made after it."""
        mover = before.to_move
        mine = mover == self.seat
        if move.kind is MoveKind.END:
            # Nobody is told of an `end` (the next seat's move shows it): the
            # determinizer infers it, in-process as over the wire.
            self._penalties(before, after, mover, mine)
            return
        if move.kind is MoveKind.DRAW:
            self.steps.append(Step(mover, move, after.drawn if mine else None))
            return
        self.steps.append(Step(mover, move))
        self._penalties(before, after, mover, mine)

    def _penalties(self, before: State, after: State, mover: int, mine: bool) -> None:
        """The penalty draws the engine made as the mover's turn closed."""
        if after.round_index != before.round_index:
            return
        taken = len(before.boneyard) - len(after.boneyard)
        if taken > 0:
            drawn = before.boneyard[len(before.boneyard) - taken :]
            # The engine takes them from the boneyard's end as one block, so their order
            # within it makes no difference; the wire shows them sorted, and so here.
            for tile in sorted(drawn):
                self.steps.append(Step(mover, None, tile if mine else None))

    def known_hand(self) -> tuple[Tile, ...]:
        """The seat's hand now: its starting hand, plus its draws, less its plays."""
        hand = list(self.hand)
        for step in self.steps:
            if step.seat != self.seat:
                continue
            if step.drawn is not None:
                hand.append(step.drawn)
            elif step.move is not None and step.move.kind is MoveKind.PLAY:
                assert step.move.tile is not None
                hand.remove(step.move.tile)
        return tuple(sorted(hand))
