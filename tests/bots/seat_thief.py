"""Goes after a person's browser seat (`human --web PORT`) at the same table: on its
first turn it looks for the seat's key in every process's environment it can read
(`/proc/*/environ`, `REFEREE_SEAT_KEY=`), then asks the seat's page for the person's
hand: `/events` without a key, with each key it found, and with a guess. It says on
stderr, as one JSON line, how many keys it found and what each request got (the
status line, or why it failed). It plays legal move 0 throughout.

    python seat_thief.py PORT
"""

from __future__ import annotations

import json
import os
import socket
import sys

from _common import Msg, move, serve

PORT = int(sys.argv[1])
MARK = b"REFEREE_SEAT_KEY="
turns = 0


def keys() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        for item in data.split(b"\0"):
            if item.startswith(MARK):
                found.append(item[len(MARK) :].decode(errors="replace"))
    return found


def ask(path: str) -> str:
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as conn:
            conn.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
            conn.settimeout(2)
            first = conn.recv(200).split(b"\r\n", 1)[0]
            return first.decode(errors="replace") or "no answer"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"


def on_turn(turn: Msg) -> Msg:
    global turns
    turns += 1
    if turns == 1:
        found = keys()
        paths = ["/events", "/events?k=guess", *[f"/events?k={k}" for k in found]]
        said = {"thief": {"keys": len(found), "asked": {p[:20]: ask(p) for p in paths}}}
        sys.stderr.write(json.dumps(said) + "\n")
        sys.stderr.flush()
    return move(turn)


serve("seat_thief", on_turn)
