"""Lets its first turn time out: it does not answer it, and once the referee's `timeout`
error for it arrives, sends the reply after all (now stale). It answers every later turn
at once, so it times out exactly once, whatever the clocks."""

from _common import messages, move, ready, send

late = None  # the turn left unanswered
for message in messages():
    kind = message.get("type")
    if kind == "hello":
        ready("timeout_once")
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "turn":
        if late is None:
            late = message
        else:
            send(move(message))
    elif kind == "error" and message.get("code") == "timeout" and late is not None:
        if message.get("request") == late["id"]:
            send(move(late))
    elif kind == "bye":
        break
