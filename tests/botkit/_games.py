"""Games played in-process for the botkit tests: every decision with the state before it."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from referee.rules import Move, Rules, State, apply, legal_moves, new_game

Policy = Callable[[State, random.Random], Move]


def random_policy(state: State, rng: random.Random) -> Move:
    return rng.choice(legal_moves(state))


@dataclass
class Point:
    """One decision of a game: the round's first state, the moves since, the state."""

    start: State
    moves: list[Move]
    state: State


def decisions(rules: Rules, seed: int, policy: Policy = random_policy) -> Iterator[Point]:
    """Every decision of one game, with what led to it within its round."""
    rng = random.Random(f"botkit/{seed}")
    state = new_game(rules, seed)
    start, moves = state, []
    while state.outcome is None:
        yield Point(start, list(moves), state)
        move = policy(state, rng)
        after = apply(state, move)
        if after.round_index != state.round_index:
            start, moves = after, []
        else:
            moves.append(move)
        state = after
