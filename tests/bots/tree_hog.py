"""Plays legal move 0, but on its first turn first forks argv[1] children (default 5)
that each allocate and touch argv[2] megabytes (default 60) and keep them: each
child is well under the bot's address-space limit, all of them together well over
its memory limit. Once every child holds its share, it says so on stderr as one
JSON line, `{"tree_hog": CHILDREN, "megabytes": TOTAL}`, and plays on: only a limit
on the memory of the whole tree stops it.
"""

from __future__ import annotations

import json
import os
import sys
import time

from _common import Msg, move, serve

CHILDREN = int(sys.argv[1]) if len(sys.argv) > 1 else 5
MEGABYTES = int(sys.argv[2]) if len(sys.argv) > 2 else 60
done = False


def hold(ready: int) -> None:
    """In a child: take and touch MEGABYTES, say so on `ready`, keep them."""
    try:
        block = bytearray(MEGABYTES << 20)
        block[::4096] = b"x" * len(range(0, len(block), 4096))
        os.write(ready, b"x")
        time.sleep(3600)
    finally:
        os._exit(0)


def on_turn(turn: Msg) -> Msg:
    global done
    if not done:
        done = True
        ready_r, ready_w = os.pipe()
        for _ in range(CHILDREN):
            if os.fork() == 0:
                os.close(ready_r)
                hold(ready_w)
        os.close(ready_w)
        held = 0
        while held < CHILDREN and os.read(ready_r, 1):
            held += 1
        report = {"tree_hog": held, "megabytes": held * MEGABYTES}
        sys.stderr.write(json.dumps(report) + "\n")
        sys.stderr.flush()
    return move(turn)


serve("tree_hog", on_turn)
