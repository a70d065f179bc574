"""The search bot: perfect-information Monte Carlo over guesses of the hidden tiles.

At each decision with more than one legal move it guesses worlds consistent with
everything its seat has seen this round (tiles played, its own draws, and what the
other seats' passes and draws reveal: `referee.botkit.determinize`), plays each
candidate move in every world, finishes the round with plan-aware rollouts, and
keeps the move whose rounds end best for it on average (`referee.botkit.search`).
It thinks for a share of the request's own clock (40% of `move_ms` and 1/200 of
what is left in the bank, at most 400 ms), so it never runs out of time, at any
table size:

    python sample_bots/search_bot.py                  # the share of the clock above
    python sample_bots/search_bot.py --budget-ms 100  # think at most 100 ms a move
    python sample_bots/search_bot.py --worlds 32      # at most 32 worlds (fewer if settled)

With `--worlds` the bot is deterministic for a given game (its randomness comes
from the game's bot seed), which tests use.
"""

from __future__ import annotations

import argparse
import time

from protocol.bot import Game, run
from protocol.messages import Clock, Turn
from referee.botkit import plan
from referee.botkit.search import search
from referee.botkit.tracker import Tracker, move_of_spec

SHARE = 0.4  # of move_ms spent thinking
CAP_MS = 400  # never more than this, by default
BANK_SLICE = 1 / 200  # of what is left in the bank, on top


def budget_ms(clock: Clock, cap_ms: float) -> float:
    """How long to think on this request: a share of its move time plus a small slice
    of what is left in the bank (a slice of what is left never empties it, even with
    no move time at all), never more than `cap_ms`."""
    return min(cap_ms, SHARE * clock.move_ms + BANK_SLICE * clock.bank_ms)


class SearchBot:
    """One bot process: a tracker per game, a search per decision."""

    def __init__(self, cap_ms: float, worlds: int | None) -> None:
        self.cap_ms = cap_ms
        self.worlds = worlds
        self.tracker: Tracker | None = None
        self.game: Game | None = None

    def choose(self, turn: Turn, game: Game) -> int:
        """The index of the chosen move in `turn.legal`."""
        started = time.monotonic()
        if self.game is not game or self.tracker is None:
            self.game, self.tracker = game, Tracker(game.start)
        self.tracker.feed(game.events)
        legal = [move_of_spec(spec) for spec in turn.legal]
        if len(set(legal)) == 1:
            return 0
        knowledge = self.tracker.knowledge
        if knowledge is None:
            return plan.choose(turn, self.tracker.rules)
        if self.worlds is None:
            deadline = started + budget_ms(turn.clock, self.cap_ms) / 1000
        else:
            deadline = float("inf")  # a fixed number of worlds: no clock
        found = search(knowledge, legal, game.rng, deadline=deadline, max_worlds=self.worlds)
        if found.worlds == 0:
            return plan.choose(turn, self.tracker.rules)
        # Its estimate goes with the move: the log keeps it, and spectators and the
        # replay show it after the game (never another seat during it).
        # (`estimate`: the move's mean over the worlds of the others' points less its own.)
        estimate = found.values[found.move]
        game.say(
            f"{estimate:+.1f} over {found.worlds} worlds, {len(found.values)} moves weighed",
            estimate=round(estimate, 2),
            worlds=found.worlds,
            moves=len(found.values),
        )
        return legal.index(found.move)


def main() -> None:
    """Speak the protocol on stdin and stdout until `bye`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget-ms", type=float, default=CAP_MS, help="think at most this long")
    parser.add_argument(
        "--worlds",
        type=int,
        default=None,
        help="at most this many worlds a decision (fewer once the choice is settled), no clock",
    )
    args = parser.parse_args()
    bot = SearchBot(args.budget_ms, args.worlds)
    run(bot.choose, name="search", version="1.0", author="sample bots")


if __name__ == "__main__":
    main()
