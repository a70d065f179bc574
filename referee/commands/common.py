"""What every command shares: one-line errors (`fail`), `run_trio`, the --sandbox,
--env and --set options and their parsing, and the console that output goes to.

Imports nothing of the other commands, so that a command's helper modules
(`play_game`, `sprt_match`) may import it.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console


STOPPED = 3  # the exit status of a league stopped because its own disk is full
STDOUT_LOST = 4  # the exit status of a command whose standard output could not be written


def fail(message: str, status: int = 2) -> NoReturn:
    """Print one error line to stderr and exit with `status`. The message is shown
    escaped (`referee.text.shown`): it may quote a bot, a name or a file."""
    from ..text import shown

    click.echo(f"referee: error: {shown(message)}", err=True)
    sys.exit(status)


T = TypeVar("T")


def run_trio(main_fn: Callable[[], Awaitable[T]]) -> T:
    """`trio.run`, with a lone exception (Ctrl-C above all) taken out of its group.

    trio reports what escapes a nursery as an exception group; the command line
    wants to handle KeyboardInterrupt and one-line errors as themselves.
    """
    import trio

    try:
        return trio.run(main_fn)
    except BaseExceptionGroup as group:
        if group.subgroup(KeyboardInterrupt) is not None:
            raise KeyboardInterrupt from None
        leaves = list(_leaves(group))
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


def sandbox_option(default: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--sandbox, shared by play, check-bot, league and serve; `default` is said in the help."""
    return click.option(
        "--sandbox",
        type=click.Choice(["auto", "none", "bwrap"]),
        default=None,
        help="Run every bot the referee starts in this sandbox: bwrap (bubblewrap, see "
        f"docs/sandbox.md), none, or auto (bwrap where bubblewrap works). Default: {default}.",
    )


AUTHOR_SANDBOX = "none"  # play and check-bot: the bot author's own tools
LEAGUE_SANDBOX = "each bot's `sandbox` key, else auto (bots of a league are sandboxed by default)"


env_option = click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set NAME in every bot's environment (repeatable). Bots get nothing else of the "
    "referee's environment but PATH (docs/bots.md).",
)


def parse_env(pairs: tuple[str, ...]) -> dict[str, str]:
    """`NAME=VALUE` strings from `--env` into a dict; a malformed one is a usage error."""
    from ..bots.process import env_name

    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not env_name(name):
            fail(f"--env {pair!r}: expected NAME=VALUE, NAME made of letters, digits and _")
        out[name] = value
    return out


def wide_console() -> Console:
    """stdout: the terminal's width; in a file or pipe, no hard wrap (see `consoles`)."""
    from ..consoles import output_console

    return output_console()


def parse_sets(pairs: tuple[str, ...]) -> dict[str, str]:
    """`key=value` strings from `--set` into a dict; a malformed one is a usage error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            fail(f"--set {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out
