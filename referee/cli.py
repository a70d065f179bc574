"""The `referee` command line: a thin click layer over library calls.

This module only assembles the group; each command lives in a module of its own
in `referee.commands`, and what they share in `referee.commands.common`. Errors
a user can fix (a bad option, a bad file) print one line naming what was wrong
and exit with status 2; nothing here holds game logic.
"""

from __future__ import annotations

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
