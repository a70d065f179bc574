"""A person's seat in the browser: `python -m referee.human.web --port PORT`.

The same bot process as the terminal seat (`seat.py`) to the referee: the protocol on
stdin and stdout, the same messages (the same redaction), the same clocks and checks.
The person plays through a page it serves on 127.0.0.1 (Starlette on hypercorn's trio
worker, as the referee's live feed): `/` (`assets/seat.html`), `/events` (every
message the referee sent this seat, in order, as Server-Sent Events: the page keeps
the board from them) and `POST /move` (`{"id": turn id, "index": legal move}`),
`POST /resign` (the person leaves: exit `FORFEIT_STATUS`, the referee's fault rules
apply, as Ctrl-C at the terminal).

Every request must carry the seat's key (`?k=KEY`, from `REFEREE_SEAT_KEY` in the
environment, never the command line, which every user of the machine can read): the
page shows the person's hand and plays their moves, so a page or program that does
not hold the address the referee printed gets 403, whoever runs it. A move is checked
here against the open turn (its id, a legal index): anything else is answered 409 with
why, and the turn goes on.

The seat answers `hello` and `ping` itself. `bye` or the end of its input ends it with
status 0, once the page has had a moment to receive the last messages.
"""

from __future__ import annotations

import argparse
import hmac
import math
import os
import secrets
import sys
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any, cast

import msgspec
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from hypercorn.typing import Framework
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from protocol.bot import messages_in
from protocol.codec import encode
from protocol.framing import LineFramer
from protocol.messages import (
    MAX_LINE_DEFAULT,
    Bye,
    Error,
    Hello,
    Message,
    MoveReply,
    Ping,
    Pong,
    Ready,
    Turn,
)

from .. import __version__

KEY_ENV = "REFEREE_SEAT_KEY"
FORFEIT_STATUS = 130  # as the terminal seat's Ctrl-C
LINGER_S = 1.0  # after `bye`: the page receives the last messages
KEEPALIVE_S = 15.0
_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
_FORBIDDEN = "open the address the referee printed: it holds this seat's key\n"


class WebSeat:
    """One person's seat: every message the referee sent, and the open turn."""

    def __init__(self, name: str, key: str) -> None:
        self.name = name
        self.key = key
        self.session = secrets.token_hex(4)  # this process's: a page that reconnects to
        # a later game's seat (a league restarts the seat each game) starts afresh
        self.framer = LineFramer(MAX_LINE_DEFAULT)
        self.said: list[bytes] = []  # each message for the page, as JSON
        self.changed = trio.Event()
        self.turn: Turn | None = None
        self.over = False
        self.status = 0
        self.out = trio.lowlevel.FdStream(os.dup(1))
        self.writing = trio.Lock()  # a pong and the person's move may be sent at once
        self.done = trio.Event()

    def _note(self, data: bytes) -> None:
        self.said.append(data)
        self.changed.set()
        self.changed = trio.Event()

    async def send(self, message: Message) -> None:
        async with self.writing:
            await self.out.send_all(encode(message, self.framer.max_line))

    async def handle(self, message: Message) -> bool:
        """Take one message of the referee's; False once it said `bye`."""
        if isinstance(message, Hello):
            self.framer.max_line = message.max_line
            await self.send(Ready(name=self.name, version=__version__, author="a person"))
            return True
        if isinstance(message, Ping):
            await self.send(Pong(nonce=message.nonce))
            return True
        if isinstance(message, Turn):
            self.turn = message
        elif (
            isinstance(message, Error)
            and self.turn is not None
            and message.code == "timeout"
            and message.request == self.turn.id
        ):
            self.turn = None  # the referee's fault rules decide what happens
        self._note(msgspec.json.encode(message))
        return not isinstance(message, Bye)

    async def referee(self) -> None:
        """Read the referee's lines until `bye` or the end of input."""
        stdin = trio.lowlevel.FdStream(os.dup(0))
        async with stdin:
            while True:
                data = await stdin.receive_some(65536)
                if not data:
                    break
                going = True
                for message in messages_in(self.framer, data, "human"):
                    going = await self.handle(message) and going
                if not going:
                    break
        self.over = True
        self._note(b'{"type":"over"}')

    async def choose(self, body: Any) -> tuple[int, dict[str, Any]]:
        """The person's move: 200 when it was sent, else 409 with why."""
        turn = self.turn
        if not isinstance(body, dict):
            return 400, {"error": 'expected {"id": the turn\'s id, "index": a legal move}'}
        if turn is None:
            return 409, {"error": "it is not your turn"}
        if body.get("id") != turn.id:
            return 409, {"error": "that turn is over"}
        index = body.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            return 400, {"error": "index: a legal move's number, from 0"}
        if not 0 <= index < len(turn.legal):
            return 409, {"error": f"no move {index}: this turn has {len(turn.legal)}"}
        self.turn = None
        await self.send(MoveReply(id=turn.id, index=index))
        return 200, {"ok": True, "id": turn.id, "index": index}

    def allowed(self, request: Request) -> bool:
        given = request.query_params.get("k", "")
        return hmac.compare_digest(given.encode(), self.key.encode())

    async def events(self, start: int) -> AsyncIterator[bytes]:
        """Every message from `start` on, then each as it comes, until the game is over."""
        yield (
            b"retry: 1000\n\nevent: seat\ndata: "
            + msgspec.json.encode({"name": self.name, "session": self.session})
            + b"\n\n"
        )
        sent = start
        while True:
            while sent < len(self.said):
                ident = f"{self.session}:{sent + 1}".encode()
                yield b"id: " + ident + b"\nevent: m\ndata: " + self.said[sent] + b"\n\n"
                sent += 1
            if self.over:
                return
            with trio.move_on_after(KEEPALIVE_S) as waited:
                await self.changed.wait()
            if waited.cancelled_caught:
                yield b": keep-alive\n\n"

    def app(self) -> Starlette:
        page = resources.files("referee").joinpath("assets/seat.html").read_text("utf-8")

        async def index(request: Request) -> Response:
            if not self.allowed(request):
                return Response(_FORBIDDEN, status_code=403, media_type="text/plain")
            return HTMLResponse(page, headers=_HEADERS)

        async def stream(request: Request) -> Response:
            if not self.allowed(request):
                return Response(_FORBIDDEN, status_code=403, media_type="text/plain")
            last = request.headers.get("last-event-id", "")
            session, _, count = last.partition(":")
            start = int(count) if session == self.session and count.isdigit() else 0
            return StreamingResponse(
                self.events(min(start, len(self.said))),
                media_type="text/event-stream",
                headers=_HEADERS | {"X-Accel-Buffering": "no"},
            )

        async def move(request: Request) -> Response:
            if not self.allowed(request):
                return Response(_FORBIDDEN, status_code=403, media_type="text/plain")
            try:
                body = msgspec.json.decode(await request.body())
            except msgspec.DecodeError:
                body = None
            status, answer = await self.choose(body)
            return JSONResponse(answer, status_code=status, headers=_HEADERS)

        async def resign(request: Request) -> Response:
            if not self.allowed(request):
                return Response(_FORBIDDEN, status_code=403, media_type="text/plain")
            print("human: the person resigned in the browser: forfeit", file=sys.stderr)
            self.status = FORFEIT_STATUS
            self.done.set()
            return JSONResponse({"ok": True}, headers=_HEADERS)

        return Starlette(
            routes=[
                Route("/", index),
                Route("/events", stream),
                Route("/move", move, methods=["POST"]),
                Route("/resign", resign, methods=["POST"]),
            ]
        )

    async def run(self, host: str, port: int) -> int:
        config = Config()
        config.bind = [f"{host}:{port}"]
        config.accesslog = None
        config.errorlog = None
        config.graceful_timeout = 0.5
        shutdown = trio.Event()
        async with trio.open_nursery() as nursery:
            await nursery.start(
                lambda task_status: serve(
                    cast(Framework, self.app()),
                    config,
                    shutdown_trigger=shutdown.wait,
                    task_status=task_status,
                )
            )

            async def play() -> None:
                await self.referee()
                await trio.sleep(LINGER_S)
                self.done.set()

            nursery.start_soon(play)
            await self.done.wait()
            shutdown.set()
            with trio.move_on_after(1):
                await trio.sleep(math.inf)
            nursery.cancel_scope.cancel()
        return self.status


def _bind_error(exc: BaseException) -> OSError | None:
    if isinstance(exc, OSError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _bind_error(inner)) is not None:
                return found
    return None


def main(argv: list[str] | None = None) -> int:
    """`python -m referee.human.web --port PORT [--name NAME]` (the key in the
    environment, `REFEREE_SEAT_KEY`)."""
    parser = argparse.ArgumentParser(
        prog="python -m referee.human.web",
        description="A person's seat: the protocol on stdin and stdout, the game in a browser.",
    )
    parser.add_argument("--port", type=int, required=True, help="the page's port, on 127.0.0.1")
    parser.add_argument("--name", default="human", help="the name said in `ready`")
    args = parser.parse_args(argv)
    key = os.environ.get(KEY_ENV, "")
    if len(key) < 16:
        print(f"human: {KEY_ENV} must hold the seat's key (16 characters or more)", file=sys.stderr)
        return 2
    seat = WebSeat(args.name, key)
    try:
        return trio.run(seat.run, "127.0.0.1", args.port)
    except (OSError, BaseExceptionGroup) as exc:
        found = _bind_error(exc)
        if found is None:
            raise
        print(f"human: cannot serve on 127.0.0.1:{args.port}: {found.strerror}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
