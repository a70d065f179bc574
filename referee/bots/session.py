"""A bot's session: the handshake, pings between games, and the goodbye; and
`TcpSession`, a bot logged in over TCP (`referee.net.server` accepts them, the league's
pool hands them to games).

Games themselves are `referee.game.match.Game`; this module covers what happens on a
connection around them. Startup failures are reported as `StartupError` with a
sentence naming what went wrong.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio

from protocol import PROTOCOL_VERSION, RemoteProtocolError, decode_from_bot
from protocol import messages as m

from .connection import BotGoneError, BotStalledError, Connection
from .faults import FaultKind

log = logging.getLogger("referee.session")  # its name before the move: serve prints it

# How long a bot has to answer a ping between games before its connection is taken
# for dead; PROTOCOL.md promises at least this ("answer pong at once").
PING_S = 2.0


class StartupError(Exception):
    """The bot did not complete the handshake."""


async def handshake(conn: Connection, hello: m.Hello, timeout_s: float) -> tuple[m.Ready, float]:
    """Send `hello`, wait for `ready`; the ready message and the time it took in ms."""
    started = trio.current_time()
    with trio.move_on_after(timeout_s):
        try:
            conn.send(hello)
            await conn.flush()
        except (BotGoneError, BotStalledError) as exc:
            raise StartupError(f"could not send hello: {exc}") from None
        while True:
            try:
                line = await conn.receive_line()
            except BotGoneError as exc:
                raise StartupError(f"exited before ready: {exc}") from None
            except RemoteProtocolError as exc:
                raise StartupError(f"bad line before ready: {exc}") from None
            try:
                msg = decode_from_bot(line)
            except RemoteProtocolError as exc:
                raise StartupError(f"answered hello with a bad line: {exc}: {line[:200]}") from None
            if not isinstance(msg, m.Ready):
                log.info("%s: ignored %s before ready", conn.name, type(msg).__name__)
                continue
            elapsed = (trio.current_time() - started) * 1000
            if msg.protocol != PROTOCOL_VERSION:
                text = f"bot speaks protocol {msg.protocol}; this referee speaks {PROTOCOL_VERSION}"
                try:
                    conn.send(m.Error(code="version", message=text))
                    conn.send(m.Bye(reason="unsupported protocol version"))
                    await conn.flush()
                except (BotGoneError, BotStalledError):
                    pass
                raise StartupError(text)
            return msg, elapsed
    raise StartupError(f"no ready within {timeout_s:g} s of hello")


async def ping(conn: Connection, nonce: int, timeout_s: float) -> float:
    """Send `ping`, wait for the matching `pong`; the round trip in ms."""
    started = trio.current_time()
    with trio.fail_after(timeout_s):
        conn.send(m.Ping(nonce=nonce))
        await conn.flush()
        while True:
            msg = decode_from_bot(await conn.receive_line())
            if isinstance(msg, m.Pong) and msg.nonce == nonce:
                return (trio.current_time() - started) * 1000


async def goodbye(conn: Connection, reason: str = "done") -> None:
    """Send `bye` and close our end of the connection."""
    try:
        conn.send(m.Bye(reason=reason))
        with trio.move_on_after(1):
            await conn.flush()
    except (BotGoneError, BotStalledError):
        pass
    conn.close_output()


# What takes a tcp bot's new connection back into the game it dropped out of, given how
# many of the game's lines the bot says it received: the count of the bot's lines the
# referee has (for `resumed`), or None when the game refuses it (`referee.game.match`).
# Given None, it learns that the bot logged in afresh: it is not coming back.
ResumeHandler = Callable[[Connection | None, int], Awaitable[int | None]]


class TcpSession:
    """A logged-in bot on a socket: what the pool needs of a `BotProcess`."""

    def __init__(self, name: str, connection: Connection, peer: str) -> None:
        self.name = name
        self.connection = connection
        self.peer = peer
        self.returncode: int | None = None  # stays None while the session is open
        self.ended = trio.Event()
        # While it waits for a game: what watches it (`BotServer.park`), and when that ends.
        self.idle_scope: trio.CancelScope | None = None
        self.idle_over: trio.Event | None = None
        # While it plays a game with a reconnect window: the game, and what takes a
        # connection that logs in again to resume it (`referee.game.match.Rejoin`).
        self.game: str | None = None
        self.resume_handler: ResumeHandler | None = None
        self._moved = trio.Event()  # set when the session goes on on a new connection

    def reattach(self, connection: Connection) -> None:
        """Go on on `connection`: the bot logged in again and resumed its game."""
        self.connection = connection
        self._moved.set()
        self._moved = trio.Event()

    async def released(self, connection: Connection) -> None:
        """Return once the session has ended or goes on on another connection than
        `connection` (what the server's task for `connection` waits for)."""
        while self.connection is connection and not self.ended.is_set():
            moved = self._moved
            async with trio.open_nursery() as nursery:

                async def first(event: trio.Event) -> None:
                    await event.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(first, self.ended)
                nursery.start_soon(first, moved)

    def hold(self, game: str, handler: ResumeHandler | None) -> None:
        """A login naming `game` in its `resume` goes to `handler` from now on; None:
        the game is over, nothing resumes it."""
        self.game = game if handler is not None else None
        self.resume_handler = handler

    async def diagnose(self) -> tuple[FaultKind, str]:
        """The bot's stream ended: over TCP that is always a disconnect."""
        return FaultKind.CRASH, " (disconnected)"

    async def stop(self) -> int | None:
        """Close the connection (after what is buffered is written)."""
        self.returncode = 0
        self.connection.close_output()
        self.ended.set()
        return None
