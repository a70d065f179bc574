"""Shared plumbing for the hand-written test bots: JSON lines on stdin and stdout.

These bots speak the protocol with the standard library only, on purpose: they
must not share code with the referee they are testing. Each script misbehaves in
one way; `serve` runs the usual loop and lets a script replace one answer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

Msg = dict[str, Any]


def send(message: Msg) -> None:
    """Write one message as a JSON line and flush it."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def messages() -> Iterator[Msg]:
    """Every message the referee sends, until end of input; unreadable lines are skipped."""
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if isinstance(message, dict):
            yield message


def ready(name: str) -> None:
    """The answer to `hello`."""
    send({"type": "ready", "name": name, "version": "test"})


def move(turn: Msg, index: int = 0) -> Msg:
    """A reply choosing `turn["legal"][index]` (index 0 is always legal)."""
    return {"type": "move", "id": turn["id"], "index": index}


def serve(
    name: str,
    on_turn: Callable[[Msg], Msg | None] = move,
    *,
    exit_on_bye: bool = True,
    on_hello: Callable[[Msg], None] | None = None,
    on_game_start: Callable[[Msg], None] | None = None,
) -> None:
    """Answer hello, ping and turns (with `on_turn`, None sends nothing) until bye or EOF."""
    for message in messages():
        kind = message.get("type")
        if kind == "hello":
            if on_hello is not None:
                on_hello(message)
            ready(name)
        elif kind == "game_start" and on_game_start is not None:
            on_game_start(message)
        elif kind == "ping":
            send({"type": "pong", "nonce": message["nonce"]})
        elif kind == "turn":
            reply = on_turn(message)
            if reply is not None:
                send(reply)
        elif kind == "bye" and exit_on_bye:
            return
