"""`referee serve`: bots of a league that connect over TCP instead of being started.

Every accepted connection gets its own task, its own `Connection` and its own
deadlines, so a slow or hostile peer holds up nobody else. A connection opens
with `login` (name, token, protocol) within `handshake_ms`; after a good login
the usual `hello`/`ready` handshake follows and the rest is the stdio protocol.
A logged-in bot waits in its slot until the pool hands it to a game. Tokens are
compared in constant time and never printed or logged.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import trio
from rich.console import Console

from protocol import (
    PROTOCOL_VERSION,
    ProtocolError,
    RemoteProtocolError,
    decode_from_bot,
    encode,
)
from protocol import messages as m

from .connection import BotGoneError, BotStalledError, Connection
from .faults import FaultKind
from .league.config import LeagueConfig, ServerLimits
from .league.standings import Standings
from .session import StartupError, goodbye, handshake, ping

if TYPE_CHECKING:
    from .league.cluster import Cluster

log = logging.getLogger(__name__)

_DUMMY_TOKEN = b"\0" * 32  # compared against when the name is unknown, to take the same time


class TcpSession:
    """A logged-in bot on a socket: what the pool needs of a `BotProcess`."""

    def __init__(self, name: str, connection: Connection, peer: str) -> None:
        self.name = name
        self.connection = connection
        self.peer = peer
        self.returncode: int | None = None  # stays None while the session is open
        self.ended = trio.Event()
        self.idle_scope: trio.CancelScope | None = None

    async def diagnose(self) -> tuple[FaultKind, str]:
        """The bot's stream ended: over TCP that is always a disconnect."""
        return FaultKind.CRASH, " (disconnected)"

    async def stop(self) -> int | None:
        """Close the connection (after what is buffered is written)."""
        self.returncode = 0
        self.connection.close_output()
        self.ended.set()
        return None


@dataclass
class _Slot:
    """One TCP bot's place on the server."""

    token: bytes
    connected: TcpSession | None = None  # at most one session per name
    idle: list[TcpSession] = field(default_factory=list)


class BotServer:
    """Accepts TCP bots of one league and hands them to the pool."""

    def __init__(self, config: LeagueConfig, hello: m.Hello) -> None:
        self.config = config
        self.limits: ServerLimits = config.server
        self.hello = hello
        self.slots = {
            b.name: _Slot(token=b.token.encode()) for b in config.bots if b.tcp and b.token
        }
        self.open_connections = 0
        self.refused = 0  # connections closed without a session, for tests and reports
        self._changed = trio.Event()  # set (and replaced) whenever a slot changes
        self._nursery: trio.Nursery | None = None
        self._nonce = 0
        self.on_login: Callable[[str], None] | None = None  # test hook

    # ---------------------------------------------------------------- accepting

    async def serve(
        self,
        host: str,
        port: int,
        *,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on host:port until cancelled; `task_status` gets the listeners."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            listeners = await nursery.start(partial(trio.serve_tcp, self.handle, port, host=host))
            task_status.started(listeners)

    async def handle(self, stream: trio.SocketStream) -> None:
        """One connection, from accept to close."""
        peer = _peer(stream)
        if self.open_connections >= self.limits.max_connections:
            self.refused += 1
            log.info("connection from %s refused: %d open already", peer, self.open_connections)
            await self._busy(stream)
            return
        self.open_connections += 1
        conn = Connection(stream, stream, name=f"tcp {peer}", max_line=self.limits.max_line)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(conn.writer)
                session = await self._login(conn, peer)
                if session is not None:
                    await session.ended.wait()
                # The writer closes the stream once its buffer is out; a peer that does
                # not read gets a short while for that.
                conn.close_output()
                nursery.cancel_scope.deadline = trio.current_time() + 2
        finally:
            self.open_connections -= 1
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await stream.aclose()

    async def _busy(self, stream: trio.SocketStream) -> None:
        """Tell a connection over `max_connections` to come back later, and close it.

        Nothing is read from it; the two short lines fit in any socket buffer, and a
        peer gets one second for them at most."""
        n = self.limits.max_connections
        problem = f"server busy: {n} connection{'s' * (n != 1)} open; try again later"
        lines = encode(m.Error(code="busy", message=problem)) + encode(m.Bye(reason="busy"))
        with trio.move_on_after(1):
            with contextlib.suppress(trio.BrokenResourceError, OSError):
                await stream.send_all(lines)
        with trio.move_on_after(1):
            await stream.aclose()

    async def _login(self, conn: Connection, peer: str) -> TcpSession | None:
        """Read `login`, check it, then `hello`/`ready`; the session, or None (logged)."""
        login: m.Login | None = None
        problem = f"no login within {self.limits.handshake_ms} ms"
        with trio.move_on_after(self.limits.handshake_ms / 1000):
            try:
                msg = decode_from_bot(await conn.receive_line())
            except BotGoneError:
                self.refused += 1
                log.info("connection from %s closed before login", peer)
                return None
            except RemoteProtocolError as exc:
                # The message names the problem, never the line's content.
                problem = f"bad first line: {type(exc).__name__}"
                if exc.code == "oversize":
                    problem = f"first line longer than {self.limits.max_line} bytes"
            else:
                if isinstance(msg, m.Login):
                    login = msg
                else:
                    problem = f"expected login first, got {type(msg).__name__}"
        if login is None:
            return await self._refuse(conn, peer, problem)
        slot = self.slots.get(login.name)
        # Constant time: compare even for an unknown name, and whatever the lengths.
        good = hmac.compare_digest(
            login.token.encode(), slot.token if slot is not None else _DUMMY_TOKEN
        )
        if slot is None or not good:
            return await self._refuse(conn, peer, f"unknown name or wrong token for {login.name!r}")
        if login.protocol != PROTOCOL_VERSION:
            return await self._refuse(
                conn,
                peer,
                f"bot speaks protocol {login.protocol}; this referee speaks {PROTOCOL_VERSION}",
            )
        if slot.connected is not None and await self._still_there(slot.connected):
            return await self._refuse(conn, peer, f"{login.name} is already connected")
        session = TcpSession(login.name, conn, peer)
        conn.name = login.name
        slot.connected = session  # reserved while the handshake runs
        try:
            await handshake(conn, self.hello, self.config.time.startup_ms / 1000)
        except StartupError as exc:
            log.info("%s from %s: %s", login.name, peer, exc)
            self._forget(session)
            return None
        log.info("%s logged in from %s", login.name, peer)
        self.park(session)
        if self.on_login is not None:
            self.on_login(login.name)
        return session

    async def _still_there(self, old: TcpSession) -> bool:
        """Whether the session already logged in under a name is alive: one waiting for
        a game is pinged (a bot whose link dropped may log in again at once)."""
        slot = self.slots[old.name]
        if old not in slot.idle:
            # Playing, or shaking hands; a session whose game saw it go is gone already.
            return slot.connected is old and not old.connection.finished
        slot.idle.remove(old)
        if old.idle_scope is not None:
            old.idle_scope.cancel()
        self._nonce += 1
        try:
            await ping(old.connection, self._nonce, 1.0)
        except (BotGoneError, BotStalledError, trio.TooSlowError, ProtocolError):
            await self.end(old, polite=False)
            return False
        self.park(old)
        return True

    async def _refuse(self, conn: Connection, peer: str, problem: str) -> TcpSession | None:
        self.refused += 1
        log.warning("login from %s refused: %s", peer, problem)
        try:
            conn.send(m.Error(code="login", message=problem))
            conn.send(m.Bye(reason="login refused"))
            with trio.move_on_after(1):
                await conn.flush()
        except (BotGoneError, BotStalledError):
            pass
        return None

    # ---------------------------------------------------------------- the pool's side

    def park(self, session: TcpSession) -> None:
        """`session` waits for its next game (and is sent `bye` after `idle_ms`)."""
        slot = self.slots[session.name]
        if slot.connected is not session or session.ended.is_set():
            return
        slot.idle.append(session)
        if self.limits.idle_ms and self._nursery is not None:
            session.idle_scope = trio.CancelScope()
            self._nursery.start_soon(self._expire, session, session.idle_scope)
        self._notify()

    async def _expire(self, session: TcpSession, scope: trio.CancelScope) -> None:
        with scope:
            await trio.sleep(self.limits.idle_ms / 1000)
            slot = self.slots[session.name]
            if session in slot.idle:
                slot.idle.remove(session)
                log.info("%s: idle for %d ms; disconnected", session.name, self.limits.idle_ms)
                await self.end(session, polite=True, reason="idle")

    def _notify(self) -> None:
        """Wake whoever waits in `take_all`: a slot changed."""
        self._changed.set()
        self._changed = trio.Event()

    async def take_all(
        self, names: Sequence[str], timeout_s: float, failed: Mapping[str, float] | None = None
    ) -> dict[str, TcpSession | str]:
        """The logged-in sessions of all `names`, taken in one step; a reason for each
        name that has none.

        A game takes all its TCP seats together or none: it waits until every name
        is waiting for a game or counts as missing, then takes them all at once (trio
        runs one task at a time, so nothing comes between the check and the taking).
        A game that held one bot while it waited for another could wait for good on
        a game that holds the other and waits for the first.

        A name playing another game (or in its `hello`/`ready`) is waited for without
        a clock: that game has clocks. A name not connected is missing once it has
        been away `timeout_s` while this call waits; the names in `failed` (ended for
        not answering a ping, at the time given) have that clock running from then,
        connected or not."""
        failed = failed or {}
        away: dict[str, float] = dict(failed)  # name -> since when its clock runs
        while True:
            now = trio.current_time()
            waiting, until = False, math.inf
            for name in names:
                slot = self.slots.get(name)
                if slot is None or slot.idle:
                    continue
                if slot.connected is not None and name not in failed:
                    away.pop(name, None)  # it is there: no clock
                    waiting = True
                    continue
                end = away.setdefault(name, now) + timeout_s
                if now < end:
                    waiting, until = True, min(until, end)
            if not waiting:
                break
            with trio.move_on_at(until):
                await self._changed.wait()
        taken: dict[str, TcpSession | str] = {}
        for name in names:
            slot = self.slots.get(name)
            if slot is None:
                taken[name] = f"{name} is not a tcp bot of this server"
            elif slot.idle:
                session = slot.idle.pop()
                if session.idle_scope is not None:
                    session.idle_scope.cancel()
                taken[name] = session
            elif name in failed:
                taken[name] = f"did not answer a ping, and not back within {timeout_s * 1000:g} ms"
            else:
                taken[name] = f"not connected within {timeout_s * 1000:g} ms"
        return taken

    async def end(self, session: TcpSession, *, polite: bool, reason: str = "done") -> None:
        """Close `session`; its name may log in again."""
        if polite:
            await goodbye(session.connection, reason)
        await session.stop()
        self._forget(session)

    def _forget(self, session: TcpSession) -> None:
        slot = self.slots[session.name]
        if session in slot.idle:
            slot.idle.remove(session)
        if slot.connected is session:
            slot.connected = None
        session.ended.set()
        self._notify()

    async def close(self) -> None:
        """Say `bye` to every session still open."""
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for slot in self.slots.values():
                    if slot.connected is not None:
                        nursery.start_soon(partial(self.end, slot.connected, polite=True))


def _peer(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
    except OSError:
        return "?"
    return f"{host}:{port}"


async def serve_league(
    config: LeagueConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    jobs: int = 1,
    resume: bool = False,
    console: Console,
    quiet: bool = False,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    cluster: Cluster | None = None,
) -> Standings:
    """Run the league with its TCP bots connecting to host:port (0: a free port).

    `task_status` gets the address listened on, before any game starts. With a
    `cluster`, games without a TCP seat run on its workers."""
    from .league.pool import league_hello
    from .league.run import run_league

    server = BotServer(config, league_hello(config))
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(server.serve, host, port))
        sockname = listeners[0].socket.getsockname()
        task_status.started((str(sockname[0]), int(sockname[1])))
        standings = await run_league(
            config,
            jobs=jobs,
            resume=resume,
            console=console,
            quiet=quiet,
            server=server,
            cluster=cluster,
        )
        nursery.cancel_scope.cancel()
    return standings
