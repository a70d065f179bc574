"""The bot that breaks the protocol on cue, for the spec's examples of errors.

    python spec/example_bot.py NAME [--protocol N] [--spell] [--at ID=WHAT ...]

It plays the first legal move of every request, by index, or spelled out with
`--spell`. `--protocol` is the version its `ready` names. `--at ID=WHAT` makes
it misbehave at the request with that id, in one of these ways:

| WHAT | it sends |
|---|---|
| `string-index` | `"index":"0"`, a string |
| `no-choice` | a move with neither `index` nor `action` |
| `out-of-range` | `"index":-1`, a number outside its field's range |
| `bad-index` | index 9 (or the first index past the legal list) |
| `not-held` | a play of a tile it does not hold |
| `stale` | a reply for the previous request, then the right one |
| `unexpected` | its `ready` again, then the right reply |
| `oversize` | a line one byte longer than `hello.max_line` |
| `silent` | nothing, ever again |

Standard library only, like any bot written from spec/PROTOCOL.md.
"""

from __future__ import annotations

import json
import sys
from typing import Any

Msg = dict[str, Any]


def send(message: Msg) -> None:
    """Write one message as a compact JSON line and flush it."""
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def spelled(turn: Msg, move: Msg) -> Msg:
    """A reply naming `move` in full."""
    return {"type": "move", "id": turn["id"], **move}


def missing_tile(turn: Msg, max_pip: int) -> list[int]:
    """The highest tile of the set that is not in the hand."""
    hand = {tuple(t) for t in turn["view"]["hand"]}
    for high in range(max_pip, -1, -1):
        for low in range(high, -1, -1):
            if (high, low) not in hand:
                return [high, low]
    return [max_pip, max_pip]


class Bot:
    """What the bot was told to do, and what it must remember to do it."""

    def __init__(self, argv: list[str]) -> None:
        if not argv:
            raise SystemExit("usage: example_bot.py NAME [--protocol N] [--spell] [--at ID=WHAT]")
        self.name = argv[0]
        self.protocol: int | None = None
        self.spell = False
        self.cues: dict[int, str] = {}
        rest = argv[1:]
        while rest:
            option = rest.pop(0)
            if option == "--spell":
                self.spell = True
            elif option == "--protocol":
                self.protocol = int(rest.pop(0))
            elif option == "--at":
                at, _, what = rest.pop(0).partition("=")
                self.cues[int(at)] = what
            else:
                raise SystemExit(f"example_bot.py: unknown option {option}")
        self.max_pip = 12
        self.max_line = 1 << 20
        self.silent = False

    def ready(self) -> Msg:
        """The answer to `hello`."""
        message: Msg = {"type": "ready", "name": self.name, "version": "1.0"}
        if self.protocol is not None:
            message["protocol"] = self.protocol
        return message

    def turn(self, turn: Msg) -> None:
        """Answer one request, misbehaving if cued."""
        first = turn["legal"][0]
        right = (
            spelled(turn, first) if self.spell else {"type": "move", "id": turn["id"], "index": 0}
        )
        what = self.cues.get(turn["id"], "")
        if what == "silent":
            self.silent = True
            return
        if what == "string-index":
            send({"type": "move", "id": turn["id"], "index": "0"})
        elif what == "no-choice":
            send({"type": "move", "id": turn["id"]})
        elif what == "out-of-range":
            send({"type": "move", "id": turn["id"], "index": -1})
        elif what == "bad-index":
            send({"type": "move", "id": turn["id"], "index": max(9, len(turn["legal"]))})
        elif what == "not-held":
            tile = missing_tile(turn, self.max_pip)
            send({"type": "move", "id": turn["id"], "action": "play", "tile": tile, "train": 0})
        elif what == "stale":
            send({"type": "move", "id": turn["id"] - 1, "index": 0})
            send(right)
        elif what == "unexpected":
            send(self.ready())
            send(right)
        elif what == "note":  # the bot's own words and numbers on its move
            send({**right, "note": "the double first: 2 tiles left", "info": {"tiles": 2}})
        elif what == "oversize":
            head = json.dumps({"type": "move", "id": turn["id"], "index": 0, "pad": ""})[:-2]
            pad = "x" * (self.max_line + 1 - len(head) - 2)
            sys.stdout.write(head + pad + '"}\n')
            sys.stdout.flush()
        else:
            send(right)

    def run(self) -> None:
        """Answer `hello`, `ping` and every `turn` until `bye` or the end of input."""
        for raw in sys.stdin.buffer:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "bye":
                return
            if self.silent:
                continue
            if kind == "hello":
                self.max_pip = message["rules"]["max_pip"]
                self.max_line = message["max_line"]
                send(self.ready())
            elif kind == "ping":
                send({"type": "pong", "nonce": message["nonce"]})
            elif kind == "turn":
                self.turn(message)


if __name__ == "__main__":
    Bot(sys.argv[1:]).run()
