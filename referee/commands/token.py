"""`referee token` and `referee token new NAME`: a new login token for a TCP bot."""

from __future__ import annotations

import click


@click.group("token", invoke_without_command=True)
@click.pass_context
def token_cmd(ctx: click.Context) -> None:
    """Print a new token for a tcp bot: mxt_ and 32 random bytes in URL-safe base64.

    `referee token new NAME` also says the league-file line (token_sha256) that
    lets the server check the token without holding it. Keep the token in a file
    only its owner reads: (umask 077; referee token new NAME > bot.token)."""
    if ctx.invoked_subcommand is None:
        from ..bots.tokens import new_token

        click.echo(new_token())


@token_cmd.command("new")
@click.argument("name")
def token_new_cmd(name: str) -> None:
    """A token for bot NAME on stdout, and on stderr its league-file line.

    The line (token_sha256 = "...") goes in NAME's [[bot]] table, in place of
    token, token_env or token_file: the server keeps only the SHA-256, so whoever
    reads the league file cannot log in as NAME."""
    from ..bots.tokens import new_token, token_sha256
    from ..text import NAME_RULE, name_problem, quoted
    from .common import fail

    if (problem := name_problem(name)) is not None:
        fail(f"NAME {quoted(name)} {problem}; {NAME_RULE}")
    if any(c in name for c in "/\\ "):
        fail(f"NAME {quoted(name)}: a bot's name in a league file is without spaces or slashes")
    token = new_token()
    click.echo(token)
    click.echo(
        f"referee token: add to the [[bot]] table of {quoted(name)} in the league file: "
        f'token_sha256 = "{token_sha256(token)}"',
        err=True,
    )
