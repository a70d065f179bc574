"""`referee standings`: a league's standings again, from its database (the running
totals it keeps, so the time does not grow with the league). A match's folder
gives its report and the standings of the units its test counted, as the match
printed them when it ended."""

from __future__ import annotations

import click

from .common import fail, wide_console


@click.command("standings")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print standings.json to stdout.")
def standings_cmd(out_dir: str, as_json: bool) -> None:
    """Print a league's standings again from its database."""
    import json as jsonlib
    from pathlib import Path

    from ..league import transport
    from ..league.ledger import Ledger, LedgerError
    from ..league.output import print_standings  # not run: less to import

    db = Path(out_dir) / "league.db"
    if not db.is_file():
        fail(f"{out_dir}: no league.db here; is this a league's output folder?")
    try:
        ledger = Ledger(db)
    except LedgerError as exc:
        fail(str(exc))
    try:
        meta = dict(ledger.db.execute("SELECT key, value FROM meta").fetchall())
        names = jsonlib.loads(meta.get("bots", "[]"))
        match = jsonlib.loads(meta["match"]) if "match" in meta else None
        if match is None:
            standings = ledger.standings(names)
        else:  # a small league: its counted units, recomputed
            from ..league.standings import compute

            counted = match.pop("counted_units")
            records = [r for r in ledger.records() if r.unit < counted]
            standings = compute(names, records, ledger.sandbox(), ledger.lag_warning())
            standings.match = match
            standings.commitment = ledger.commitment()
            standings.transport = transport.recorded(ledger.db)
    finally:
        ledger.close()
    if as_json:
        click.echo(jsonlib.dumps(standings.to_json(), indent=2))
        return
    name = meta.get("name", "league")
    console = wide_console()
    print_standings(console, standings, f"{name}: {standings.games} games")
    if standings.match is not None:
        from ..league.judge import match_lines
        from ..text import shown

        for line in match_lines(standings.match):  # names from the ledger: shown escaped
            console.print(shown(line), markup=False, highlight=False, soft_wrap=True)
