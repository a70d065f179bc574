"""The plan bot: greedy with a lookahead of the chains its hand can still build.

Each legal play is scored by what it leaves in hand: the longest chain it can
still build on its own train, then the longest it can build on any other train it
may use; every tile on neither chain is stuck and costs its true value (the
double-blank as the rules score it). Doubles it can follow are welcome, a play on
its own train while its marker is up brings the marker down, and once an opponent
is close to going out it sheds value first. The scoring is
`referee.botkit.plan` (the same plan the search bot's rollouts use, made cheap).
Run it with the project's Python: `python sample_bots/plan_bot.py`.
"""

from __future__ import annotations

from protocol.bot import Game, run
from protocol.messages import RulesInfo, Turn
from referee.botkit import plan
from referee.botkit.tracker import rules_of
from referee.rules import Rules

_rules: tuple[RulesInfo, Rules] | None = None  # the current game's, made once a game


def choose(turn: Turn, game: Game) -> int:
    """The index of the chosen move in `turn.legal`."""
    global _rules
    info = game.start.rules
    if _rules is None or _rules[0] is not info:
        _rules = (info, rules_of(info))
    return plan.choose(turn, _rules[1])


def main() -> None:
    """Speak the protocol on stdin and stdout until `bye`."""
    run(choose, name="plan", version="1.0", author="sample bots")


if __name__ == "__main__":
    main()
