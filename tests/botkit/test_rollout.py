"""The rollout model plays the engine's game: a differential test, move by move.

Games are played through the engine (`referee.rules`) and `referee.botkit.rollout`
side by side, choosing uniformly among the legal moves with a seeded
`random.Random`. At every decision the model's legal moves must be the engine's, as
the same moves in the same order (not merely the same set), and after every move
the model's position must be the engine's: hands, boneyard (in drawing order),
trains (owner, open end, length, whether they end in a double, parent), markers,
tiles on the table per pip, open doubles and the bindings of `next-turn`, the double
marker, the seat to move, the step of the turn, the drawn tile, the swan drive's
lock and place, the own doubles of the turn, first-turn flags and the announcement's
penalty. When a round ends, the model's end, hands and scores must be the engine's
round result; the model is then made afresh from the engine's next round.

Every preset, variant and nine combinations of them play 12 games of up to 7 rounds
at double-6 (2 to 4 players, or 4 in teams) and 2 rounds of 3 games at double-12 (up
to 8 players); 300 random mixes of every option the engine accepts (on a random
preset, double-6 or double-9) play up to 4 rounds each: about 3,000 rounds and
127,000 decisions, about 4.5 CPU-seconds. Copies played out are checked to leave
their original alone. The search's rollout policy and the search itself (a fixed
number of worlds) are checked to choose the same on the model as on the engine.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from referee.botkit import search as search_module
from referee.botkit.rollout import CTX_NAMES, Rollout, code_of, move_of, tile_index
from referee.botkit.search import Rollouts, Searched, search
from referee.rules import (
    PRESETS,
    VARIANTS,
    BindDuration,
    FirstTurn,
    FollowUp,
    OwnDoubleFollowUp,
    Rules,
    RulesError,
    SatisfyOrder,
    State,
    apply,
    full_set,
    legal_moves,
    new_game,
    position,
    preset,
)

from ..rules.test_properties import COMBOS as RULES_COMBOS
from ._games import Point, decisions

TILES = full_set(18)
NAMES = [*PRESETS, *(f"standard+{v}" for v in VARIANTS)]
# The rules properties' combinations, and two more the model's paths need.
COMBOS = [
    *RULES_COMBOS,
    "private-trains+swan-drive+announce",
    "masters+delayed-first-turn+branching-doubles",
]


def engine_position(state: State) -> tuple[Any, ...]:
    """What the model must agree on, read from the engine's state."""
    return (
        state.hands,
        state.boneyard,
        tuple(
            (t.owner, t.end, len(t.tiles), bool(t.tiles) and t.tiles[-1].is_double, t.parent)
            for t in state.trains
        ),
        state.markers,
        state.table_count,
        state.open_doubles,
        state.bind_now,
        state.bind_next,
        state.marked_double,
        state.to_move,
        state.starter,
        state.ctx,
        state.drawn,
        state.lock,
        state.must_follow,
        state.swan_pos,
        state.own_doubles,
        state.first_pending,
        state.turn_first,
        state.penalty_due,
    )


def model_position(model: Rollout) -> tuple[Any, ...]:
    """The same, read from the model."""
    n = model.spec.n
    return (
        tuple(model.hand(s) for s in range(n)),
        tuple(TILES[k] for k in model.boneyard),
        tuple(
            zip(
                model.t_owner,
                model.t_end,
                model.t_len,
                model.t_double,
                model.t_parent,
                strict=True,
            )
        ),
        tuple(bool(model.markers >> s & 1) for s in range(n)),
        tuple(model.count),
        tuple(model.open_doubles),
        tuple(model.bind_now),
        tuple(model.bind_next),
        model.marked,
        model.to_move,
        model.starter,
        CTX_NAMES[model.ctx],
        None if model.drawn < 0 else TILES[model.drawn],
        model.lock,
        model.must_follow,
        model.swan_pos,
        tuple(model.own_doubles),
        tuple(model.first_pending),
        model.turn_first,
        model.penalty_due,
    )


def play_both(rules: Rules, seed: int, rounds: int, copy_every: int = 0) -> tuple[int, int]:
    """Play `rounds` rounds (at most) of one game through both; (rounds, decisions)."""
    rng = random.Random(f"rollout/{seed}")
    state = new_game(rules, seed)
    model = Rollout.from_state(state)
    assert model_position(model) == engine_position(state)
    played = decisions = 0
    while state.outcome is None and played < rounds:
        expected = legal_moves(state)
        codes = model.legal()
        assert [move_of(c) for c in codes] == list(expected), (rules, seed, decisions)
        pick = rng.randrange(len(expected))
        if copy_every and decisions % copy_every == 0:
            _check_copy(model, random.Random(decisions))
        after = apply(state, expected[pick])
        model.apply(codes[pick])
        decisions += 1
        if after.round_index != state.round_index or after.outcome is not None:
            result = after.results[state.round_index]
            assert model.over and model.legal() == []
            assert model.end is result.end, (rules, seed, decisions)
            assert tuple(model.hand(s) for s in range(rules.players)) == result.hands
            assert model.scores == result.scores, (rules, seed, decisions)
            played += 1
            if after.outcome is None:
                model = Rollout.from_state(after)
        else:
            assert not model.over, (rules, seed, decisions)
            assert model_position(model) == engine_position(after), (rules, seed, decisions)
        state = after
    return played, decisions


def _check_copy(model: Rollout, rng: random.Random) -> None:
    """A copy played to the round's end leaves the original as it was."""
    before = model_position(model)
    world = model.copy()
    while not world.over:
        world.apply(rng.choice(world.legal()))
    assert model_position(model) == before
    assert len(world.scores) == model.spec.n


def _rules(name: str, **options: Any) -> Rules:
    """The preset, dealing fewer tiles where its hand table cannot seat the players."""
    try:
        return preset(name, **options)
    except RulesError:
        return preset(name, hand_size=5, **options)


@pytest.mark.parametrize("name", NAMES + COMBOS)
def test_every_preset_and_variant_plays_the_engines_game(name: str) -> None:
    rounds = 0
    for seed in range(12):
        players = 4 if "teams" in name else 2 + seed % 3
        rules = _rules(name, players=players, max_pip=6, rounds="ascending")
        rounds += play_both(rules, seed, 7, copy_every=23)[0]
    for seed in range(3):
        players = (4, 6, 8)[seed] if "teams" in name else (2, 4, 6)[seed]
        play_both(_rules(name, players=players, max_pip=12), seed, 2)
    assert rounds >= 12 * 7


# Every option and its values; a mix that `Rules` refuses is drawn again.
CHOICES: dict[str, list[Any]] = {
    "first_turn": list(FirstTurn),
    "first_turns_complete": [False, True],
    "first_train_until_stuck": [False, True],
    "first_train_draws": [True, False],
    "mexican_train": [True, False],
    "mexican_start_restricted": [False, True],
    "must_play": [True, False],
    "draw_until_playable": [False, True],
    "doubles_bind": [True, False],
    "satisfy_order": list(SatisfyOrder),
    "follow_up": list(FollowUp),
    "own_double_follow_up": list(OwnDoubleFollowUp),
    "bind_duration": list(BindDuration),
    "any_play_clears_marker": [False, True],
    "unfinished_own_double_marks": [True, False],
    "double_blank_score": [50, 0, 7],
    "teams": [False, True],
    "branching_doubles": [False, True],
    "swan_drive": [False, True],
    "announce_one_tile": [False, True],
    "announce_penalty": [2, 0, 5],
    "engine_source": ["holder", "center"],
    "first_player": ["after-holder", "highest-single"],
    "hand_table": ["standard", "celko", "denomination"],
}


def random_rules(rng: random.Random) -> Rules:
    while True:
        options = {k: rng.choice(v) for k, v in CHOICES.items() if rng.random() < 0.4}
        max_pip = rng.choice((6, 9))
        players = 4 if options.get("teams") else rng.choice((2, 3, 4))
        try:
            return preset(
                rng.choice(list(PRESETS)),
                max_pip=max_pip,
                players=players,
                rounds="ascending",
                **options,
            )
        except RulesError:
            continue


def test_random_option_mixes_play_the_engines_game() -> None:
    rng = random.Random(42)
    rounds = decisions = 0
    for seed in range(300):
        played, moves = play_both(random_rules(rng), seed, 4, copy_every=41)
        rounds += played
        decisions += moves
    assert rounds >= 1000 and decisions >= 20_000


def test_moves_convert_both_ways() -> None:
    state = new_game(preset("celko+announce", players=2), 3)
    for move in legal_moves(state):
        assert move_of(code_of(move)) == move
    for k, t in enumerate(full_set(12)):
        assert tile_index(t) == k


def test_a_state_with_a_tile_twice_is_refused() -> None:
    rules = preset("standard", players=2, max_pip=6)
    state = position(rules, [[(6, 5), (1, 0)], [(5, 5)]], boneyard=[(4, 4)])
    Rollout.from_state(state)  # a hand-made position is fine
    twice = state.copy()
    twice.hands = (state.hands[0], (*state.hands[1], state.hands[0][0]))
    with pytest.raises(ValueError, match="twice"):
        Rollout.from_state(twice)


def test_a_finished_game_is_refused() -> None:
    rules = preset("standard", players=2, max_pip=6, rounds="single")
    state = new_game(rules, 1)
    while state.outcome is None:
        state = apply(state, legal_moves(state)[0])
    with pytest.raises(ValueError, match="over"):
        Rollout.from_state(state)


def test_the_search_rollout_policy_plays_the_same_on_the_model() -> None:
    """`Rollouts.move_code` and `finish_model` on the model choose what `move` and
    `finish` choose on the engine, drawing the same random numbers: the same score."""
    checked = 0
    for name in NAMES + COMBOS[:4]:
        for seed in range(2):
            players = 4 if "teams" in name else 2 + seed
            rules = _rules(name, players=players, max_pip=9, rounds="single")
            rng = random.Random(seed)
            state = new_game(rules, seed)
            while state.outcome is None:
                if rng.random() < 0.15:
                    model = Rollout.from_state(state)
                    a, b = random.Random(checked), random.Random(checked)
                    assert code_of(Rollouts().move(state, a)) == Rollouts().move_code(model, b)
                    for seat in range(players):
                        a, b = random.Random(seat), random.Random(seat)
                        expected = Rollouts().finish(state, seat, a)
                        assert Rollouts().finish_model(model.copy(), seat, b) == expected
                    checked += 1
                state = apply(state, rng.choice(legal_moves(state)))
    assert checked > 200


def test_the_search_chooses_the_same_on_the_model_and_on_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search with a fixed number of worlds, once on the model and once with every
    world refused (rolled out on the engine): the same worlds, values and choice."""
    engine_only = {"on": False}
    model_of = search_module._model_of
    monkeypatch.setattr(
        search_module, "_model_of", lambda world: None if engine_only["on"] else model_of(world)
    )

    def searched(point: Point, seed: int, engine: bool) -> Searched:
        assert point.known is not None
        engine_only["on"] = engine
        state = point.state
        return search(
            point.known[state.to_move],
            legal_moves(state),
            random.Random(seed),
            deadline=math.inf,
            max_worlds=3,
        )

    searches = 0
    for name in ("standard", "masters", "celko+teams", "private-trains+swan-drive"):
        for seed in range(2):
            # The knowledge is the game's own record: searched before the game moves on.
            for i, point in enumerate(decisions(preset(name), seed, known=True)):
                if i % 30 == 5 and i < 400 and len(set(legal_moves(point.state))) > 1:
                    on_model = searched(point, i, engine=False)
                    assert searched(point, i, engine=True) == on_model, (name, seed, i)
                    searches += not on_model.fallback
    assert searches > 20
