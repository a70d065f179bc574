"""`referee.game.wire.view_info` shows a seat exactly what `referee.rules.view` does.

`view_info` builds a turn request's view in one pass from the state (it is on the
referee's hot path), so it repeats the hiding rules of `view`, the engine's one
definition of what a seat may know. Here random games of every preset and of
variants that hide things (the fast first turn hides other sides' trains and
counts, teams share markers) compare, for every seat after every decision, the
view that `view_info` builds with the one converted field by field from `view`,
and their encoded bytes.
"""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import encode
from protocol import messages as m
from referee.game import wire
from referee.rules import apply, legal_moves, new_game, preset, view
from referee.rules.state import State

RULES = (  # name, players, highest pip
    ("standard", 4, 6),
    ("masters", 3, 6),
    ("celko", 2, 6),
    ("private-trains", 4, 9),
    ("standard+teams+fast-first-turn+swan-drive", 4, 6),
    ("celko+teams+branching-doubles", 6, 9),
    ("private-trains+fast-first-turn+branching-doubles", 3, 6),
    ("standard+delayed-first-turn+announce", 5, 9),
)


def from_view(state: State, seat: int) -> m.ViewInfo:
    """The view as `view` gives it, converted field by field."""
    v = view(state, seat)
    return m.ViewInfo(
        round=v.round_index,
        engine=v.engine,
        hand=[(t.hi, t.lo) for t in v.hand],
        drawn=(v.drawn.hi, v.drawn.lo) if v.drawn is not None else None,
        trains=[
            m.TrainInfo(
                train=t.index,
                owner=t.owner,
                tiles=wire._oriented(t.tiles, t.end),  # the same orientation
                end=t.end,
                public=t.public,
                open_double=t.open_double,
                parent=t.parent,
            )
            for t in v.trains
        ],
        markers=list(v.markers),
        hand_counts=list(v.hand_counts),
        scores=list(v.scores),
        boneyard=v.boneyard_count,
        open_doubles=list(v.open_doubles),
        binding=list(v.binding),
        step=wire.STEP_NAMES[v.step],
        next=(v.to_move + 1) % state.rules.players,
    )


@pytest.mark.parametrize(("name", "players", "max_pip"), RULES)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_view_info_is_the_view_of_the_engine(
    name: str, players: int, max_pip: int, seed: int
) -> None:
    rules = preset(name, players=players, max_pip=max_pip)
    state = new_game(rules, seed)
    rng = random.Random(seed)
    while state.outcome is None:
        for seat in range(players):
            got = wire.view_info(state, seat)
            want = from_view(state, seat)
            assert msgspec.to_builtins(got) == msgspec.to_builtins(want)
            assert encode(got_turn(got)) == encode(got_turn(want))
        state = apply(state, rng.choice(legal_moves(state)))


def got_turn(info: m.ViewInfo) -> m.Turn:
    """A turn request around `info`: the bytes a bot gets."""
    return m.Turn(id=1, seat=0, view=info, legal=[], clock=m.Clock(move_ms=1, bank_ms=0))
