"""Plays legal move 0 and appends, for each game, when it began (it read game_start),
when it sent its last move, and when it read game_end (the machine's monotonic clock,
in ns, which every process reads alike), with its first hand, as one JSON line to the
file named by argv[1]. Two games of one deal give the same hand to the same seat, so a
test can check that no two of them were in play at once: a game's last move was sent
before the game ended, hence before the next game of its deal began. (When it reads
game_end says less: a league freezes an idle process after its game, and one not yet
scheduled to read game_end by then reads it only when thawed for its next game.)"""

import json
import sys
import time

from _common import move, ready, send

began: int | None = None
last: int | None = None
hand: list[list[int]] | None = None
for raw in sys.stdin.buffer:
    message = json.loads(raw)
    kind = message.get("type")
    if kind == "hello":
        ready("clocked")
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "game_start":
        began, last, hand = time.monotonic_ns(), None, None
    elif kind == "round_start" and hand is None:
        hand = sorted(message["hand"])
    elif kind == "turn":
        send(move(message))
        last = time.monotonic_ns()
    elif kind == "game_end":
        line = {"began": began, "last": last, "ended": time.monotonic_ns(), "hand": hand}
        with open(sys.argv[1], "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
    elif kind == "bye":
        break
