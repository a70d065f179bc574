"""`referee commit`: a league's commitment made and printed before any game is played."""

from __future__ import annotations

import click

from .common import fail


@click.command("commit")
@click.argument("config_file", type=click.Path(dir_okay=False))
@click.option("--out", metavar="DIRECTORY", default=None, help="Output folder.")
def commit_cmd(config_file: str, out: str | None) -> None:
    """Commit to a league before it plays: referee commit LEAGUE.toml [--out DIR].

    Makes the league's secret deal key, writes OUT/commitment.json (its terms, the
    SHA-256 of each bot's files and of the key) and prints its digest, to publish
    before the games. A bot whose files change after it fails `referee verify`, unless
    the league file says allow_updates = true in [league] before the commitment. A league whose
    [league] mix has "beacon" must be committed this way first: its beacon is a public
    value announced after the commitment, given to `league`/`serve` with --beacon."""
    import os

    from ..league.ledger import LedgerError
    from ..league.run import load_signing_key
    from ..league.terms import commit_league
    from ..logs.outputs import WriteError
    from ..proof.commitment import COMMITMENT, CommitmentError
    from .league_options import load_league

    config = load_league(config_file, out, None, None, persons=True)  # nothing is started
    try:
        signing = load_signing_key(config)
        pledge = commit_league(config, signing.public.line() if signing is not None else None)
    except (LedgerError, CommitmentError, WriteError) as exc:
        fail(str(exc))
    click.echo(pledge.digest)
    made = "written" if pledge.new else "already made"
    where = os.path.normpath(config.out / COMMITMENT)
    click.echo(f"{where} {made}: publish the digest above before the games", err=True)
