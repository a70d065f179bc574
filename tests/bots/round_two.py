"""Plays legal move 0 through the first round of each game, then answers its first turn
of any later round with an index outside `legal`: it fails only in a game of several
rounds."""

from _common import messages, move, ready, send

rounds = 0  # rounds of this game that have started
for message in messages():
    kind = message.get("type")
    if kind == "hello":
        ready("round_two")
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "game_start":
        rounds = 0
    elif kind == "round_start":
        rounds += 1
    elif kind == "turn":
        send(move(message) if rounds == 1 else move(message, len(message["legal"])))
    elif kind == "bye":
        break
