"""Run a bot and keep a copy of every line between it and the referee.

    python spec/wiretap.py RECORD -- CMD [ARGS...]

The referee starts this script as the bot; it starts CMD, passes every byte
both ways unchanged, and appends each whole line to RECORD as it passes, in
the order it passed: one JSON array a line, `["<", LINE]` for a line from the
referee and `[">", LINE]` for one from the bot. `spec/examples.py` reads the
record: the spec's examples are what a real bot received and sent. Standard
library only, like a bot. It exits with the bot's status.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from io import BufferedReader
from typing import IO, cast

CHUNK = 65536


class Record:
    """The record file: whole lines in the order they passed, from both directions."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)
        self._lock = threading.Lock()

    def line(self, direction: str, raw: bytes) -> None:
        """Append one line; flushed at once, since the bot may be killed at any moment."""
        text = raw.decode("utf-8", "replace")
        with self._lock:
            self._file.write(json.dumps([direction, text], ensure_ascii=False) + "\n")
            self._file.flush()


def pump(source: BufferedReader, sink: IO[bytes], direction: str, record: Record) -> None:
    """Copy `source` to `sink` as bytes arrive, recording each line once it is whole.

    A line is recorded before it is passed on: its answer cannot come before it."""
    pending = b""
    try:
        while True:
            data = source.read1(CHUNK)
            if not data:
                break
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                record.line(direction, line)
            sink.write(data)
            sink.flush()
    except (BrokenPipeError, OSError):
        pass
    if pending:
        record.line(direction, pending)  # a last line without its newline
    with contextlib.suppress(OSError):
        sink.close()  # end of input for the other side


def main(argv: list[str]) -> int:
    """Start the bot and copy both ways until its output ends."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: wiretap.py RECORD -- CMD [ARGS...]", file=sys.stderr)
        return 2
    record = Record(argv[0])
    bot = subprocess.Popen(argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert bot.stdin is not None and bot.stdout is not None
    to_bot = threading.Thread(
        target=pump,
        args=(cast(BufferedReader, sys.stdin.buffer), bot.stdin, "<", record),
        daemon=True,
    )
    to_bot.start()
    pump(cast(BufferedReader, bot.stdout), sys.stdout.buffer, ">", record)
    return bot.wait()


if __name__ == "__main__":
    # os._exit: the thread still reading stdin holds its lock, which a normal exit would
    # wait for (and then abort); every record line is flushed already.
    os._exit(main(sys.argv[1:]))
