"""The engine's per-rules caches change no answer (issue 41, part 3).

`legal_moves` takes every PLAY move, and the trains open to each seat by markers, from
the rules' lookup table (`referee.rules.legal._Table`), which every state of every
game with those rules shares and which fills as games are played. Here each decision
of random games, listed with a table already warm from other games, is listed again
with a table made afresh: the same moves, in the same order, of the same types.
"""

from __future__ import annotations

import random

import pytest

from referee.rules import (
    PRESETS,
    VARIANTS,
    Move,
    MoveKind,
    apply,
    legal_moves,
    new_game,
    preset,
)
from referee.rules.legal import _legal, _Table

NAMES = [
    *PRESETS,
    *(f"standard+{v}" for v in VARIANTS),
    "standard+teams+branching-doubles+swan-drive",
    "celko+teams+announce",
]


def _same(warm: tuple[Move, ...], cold: tuple[Move, ...]) -> None:
    assert warm == cold
    # Equal moves could still differ in type (a Tile against a plain pair): not here.
    assert [type(m.tile) for m in warm] == [type(m.tile) for m in cold]
    assert all(type(m) is Move and type(m.kind) is MoveKind for m in warm)


@pytest.mark.parametrize("name", NAMES)
def test_a_table_made_afresh_lists_the_same_moves(name: str) -> None:
    players = 6 if "teams" in name else 4
    rules = preset(name, players=players, max_pip=9, rounds="single")
    checked = 0
    for seed in range(6):  # the first games warm the shared table for the later ones
        rng = random.Random(seed)
        state = new_game(rules, seed)
        while state.outcome is None:
            moves = legal_moves(state)
            probe = state.copy()
            probe.table = _Table(rules)
            _same(moves, _legal(probe))
            checked += 1
            state = apply(state, rng.choice(moves))
    assert checked > 100
