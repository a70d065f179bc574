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

When the server ends the connection for any reason but the end of the league
(`bye` with reason `done`) or a refused login, the bridge starts a fresh bot and
logs in again for later games. A server that is full (`error` code `busy`, or over
TLS a connection closed mid-handshake, as the server cannot say `busy` before it)
is asked again every `retry_delay_s` until it has room.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import ssl
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio

from protocol import LineFramer, ProtocolError, encode
from protocol import messages as m

from ..bots.process import BotSpec, bot_environment
from ..bots.sandbox import new_scratch
from .tls import handshake_failure, pin_mismatch

log = logging.getLogger("referee.bridge")  # its name before the move: serve prints it

READ_CHUNK = 65536
CLEAN_EXIT_S = 2.0


@dataclass
class Outcome:
    """How one connection ended."""

    kind: str  # "done": the league is over; "refused": login refused; "busy": server full;
    # "failed": the bot could not be started; "tls": the server is not the one it must
    # be (a refused certificate, another pin, no TLS); "dropped": anything else
    detail: str = ""


HANDSHAKE_S = 30.0  # the longest a TLS handshake is waited for (the server cuts sooner)


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
    each game's `game_end` line that holds a receipt is kept there (`keep_receipt`)."""
    spec = BotSpec(name=name, argv=tuple(argv), env=dict(env or {}))
    failures = 0
    outcome = Outcome("dropped", "never connected")
    while True:
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            failures += 1
            outcome = Outcome("dropped", f"cannot connect to {host}:{port}: {_why(exc)}")
            log.info("%s", outcome.detail)
            if not reconnect or failures > retries:
                return outcome
            await trio.sleep(retry_delay_s)
            continue
        failures = 0
        wire: trio.abc.Stream = stream
        login = m.Login(name=spec.name, token=token, nonce=nonce)
        try:
            refused = None
            if tls is not None:
                wire = trio.SSLStream(stream, tls, server_hostname=host, https_compatible=False)
                refused = await _verify(wire, pin)  # before the login: it holds the token
            outcome = refused or await _one_session(wire, login, spec, receipts)
        finally:
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(1),
                contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
            ):
                await wire.aclose()
        log.info("%s: connection ended: %s %s", name, outcome.kind, outcome.detail)
        if outcome.kind == "busy" and reconnect:
            await trio.sleep(retry_delay_s)  # no bot was started; room comes with time
            continue
        if outcome.kind != "dropped" or not reconnect:
            return outcome


async def _verify(wire: trio.SSLStream[trio.SocketStream], pin: str | None) -> Outcome | None:
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
    stream: trio.abc.Stream, login: m.Login, spec: BotSpec, receipts: Path | None = None
) -> Outcome:
    try:
        await stream.send_all(encode(login))
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
        return Outcome("dropped", f"cannot send login: {exc}")
    framer = LineFramer()
    pending: list[str] = []
    # The first line decides: `hello` starts the bot, an error means no.
    while not pending:
        try:
            data = await stream.receive_some(READ_CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            return Outcome("dropped", f"read failed: {exc}")
        if not data:
            return Outcome("dropped", "the server closed the connection before hello")
        try:
            pending += framer.feed(bytes(data))
        except ProtocolError as exc:
            return Outcome("dropped", f"bad line from the server: {exc}")
    first = _peek(pending[0])
    if first.get("type") == "error":
        kind = {"login": "refused", "busy": "busy"}.get(str(first.get("code")), "dropped")
        return Outcome(kind, str(first.get("message", "")))
    scratch = new_scratch(spec.name)
    try:
        return await _relay(stream, framer, pending, spec, str(scratch), receipts)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def _relay(
    stream: trio.abc.Stream,
    framer: LineFramer,
    pending: list[str],
    spec: BotSpec,
    home: str,
    receipts: Path | None = None,
) -> Outcome:
    """Start the bot (`home`: its scratch folder) and copy lines both ways, `pending`
    (from `hello` on) first, until either side ends."""
    try:
        process = await trio.lowlevel.open_process(
            list(spec.argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=bot_environment(spec, home),
            start_new_session=True,
        )
    except OSError as exc:  # starting it again would fail again: the bridge stops
        return Outcome("failed", f"cannot start {spec.argv[0]}: {exc.strerror}")
    assert process.stdin is not None and process.stdout is not None
    bye: list[str] = []
    try:
        async with trio.open_nursery() as nursery:

            async def to_bot() -> None:
                assert process.stdin is not None
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    lines = pending
                    while True:
                        for line in lines:
                            message = _peek(line)
                            if message.get("type") == "bye":
                                bye.append(str(message.get("reason", "")))
                            elif receipts is not None and message.get("type") == "game_end":
                                keep_receipt(receipts, line, message)
                        if lines:
                            await process.stdin.send_all(
                                b"".join(line.encode() + b"\n" for line in lines)
                            )
                        try:
                            data = await stream.receive_some(READ_CHUNK)
                        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                            break
                        if not data:
                            break
                        try:
                            lines = framer.feed(bytes(data))
                        except ProtocolError:
                            break
                    await process.stdin.aclose()  # end of input: the bot exits
                # The server is gone: the bot gets a moment to exit by itself.
                with trio.move_on_after(CLEAN_EXIT_S):
                    await process.wait()
                nursery.cancel_scope.cancel()

            async def from_bot() -> None:
                assert process.stdout is not None
                while True:
                    try:
                        data = await process.stdout.receive_some(READ_CHUNK)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        data = b""
                    if not data:
                        break
                    try:
                        await stream.send_all(data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        break
                # The bot's output ended: so does the connection.
                nursery.cancel_scope.cancel()

            nursery.start_soon(to_bot)
            nursery.start_soon(from_bot)
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
                with trio.move_on_after(CLEAN_EXIT_S):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
    if bye and bye[-1] == "done":
        return Outcome("done")
    return Outcome("dropped", f"bye: {bye[-1]}" if bye else "connection ended")


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
