"""The program the referee starts: `python bot.py`, or `python bot.py --policy MODULE:FUNCTION`.

Without `--policy` the bot plays `strategy.choose`. With it, the bot plays a
policy trained in the learning environments (docs/learn.md): FUNCTION takes the
environment's observation and action mask (numpy arrays, computed here from the
turn request exactly as the environments compute them) and returns an action id,
which is sent as the index of that move in the request's `legal` list. MODULE is
imported from the current folder, this kit's folder or PYTHONPATH. An action
outside the mask is logged on stderr and `strategy.choose` plays instead.

`protocol.bot.run` speaks the protocol: `hello` -> `ready`, `ping` -> `pong`,
`turn` -> `move`, `bye` or the end of input ends the bot; every other message
is kept in `game.events` or ignored. `main` takes the streams too, so the tests
feed it recorded lines in memory. Logs go to stderr: stdout is for protocol lines.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

import msgspec
import strategy  # this kit's strategy.py: START HERE

from protocol.bot import Game, run
from protocol.messages import Turn

NAME = "python-kit"

Choose = Callable[[Turn, Game], int]


def safe(choose: Choose) -> Choose:
    """`choose`, except that an error or an index outside `turn.legal` is logged and
    legal move 0 is played: a bug costs a move, never the game."""

    def guarded(turn: Turn, game: Game) -> int:
        try:
            index = choose(turn, game)
        except Exception as exc:  # the strategy's bug: log it, keep playing
            print(f"{NAME}: the strategy failed ({exc!r}); playing legal move 0", file=sys.stderr)
            return 0
        if not isinstance(index, int) or not 0 <= index < len(turn.legal):
            print(f"{NAME}: the strategy chose {index!r}; playing legal move 0", file=sys.stderr)
            return 0
        return index

    return guarded


def load_policy(spec: str) -> Callable[[Any, Any], Any]:
    """The function named by `MODULE:FUNCTION`, its module imported from the current
    folder, this kit's folder or PYTHONPATH."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise SystemExit(f"--policy {spec!r}: give MODULE:FUNCTION, e.g. example_policy:policy")
    for folder in (os.path.dirname(os.path.abspath(__file__)), os.getcwd()):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    function: Callable[[Any, Any], Any] = getattr(
        importlib.import_module(module_name), function_name
    )
    return function


def policy_chooser(policy: Callable[[Any, Any], Any]) -> Choose:
    """A `choose` that asks a trained policy, through the learning environments' encoding."""
    # Imported here: only a bot run with --policy needs numpy and the encoding.
    from referee.learn import encode
    from referee.rules import Rules

    rules_of: dict[str, Rules] = {}  # by game id: the table's rules, for the encoding

    def choose(turn: Turn, game: Game) -> int:
        rules = rules_of.get(game.start.game)
        if rules is None:
            rules_of.clear()
            rules = Rules.from_dict(msgspec.structs.asdict(game.start.rules))
            rules_of[game.start.game] = rules
        observation = encode.observation(rules, turn.view, turn.seat)
        mask = encode.action_mask(rules, turn.legal)
        action = int(policy(observation, mask))
        index = encode.legal_index(rules, turn.legal, action)
        if index is None:
            print(f"{NAME}: the policy chose action {action}, not legal now", file=sys.stderr)
            return strategy.choose(turn, game)
        return index

    return choose


def main(
    argv: Sequence[str] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Parse the options and speak the protocol until `bye` or the end of input."""
    parser = argparse.ArgumentParser(description="A Mexican Train bot (see README.md).")
    parser.add_argument("--policy", metavar="MODULE:FUNCTION", help="play a trained policy")
    args = parser.parse_args(argv)
    choose = policy_chooser(load_policy(args.policy)) if args.policy else strategy.choose
    run(safe(choose), name=NAME, version="1.0", stdin=stdin, stdout=stdout)


if __name__ == "__main__":
    main()
