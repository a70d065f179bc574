"""The consoles the commands print to.

A terminal gets its own width (or COLUMNS). A file or a pipe (nohup, a CI log)
has no width: rich would hard-wrap it at 80 columns, cutting long lines in two
and squeezing tables, so there nothing wraps and tables keep all their columns,
unless COLUMNS asks for a width.
"""

from __future__ import annotations

import os

from rich.console import Console

PIPE_WIDTH = 10_000  # "no width": wider than any line the referee prints


def output_console(*, stderr: bool = False, quiet: bool = False) -> Console:
    """A console on stdout (or stderr) that wraps only in a terminal or when COLUMNS says."""
    console = Console(stderr=stderr, quiet=quiet)
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console
    return Console(stderr=stderr, quiet=quiet, width=PIPE_WIDTH, soft_wrap=True)
