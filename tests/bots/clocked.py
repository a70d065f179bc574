"""Plays legal move 0 and appends, for each game, when it began and ended (the machine's
monotonic clock, in ns, which every process reads alike) and its first hand, as one
JSON line, to the file named by argv[1]. Two games of one deal give the same hand to
the same seat, so a test can check that no two of them were in play at once."""

import json
import sys
import time

from _common import move, ready, send

began: int | None = None
hand: list[list[int]] | None = None
for raw in sys.stdin.buffer:
    message = json.loads(raw)
    kind = message.get("type")
    if kind == "hello":
        ready("clocked")
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "game_start":
        began, hand = time.monotonic_ns(), None
    elif kind == "round_start" and hand is None:
        hand = sorted(message["hand"])
    elif kind == "turn":
        send(move(message))
    elif kind == "game_end":
        line = {"began": began, "ended": time.monotonic_ns(), "hand": hand}
        with open(sys.argv[1], "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
    elif kind == "bye":
        break
