"""The live line of a match (`referee match`, a match league): one line per counted
unit, printed by the commands, from `referee.league.judge.progress_line`."""

from __future__ import annotations

import shutil
import sys

import click

from ..league.judge import progress_line
from ..stats import Summary


class Lines:
    """The live report: one line per counted unit, rewritten in place on a terminal wide
    enough for it, else printed in full (`to_err`: on stderr, never in place, as with
    --json)."""

    def __init__(self, to_err: bool = False) -> None:
        self.to_err = to_err
        self.live = not to_err and sys.stdout.isatty()
        self.open = False  # the cursor is at the end of a line rewritten in place

    def __call__(self, summary: Summary) -> None:
        line = progress_line(summary)
        if not self.live:
            click.echo(line, err=self.to_err)
            return
        # A line wider than the terminal wraps, and a carriage return would then go
        # back to its last row only: such a line is left standing, the next below it.
        fits = len(line) < shutil.get_terminal_size().columns
        click.echo(f"\r{line}\x1b[K", nl=not fits)
        self.open = fits

    def end(self) -> None:
        """Leave the line rewritten in place, before the final block."""
        if self.open:
            click.echo()
            self.open = False
