"""What one seat may know: `view(state, seat)` and the values it returns.

A view is built from the seat's own hand and from public facts only: tiles on
the table, counts, markers, scores and hands shown at the end of past rounds.
It never holds a tile of another hand or the boneyard's order. During a
fast-first-turn phase, when everyone builds at once in the physical game, the
other sides' trains and hand counts are shown as they stood before the phase.
"""

from __future__ import annotations

from dataclasses import dataclass

from .legal import binding
from .options import Rules
from .state import MEXICAN, Ctx, Outcome, RoundResult, State
from .tiles import Tile


@dataclass(slots=True)
class TrainView:
    """A train as everyone sees it."""

    index: int
    owner: int  # a scoring side (a seat unless teams), or -1 for the Mexican train
    tiles: tuple[Tile, ...]
    end: int
    public: bool  # anyone may play on it (marker up, or the Mexican train)
    open_double: bool  # its last tile is a double not yet satisfied
    parent: int  # the train a branch grew from, -1 for a train from the hub


@dataclass(slots=True)
class View:
    """Everything `seat` may know at this point of the game, and nothing else.

    Each call to `view` builds a fresh one, so changing it changes nothing else.
    """

    seat: int
    rules: Rules
    round_index: int
    engine: int
    holder: int | None
    engine_draws: tuple[int, ...]
    starter: int
    hand: tuple[Tile, ...]
    drawn: Tile | None  # the tile this seat just drew, while it must decide on it
    trains: tuple[TrainView, ...]
    markers: tuple[bool, ...]
    hand_counts: tuple[int, ...]
    boneyard_count: int
    # Every open double on the table that can still be satisfied (not dead), binding
    # anyone now or not, by train, in the order the doubles were played.
    open_doubles: tuple[int, ...]
    # The trains whose double binds this seat now (`referee.rules.legal.binding`):
    # empty unless it is this seat's turn and a double confines it.
    binding: tuple[int, ...]
    to_move: int
    step: Ctx
    scores: tuple[int, ...]
    results: tuple[RoundResult, ...]
    outcome: Outcome | None


def view(state: State, seat: int) -> View:
    """The part of `state` that `seat` may see."""
    rules = state.rules
    if not 0 <= seat < rules.players:
        raise ValueError(f"seat {seat} is not at this table of {rules.players}")
    table = state.table
    own = table.group_of[seat]
    fast = state.ctx in (Ctx.BUILD, Ctx.BUILD_FOLLOW)
    markers = state.markers
    trains = []
    for i, t in enumerate(state.trains):
        hidden = fast and t.owner != own and t.owner != MEXICAN
        tiles = () if hidden else t.tiles
        public = t.owner == MEXICAN or all(markers[s] for s in table.members[t.owner])
        trains.append(
            TrainView(
                index=i,
                owner=t.owner,
                tiles=tiles,
                end=state.engine if hidden else t.end,
                public=public,
                open_double=bool(tiles) and tiles[-1].is_double,
                parent=t.parent,
            )
        )
    counts = tuple(len(h) for h in state.hands)
    if fast:
        counts = tuple(
            counts[s] if table.group_of[s] == own else state.fast_counts[s]
            for s in range(rules.players)
        )
    full = table.full
    live = tuple(i for i in state.open_doubles if state.table_count[state.trains[i].end] < full)
    if fast:
        live = tuple(i for i in live if state.trains[i].owner == own)
    results = state.results
    totals = (
        tuple(map(sum, zip(*(r.scores for r in results), strict=True)))
        if results
        else ((0,) * rules.players)
    )
    return View(
        seat=seat,
        rules=rules,
        round_index=state.round_index,
        engine=state.engine,
        holder=state.holder,
        engine_draws=state.engine_draws,
        starter=state.starter,
        hand=state.hands[seat],
        drawn=state.drawn if seat == state.to_move else None,
        trains=tuple(trains),
        markers=markers,
        hand_counts=counts,
        boneyard_count=len(state.boneyard),
        open_doubles=live,
        binding=binding(state) if seat == state.to_move else (),
        to_move=state.to_move,
        step=state.ctx,
        scores=totals,
        results=state.results,
        outcome=state.outcome,
    )
