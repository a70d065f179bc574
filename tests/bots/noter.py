"""Plays legal move 0 and says something about each move: a `note` and `info`.

`ok` (the default): a note that names this bot's hand (as a bot's note may) with a
marker, markup, an escape sequence and a newline in it, and a few numbers. `long`: a note
one character over the limit. `badinfo`: an `info` number that is a string. The
last two are malformed replies: the referee's fault rules apply to them."""

import sys

from _common import messages, move, ready, send

NOTE_MAX = 280
mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
hand: list[list[int]] = []
for message in messages():
    kind = message.get("type")
    if kind == "hello":
        ready("noter")
    elif kind == "round_start":
        hand = message["hand"]
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "turn":
        reply = move(message)
        if mode == "long":
            reply["note"] = "x" * (NOTE_MAX + 1)
        elif mode == "badinfo":
            reply["info"] = {"worlds": "many"}
        else:
            markup = "<img src=x onerror=window.pwned=1></script>"
            reply["note"] = f"NOTE-MARKER {message['id']} hand {hand} {markup} \x1b[31m\nred"
            reply["info"] = {"request": message["id"], "tiles": len(hand), "estimate": -2.5}
        send(reply)
    elif kind == "bye":
        break
