"""The `referee` command line: a thin click layer over library calls.

This module only assembles the group; each command lives in a module of its own
in `referee.commands`, and what they share in `referee.commands.common`. Errors
a user can fix (a bad option, a bad file) print one line naming what was wrong
and exit with status 2; nothing here holds game logic.

Standard output that cannot be written (a full disk behind a redirect,
/dev/full) stops no command: its work goes on and its files are written as
usual (`referee.consoles.StdoutGuard`), and at the end one line on stderr says
that standard output could not be written, with exit status 4 (`STDOUT_LOST`)
where the command would have exited 0 or 1.
"""

from __future__ import annotations

import errno
import importlib
from typing import TYPE_CHECKING, Any

import click

from .consoles import StdoutGuard

if TYPE_CHECKING:  # what COMMANDS loads, for the layout's import graph (tests/test_layout)
    from .commands import (  # noqa: F401
        arena,
        check_bot,
        commit,
        connect,
        event,
        keygen,
        league,
        match,
        play,
        replay,
        reveal,
        rules,
        schema,
        selfplay,
        serve,
        site,
        standings,
        token,
        verify,
    )

# Each command, by name: its module in `referee.commands` and the click command in it.
# A command's module is imported when that command runs (or for the group's help), so a
# `referee` process pays only for the command it runs: every `referee league` of a test
# suite, a cluster or a script starts about 55 ms sooner than with every command loaded.
COMMANDS = {
    "arena": "arena:arena_cmd",
    "check-bot": "check_bot:check_bot_cmd",
    "commit": "commit:commit_cmd",
    "connect": "connect:connect_cmd",
    "event": "event:event_cmd",
    "keygen": "keygen:keygen_cmd",
    "league": "league:league_cmd",
    "match": "match:match_cmd",
    "play": "play:play_cmd",
    "replay": "replay:replay_cmd",
    "reveal": "reveal:reveal_cmd",
    "rules": "rules:rules_cmd",
    "schema": "schema:schema_cmd",
    "selfplay": "selfplay:selfplay_cmd",
    "serve": "serve:serve_cmd",
    "site": "site:site_cmd",
    "standings": "standings:standings_cmd",
    "token": "token:token_cmd",
    "verify": "verify:verify_cmd",
}


class Referee(click.Group):
    """The `referee` group, its commands loaded when used (`COMMANDS`), its standard
    output guarded (`StdoutGuard`) for the whole command: a failure to write it is said
    once, at the end, in one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, name = where.split(":")
        command = getattr(importlib.import_module(f"referee.commands.{module}"), name)
        assert isinstance(command, click.Command) and command.name == cmd_name, where
        return command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        guard = StdoutGuard.install()
        if guard is None:
            return super().main(*args, **kwargs)
        try:
            value = super().main(*args, **kwargs)
        except SystemExit as exc:
            said(guard.restore(), exc.code)
            raise
        except BaseException:
            guard.restore()
            raise
        said(guard.restore(), 0)
        return value


def said(error: OSError | None, status: object) -> None:
    """Once a command has ended with `status`: when standard output could not be
    written (`error`), say so in one line on stderr, and exit `STDOUT_LOST` instead of
    0 or 1 (a result, or a verdict, that did not reach standard output); a failure the
    command has named itself (2, 3, 130) keeps its status. A reader that went away
    (`referee standings out | head -1`: EPIPE) chose to read no more: nothing is said,
    as any command-line tool does."""
    from .commands.common import STDOUT_LOST, fail

    if error is None or error.errno == errno.EPIPE:
        return
    why = error.strerror or str(error)
    if status in (None, 0, 1):
        fail(
            f"cannot write to standard output: {why}; what the referee printed there is "
            "lost (the files it wrote are not affected)",
            STDOUT_LOST,
        )
    click.echo(f"referee: error: cannot write to standard output: {why}", err=True)


@click.group(cls=Referee, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mexican-train-referee")
def main() -> None:
    """Referee for Mexican Train bot competitions."""


if __name__ == "__main__":  # pragma: no cover
    main()
