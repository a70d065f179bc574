"""Answers a turn with 100 MB of one line and no newline, written in 1 MB chunks,
then waits for the end of its input."""

import sys

from _common import Msg, serve

CHUNK = b"x" * (1 << 20)


def on_turn(turn: Msg) -> None:
    out = sys.stdout.buffer
    out.write(b'{"type":"move","id":%d,"pad":"' % turn["id"])
    for _ in range(100):
        out.write(CHUNK)
        out.flush()
    sys.stdin.buffer.read()
    sys.exit(0)


serve("huge_line", on_turn)
