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
from typing import Any

import click

from .commands.arena import arena_cmd
from .commands.check_bot import check_bot_cmd
from .commands.commit import commit_cmd
from .commands.connect import connect_cmd
from .commands.keygen import keygen_cmd
from .commands.league import league_cmd
from .commands.match import match_cmd
from .commands.play import play_cmd
from .commands.replay import replay_cmd
from .commands.reveal import reveal_cmd
from .commands.rules import rules_cmd
from .commands.schema import schema_cmd
from .commands.selfplay import selfplay_cmd
from .commands.serve import serve_cmd
from .commands.site import site_cmd
from .commands.standings import standings_cmd
from .commands.token import token_cmd
from .commands.verify import verify_cmd
from .consoles import StdoutGuard


class Referee(click.Group):
    """The `referee` group, its standard output guarded (`StdoutGuard`) for the whole
    command: a failure to write it is said once, at the end, in one line."""

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


for command in (
    rules_cmd,
    selfplay_cmd,
    schema_cmd,
    check_bot_cmd,
    play_cmd,
    league_cmd,
    match_cmd,
    serve_cmd,
    connect_cmd,
    token_cmd,
    keygen_cmd,
    standings_cmd,
    site_cmd,
    replay_cmd,
    commit_cmd,
    reveal_cmd,
    verify_cmd,
    arena_cmd,
):
    main.add_command(command)


if __name__ == "__main__":  # pragma: no cover
    main()
