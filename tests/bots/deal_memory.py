"""Remembers what it was dealt, as a hostile bot in a duplicate league would.

It plays legal move 0 and writes one JSON line to stderr per game: the game id
(a test maps it to the game's deal through the ledger), its seat and the hand it was dealt
in the first round. A process that played two games of one deal would know, in
the second, another seat's hand and part of the boneyard's order.

    python deal_memory.py TOKEN
"""

from __future__ import annotations

import json
import sys

from _common import messages, move, ready, send

game, seat = "", -1
for message in messages():
    kind = message.get("type")
    if kind == "hello":
        ready("deal_memory")
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "game_start":
        game, seat = str(message["game"]), int(message["seat"])
    elif kind == "round_start" and message.get("round") == 0:
        hand = sorted(message["hand"])
        sys.stderr.write(json.dumps({"game": game, "seat": seat, "hand": hand}) + "\n")
        sys.stderr.flush()
    elif kind == "turn":
        send(move(message))
    elif kind == "bye":
        break
