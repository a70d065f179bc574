"""Games played in-process for the botkit tests: every decision with the state before it."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from referee.botkit.knowledge import Knowledge
from referee.rules import Move, Rules, State, apply, legal_moves, new_game

Policy = Callable[[State, random.Random], Move]


def random_policy(state: State, rng: random.Random) -> Move:
    return rng.choice(legal_moves(state))


@dataclass
class Point:
    """One decision of a game: the round's first state, the moves since, the state.

    With `decisions(..., known=True)`, `known[s]` is what seat s knows now, the same
    as `Knowledge.from_moves(start, moves, s)` but built as the game goes (at the
    round's start, then `record` of each step: what `from_moves` does each time over,
    and `tests/botkit/test_tracker.py` holds the two equal). It is the game's own
    record, valid until the game moves on."""

    start: State
    moves: list[Move]
    state: State
    known: list[Knowledge] | None = None


def decisions(
    rules: Rules, seed: int, policy: Policy = random_policy, *, known: bool = False
) -> Iterator[Point]:
    """Every decision of one game, with what led to it within its round."""
    rng = random.Random(f"botkit/{seed}")
    state = new_game(rules, seed)
    start = state
    moves: list[Move] = []
    seats = range(rules.players)
    knowledge = [Knowledge.at_start(state, s) for s in seats] if known else None
    while state.outcome is None:
        yield Point(start, list(moves), state, knowledge)
        move = policy(state, rng)
        after = apply(state, move)
        if after.round_index != state.round_index:
            start, moves = after, []
            if knowledge is not None:
                knowledge = [Knowledge.at_start(after, s) for s in seats]
        else:
            moves.append(move)
            if knowledge is not None:
                for k in knowledge:
                    k.record(state, move, after)
        state = after
