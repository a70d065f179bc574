"""`mexican_train_v0`: Mexican Train as a PettingZoo AEC environment.

    from referee.learn import mexican_train_v0

    env = mexican_train_v0.env(players=3, max_pip=9, rounds=2)
    env.reset(seed=7)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        done = terminated or truncated
        env.step(None if done else env.action_space(agent).sample(obs["action_mask"]))

Agents are `player_0` ... `player_{n-1}`, seat order. The seat to move acts; one
decision is one action, so a turn of several tiles (a double and its follow-up, a
long first train) is several steps of the same agent in a row.

- Actions: `Discrete(encode.action_count(rules))`, the ids of `referee.learn.encode`.
- Observations: `{"observation": Box(0, 1, (encode.observation_size(rules),), float32),
  "action_mask": Box(0, 1, (action_count,), int8)}`; the observation is
  `encode.observation(rules, view_info(state, seat), seat)`, what the seat may see
  and nothing else. The acting seat's mask marks its legal moves (never none);
  every other seat's mask is all zeros.
- Rewards: at the end of each round every seat gets the mean of the other seats'
  points in that round minus its own (`table.round_rewards`); a round's rewards sum
  to zero. Between round ends every reward is 0.
- Episodes: the whole game, or its first `rounds` rounds. Every deal is a shuffle
  from the environment's seeded generator laid out by `referee.rules.deal_round`,
  so `reset(seed=...)` replays the same deals. When the episode ends, observations
  show the table as it was at the last decision.
- `env()` wraps `raw_env()` in PettingZoo's usual wrappers: an action outside the
  mask ends the game with `illegal_reward` for the seat that chose it (0 for the
  others), actions out of range fail, and the API's order is enforced.
- `render_mode="ansi"`: `render()` returns the whole position as text, every hand too.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..game.wire import view_info
from ..rules import RoundResult, Rules, State, apply, deal_round, round_tiles
from . import encode
from .table import (
    board_text,
    closed_round,
    legal_actions,
    round_limit,
    round_rewards,
    table_rules,
)

NAME = "mexican_train_v0"
ILLEGAL_REWARD = -100.0  # what an action outside the mask costs its seat under `env()`

Obs = dict[str, Any]


def env(illegal_reward: float = ILLEGAL_REWARD, **kwargs: Any) -> AECEnv:
    """The environment in PettingZoo's usual wrappers (see the module's docstring);
    `kwargs` go to `raw_env`."""
    wrapped: AECEnv = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=illegal_reward)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


class raw_env(AECEnv):  # type: ignore[misc]  # PettingZoo's name; AECEnv is untyped
    """The unwrapped AEC environment; `state` is the engine's `State` at the current decision."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": NAME,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        preset: str = "standard",
        players: int = 4,
        max_pip: int = 12,
        rounds: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}: only 'ansi' is supported")
        self.rules: Rules = table_rules(preset, players, max_pip)
        self.rounds = round_limit(self.rules, rounds)
        self.render_mode = render_mode
        self.possible_agents: list[str] = [f"player_{s}" for s in range(players)]
        self.agents: list[str] = []
        count = encode.action_count(self.rules)
        size = encode.observation_size(self.rules)
        # One space object per agent, made once: PettingZoo seeds and compares them by identity.
        self.observation_spaces = {
            a: gymnasium.spaces.Dict(
                {
                    "observation": gymnasium.spaces.Box(0.0, 1.0, (size,), np.float32),
                    "action_mask": gymnasium.spaces.Box(0, 1, (count,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: gymnasium.spaces.Discrete(count) for a in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.state: State | None = None
        self.results: tuple[RoundResult, ...] = ()

    # ------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ the game

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _deal(self, index: int, results: tuple[RoundResult, ...]) -> State:
        """Round `index` dealt from a shuffle of the environment's generator."""
        tiles = round_tiles(self.rules, index)
        order = [tiles[int(i)] for i in self.np_random.permutation(len(tiles))]
        return deal_round(self.rules, index, results, order)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.results = ()
        self.state = self._deal(0, ())
        self.agent_selection = self.possible_agents[self.state.to_move]

    def observe(self, agent: str) -> Obs:
        state = self.state
        assert state is not None, "reset() first"
        seat = self._seat(agent)
        obs = encode.observation(self.rules, view_info(state, seat), seat)
        mask = np.zeros(encode.action_count(self.rules), dtype=np.int8)
        acting = (
            agent == self.agent_selection
            and not self.terminations.get(agent, True)
            and not self.truncations.get(agent, True)
        )
        if acting:
            mask[list(legal_actions(state))] = 1
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.state
        assert state is not None
        if action is None:
            raise ValueError(f"{agent} is still playing: None is an action only after the end")
        legal = legal_actions(state)
        move = legal.get(int(action))
        if move is None:
            spec = encode.move_of_action(self.rules, int(action))
            raise ValueError(f"action {int(action)} ({spec}) is not legal for {agent} now")
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        after = apply(state, move)
        result = closed_round(state, after)
        if result is None:
            self.state = after
        else:
            for seat, reward in enumerate(round_rewards(result)):
                self.rewards[self.possible_agents[seat]] = reward
            self.results = after.results
            if len(self.results) >= self.rounds:
                # The episode is over: the last decision's table stays on show.
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self.state = self._deal(len(self.results), self.results)
        self._accumulate_rewards()
        assert self.state is not None
        self.agent_selection = self.possible_agents[self.state.to_move]
        if self.terminations[self.agent_selection]:
            self._deads_step_first()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: make the env with 'ansi'")
            return None
        assert self.state is not None, "reset() first"
        return board_text(self.state, self.results, self.possible_agents)

    def close(self) -> None:
        """Nothing to release: the environment holds no files or processes."""
