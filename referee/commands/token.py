"""`referee token`: a new login token for a TCP bot."""

from __future__ import annotations

import click


@click.command("token")
def token_cmd() -> None:
    """Print a new token for a tcp bot: 32 random bytes, URL-safe base64 (256 bits).

    Keep it in a file only its owner reads: (umask 077; referee token > bot.token)."""
    from ..bots.tokens import new_token

    click.echo(new_token())
