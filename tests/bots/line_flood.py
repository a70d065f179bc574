"""Plays legal move 0, but before its first reply writes argv[1] kilobytes (default 2048)
of unsolicited, valid `pong` lines."""

import sys

from _common import Msg, move, serve

KILOBYTES = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2048
LINE = b'{"type":"pong","nonce":7}\n'
flooded = False


def on_turn(turn: Msg) -> Msg:
    global flooded
    if not flooded:
        flooded = True
        block = LINE * (65536 // len(LINE))
        for _ in range(KILOBYTES * 1024 // len(block) + 1):
            sys.stdout.buffer.write(block)
        sys.stdout.buffer.flush()
    return move(turn)


serve("line_flood", on_turn)
