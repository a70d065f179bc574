"""Mexican Train for one agent, as a Gymnasium environment against chosen opponents.

    from referee.learn.gym_env import MexicanTrainEnv

    env = MexicanTrainEnv(players=2, max_pip=6, rounds=1)
    obs, info = env.reset(seed=3)
    done = False
    while not done:
        legal = obs["action_mask"].nonzero()[0]
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        done = terminated or truncated

The agent plays one seat (`seat`, or a seat drawn at each reset when None); every
other seat plays an opponent policy: a function from that seat's observation and
action mask (numpy arrays, the PettingZoo environment's) to an action id. With no
opponents given, each plays a uniformly random legal move. `step` plays the
agent's action, then the opponents until it is the agent's decision again or the
episode ends.

- Observation space: `Dict(observation=Box(0, 1, float32), action_mask=Box(0, 1,
  int8))`, the PettingZoo environment's; `gymnasium.utils.env_checker.check_env`
  accepts it. The mask is never all zeros while the episode runs;
  `action_masks()` returns it as booleans for maskable learners.
- Reward: the agent's round rewards (`table.round_rewards`) earned since its last
  action, the opponents' moves included.
- An action outside the mask ends the episode (`terminated`) with reward
  `illegal_reward` and `info["illegal"] = True`: nothing is played for the agent.
- Registered as `MexicanTrain-v0`: `gymnasium.make("MexicanTrain-v0", players=3)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from . import encode
from .mexican_train_v0 import ILLEGAL_REWARD, raw_env

# An opponent (or a trained agent): the seat's observation and mask to an action id.
Policy = Callable[[encode.Observation, encode.Mask], int]
Obs = dict[str, npt.NDArray[Any]]

ENV_ID = "MexicanTrain-v0"


class MexicanTrainEnv(gymnasium.Env[Obs, np.int64]):
    """One seat of a Mexican Train table; the others play `opponents`."""

    # An instance variable in gymnasium.Env's annotations, so not a ClassVar here.
    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        preset: str = "standard",
        players: int = 4,
        max_pip: int = 12,
        rounds: int | None = None,
        seat: int | None = 0,
        opponents: Policy | Sequence[Policy] | None = None,
        illegal_reward: float = ILLEGAL_REWARD,
        render_mode: str | None = None,
    ) -> None:
        self.game = raw_env(preset, players, max_pip, rounds, render_mode=render_mode)
        self.rules = self.game.rules
        self.render_mode = render_mode
        if seat is not None and not 0 <= seat < players:
            raise ValueError(f"seat={seat}: the table has seats 0 to {players - 1}")
        self.fixed_seat = seat
        self.seat = seat or 0
        if opponents is None or callable(opponents):
            self.opponents: list[Policy | None] = [opponents] * players
        else:
            if len(opponents) != players - 1:
                raise ValueError(f"{len(opponents)} opponents given for {players - 1} other seats")
            self.opponents = list(opponents)
        self.illegal_reward = illegal_reward
        self._pending = 0.0
        agent = self.game.possible_agents[0]
        self.observation_space = self.game.observation_space(agent)
        self.action_space = self.game.action_space(agent)

    def _policy(self, seat: int) -> Policy | None:
        """The policy of another seat: the opponents in seat order, skipping the agent's."""
        if len(self.opponents) == self.rules.players:  # one policy for every seat
            return self.opponents[seat]
        return self.opponents[seat if seat < self.seat else seat - 1]

    def _random_legal(self, mask: encode.Mask) -> int:
        return int(self.np_random.choice(np.flatnonzero(mask)))

    def _play_opponents(self) -> float:
        """Let the other seats move until the agent's turn or the end; the agent's reward."""
        game = self.game
        me = game.possible_agents[self.seat]
        reward = 0.0
        while game.agents and game.agent_selection != me:
            agent = game.agent_selection
            if game.terminations[agent]:
                break
            obs = game.observe(agent)
            policy = self._policy(game.possible_agents.index(agent))
            mask = obs["action_mask"]
            if policy is None:
                action = self._random_legal(mask)
            else:
                action = int(policy(obs["observation"], mask))
            game.step(action)
            reward += game.rewards.get(me, 0.0)
        return reward

    def _over(self) -> bool:
        return any(self.game.terminations.values())

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Obs, dict[str, Any]]:
        super().reset(seed=seed)
        if self.fixed_seat is None:
            self.seat = int(self.np_random.integers(self.rules.players))
        self.game.reset(seed=int(self.np_random.integers(2**31)))
        # Rewards of rounds the opponents finish before the agent's first decision (a long
        # first train can end a round) come with the agent's first step.
        self._pending = self._play_opponents()
        while self._over():  # the episode ended before the agent ever decided: deal again
            self.game.reset(seed=int(self.np_random.integers(2**31)))
            self._pending = self._play_opponents()
        return self._observe(), {"seat": self.seat}

    def _observe(self) -> Obs:
        obs = self.game.observe(self.game.possible_agents[self.seat])
        return {"observation": obs["observation"], "action_mask": obs["action_mask"]}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal actions now, as booleans (the convention of maskable learners)."""
        return self._observe()["action_mask"].astype(bool)

    def step(self, action: np.int64 | int) -> tuple[Obs, float, bool, bool, dict[str, Any]]:
        game = self.game
        me = game.possible_agents[self.seat]
        if self._over() or game.agent_selection != me:
            raise RuntimeError("the episode is over: call reset()")
        mask = game.observe(me)["action_mask"]
        if not (0 <= int(action) < mask.size and mask[int(action)]):
            self.game.terminations = dict.fromkeys(self.game.agents, True)
            return self._observe(), float(self.illegal_reward), True, False, {"illegal": True}
        game.step(int(action))
        reward = game.rewards.get(me, 0.0) + self._pending
        self._pending = 0.0
        if not self._over():
            reward += self._play_opponents()
        return self._observe(), float(reward), self._over(), False, {}

    def render(self) -> str | None:
        return self.game.render()


gymnasium.register(id=ENV_ID, entry_point="referee.learn.gym_env:MexicanTrainEnv")
