"""The single-agent Gymnasium environment: `check_env`, opponents, rewards, illegal actions."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from referee.learn import encode
from referee.learn.gym_env import ENV_ID, MexicanTrainEnv


def test_check_env_passes_on_the_registered_environment() -> None:
    env = gymnasium.make(ENV_ID, players=2, max_pip=6, rounds=1, render_mode="ansi")
    check_env(env.unwrapped)  # unwrapped keeps the spec, so the render modes are checked too


def first_legal(observation: encode.Observation, mask: encode.Mask) -> int:
    return int(np.flatnonzero(mask)[0])


def episode(env: MexicanTrainEnv, seed: int) -> tuple[float, int]:
    """A whole episode of the first legal action: total reward and steps."""
    obs, info = env.reset(seed=seed)
    assert info["seat"] == env.seat
    total, steps, done = 0.0, 0, False
    while not done:
        assert obs["action_mask"].any() and env.action_masks().dtype == np.bool_
        obs, reward, terminated, truncated, _ = env.step(
            first_legal(obs["observation"], obs["action_mask"])
        )
        total += reward
        steps += 1
        done = terminated or truncated
    return total, steps


def test_the_agents_reward_is_its_share_of_the_round_points() -> None:
    env = MexicanTrainEnv(players=3, max_pip=6, rounds=2, seat=1)
    total, _ = episode(env, 4)
    points = [sum(r.scores[s] for r in env.game.results) for s in range(3)]
    assert len(env.game.results) == 2
    assert total == pytest.approx((points[0] + points[2]) / 2 - points[1])


def test_opponents_play_their_policies_and_a_seed_replays_the_episode() -> None:
    calls: list[int] = []

    def last_legal(observation: encode.Observation, mask: encode.Mask) -> int:
        calls.append(int(mask.sum()))
        return int(np.flatnonzero(mask)[-1])

    env = MexicanTrainEnv(players=3, max_pip=6, rounds=1, opponents=[last_legal, first_legal])
    first = episode(env, 9)
    assert calls and min(calls) >= 1
    assert episode(env, 9) == first
    random_opponents = MexicanTrainEnv(players=3, max_pip=6, rounds=1)
    assert episode(random_opponents, 9) == episode(random_opponents, 9)
    with pytest.raises(ValueError, match="opponents"):
        MexicanTrainEnv(players=3, opponents=[first_legal])


def test_a_seat_drawn_at_each_reset() -> None:
    env = MexicanTrainEnv(players=4, max_pip=9, rounds=1, seat=None)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(12)}
    assert len(seats) > 1


def test_an_illegal_action_ends_the_episode_with_its_reward() -> None:
    env = MexicanTrainEnv(players=2, max_pip=6, rounds=1, illegal_reward=-5.0)
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info) == (-5.0, True, False, {"illegal": True})
    assert not obs["action_mask"].any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_render_is_the_table_as_text() -> None:
    env = MexicanTrainEnv(players=2, max_pip=6, rounds=1, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert text is not None and "seat 0's train" in text
