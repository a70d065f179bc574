"""`referee reveal`: a finished league's deal key published beside its commitment."""

from __future__ import annotations

import click

from .common import fail


@click.command("reveal")
@click.argument("out_dir", type=click.Path(file_okay=False))
def reveal_cmd(out_dir: str) -> None:
    """Reveal a finished league's or event's keys: referee reveal OUT.

    Writes OUT/reveal.json (the deal key and the bot-seed key) once every game is
    recorded, so that anyone can check them against the commitment and re-derive
    every deal with `referee verify`. Refused while games remain."""
    from pathlib import Path

    from ..event.terms import is_event_folder, reveal_folder
    from ..league.ledger import LedgerError
    from ..league.terms import reveal_league
    from ..logs.outputs import WriteError
    from ..proof.commitment import CommitmentError

    event = is_event_folder(Path(out_dir))
    try:
        path, digest = (reveal_folder if event else reveal_league)(Path(out_dir))
    except (LedgerError, CommitmentError, WriteError) as exc:
        fail(str(exc))
    what = "event (and every table's)" if event else "league"
    click.echo(f"{path}: the keys of the {what} committed to as {digest}")
    click.echo(f"publish it (`referee site {out_dir}` copies it to the site)", err=True)
