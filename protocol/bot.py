"""A small helper so that a Python bot is one function from a turn request to a move.

    from protocol.bot import run

    def choose(turn, game):
        return game.rng.randrange(len(turn.legal))   # an index into turn.legal

    run(choose, name="random")

`choose` gets the `Turn` and a `Game` holding this game's start message, a
`random.Random` seeded with the game's bot seed (so a league of deterministic
bots replays identically), and every event since the game started. It returns
an index into `turn.legal` or a `MoveSpec`. The helper answers `hello`, `ping`
and `bye` itself, and reports protocol errors from the referee on stderr.

To say something about a move (the log keeps it; other seats never see it; the
replay and spectators show it after the game), call `game.say("why", worlds=16,
estimate=-2.5)` in `choose`: a note of up to 280 characters and numbers by name
(PROTOCOL.md, The reply). They go with this move only.
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from .codec import decode_to_bot, encode
from .errors import MalformedMessageError, RemoteProtocolError
from .framing import LineFramer
from .messages import (
    INFO_ABS_MAX,
    INFO_KEYS_MAX,
    MAX_LINE_DEFAULT,
    NOTE_MAX,
    Bye,
    Error,
    GameStart,
    Hello,
    Message,
    MoveReply,
    MoveSpec,
    Ping,
    Pong,
    Ready,
    ToBot,
    Turn,
)

_INFO_KEY = re.compile(r"[A-Za-z0-9_.-]{1,32}")


@dataclass
class Game:
    """What a bot knows about the game in progress."""

    start: GameStart
    rng: random.Random
    events: list[Message] = field(default_factory=list)
    note: str | None = None  # what `say` set for the move being chosen
    info: dict[str, float] | None = None

    def say(self, note: str | None = None, **info: float) -> None:
        """A note and numbers to send with the move being chosen (and no other). The
        note is cut to its 280 characters; a number whose name or value the protocol
        would refuse (PROTOCOL.md, The reply) is left out with a line on stderr, as is
        any after the first 16: a note never makes the move malformed."""
        self.note = note[:NOTE_MAX] if note else None
        kept: dict[str, float] = {}
        for key, value in info.items():
            number = float(value) if isinstance(value, int | float) else math.nan
            if len(kept) == INFO_KEYS_MAX:
                print(f"say: more than {INFO_KEYS_MAX} numbers; {key!r} left out", file=sys.stderr)
            elif not _INFO_KEY.fullmatch(key):
                print(f"say: {key!r} is no name the protocol takes; left out", file=sys.stderr)
            elif not (math.isfinite(number) and abs(number) <= INFO_ABS_MAX):
                print(f"say: {key} = {value!r} is out of range; left out", file=sys.stderr)
            else:
                kept[key] = number
        self.info = kept or None


Choose = Callable[[Turn, Game], "int | MoveSpec"]


def reply_for(
    turn: Turn,
    choice: int | MoveSpec,
    note: str | None = None,
    info: dict[str, float] | None = None,
) -> MoveReply:
    """The `move` message for a choice made by index or spelled out, with the bot's
    optional note and numbers."""
    if isinstance(choice, int):
        return MoveReply(id=turn.id, index=choice, note=note, info=info)
    return MoveReply(
        id=turn.id,
        action=choice.action,
        tile=choice.tile,
        train=choice.train,
        announce=choice.announce,
        note=note,
        info=info,
    )


def messages_in(framer: LineFramer, chunk: bytes, name: str) -> list[ToBot]:
    """The messages the bytes `chunk` complete, as `framer` frames them. A line too long,
    or one that is not a message this version knows (a later protocol version's type
    or shape), is reported on stderr as `name`'s and skipped, as the spec asks of a bot."""
    try:
        lines = framer.feed(chunk)
    except RemoteProtocolError as exc:
        print(f"{name}: ignored a bad line: {exc}", file=sys.stderr)
        lines = exc.lines
    messages = []
    for line in lines:
        try:
            messages.append(decode_to_bot(line))
        except MalformedMessageError as exc:
            print(f"{name}: ignored a line I do not understand: {exc}", file=sys.stderr)
    return messages


def run(
    choose: Choose,
    *,
    name: str,
    version: str = "1.0",
    author: str = "",
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Speak the protocol on stdin/stdout until `bye` or end of input."""
    inp = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout.buffer
    framer = LineFramer(MAX_LINE_DEFAULT)
    game: Game | None = None

    def send(message: Message) -> None:
        out.write(encode(message, framer.max_line))
        out.flush()

    while True:
        chunk = inp.readline()
        if not chunk:
            return
        for msg in messages_in(framer, chunk, name):
            if isinstance(msg, Hello):
                framer.max_line = msg.max_line
                send(Ready(name=name, version=version, author=author))
            elif isinstance(msg, GameStart):
                game = Game(start=msg, rng=random.Random(msg.seed))
            elif isinstance(msg, Turn):
                if game is None:
                    raise RuntimeError("turn request before game_start")
                game.note = game.info = None
                choice = choose(msg, game)
                send(reply_for(msg, choice, game.note, game.info))
            elif isinstance(msg, Ping):
                send(Pong(nonce=msg.nonce))
            elif isinstance(msg, Bye):
                return
            elif isinstance(msg, Error):
                print(f"{name}: referee says {msg.code}: {msg.message}", file=sys.stderr)
            elif game is not None:
                game.events.append(msg)
