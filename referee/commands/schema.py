"""`referee schema`: the JSON Schema of the protocol's messages, or of a league file."""

from __future__ import annotations

import click

from .common import fail


@click.command("schema")
@click.option("--output", "-o", metavar="FILE", default=None, help="Write to a file.")
@click.option(
    "--league",
    is_flag=True,
    help="The schema of league files instead, for editors that check TOML (spec/LEAGUE.md).",
)
def schema_cmd(output: str | None, league: bool) -> None:
    """Print the JSON Schema of every protocol message, or with --league of a league file."""
    if league:
        from ..league.schema import schema_text
    else:
        from protocol.schema import schema_text

    text = schema_text()
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")
