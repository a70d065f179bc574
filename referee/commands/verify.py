"""`referee verify`: a league's results checked against its commitment, by anyone."""

from __future__ import annotations

import sys

import click

from .common import fail


@click.command("verify")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option(
    "--commitment",
    "expected",
    metavar="sha256:HEX",
    default=None,
    help="The commitment's digest as it was published before the games.",
)
@click.option(
    "--receipt",
    "receipts",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A receipt a bot kept (the receipt, or its game_end line); repeatable.",
)
def verify_cmd(folder: str, expected: str | None, receipts: tuple[str, ...]) -> None:
    """Check a league's output folder or published site: referee verify FOLDER.

    One line per check (commitment, key, contributions, schedule, logs, results, bots,
    ledger, standings, published, signatures, receipts); a failing one names the first
    game or file that differs. Then what no check re-derived, on a `not covered:` line.
    Exit 0 only when every check holds, 1 when one fails, 2 for a folder with no league."""
    import re
    from pathlib import Path

    from ..league.restate import Restate
    from ..proof.folder import VerifyError
    from ..proof.verify import lines, verify_folder
    from ..text import shown

    if expected is not None and not re.fullmatch(r"sha256:[0-9a-f]{64}", expected):
        fail(f"--commitment {expected}: expected sha256: and 64 lowercase hexadecimal digits")
    from ..event.proof import verify_event
    from ..event.terms import is_event_folder
    from .common import run_trio

    try:
        if is_event_folder(Path(folder)):  # an event: its tables are leagues
            if receipts:
                fail(
                    "--receipt: check a receipt against its table's folder "
                    "(OUT/stage-S/round-RR/table-T)"
                )
            report = run_trio(lambda: verify_event(Path(folder), expected))
        else:
            report = verify_folder(
                Path(folder), Restate(), expected=expected, receipts=[Path(r) for r in receipts]
            )
    except VerifyError as exc:
        fail(str(exc))
    for line in lines(report):
        click.echo(shown(line))
    held = sum(c.ok for c in report.checks)
    if report.ok:
        click.echo(f"verified: all {held} checks hold")
        sys.exit(0)
    click.echo(f"NOT verified: {len(report.checks) - held} of {len(report.checks)} checks fail")
    sys.exit(1)
