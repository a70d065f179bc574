"""`referee serve`: bots of a league that connect over TCP instead of being started.

Every accepted connection gets its own task, its own `Connection` and its own
deadlines, so a slow or hostile peer holds up nobody else. A connection opens
with `login` (name, token, protocol) within `handshake_ms` of its accept; after
a good login the usual `hello`/`ready` handshake follows and the rest is the
stdio protocol. Over TLS (`tls`, see `referee.net.tls`) the TLS handshake comes
first, within the same `handshake_ms` and the same place in the lobby: a peer that
never finishes it is cut and counted like one that never logs in (nothing can be
said to it, but to a plain login line sent to a TLS server, which is told so).
A logged-in bot waits in its slot until the pool hands it to a game. Tokens are
compared in constant time (their SHA-256 digests, so that not even the length
shows) and never printed or logged.

A stranger learns nothing from a refusal but that it was refused: a wrong token,
an unknown name and the right token of a bot that is already connected get the
same bytes (`LOGIN_REFUSED`), sent `refusal_delay_s` (`PING_S`) after the login
line arrived whichever it was, though only the last pings the connected bot to
see that it is still there; and the three count alike as failed logins of the
peer's address (`referee.net.logins`), which backs off after a few of them. A login
from an address that must wait is refused at once with `busy`, its token not
compared. The organiser's log says which it was, in one line per address per
minute at most.

Strangers cannot keep a registered bot out: a connection that has not logged in
waits in the `Lobby`, which has room for `max_handshakes` of them and
`max_handshakes_per_address` from one address. A newcomer always gets in; when
there is no room, the oldest connection that has not logged in is told `busy` and
closed. A bot's login line arrives within a round trip of its accept, so a flood
must open that many newer connections within that time to push a bot out once
(and the bridge tries again). Logged-in bots are outside the lobby: each name has
its own slot.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import logging
import math
import socket as stdlib_socket
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Literal

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

from ..bots.connection import BotGoneError, BotStalledError, Connection
from ..bots.session import PING_S, StartupError, TcpSession, goodbye, handshake, ping
from ..league import transport
from ..league.config import LeagueConfig
from ..league.ledger import Ledger
from ..league.pool import league_hello
from ..league.run import run_league
from ..league.schema import ServerLimits
from ..league.standings import Standings
from ..league.transport import Transport
from ..logs.outputs import ready_folder
from ..text import name_problem, quoted
from .logins import LoginGuard
from .tls import ServerTls, is_loopback
from .tlsstream import TlsStream

if TYPE_CHECKING:
    from ..league.cluster import Cluster
    from ..league.judge import Judge
    from ..live.feed import LiveFeed
    from ..site.live import LiveSite

log = logging.getLogger("referee.server")  # its name before the move: serve prints it

LOGIN_MAX_LINE = 4096  # bytes of a login line: a name and a token
_DUMMY_DIGEST = b"\0" * 32  # compared against when the name is unknown, to take the same time
# The one answer to every failed login, whichever it was (see the module).
LOGIN_REFUSED = "login refused for {name}: unknown name, wrong token, or already connected"
REFUSAL_S = PING_S  # a failed login is answered this long after its line arrived
REPORT_EVERY_S = 5.0  # how often the organiser's summary lines are looked at
# What a plain login sent to a TLS server is told, in plain text.
PLAIN_TO_TLS = (
    "this server speaks TLS: connect with --tls, --ca FILE or --pin sha256:HEX "
    "(the fingerprint `referee serve` printed)"
)


@dataclass
class _Slot:
    """One TCP bot's place on the server."""

    digest: bytes  # SHA-256 of the token
    connected: TcpSession | None = None  # at most one session per name
    idle: list[TcpSession] = field(default_factory=list)


@dataclass(eq=False)
class Waiting:
    """A connection that has not logged in yet: its place in the lobby."""

    peer: str
    address: str  # what its share is counted by (see `address_key`)
    scope: trio.CancelScope  # its handshake deadline; cancelled when pushed out
    pushed_out: str = ""  # why it was pushed out, for its `busy` message


class Lobby:
    """Connections that have not logged in: at most `size` in all and `per_address`
    from one address. A newcomer always gets in; when there is no room, the oldest
    connection of its address (when the address's share is full), else the oldest of
    all, is pushed out: its scope is cancelled and its own task says `busy`.

    Pushing out the oldest rather than refusing the newcomer is what keeps strangers
    from starving a bot: whoever holds places, a bot's new connection gets one and
    logs in within a round trip, long before `per_address` (or `size`) newer
    connections can push it out in turn."""

    def __init__(self, size: int, per_address: int) -> None:
        self.size = size
        self.per_address = per_address
        self.waiting: dict[Waiting, None] = {}  # oldest first (dicts keep insertion order)
        self.by_address: dict[str, dict[Waiting, None]] = {}
        self.pushed_out = 0

    def enter(self, peer: str, address: str, deadline: float) -> Waiting:
        """A place for a new connection that must log in before `deadline`."""
        share = self.by_address.setdefault(address, {})
        if len(share) >= self.per_address:
            self._push_out(next(iter(share)), _newer(self.per_address, f" from {address}"))
        elif len(self.waiting) >= self.size:
            self._push_out(next(iter(self.waiting)), _newer(self.size, ""))
        place = Waiting(peer, address, trio.CancelScope(deadline=deadline))
        self.waiting[place] = None
        self.by_address.setdefault(address, {})[place] = None
        return place

    def leave(self, place: Waiting) -> None:
        """`place` logged in, was refused, or went away (again: no harm)."""
        if place in self.waiting:
            del self.waiting[place]
            share = self.by_address[place.address]
            del share[place]
            if not share:
                del self.by_address[place.address]

    def _push_out(self, place: Waiting, why: str) -> None:
        self.leave(place)
        place.pushed_out = why
        place.scope.cancel()
        self.pushed_out += 1


def _newer(n: int, where: str) -> str:
    """Why a connection was pushed out of the lobby (the start of its `busy` message)."""
    connections = f"{n} newer connections{where} are" if n != 1 else f"a newer connection{where} is"
    return f"server busy: {connections} waiting to log in"


class BotServer:
    """Accepts TCP bots of one league and hands them to the pool."""

    def __init__(
        self,
        config: LeagueConfig,
        *,
        guard: LoginGuard | None = None,
        refusal_delay_s: float = REFUSAL_S,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.config = config
        self.limits: ServerLimits = config.server
        self.slots = {
            b.name: _Slot(digest=digest)
            for b in config.bots
            if b.tcp and (digest := b.token_digest) is not None
        }
        self.tls = tls  # None: plain TCP
        self.guard = guard if guard is not None else LoginGuard()
        # At least PING_S, the longest a check of a connected bot may take (a benchmark
        # sets 0 for a reference; then a stranger may tell the cases apart).
        self.refusal_delay_s = refusal_delay_s
        self.lobby = Lobby(self.limits.max_handshakes, self.limits.max_handshakes_per_address)
        self.open_connections = 0
        self.refused = 0  # connections closed without a session, for tests and reports
        self._changed = trio.Event()  # set (and replaced) whenever a slot changes
        self._nursery: trio.Nursery | None = None
        self._nonce = 0
        # Each name's `nonce` from its first good login, kept for the server's life.
        self.nonces: dict[str, str] = {}
        self.on_login: Callable[[str], None] | None = None  # test hook
        # When it began to listen: a bot that has never logged in is waited for until
        # `connect_ms` after that (`take_all`), unless it was waited for already.
        self.started = trio.current_time()
        self.waited: set[str] = set()

    # ---------------------------------------------------------------- accepting

    async def serve(
        self,
        host: str,
        port: int,
        *,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on host:port until cancelled; `task_status` gets the listeners."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._report_logins)
                listeners = await nursery.start(
                    partial(trio.serve_tcp, self.handle, port, host=host)
                )
                self.started = trio.current_time()
                task_status.started(listeners)
        finally:
            self.guard.flush(trio.current_time(), final=True)

    async def _report_logins(self) -> None:
        """The organiser's summary lines of failed logins, as they fall due."""
        while True:
            await trio.sleep(REPORT_EVERY_S)
            self.guard.flush(trio.current_time())

    async def handle(self, stream: trio.SocketStream) -> None:
        """One connection, from accept to close."""
        host, peer = _peer(stream)
        # The handshake clock starts now, at the accept: a peer that trickles its login
        # line byte by byte (or its TLS handshake) is cut at handshake_ms all the same.
        deadline = trio.current_time() + self.limits.handshake_ms / 1000
        place = self.lobby.enter(peer, address_key(host), deadline)
        self.open_connections += 1
        wire: trio.abc.Stream = stream
        if self.tls is not None:
            # trio does not shake hands on accept: `_login` does, within the deadline.
            wire = TlsStream(stream, self.tls, server_side=True)
        # A stranger's first line is held in memory until its newline: a login is short,
        # so 64 strangers cannot make the server hold 64 lines of max_line bytes.
        first = min(LOGIN_MAX_LINE, self.limits.max_line)
        conn = Connection(wire, wire, name=f"tcp {peer}", max_line=first)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(conn.writer)
                session = await self._login(conn, place, stream, wire)
                if session is not None:
                    await session.released(conn)
                # The writer closes the stream once its buffer is out; a peer that does
                # not read gets a short while for that.
                conn.close_output()
                nursery.cancel_scope.deadline = trio.current_time() + 2
        finally:
            self.lobby.leave(place)
            self.open_connections -= 1
            # A TLS stream sends close_notify, unless its handshake failed or was cut
            # (then it only closes the socket); a broken peer may make that raise.
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(1),
                contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
            ):
                await wire.aclose()

    async def _login(
        self, conn: Connection, place: Waiting, socket: trio.SocketStream, wire: trio.abc.Stream
    ) -> TcpSession | None:
        """Shake hands over TLS (`wire` a `TlsStream`), read `login`, check it, then
        `hello`/`ready`; the session, or None (logged)."""
        peer, address = place.peer, place.address
        login: m.Login | None = None
        problem = f"no login within {self.limits.handshake_ms} ms"
        secured = not isinstance(wire, TlsStream)
        with place.scope:
            if isinstance(wire, TlsStream):
                late = problem
                problem = f"no TLS handshake within {self.limits.handshake_ms} ms"
                failure = await self._tls_handshake(socket, wire)
                secured = failure is None
                problem = late if failure is None else failure
            if secured:
                try:
                    msg = decode_from_bot(await conn.receive_line())
                except BotGoneError:
                    self.lobby.leave(place)
                    self.refused += 1
                    log.info("connection from %s closed before login", peer)
                    return None
                except RemoteProtocolError as exc:
                    # The message names the problem, never the line's content.
                    problem = f"bad first line: {type(exc).__name__}"
                    if exc.code == "oversize":
                        problem = f"first line longer than {conn.max_line} bytes"
                else:
                    if isinstance(msg, m.Login):
                        login = msg
                    else:
                        problem = f"expected login first, got {type(msg).__name__}"
        if not secured:
            # Nothing can be said to a peer without a TLS session (but to a plain login,
            # in `_tls_handshake`): it is closed, counted as one that never logged in.
            self.lobby.leave(place)
            self.refused += 1
            if place.pushed_out:
                log.info("connection from %s pushed out in its TLS handshake", peer)
            else:
                self.guard.refused(address, peer, problem, trio.current_time(), login=False)
            return None
        # Out of the lobby: a login is checked at once, and logged-in bots have their slots.
        self.lobby.leave(place)
        arrived = trio.current_time()
        if login is None and place.pushed_out:
            log.info("connection from %s pushed out: %s", peer, place.pushed_out)
            return await self._refuse(conn, f"{place.pushed_out}; try again", code="busy")
        if login is not None and login.protocol != PROTOCOL_VERSION:
            # Before the token: the answer must not depend on it.
            problem = (
                f"bot speaks protocol {login.protocol}; this referee speaks {PROTOCOL_VERSION}"
            )
            login = None
        if login is None:
            self.guard.refused(address, peer, problem, arrived, login=False)
            return await self._refuse(conn, problem)
        wait = self.guard.refusal(address, arrived)
        if wait is not None:  # not even compared
            log.info("login from %s not checked: %s", peer, wait)
            return await self._refuse(conn, f"{wait}; try again", code="busy")
        # A name that cannot be a bot's (a control character, too long) is no league's:
        # refused as an unknown one, and quoted escaped and cut.
        slot = self.slots.get(login.name) if name_problem(login.name) is None else None
        # Constant time: compare even for an unknown name, and whatever the lengths.
        good = hmac.compare_digest(
            _digest(login.token), slot.digest if slot is not None else _DUMMY_DIGEST
        )
        resuming = isinstance(login.resume, m.Resume) and slot is not None and good
        if slot is None or not good or (slot.connected is not None and not resuming):
            # Counted before anything is awaited, the three cases alike: a stranger's
            # next login is backed off (or not) the same whichever this one was.
            self.guard.failed(address, arrived)
        if slot is None or not good:
            why = (
                f"unknown name {quoted(login.name)}"
                if slot is None
                else f"wrong token for {quoted(login.name)}"
            )
            return await self._refuse_login(conn, login.name, peer, address, why, arrived)
        if isinstance(login.resume, m.Resume):
            return await self._resume(conn, slot, login, login.resume, peer)
        old = slot.connected
        if old is not None and old.resume_handler is not None and old.connection.finished:
            # Its game waits for it to resume; a fresh login says it will not.
            await old.resume_handler(None, 0)
        if slot.connected is not None and await self._still_there(slot.connected):
            why = f"{login.name} is already connected"
            return await self._refuse_login(conn, login.name, peer, address, why, arrived)
        session = TcpSession(login.name, conn, peer)
        conn.name = login.name
        conn.allow_lines_of(self.limits.max_line)
        slot.connected = session  # reserved while the handshake runs
        try:
            # Its own clocks, if it has them, and the line limit this server holds it to.
            hello = league_hello(self.config, login.name, self.limits.max_line)
            await handshake(conn, hello, hello.time.startup_ms / 1000)
        except StartupError as exc:
            log.info("%s from %s: %s", login.name, peer, exc)
            self._forget(session)
            return None
        log.info("%s logged in from %s", login.name, peer)
        if login.name not in self.nonces:
            self.nonces[login.name] = login.nonce or ""
            self._notify()
        self.park(session)
        if self.on_login is not None:
            self.on_login(login.name)
        return session

    async def _resume(
        self, conn: Connection, slot: _Slot, login: m.Login, resume: m.Resume, peer: str
    ) -> TcpSession | None:
        """A good login that names a game its bot dropped out of: the connection takes
        the bot's place in that game (`referee.game.match`), without `hello`, if the
        game takes it back; else `error` with code `resume`, and the bridge starts
        afresh for later games."""
        session = slot.connected
        handler = session.resume_handler if session is not None else None
        got = None
        if session is not None and handler is not None and session.game == resume.game:
            conn.name = login.name
            conn.allow_lines_of(self.limits.max_line)
            got = await handler(conn, resume.received)
        if session is None or got is None:
            log.info("%s from %s: nothing to resume in %s", login.name, peer, quoted(resume.game))
            why = (
                f"nothing to resume in game {quoted(resume.game)}: it is over, or "
                f"{login.name} was forfeited or not back within its reconnect window"
            )
            return await self._refuse(conn, why, code="resume")
        session.reattach(conn)
        log.info("%s resumed %s from %s", login.name, resume.game, peer)
        return session

    async def _tls_handshake(self, socket: trio.SocketStream, wire: TlsStream) -> str | None:
        """The TLS handshake of a new connection; None when done, else why not. A peer
        whose first byte opens a JSON object sent a plain login to a TLS server: it is
        told so in plain text, `login` then `bye` (its token has crossed in the clear
        already; the next attempt should not)."""
        try:
            first = await socket.socket.recv(1, stdlib_socket.MSG_PEEK)
        except OSError:
            first = b""
        if not first:
            return "closed before the TLS handshake"
        if first == b"{":
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                # Read (and drop) the line first: a socket closed with bytes unread
                # resets the connection, which could cost the peer the answer.
                await socket.receive_some(LOGIN_MAX_LINE)
                await socket.send_all(
                    encode(m.Error(code="login", message=PLAIN_TO_TLS))
                    + encode(m.Bye(reason="login refused"))
                )
            return "a plain login line sent to a TLS server"
        try:
            await wire.do_handshake()
        except trio.BrokenResourceError as exc:
            cause = exc.__cause__
            if isinstance(cause, ssl.SSLError):
                return f"TLS handshake failed: {cause.reason or cause}"
            return "closed during the TLS handshake"
        return None

    async def _refuse_login(
        self, conn: Connection, name: str, peer: str, address: str, why: str, arrived: float
    ) -> TcpSession | None:
        """A failed login: `why` goes to the organiser's log only; the peer gets
        `LOGIN_REFUSED`, `refusal_delay_s` after its line `arrived`, whatever `why`."""
        await trio.sleep_until(arrived + self.refusal_delay_s)
        self.guard.refused(address, peer, why, trio.current_time(), login=True)
        return await self._refuse(conn, LOGIN_REFUSED.format(name=quoted(name)))

    async def _still_there(self, old: TcpSession) -> bool:
        """Whether the session already logged in under a name is alive: one waiting for
        a game is pinged (a bot whose link dropped may log in again at once)."""
        slot = self.slots[old.name]
        if old not in slot.idle:
            # Playing, or shaking hands; a session whose game saw it go is gone already.
            return slot.connected is old and not old.connection.finished
        slot.idle.remove(old)
        await self._unpark(old)
        self._nonce += 1
        try:
            await ping(old.connection, self._nonce, PING_S)
        except (BotGoneError, BotStalledError, trio.TooSlowError, ProtocolError):
            await self.end(old, polite=False)
            return False
        self.park(old)
        return True

    async def _refuse(
        self, conn: Connection, problem: str, code: Literal["login", "busy", "resume"] = "login"
    ) -> TcpSession | None:
        """Tell the peer why (`code` login or busy), say `bye`, and give up on it (the
        caller has logged it): None, for `_login` to return."""
        self.refused += 1
        try:
            conn.send(m.Error(code=code, message=problem))
            reasons = {"busy": "busy", "resume": "resume refused"}
            conn.send(m.Bye(reason=reasons.get(code, "login refused")))
            with trio.move_on_after(1):
                await conn.flush()
        except (BotGoneError, BotStalledError):
            pass
        return None

    # ---------------------------------------------------------------- the pool's side

    async def first_nonces(self, names: Sequence[str], timeout_s: float) -> dict[str, str | None]:
        """Each of `names`' nonce from its first login ("" if it sent none), once each has
        logged in, or after `timeout_s` (None for those that had not)."""
        deadline = trio.current_time() + timeout_s
        while any(n not in self.nonces for n in names) and trio.current_time() < deadline:
            with trio.move_on_at(deadline):
                await self._changed.wait()
        return {n: self.nonces.get(n) for n in names}

    def given_up(self, names: Sequence[str]) -> None:
        """`names` were waited for their first login already (the arena's final waits
        `--wait-s`): from now on a game waits their startup clock, not `connect_ms`."""
        self.waited.update(names)
        self._notify()

    def admit(self, name: str, digest: bytes) -> None:
        """Let bot `name` log in with the token whose SHA-256 is `digest` from now on
        (an arena's tcp entry added while it runs); a known name keeps its session."""
        slot = self.slots.get(name)
        if slot is None:
            self.slots[name] = _Slot(digest=digest)
        else:
            slot.digest = digest

    def ready(self, name: str) -> bool:
        """Whether bot `name` is logged in and waiting for a game (`take_all` would
        take it at once)."""
        slot = self.slots.get(name)
        return slot is not None and bool(slot.idle)

    def park(self, session: TcpSession) -> None:
        """`session` waits for its next game (and is sent `bye` after `idle_ms`)."""
        slot = self.slots[session.name]
        if slot.connected is not session or session.ended.is_set():
            return
        slot.idle.append(session)
        if self._nursery is not None:
            session.idle_scope = trio.CancelScope()
            session.idle_over = trio.Event()
            self._nursery.start_soon(self._idle, session, session.idle_scope, session.idle_over)
        self._notify()

    async def _idle(self, session: TcpSession, scope: trio.CancelScope, over: trio.Event) -> None:
        """Watch a session that waits for a game: a peer that goes (a bot killed between
        games) is forgotten at once, so no game is started for it on a dead connection;
        one idle for `idle_ms` is sent `bye`. Taking the session cancels `scope`."""
        try:
            with scope:
                if self.limits.idle_ms:
                    scope.deadline = trio.current_time() + self.limits.idle_ms / 1000
                try:
                    await session.connection.wait_input()
                except BotGoneError:
                    if session in self.slots[session.name].idle:
                        log.info("%s: disconnected while waiting for a game", session.name)
                        await self.end(session, polite=False)
                    return
                # A line while nothing was asked: the ping before its next game reads
                # it (and ends the session if it is not one); here the clock goes on.
                await trio.sleep_forever()
            slot = self.slots[session.name]
            if scope.cancelled_caught and session in slot.idle:
                slot.idle.remove(session)
                log.info("%s: idle for %d ms; disconnected", session.name, self.limits.idle_ms)
                await self.end(session, polite=True, reason="idle")
        finally:
            over.set()

    async def _unpark(self, session: TcpSession) -> None:
        """Stop watching `session` (taken out of `idle` already) before it is used."""
        if session.idle_scope is not None:
            session.idle_scope.cancel()
        if session.idle_over is not None:
            await session.idle_over.wait()
        session.idle_scope = session.idle_over = None

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
        been away `timeout_s` while this call waits, and, if it has never logged in,
        not before `connect_ms` from the server's start; the names in `failed` (ended
        for not answering a ping, at the time given) have that clock running from
        then, connected or not."""
        failed = failed or {}
        away: dict[str, float] = dict(failed)  # name -> since when its clock runs
        first_until = self.started + self.limits.connect_ms / 1000
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
                if name not in self.nonces and name not in failed and name not in self.waited:
                    end = max(end, first_until)  # never logged in: a person may be late
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
                taken[name] = slot.idle.pop()
            elif name in failed:
                taken[name] = f"did not answer a ping, and not back within {timeout_s * 1000:g} ms"
            elif name not in self.nonces and name not in failed and name not in self.waited:
                taken[name] = (
                    f"not connected within {self.limits.connect_ms:g} ms of the server's "
                    "start (server.connect_ms)"
                )
            else:
                taken[name] = f"not connected within {timeout_s * 1000:g} ms"
        for session in taken.values():
            if isinstance(session, TcpSession):
                await self._unpark(session)
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


def note_transport(config: LeagueConfig, served: Transport, resume: bool) -> None:
    """Record in the league's ledger how its tcp bots connect, once the ledger is this
    league's (`Ledger.claim`, as `run_league` does next: `LedgerError` if not)."""
    ready_folder(config.out, "the output folder")
    ledger = Ledger(config.out / "league.db")
    try:
        ledger.claim(config.fingerprint(), resume)
        transport.note(ledger.db, served)
    finally:
        ledger.close()


def _digest(token: str) -> bytes:
    """What a token is compared by: its SHA-256, the same length whatever the token."""
    return hashlib.sha256(token.encode()).digest()


def _peer(stream: trio.SocketStream) -> tuple[str, str]:
    """The peer's address, and address:port for messages."""
    try:
        host, port = stream.socket.getpeername()[:2]
    except OSError:
        return "?", "?"
    return str(host), f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def address_key(host: str) -> str:
    """What a connection's share of the lobby is counted by: its IPv4 address, or the
    /64 network of an IPv6 address (one machine commonly holds a whole /64)."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


async def serve_league(
    config: LeagueConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    jobs: int = 1,
    resume: bool = False,
    console: Console,
    quiet: bool = False,
    report_every: int = 0,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    on_listening: Callable[[tuple[str, int]], None] | None = None,
    cluster: Cluster | None = None,
    beacon: str | None = None,
    judge: Judge | None = None,
    site: LiveSite | None = None,
    tls: ServerTls | None = None,
    live: LiveFeed | None = None,
) -> Standings:
    """Run the league with its TCP bots connecting to host:port (0: a free port),
    over TLS with `tls`, else plain TCP.

    `task_status` gets the address listened on, before any game starts, and so does
    `on_listening`, before the league says anything. With a
    `cluster`, games without a TCP seat run on its workers; a match is judged by
    `judge` (see `run_league`). How the bots connect is recorded in the ledger first
    (`referee.league.transport`), for the standings and the site to say."""
    if tls is not None:
        served = Transport("tls", tls.fingerprint)
    else:
        served = Transport("plaintext" if is_loopback(host) else "insecure-plaintext")
    await trio.to_thread.run_sync(note_transport, config, served, resume)
    server = BotServer(config, tls=tls.context if tls is not None else None)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(server.serve, host, port))
        sockname = listeners[0].socket.getsockname()
        address = (str(sockname[0]), int(sockname[1]))
        if on_listening is not None:
            on_listening(address)
        task_status.started(address)
        standings = await run_league(
            config,
            jobs=jobs,
            resume=resume,
            console=console,
            quiet=quiet,
            report_every=report_every,
            server=server,
            cluster=cluster,
            judge=judge,
            site=site,
            beacon=beacon,
            live=live,
        )
        nursery.cancel_scope.cancel()
    return standings
