"""`referee connect`: run a local stdio bot and relay it to a `referee serve` server.

The bridge logs in, waits for `hello`, then starts the bot and copies bytes both
ways until either side closes. The bot is unchanged: it sees exactly what a bot
started by the referee sees, on its stdin and in its environment, which is the
fixed minimal one (`referee.bots.process.bot_environment`, with a fresh scratch folder
as HOME, removed when the bot ends) plus the variables given to the bridge, never
the bridge's own: the token and whatever else the shell that runs
`referee connect` holds stay out of the bot's reach.

Over TLS the bridge verifies the server before it sends anything (the login holds
the token): the context checks the certificate against CAs and the host name, or a
pin is compared with the certificate's fingerprint after the handshake. A refused
certificate, a pin that does not match, or a server that does not speak TLS ends the
bridge (`tls`); trying again would meet the same server.

When the connection ends mid-game (no `game_end`, no `bye`) and the bot runs on, the
bridge keeps the bot and logs in again with `resume`: the game and how many of its
lines the bot has had; the server answers `resumed` with how many of the bot's lines
it has, the bridge sends the rest again, and the game goes on (spec/PROTOCOL.md,
TCP). When the server ends the connection for any other reason but the end of the
league (`bye` with reason `done`) or a refused login, or a resume is refused, the
bridge starts a fresh bot and logs in again for later games. A server that is full
(`error` code `busy`, or over TLS a connection closed mid-handshake, as the server
cannot say `busy` before it) is asked again every `retry_delay_s` until it has room.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import ssl
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import trio

from protocol import LineFramer, ProtocolError, encode
from protocol import messages as m

from ..bots.process import BotSpec, bot_environment
from ..bots.sandbox import new_scratch
from .tls import handshake_failure, pin_mismatch
from .tlsstream import TlsStream

log = logging.getLogger("referee.bridge")  # its name before the move: serve prints it

READ_CHUNK = 65536
CLEAN_EXIT_S = 2.0


@dataclass
class Outcome:
    """How one connection ended."""

    kind: str  # "done": the league is over; "refused": login refused; "busy": server full;
    # "failed": the bot could not be started; "tls": the server is not the one it must
    # be (a refused certificate, another pin, no TLS); "unreachable": no connection was
    # ever made (nothing listens there, no route); "dropped": anything else
    detail: str = ""


HANDSHAKE_S = 30.0  # the longest a TLS handshake is waited for (the server cuts sooner)
# A connection lost mid-game: the bot is kept and the game resumed on a new connection,
# tried at once and then after these pauses, the last one repeated, for at most
# RESUME_S (the server's window, `reconnect_ms`, is shorter: it says no before then).
RESUME_PAUSES_S = (0.1, 0.25, 0.5, 1.0)
RESUME_S = 60.0
WRITE_S = 60.0  # the longest a write to the bot may take before it is taken for stuck


@dataclass
class _InGame:
    """What the bridge keeps of the game in play, to resume it on a new connection."""

    game: str
    received: int = 0  # the game's lines from the server, its `game_start` the first
    sent: list[bytes] = field(default_factory=list)  # the bot's lines since game_start


class _Bot:
    """The bot's process, which outlives a connection that drops mid-game."""

    def __init__(self, process: trio.Process, home: Path) -> None:
        self.process = process
        self.home = home
        self.partial = bytearray()  # the bot's output since its last newline
        self.game: _InGame | None = None
        self.bye: list[str] = []
        self.stuck = False  # a write to it did not finish: its input is not usable

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self.stuck

    async def end(self) -> None:
        """End the process (its input closed, then terminated, then killed) and remove
        its scratch folder."""
        with trio.CancelScope(shield=True):
            if self.process.stdin is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await self.process.stdin.aclose()
            with trio.move_on_after(CLEAN_EXIT_S):
                await self.process.wait()
            if self.process.returncode is None:
                self.process.terminate()
                with trio.move_on_after(CLEAN_EXIT_S):
                    await self.process.wait()
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)


async def run_bridge(
    host: str,
    port: int,
    name: str,
    token: str,
    argv: Sequence[str],
    *,
    reconnect: bool = True,
    retries: int = 5,
    retry_delay_s: float = 1.0,
    env: Mapping[str, str] | None = None,
    tls: ssl.SSLContext | None = None,
    pin: str | None = None,
    nonce: str | None = None,
    receipts: Path | None = None,
) -> Outcome:
    """Relay `argv` to the server until the league is over (or login is refused);
    each bot started gets `bot_environment` with `env` over it. With `tls`, over TLS
    (`referee.net.tls.client_context`), the server's certificate checked against `pin`
    (`sha256:HEX`) when one is given. `nonce` goes in every login. With `receipts`,
    each game's `game_end` line that holds a receipt is kept there (`keep_receipt`).

    A connection lost mid-game (with `reconnect`) keeps the bot: the bridge logs in
    again at once, then after short pauses, naming the game and how many of its lines
    the bot has had (`login` with `resume`); the server sends what the bot missed and
    the game goes on. Refused, or not back within `RESUME_S`, the bot is ended and a
    fresh one plays the later games."""
    spec = BotSpec(name=name, argv=tuple(argv), env=dict(env or {}))
    failures = 0
    connected = False  # whether any connection was ever made
    outcome = Outcome("dropped", "never connected")
    kept: _Bot | None = None  # a bot in a game whose connection dropped
    lost_at = 0.0  # when it dropped
    pauses = 0
    try:
        while True:
            if kept is not None and trio.current_time() - lost_at > RESUME_S:
                log.info("%s: could not resume the game within %g s", name, RESUME_S)
                await kept.end()
                kept = None
            try:
                stream = await trio.open_tcp_stream(host, port)
            except OSError as exc:
                outcome = Outcome("dropped", f"cannot connect to {host}:{port}: {_why(exc)}")
                log.info("%s", outcome.detail)
                if kept is not None:
                    await trio.sleep(RESUME_PAUSES_S[min(pauses, len(RESUME_PAUSES_S) - 1)])
                    pauses += 1
                    continue
                failures += 1
                if not reconnect or failures > retries:
                    return outcome if connected else Outcome("unreachable", outcome.detail)
                await trio.sleep(retry_delay_s)
                continue
            failures = 0
            connected = True
            wire: trio.abc.Stream = stream
            resume: m.Resume | msgspec.UnsetType = msgspec.UNSET
            if kept is not None and kept.game is not None:
                resume = m.Resume(game=kept.game.game, received=kept.game.received)
            login = m.Login(name=spec.name, token=token, nonce=nonce, resume=resume)
            try:
                refused = None
                if tls is not None:
                    wire = TlsStream(stream, tls, server_hostname=host)
                    refused = await _verify(wire, pin)  # before the login: it holds the token
                if refused is not None:
                    outcome = refused
                else:
                    outcome, kept = await _one_session(wire, login, spec, receipts, kept)
            finally:
                with (
                    trio.CancelScope(shield=True),
                    trio.move_on_after(1),
                    contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
                ):
                    await wire.aclose()
            log.info("%s: connection ended: %s %s", name, outcome.kind, outcome.detail)
            if kept is not None and not reconnect:
                await kept.end()
                kept = None
            if kept is not None and outcome.kind in ("dropped", "busy"):
                if outcome.kind == "dropped" and resume is msgspec.UNSET:
                    lost_at, pauses = trio.current_time(), 0  # a new drop: try at once
                else:
                    await trio.sleep(RESUME_PAUSES_S[min(pauses, len(RESUME_PAUSES_S) - 1)])
                    pauses += 1
                continue
            if kept is not None:
                await kept.end()
                kept = None
            if outcome.kind == "busy" and reconnect:
                await trio.sleep(retry_delay_s)  # no bot was started; room comes with time
                continue
            if outcome.kind != "dropped" or not reconnect:
                return outcome
    finally:
        if kept is not None:
            await kept.end()


async def _verify(wire: TlsStream, pin: str | None) -> Outcome | None:
    """The TLS handshake, and the pin checked: None when the server is the one it must
    be; else `tls` (never the same server next time) or `busy` (it closed the
    connection mid-handshake: full, or too slow a handshake)."""
    try:
        with trio.fail_after(HANDSHAKE_S):
            await wire.do_handshake()
    except trio.TooSlowError:
        return Outcome("busy", f"no TLS handshake within {HANDSHAKE_S:g} s")
    except trio.BrokenResourceError as exc:
        again, why = handshake_failure(exc)
        return Outcome("busy" if again else "tls", why)
    if pin is not None:
        mismatch = pin_mismatch(wire.getpeercert(binary_form=True), pin)
        if mismatch is not None:
            return Outcome("tls", mismatch)
    return None


async def _one_session(
    stream: trio.abc.Stream,
    login: m.Login,
    spec: BotSpec,
    receipts: Path | None = None,
    kept: _Bot | None = None,
) -> tuple[Outcome, _Bot | None]:
    """One connection: the login, then the bot relayed (`kept`, resuming its game, or
    a fresh one after `hello`). The outcome, and the bot when it is kept for a resume
    (the connection dropped mid-game); else the bot has been ended."""
    try:
        await stream.send_all(encode(login))
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
        return Outcome("dropped", f"cannot send login: {exc}"), kept
    framer = LineFramer()
    pending: list[str] = []
    # The first line decides: `hello` starts the bot, `resumed` goes on with the kept
    # one, an error means no.
    while not pending:
        try:
            data = await stream.receive_some(READ_CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            return Outcome("dropped", f"read failed: {exc}"), kept
        if not data:
            return Outcome("dropped", "the server closed the connection before hello"), kept
        try:
            pending += framer.feed(bytes(data))
        except ProtocolError as exc:
            return Outcome("dropped", f"bad line from the server: {exc}"), kept
    first = _peek(pending[0])
    if first.get("type") == "error":
        code = str(first.get("code"))
        if code == "resume" and kept is not None:
            log.info("%s: %s", spec.name, first.get("message", ""))
            await kept.end()
            return Outcome("dropped", "the game could not be resumed"), None
        kind = {"login": "refused", "busy": "busy"}.get(code, "dropped")
        return Outcome(kind, str(first.get("message", ""))), kept
    if first.get("type") == "resumed" and kept is not None and kept.game is not None:
        got = first.get("received")
        lines = kept.game.sent
        if not isinstance(got, int) or not 0 <= got <= len(lines):
            await kept.end()
            return Outcome("dropped", "a resume the bridge cannot follow"), None
        try:
            # What the server did not get, and the start of a line still being written.
            await stream.send_all(b"".join(lines[got:]) + bytes(kept.partial))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            return Outcome("dropped", f"write failed: {exc}"), kept
        log.info("%s: resumed %s", spec.name, kept.game.game)
        return await _relay(stream, framer, pending[1:], kept, receipts)
    if kept is not None:  # not the answer to a resume: the kept bot's game is over
        await kept.end()
    scratch = new_scratch(spec.name)
    try:
        process = await trio.lowlevel.open_process(
            list(spec.argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=bot_environment(spec, str(scratch)),
            start_new_session=True,
        )
    except OSError as exc:  # starting it again would fail again: the bridge stops
        shutil.rmtree(scratch, ignore_errors=True)
        return Outcome("failed", f"cannot start {spec.argv[0]}: {exc.strerror}"), None
    return await _relay(stream, framer, pending, _Bot(process, scratch), receipts)


async def _relay(
    stream: trio.abc.Stream,
    framer: LineFramer,
    pending: list[str],
    bot: _Bot,
    receipts: Path | None = None,
) -> tuple[Outcome, _Bot | None]:
    """Copy lines both ways, `pending` (from the server) first, until either side
    ends. The bot is kept (returned) when the connection ended mid-game and the bot
    is alive; else it is ended."""
    process = bot.process
    assert process.stdin is not None and process.stdout is not None
    server_gone = False

    async def to_bot() -> None:
        nonlocal server_gone
        assert process.stdin is not None
        lines = pending
        while True:
            for line in lines:
                message = _peek(line)
                kind = message.get("type")
                if kind == "game_start":
                    bot.game = _InGame(str(message.get("game", "")))
                if bot.game is not None:
                    bot.game.received += 1
                if kind == "bye":
                    bot.bye.append(str(message.get("reason", "")))
                elif kind == "game_end":
                    bot.game = None
                    if receipts is not None:
                        keep_receipt(receipts, line, message)
            if lines:
                # Never cut short: a write cut mid-line would leave the bot's input
                # unusable, and the bot is kept when the connection drops.
                with trio.CancelScope(shield=True), trio.move_on_after(WRITE_S) as scope:
                    try:
                        await process.stdin.send_all(
                            b"".join(line.encode() + b"\n" for line in lines)
                        )
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        # The bot is gone: from_bot passes on what it wrote last, then
                        # sees its output end.
                        await trio.sleep_forever()
                if scope.cancelled_caught:
                    bot.stuck = True
                    return
            try:
                data = await stream.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                data = b""
            try:
                lines = framer.feed(bytes(data)) if data else []
            except ProtocolError:
                data = b""
            if not data:
                server_gone = True
                return

    async def from_bot() -> None:
        nonlocal server_gone
        assert process.stdout is not None
        while True:
            try:
                data = await process.stdout.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                return  # the bot's output ended: so does the connection
            # Passed on as it is (the server judges the lines), and kept in lines.
            bot.partial += data
            *done, rest = bot.partial.split(b"\n")
            bot.partial = bytearray(rest)
            if bot.game is not None:
                bot.game.sent += [bytes(line) + b"\n" for line in done]
            try:
                await stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                server_gone = True
                return

    try:
        async with trio.open_nursery() as nursery:

            async def first(work: Callable[[], Awaitable[None]]) -> None:
                await work()
                nursery.cancel_scope.cancel()

            nursery.start_soon(first, to_bot)
            nursery.start_soon(first, from_bot)
    except BaseException:  # cancelled (the bridge is ended): so is the bot
        await bot.end()
        raise
    if server_gone and bot.game is not None and bot.alive and not bot.bye:
        return Outcome("dropped", f"connection lost in {bot.game.game}"), bot
    if server_gone and bot.alive:
        # The server is gone between games: the bot gets a moment to exit by itself.
        assert process.stdin is not None
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await process.stdin.aclose()
    await bot.end()
    if bot.bye and bot.bye[-1] == "done":
        return Outcome("done"), None
    return Outcome("dropped", f"bye: {bot.bye[-1]}" if bot.bye else "connection ended"), None


RECEIPT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def keep_receipt(folder: Path, line: str, message: dict[str, object]) -> Path | None:
    """Keep a `game_end` line that holds a receipt as FOLDER/LEAGUE-GAME-seatN.json (LEAGUE
    the first 12 hex digits of the commitment, so two leagues' games do not collide, and
    N the bot's seat, so that bridges may share a folder); the
    file written, or None (no receipt, a name that cannot be a file's, a write that
    failed: logged, and the bot plays on)."""
    receipt = message.get("receipt")
    if not isinstance(receipt, dict):
        return None
    league = str(receipt.get("league", "")).removeprefix("sha256:")[:12]
    game, seat = str(receipt.get("game", "")), receipt.get("seat")
    if not (RECEIPT_NAME.fullmatch(league) and RECEIPT_NAME.fullmatch(game)) or not (
        isinstance(seat, int) and 0 <= seat < 100
    ):
        log.warning("a receipt for an unusable game id or seat was not kept")
        return None
    path = folder / f"{league}-{game}-seat{seat}.json"
    try:
        path.write_text(line + "\n", encoding="utf-8")
    except OSError as exc:
        log.warning("%s: cannot keep the receipt (%s)", path, exc.strerror)
        return None
    return path


def _why(exc: OSError) -> str:
    """The reason a connect failed, in words ("Connection refused"). trio tries every
    address of the host and raises a bare OSError ("all attempts ... failed", no
    strerror) whose cause groups each attempt's error, worded with its address."""
    if exc.strerror:
        return exc.strerror
    cause = exc.__cause__
    attempts = cause.exceptions if isinstance(cause, BaseExceptionGroup) else ()
    reasons = [
        os.strerror(e.errno) if e.errno and e.errno > 0 else str(e)
        for e in attempts
        if isinstance(e, OSError)
    ]
    return "; ".join(dict.fromkeys(reasons)) or str(exc)


def _peek(line: str) -> dict[str, object]:
    """A server line as a plain dict (an empty one if it is not a JSON object)."""
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}
