"""A medium bot for the arena's final: the sample greedy bot's move half the time, a
uniformly random legal move the other half (seeded by the game's bot seed, so a game
replays exactly). It ranks between greedy and random."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_bots"))

from greedy_bot import choose as greedy

from protocol.bot import Game, run
from protocol.messages import Turn


def choose(turn: Turn, game: Game) -> int:
    if game.rng.random() < 0.5:
        return game.rng.randrange(len(turn.legal))
    return greedy(turn, game)


if __name__ == "__main__":
    run(choose, name="half-greedy", version="1.0", author="tests")
