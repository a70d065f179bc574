"""A bot that picks uniformly among the legal moves.

It draws from `game.rng`, which `protocol.bot.run` seeds with the bot seed of
each game, so the same game seed always gives the same choices. Run it with the
project's Python: `python sample_bots/random_bot.py`.
"""

from __future__ import annotations

from protocol.bot import Game, run
from protocol.messages import Turn


def choose(turn: Turn, game: Game) -> int:
    """An index into `turn.legal`, uniformly at random."""
    return game.rng.randrange(len(turn.legal))


def main() -> None:
    """Speak the protocol on stdin and stdout until `bye`."""
    run(choose, name="random", version="1.0", author="sample bots")


if __name__ == "__main__":
    main()
