"""`mexican_train_v0`: PettingZoo's own checks, masks, rewards, seeds and episodes."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from referee.learn import encode, mexican_train_v0
from referee.rules import preset

# PettingZoo's api_test warns about any environment whose observations are dicts
# unless it is one of PettingZoo's own classic games (it allows those by name): the
# {"observation", "action_mask"} dict is the shape the brief and PettingZoo's classic
# environments use, so these two warnings cannot be avoided.
DICT_OBSERVATION_WARNINGS = [
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning",
]


def small(**kwargs: object) -> mexican_train_v0.raw_env:
    return mexican_train_v0.raw_env(players=3, max_pip=6, rounds=2, **kwargs)  # type: ignore[arg-type]


@pytest.mark.filterwarnings(*DICT_OBSERVATION_WARNINGS)
@pytest.mark.parametrize(
    ("name", "players", "max_pip"),
    [("standard", 3, 6), ("celko", 2, 6), ("standard+branching-doubles+teams", 4, 9)],
)
def test_api_test_passes(name: str, players: int, max_pip: int) -> None:
    env = mexican_train_v0.env(preset=name, players=players, max_pip=max_pip, rounds=1)
    api_test(env, num_cycles=200)


def test_seed_test_passes() -> None:
    seed_test(mexican_train_v0.env)


def play_out(env: mexican_train_v0.raw_env, seed: int) -> list[tuple[str, int]]:
    """A whole episode of the first legal action; checks the masks on the way."""
    env.reset(seed=seed)
    played = []
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.any(), "the acting seat always has a move"
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        action = int(np.flatnonzero(mask)[0])
        played.append((agent, action))
        env.step(action)
    return played


def test_reset_with_a_seed_replays_the_same_deals_and_another_seed_does_not() -> None:
    env = small()
    first = play_out(env, 3)
    assert play_out(env, 3) == first
    assert play_out(small(), 3) == first
    assert play_out(env, 4) != first


def test_rounds_limit_the_episode_and_rewards_follow_the_round_points() -> None:
    env = small()
    env.reset(seed=1)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0]))
        for a, r in env.rewards.items():
            totals[a] += r
    assert len(env.results) == 2
    for result in env.results:
        assert sum(result.scores) >= 0
    points = [sum(r.scores[s] for r in env.results) for s in range(3)]
    for seat, agent in enumerate(env.possible_agents):
        others = sum(points) - points[seat]
        assert totals[agent] == pytest.approx(others / 2 - points[seat])
    assert sum(totals.values()) == pytest.approx(0.0)
    assert not env.agents  # every agent left after its last step


def test_the_default_episode_is_the_whole_game() -> None:
    env = mexican_train_v0.raw_env(players=2, max_pip=6)
    play_out(env, 0)
    assert len(env.results) == 7  # double-6: engines 6 down to 0


def test_the_observation_is_the_encoding_of_the_seats_view() -> None:
    env = small()
    env.reset(seed=2)
    rules = preset("standard", players=3, max_pip=6)
    assert env.observation_space("player_0")["observation"].shape == (
        encode.observation_size(rules),
    )
    assert env.action_space("player_1").n == encode.action_count(rules)
    obs = env.observe("player_1")["observation"]
    from referee.game.wire import view_info

    assert env.state is not None
    assert np.array_equal(obs, encode.observation(rules, view_info(env.state, 1), 1))


def test_an_illegal_action_ends_the_game_for_env_and_fails_for_raw_env(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = small()
    raw.reset(seed=0)
    obs = raw.observe(raw.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        raw.step(illegal)
    env = mexican_train_v0.env(players=3, max_pip=6, rounds=2, illegal_reward=-7.0)
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(illegal)
    assert "Illegal move" in caplog.text  # PettingZoo's logger says so
    assert all(env.terminations.values())
    assert env._cumulative_rewards[agent] == -7.0


def test_ansi_render_shows_the_whole_table() -> None:
    env = small(render_mode="ansi")
    env.reset(seed=5)
    text = env.render()
    assert text is not None
    assert "the Mexican train" in text and "player_0 holds" in text and "points:" in text
    with pytest.raises(ValueError, match="ansi"):
        small(render_mode="human")
