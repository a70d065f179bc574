"""The consoles the commands print to.

A terminal gets its own width (or COLUMNS). A file or a pipe (nohup, a CI log)
has no width: rich would hard-wrap it at 80 columns, cutting long lines in two
and squeezing tables, so there nothing wraps and tables keep all their columns,
unless COLUMNS asks for a width.

Standard output itself may fail (`referee league L > /dev/full`, a full disk
behind a redirect, a pipe whose reader has gone): `StdoutGuard` keeps such a
failure away from the work, which goes on and writes its files as usual, and
remembers it, for the command line to say in one line at the end.
"""

from __future__ import annotations

import io
import os
import select
import sys
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from typing import TextIO

    from _typeshed import ReadableBuffer

PIPE_WIDTH = 10_000  # "no width": wider than any line the referee prints


def output_console(*, stderr: bool = False, quiet: bool = False) -> Console:
    """A console on stdout (or stderr) that wraps only in a terminal or when COLUMNS says."""
    console = Console(stderr=stderr, quiet=quiet)
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console
    return Console(stderr=stderr, quiet=quiet, width=PIPE_WIDTH, soft_wrap=True)


class _Kept(io.RawIOBase):
    """The descriptor of standard output, for writing: the first write that fails is
    kept in `error` instead of raised, and what comes after it is dropped."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer, /) -> int:
        view = memoryview(data)
        while self.error is None:
            try:
                return os.write(self._fd, view)
            except BlockingIOError:  # a non-blocking descriptor: wait until it takes more
                select.select([], [self._fd], [])
            except OSError as exc:
                self.error = exc
        return view.nbytes  # dropped: nothing more reaches standard output


class StdoutGuard:
    """`sys.stdout` replaced by a stream over the same descriptor whose writes never
    raise: a full disk behind it, /dev/full, a pipe whose reader has gone. The first
    failure is kept (`error`); a command's work goes on regardless, and its files are
    written as they would be. `restore` puts the original stream back."""

    def __init__(self, original: TextIO, kept: _Kept) -> None:
        self.original = original
        self._kept = kept
        self.stream = io.TextIOWrapper(
            io.BufferedWriter(kept),
            encoding=original.encoding,
            errors=original.errors,
            line_buffering=bool(original.line_buffering),
            write_through=bool(getattr(original, "write_through", False)),
        )

    @classmethod
    def install(cls) -> StdoutGuard | None:
        """Guard `sys.stdout` from now on; None when it has no descriptor to guard (it
        is closed, or a test's in-memory stream)."""
        original = sys.stdout
        try:
            fd = original.fileno()
            original.flush()  # anything it holds goes first, to the same place
        except (AttributeError, OSError, ValueError):
            return None
        guard = cls(original, _Kept(fd))
        sys.stdout = guard.stream
        return guard

    @property
    def error(self) -> OSError | None:
        """Why standard output could not be written, once it could not."""
        return self._kept.error

    def restore(self) -> OSError | None:
        """Flush what is still buffered, put the original `sys.stdout` back, and say why
        standard output could not be written (None when every write reached it)."""
        self.stream.flush()
        if sys.stdout is self.stream:
            sys.stdout = self.original
        return self.error
