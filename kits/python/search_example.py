"""A search bot in a few dozen lines: `python search_example.py`.

For each decision it guesses worlds consistent with what its seat has seen (the
determinizer uses the tiles played, its own draws, and what the other seats'
passes and draws reveal), plays every legal move in each world with the engine as
its forward model, finishes the round with random legal moves, and keeps the move
whose rounds end best for it. Swap the rollout for your own policy and you have
your own search; `sample_bots/search_bot.py` is the tuned version.
"""

from __future__ import annotations

import time

from protocol.bot import Game, run
from protocol.messages import Turn
from referee.botkit.determinize import Determinizer
from referee.botkit.tracker import Tracker, move_of_spec
from referee.rules import State, apply, legal_moves

THINK_S = 0.2  # seconds per decision (the request's clock allows 1 s by default)
following: list[tuple[Game, Tracker]] = []  # the game being followed, and its tracker


def rollout(state: State, seat: int, game: Game) -> float:
    """Finish the round with random legal moves; the others' mean points less ours."""
    index = state.round_index
    while state.round_index == index and state.outcome is None:
        state = apply(state, game.rng.choice(legal_moves(state)))
    scores = state.results[index].scores
    others = [p for s, p in enumerate(scores) if s != seat]
    return sum(others) / len(others) - scores[seat]


def choose(turn: Turn, game: Game) -> int:
    """The legal move with the best mean rollout over guessed worlds."""
    deadline = time.monotonic() + THINK_S
    if not following or following[0][0] is not game:  # a new game on this connection
        following[:] = [(game, Tracker(game.start))]
    tracker = following[0][1]
    tracker.feed(game.events)
    moves = [move_of_spec(spec) for spec in turn.legal]
    if len(moves) == 1 or tracker.knowledge is None:
        return 0
    guesser = Determinizer(tracker.knowledge)
    totals = [0.0] * len(moves)
    while time.monotonic() < deadline:
        world = guesser.world(game.rng, mover=turn.seat)  # None: no consistent guess
        if world is None:
            break
        for i, move in enumerate(moves):
            totals[i] += rollout(apply(world, move), turn.seat, game)
    return max(range(len(moves)), key=totals.__getitem__)


if __name__ == "__main__":
    run(choose, name="python-search-example")
