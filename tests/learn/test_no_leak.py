"""No leak: what a seat observes does not change when the tiles it cannot see move.

For many seeds, rule sets and positions, the other hands and the boneyard are
shuffled among themselves (each hand keeping its size: `table.shuffle_hidden`, on a
copy of the engine state), and every shape a learner gets for the seat must stay
the same, byte for byte:

- the PettingZoo observation (the vector and the action mask);
- OpenSpiel's information-state string and tensor;
- OpenSpiel's observation string and tensor.

The test has teeth: the same shuffles do change what the other seats would see,
so an encoding that read another hand or the boneyard would fail here.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyspiel
import pytest

from referee.game.wire import view_info
from referee.learn import encode, mexican_train_v0, openspiel_game
from referee.learn.openspiel_game import MexicanTrainState
from referee.learn.table import shuffle_hidden
from referee.rules import State

TABLES = [  # preset, players, set, rounds
    ("standard", 3, 6, 2),
    ("celko", 2, 6, 2),  # long first trains, announcing
    ("standard+fast-first-turn", 3, 6, 2),  # other sides' first trains hidden while built
    ("standard+teams+branching-doubles", 4, 9, 1),  # a partner's hand is hidden too
    ("private-trains", 3, 6, 2),  # engine in the centre, no Mexican train
    ("masters", 2, 6, 2),
]
SEEDS = range(6)
SHUFFLES = 3


def positions(
    name: str, players: int, max_pip: int, rounds: int, seed: int
) -> list[MexicanTrainState]:
    """Decision positions of a game of random moves (every third one)."""
    game = pyspiel.load_game(
        openspiel_game.GAME_NAME,
        {"preset": name, "players": players, "max_pip": max_pip, "rounds": rounds},
    )
    rng = random.Random(seed)
    state = game.new_initial_state()
    found = []
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            continue
        if decisions % 3 == 0:
            found.append(state.clone())
        decisions += 1
        state.apply_action(rng.choice(state.legal_actions()))
    return found


def shapes(position: MexicanTrainState, env: mexican_train_v0.raw_env, seat: int) -> list[Any]:
    """Every shape of `seat`'s observation at `position`, as comparable values."""
    engine = position.engine_state
    assert engine is not None
    env.state = engine
    env.agent_selection = env.possible_agents[engine.to_move]
    pettingzoo = env.observe(env.possible_agents[seat])
    return [
        pettingzoo["observation"].tobytes(),
        pettingzoo["action_mask"].tobytes(),
        position.information_state_string(seat),
        np.asarray(position.information_state_tensor(seat), np.float32).tobytes(),
        position.observation_string(seat),
        np.asarray(position.observation_tensor(seat), np.float32).tobytes(),
    ]


def others_see(state: State, seat: int) -> list[bytes]:
    """What every other seat's encoding holds: changes when the hidden tiles move."""
    rules = state.rules
    return [
        encode.observation(rules, view_info(state, other), other).tobytes()
        for other in range(rules.players)
        if other != seat
    ]


@pytest.mark.parametrize(("name", "players", "max_pip", "rounds"), TABLES)
def test_no_observation_changes_when_the_hidden_tiles_are_shuffled(
    name: str, players: int, max_pip: int, rounds: int
) -> None:
    env = mexican_train_v0.raw_env(preset=name, players=players, max_pip=max_pip, rounds=rounds)
    env.reset(seed=0)
    rng = random.Random(f"{name}/{players}")
    checked = moved = 0
    for seed in SEEDS:
        for position in positions(name, players, max_pip, rounds, seed):
            real = position.engine_state
            assert real is not None
            for seat in range(players):
                before = shapes(position, env, seat)
                for _ in range(SHUFFLES):
                    world = shuffle_hidden(real, seat, rng)
                    assert world.hands[seat] == real.hands[seat]
                    assert [len(h) for h in world.hands] == [len(h) for h in real.hands]
                    assert len(world.boneyard) == len(real.boneyard)
                    after = shapes(position.with_world(world), env, seat)
                    assert after == before, f"seat {seat} sees the hidden tiles ({name})"
                    moved += others_see(world, seat) != others_see(real, seat)
                    checked += 1
    assert checked > 100
    assert moved > checked // 2, "the shuffles hardly moved a hidden tile: the test has no teeth"


def test_the_shuffle_keeps_a_drawn_tile_with_its_drawer() -> None:
    for position in positions("standard", 3, 6, 1, 1):
        real = position.engine_state
        assert real is not None
        if real.drawn is None:
            continue
        other = (real.to_move + 1) % 3
        world = shuffle_hidden(real, other, random.Random(0))
        assert real.drawn in world.hands[real.to_move]
        assert world.hands[other] == real.hands[other]
        return
    pytest.fail("no position right after a draw")
