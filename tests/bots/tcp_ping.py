"""A bot that connects over TCP itself (no bridge), plays legal move 0, and stops
answering pings once: it leaves ping number SKIP unanswered, still connected and
reading. When the server closes the connection it connects and logs in again, and
answers every ping from then on. It writes what it saw to RECORD, one line each:
the connection (1, 2, ...), the message type (`pong` for each answer, `unanswered`
for the ping left alone, `closed` when the server closed) and `time.monotonic()`.

    python tcp_ping.py HOST PORT NAME TOKEN SKIP RECORD
"""

from __future__ import annotations

import json
import socket
import sys
import time

host, port, name, token, skip, record = sys.argv[1:7]
pings = 0


def note(connection: int, what: str) -> None:
    with open(record, "a", encoding="utf-8") as out:
        out.write(f"{connection} {what} {time.monotonic()}\n")


def session(connection: int) -> bool:
    """One connection, until the server closes it; True when the league is over."""
    global pings
    with socket.create_connection((host, int(port))) as sock:
        stream = sock.makefile("rwb")

        def send(message: dict[str, object]) -> None:
            stream.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            stream.flush()

        send({"type": "login", "name": name, "token": token, "protocol": 1})
        for raw in stream:
            message = json.loads(raw)
            kind = message["type"]
            note(connection, kind)
            if kind == "hello":
                send({"type": "ready", "name": name, "version": "test"})
            elif kind == "ping":
                pings += 1
                if pings == int(skip):
                    note(connection, "unanswered")
                else:
                    send({"type": "pong", "nonce": message["nonce"]})
                    note(connection, "pong")
            elif kind == "turn":
                send({"type": "move", "id": message["id"], "index": 0})
            elif kind == "bye":
                return message.get("reason") == "done"
        note(connection, "closed")
        return False


connection = 1
while not session(connection):
    connection += 1
