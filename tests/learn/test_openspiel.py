"""`python_mexican_train`: OpenSpiel's random simulation test, chance, returns, ISMCTS."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

from referee.botkit.determinize import Determinizer, is_consistent
from referee.learn import encode, openspiel_game
from referee.learn.openspiel_game import GAME_NAME, MexicanTrainState
from referee.rules import deal_round, full_set, preset


def load(**params: object) -> pyspiel.Game:
    return pyspiel.load_game(GAME_NAME, params)


@pytest.mark.parametrize(
    "params",
    [
        {"players": 2, "max_pip": 6, "rounds": 2},
        {"preset": "celko", "players": 3, "max_pip": 6, "rounds": 1},
        {"preset": "standard+fast-first-turn+branching-doubles", "players": 3, "max_pip": 6},
        {"preset": "private-trains", "players": 2, "max_pip": 6, "rounds": 1},
    ],
)
def test_random_sim_test_passes(params: dict[str, object]) -> None:
    if "rounds" not in params:
        params = {**params, "rounds": 1}
    pyspiel.random_sim_test(load(**params), num_sims=3, serialize=False, verbose=False)


def test_parameters_size_the_game() -> None:
    game = load(players=3, max_pip=9, rounds=2)
    rules = preset("standard", players=3, max_pip=9)
    assert game.num_players() == 3
    assert game.num_distinct_actions() == encode.action_count(rules)
    assert game.max_chance_outcomes() == 55
    assert game.observation_tensor_shape() == [encode.observation_size(rules)]
    assert game.information_state_tensor_shape() == [encode.observation_size(rules) + 6]
    default = pyspiel.load_game(GAME_NAME)
    assert default.num_players() == 4 and default.max_chance_outcomes() == 91


def play_randomly(state: MexicanTrainState, rng: random.Random, decisions: int) -> None:
    """Deal and make up to `decisions` random decisions."""
    while not state.is_terminal() and (state.is_chance_node() or decisions > 0):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            assert sum(probs) == pytest.approx(1.0)
            state.apply_action(rng.choice(outcomes))
        else:
            decisions -= 1
            state.apply_action(rng.choice(state.legal_actions()))


def test_the_deal_is_one_chance_outcome_per_tile() -> None:
    game = load(players=2, max_pip=6, rounds=1)
    state = game.new_initial_state()
    dealt = []
    while state.is_chance_node():
        outcomes = [a for a, _ in state.chance_outcomes()]
        assert len(outcomes) == 28 - len(dealt)
        dealt.append(outcomes[0])
        state.apply_action(outcomes[0])
    assert len(dealt) == 28 and state.current_player() in (0, 1)
    engine = state.engine_state
    assert engine is not None
    laid = deal_round(
        preset("standard", players=2, max_pip=6), 0, (), [full_set(6)[a] for a in dealt]
    )
    assert (engine.hands, engine.boneyard) == (laid.hands, laid.boneyard)


def test_returns_are_the_round_rewards_and_sum_to_zero() -> None:
    game = load(players=3, max_pip=6, rounds=2)
    state = game.new_initial_state()
    play_randomly(state, random.Random(3), 10_000)
    assert state.is_terminal()
    points = [sum(r.scores[s] for r in state.results) for s in range(3)]
    returns = state.returns()
    for seat in range(3):
        assert returns[seat] == pytest.approx((sum(points) - points[seat]) / 2 - points[seat])
    assert sum(returns) == pytest.approx(0.0)


def test_a_resampled_state_is_one_the_player_cannot_tell_apart() -> None:
    game = load(players=3, max_pip=6, rounds=1)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    rng = random.Random(0)
    checked = 0
    for seed in range(6):
        state = game.new_initial_state()
        play_randomly(state, random.Random(seed), 4 + seed)
        if state.is_terminal():
            continue
        player = state.current_player()
        for _ in range(3):
            guess = state.resample_from_infostate(player, sampler)
            assert guess.information_state_string(player) == state.information_state_string(player)
            assert guess.information_state_tensor(player) == state.information_state_tensor(player)
            assert guess.legal_actions() == state.legal_actions()
            assert is_consistent(guess.engine_state, state.engine_state, player)
            play_randomly(guess, rng, 5)  # a guessed world plays on
            checked += 1
    assert checked >= 12


def test_without_a_consistent_world_the_resampler_reshuffles_the_hidden_tiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Determinizer, "world", lambda self, rng, **options: None)
    game = load(players=3, max_pip=6, rounds=1)
    state = game.new_initial_state()
    play_randomly(state, random.Random(1), 6)
    player = state.current_player()
    guess = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert guess.information_state_string(player) == state.information_state_string(player)
    assert guess.legal_actions() == state.legal_actions()
    with pytest.raises(ValueError, match="guessed world"):
        guess.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))


def test_resampling_during_a_deal_keeps_the_players_tiles() -> None:
    game = load(players=2, max_pip=6, rounds=1)
    state = game.new_initial_state()
    for _ in range(10):
        state.apply_action(state.chance_outcomes()[0][0])
    guess = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert guess.order[:7] == state.order[:7]
    assert sorted(guess.order + guess.pool) == sorted(state.order + state.pool)
    assert guess.information_state_string(0) == state.information_state_string(0)


def test_ismcts_plays_with_the_determinizer_as_its_resampler() -> None:
    game = load(players=2, max_pip=6, rounds=1)
    rs = np.random.RandomState(7)
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, rs), uct_c=2.0, max_simulations=25, random_state=rs
    )
    state = game.new_initial_state()
    rng = random.Random(7)
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            searched += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert searched > 0
    assert openspiel_game.GAME_NAME in pyspiel.registered_names()
