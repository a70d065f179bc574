"""Plays legal move 0 and appends every line it is sent, byte for byte, to the file
named by argv[1]: the reconnect tests compare what it saw of a game whose connection
was cut with what it sees of the same game played without a cut."""

import json
import sys

from _common import move, ready, send

with open(sys.argv[1], "ab") as out:
    for raw in sys.stdin.buffer:
        out.write(raw)
        out.flush()
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "hello":
            ready("transcript")
        elif kind == "ping":
            send({"type": "pong", "nonce": message["nonce"]})
        elif kind == "turn":
            send(move(message))
        elif kind == "bye":
            break
