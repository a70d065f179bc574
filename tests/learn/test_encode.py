"""The action ids and the observation vector of `referee.learn.encode`."""

from __future__ import annotations

import random

import msgspec
import numpy as np
import pytest

from protocol import messages as m
from protocol.codec import decode_to_bot, encode
from referee.game.wire import move_spec, turn_request, view_info
from referee.learn import encode as enc
from referee.rules import Rules, State, Tile, apply, full_set, legal_moves, new_game, preset

TABLES = [
    preset("standard", players=2, max_pip=6),
    preset("standard", players=4, max_pip=12),
    preset("celko", players=3, max_pip=9),  # announces a last-but-one tile
    preset("standard+branching-doubles", players=3, max_pip=6),
    preset("standard+teams", players=4, max_pip=9),
    preset("private-trains", players=3, max_pip=6),  # no Mexican train
    preset("standard+fast-first-turn", players=3, max_pip=6),
]


def positions(rules: Rules, seed: int, limit: int = 400) -> list[State]:
    """Every decision of one game of random moves (at most `limit`)."""
    rng = random.Random(seed)
    state = new_game(rules, seed)
    found = []
    while not state.is_over and len(found) < limit:
        found.append(state)
        state = apply(state, rng.choice(legal_moves(state)))
    return found


def test_ids_of_a_small_table_are_the_documented_ones() -> None:
    rules = preset("standard", players=2, max_pip=6)  # 28 tiles, 3 trains, no announcing
    assert enc.max_trains(rules) == 3
    assert enc.action_count(rules) == 28 * 3 + 3
    play = m.MoveSpec(action="play", tile=(1, 0), train=2)
    assert enc.action_id(rules, play) == (1 * 3 + 2)
    assert enc.action_id(rules, m.MoveSpec(action="play", tile=(0, 1), train=2)) == 5
    assert [enc.action_id(rules, m.MoveSpec(action=a)) for a in ("draw", "pass", "end")] == [
        84,
        85,
        86,
    ]
    celko = preset("celko", players=2, max_pip=6)
    announced = m.MoveSpec(action="play", tile=(6, 6), train=0, announce=True)
    assert enc.action_id(celko, announced) == (27 * 3 + 0) * 2 + 1


def test_trains_allowed_count_branches_and_the_mexican_train() -> None:
    assert enc.max_trains(preset("standard", players=4, max_pip=12)) == 5
    assert enc.max_trains(preset("private-trains", players=4, max_pip=12)) == 4
    assert enc.max_trains(preset("standard+branching-doubles", players=4)) == 5 + 2 * 12


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.players}p-d{r.max_pip}")
def test_every_id_round_trips_to_its_move(rules: Rules) -> None:
    for action in range(enc.action_count(rules)):
        assert enc.action_id(rules, enc.move_of_action(rules, action)) == action
    with pytest.raises(ValueError):
        enc.move_of_action(rules, enc.action_count(rules))


def test_tile_indexes_follow_the_set() -> None:
    tiles = full_set(9)
    assert [enc.tile_index(t.hi, t.lo) for t in tiles] == list(range(len(tiles)))
    assert enc.tile_index(2, 5) == enc.tile_index(5, 2)


def test_moves_the_rules_cannot_have_are_refused() -> None:
    rules = preset("standard", players=2, max_pip=6)
    for bad in (
        m.MoveSpec(action="play", tile=(7, 1), train=0),
        m.MoveSpec(action="play", tile=(6, 1), train=3),
        m.MoveSpec(action="play", tile=(6, 1), train=0, announce=True),
        m.MoveSpec(action="play"),
    ):
        with pytest.raises(ValueError):
            enc.action_id(rules, bad)


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.players}p-d{r.max_pip}")
def test_legal_moves_have_distinct_ids_and_the_mask_marks_exactly_them(rules: Rules) -> None:
    size = enc.observation_size(rules)
    for seed in range(3):
        for state in positions(rules, seed):
            specs = [move_spec(mv) for mv in legal_moves(state)]
            ids = [enc.action_id(rules, s) for s in specs]
            assert len(set(ids)) == len(ids)
            mask = enc.action_mask(rules, specs)
            assert mask.dtype == np.int8 and mask.sum() == len(ids) and all(mask[ids])
            for i, spec in enumerate(specs):
                assert enc.legal_index(rules, specs, ids[i]) == i
                assert enc.move_of_action(rules, ids[i]) == spec
            for seat in range(rules.players):
                obs = enc.observation(rules, view_info(state, seat), seat)
                assert obs.shape == (size,) and obs.dtype == np.float32
                assert obs.min() >= 0.0 and obs.max() <= 1.0


def test_the_observation_over_the_wire_is_the_one_in_process() -> None:
    """A bot decodes its turn request's `view` from JSON: the same vector as the
    environment's `view_info`, so a policy sees the same numbers in both."""
    rules = preset("standard+branching-doubles", players=3, max_pip=6)
    for state in positions(rules, 11)[::5]:
        seat = state.to_move
        request = decode_to_bot(encode(turn_request(state, 1, 1000, 30000)))
        assert isinstance(request, m.Turn)
        wire = enc.observation(rules, request.view, request.seat)
        assert np.array_equal(wire, enc.observation(rules, view_info(state, seat), seat))
        assert np.array_equal(
            enc.action_mask(rules, request.legal),
            enc.action_mask(rules, [move_spec(mv) for mv in legal_moves(state)]),
        )


def test_the_layout_puts_each_fact_where_it_says() -> None:
    rules = preset("standard", players=3, max_pip=6)
    state = positions(rules, 2)[20]
    seat = (state.to_move + 1) % 3  # not the seat to move
    view = view_info(state, seat)
    obs = enc.observation(rules, view, seat)
    lay = enc.layout(rules)
    hand = {enc.tile_index(*t) for t in view.hand}
    assert set(np.flatnonzero(obs[lay.hand : lay.drawn])) == hand
    assert obs[lay.boneyard] == pytest.approx(view.boneyard / 28)
    assert obs[lay.engine + view.engine] == 1.0
    assert obs[lay.to_move + (state.to_move - seat) % 3] == 1.0
    assert obs[lay.seat_blocks] == pytest.approx(len(view.hand) / 28)  # this seat comes first
    own = lay.train_blocks + seat * lay.train_fields
    assert obs[own] == 1.0 and obs[own + len(enc.TRAIN_FLAGS)] == 1.0  # present, owner: me
    mexican = lay.train_blocks + 3 * lay.train_fields
    assert obs[mexican + 1] == 1.0  # the Mexican flag
    on_table = {Tile(*sorted(t, reverse=True)) for tr in view.trains for t in tr.tiles}
    table = {full_set(6)[i] for i in np.flatnonzero(obs[lay.table : lay.train_blocks])}
    assert table == on_table
    assert lay.size == enc.observation_size(rules) == obs.size


def test_a_struct_view_and_its_json_give_one_vector() -> None:
    rules = preset("celko", players=2, max_pip=6)
    state = positions(rules, 5)[7]
    view = view_info(state, 0)
    again = msgspec.json.decode(msgspec.json.encode(view), type=m.ViewInfo)
    assert np.array_equal(enc.observation(rules, view, 0), enc.observation(rules, again, 0))
