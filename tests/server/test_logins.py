"""Failed logins of `referee serve`: back-off per address, the cap a minute, the
bounded table, the organiser's summary lines, and refusals a stranger cannot tell
apart.

First `LoginGuard` alone, on times the test gives; then the server itself on
trio's fake clock (`mock_clock`: time moves only when the test jumps it), with
its connections over memory streams from made-up addresses, so that waits of
seconds and a minute are exact and take no time. Last, a real brute-force client
process (`tests/bots/brute_login.py`) against a real `referee serve` on 127.0.0.1.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from referee.net import server as server_module
from referee.net.logins import LoginGuard
from referee.net.server import LOGIN_REFUSED, REFUSAL_S, BotServer

from .test_server import TOKEN_C, TOKEN_D, serve_until_interrupted, write_league

ROOT = Path(__file__).resolve().parents[2]
BRUTE = str(ROOT / "tests" / "bots" / "brute_login.py")
A, B = "10.0.0.1", "10.0.0.2"
WRONG = "8J1tqzH3pW0vX_yNcK5mRbE2uLs7aFgD4oQiZ6TeV9U"


def summaries(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "referee.logins"]


# ---------------------------------------------------------------- the guard alone


def fail(guard: LoginGuard, address: str, times: list[float]) -> None:
    for t in times:
        assert guard.refusal(address, t) is None, t
        guard.failed(address, t)


def test_after_five_failures_an_address_waits_1_2_4_s_and_no_more_than_60() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 4)
    assert guard.refusal(A, 0.0) is None  # four: no wait yet
    fail(guard, A, [0.0])
    assert guard.refusal(A, 0.0) == f"too many failed logins from {A}; none is checked for 1 s"
    assert guard.refusal(A, 0.99) is not None
    fail(guard, A, [1.0])  # the wait is over: checked, failed again
    assert guard.refusal(A, 2.9) == f"too many failed logins from {A}; none is checked for 0.1 s"
    fail(guard, A, [3.0])
    assert guard.refusal(A, 6.9) is not None and guard.refusal(A, 7.0) is None
    t = 7.0
    for wait in (8, 16, 32, 60, 60):  # capped at 60 s
        fail(guard, A, [t])
        assert guard.refusal(A, t + wait - 0.01) is not None
        t += wait
        assert guard.refusal(A, t) is None


def test_another_address_is_not_held_up() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 5)
    assert guard.refusal(A, 0.5) is not None
    assert guard.refusal(B, 0.5) is None
    assert guard.refusal("2001:db8::/64", 0.5) is None


def test_logins_refused_while_waiting_do_not_make_the_wait_longer() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 5)
    for i in range(1000):
        assert guard.refusal(A, i / 1001) is not None
    assert guard.refusal(A, 1.0) is None
    assert guard.table[A].failures == 5 and guard.table[A].unchecked == 1000


def test_at_most_ten_failures_a_minute_whatever_the_back_off() -> None:
    guard = LoginGuard(threshold=1000)  # no back-off: the cap alone
    fail(guard, A, [float(t) for t in range(10)])
    assert guard.refusal(A, 10.0) == f"too many failed logins from {A}; none is checked for 50 s"
    assert guard.refusal(A, 59.9) is not None
    fail(guard, A, [60.0])  # the failure at 0 s is a minute old
    assert guard.refusal(A, 60.5) is not None and guard.refusal(A, 61.0) is None


def test_an_address_is_forgotten_ten_minutes_after_its_last_failure() -> None:
    guard = LoginGuard()
    fail(guard, A, [0.0] * 5)
    guard.flush(599.0)
    assert A in guard.table
    guard.flush(600.0)
    assert A not in guard.table
    fail(guard, A, [600.0] * 4)  # counted afresh
    assert guard.refusal(A, 600.0) is None


def test_the_table_is_bounded_and_drops_the_oldest_failure_first() -> None:
    guard = LoginGuard(size=3)
    for i in range(10):
        fail(guard, f"10.1.0.{i}", [float(i)])
    assert list(guard.table) == ["10.1.0.7", "10.1.0.8", "10.1.0.9"]
    assert guard.evicted == 7
    fail(guard, "10.1.0.7", [10.0])  # failed again: now the newest
    fail(guard, "10.1.0.10", [11.0])
    assert list(guard.table) == ["10.1.0.9", "10.1.0.7", "10.1.0.10"]
    # Connections without a login go first: they cannot push out who failed logins.
    for i in range(100):
        guard.refused(f"10.2.0.{i}", f"10.2.0.{i}:1", "no login within 5000 ms", 12.0, login=False)
    assert list(guard.table)[1:] == ["10.1.0.7", "10.1.0.10"]
    assert len(guard.table) == 3


def test_one_line_for_the_first_refusal_then_one_summary_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="referee.logins")
    guard = LoginGuard()
    for i in range(8):
        guard.failed(A, float(i))
        guard.refused(A, f"{A}:{1000 + i}", "wrong token for 'c'", i + 2.0, login=True)
    guard.refusal(A, 9.5)  # refused unchecked
    guard.refused(A, f"{A}:2000", "no login within 5000 ms", 20.0, login=False)
    guard.refused(B, f"{B}:3000", "unknown name 'x'", 20.0, login=True)
    guard.flush(61.0)
    assert summaries(caplog) == [
        f"login from {A}:1000 refused: wrong token for 'c'",
        f"login from {B}:3000 refused: unknown name 'x'",
    ]
    guard.flush(62.0)  # a minute after A's first line
    guard.refused(A, f"{A}:2001", "wrong token for 'c'", 70.0, login=True)
    guard.flush(121.0)
    guard.flush(122.0)
    assert summaries(caplog)[2:] == [
        f"7 failed logins from {A} in the last 60 s, and 1 more refused unchecked (too many "
        "failures), and 1 connection refused without a good login line",
        f"1 failed login from {A} in the last 60 s",
    ]
    guard.refused(A, f"{A}:2002", "wrong token for 'c'", 130.0, login=True)
    guard.flush(131.0, final=True)  # the server stops: what is left, at once
    assert summaries(caplog)[4:] == [f"1 failed login from {A} in the last 9 s"]


# ---------------------------------------------------------------- the server, fake clock


@dataclass
class Peer:
    """One connection to the server from `host`: what it was sent, and when."""

    stream: trio.StapledStream
    received: bytearray = field(default_factory=bytearray)
    closed_at: float | None = None
    first_at: float | None = None

    async def send(self, line: bytes) -> None:
        await self.stream.send_all(line + b"\n")

    async def read(self, answer: Callable[[Peer, bytes], Any] | None = None) -> None:
        while True:
            try:
                data = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                data = b""
            if not data:
                self.closed_at = trio.current_time()
                return
            if self.first_at is None:
                self.first_at = trio.current_time()
            self.received += data
            if answer is not None:
                for line in bytes(data).splitlines():
                    await answer(self, line)

    def lines(self) -> list[bytes]:
        return bytes(self.received).splitlines()


@dataclass
class Fake:
    server: BotServer
    nursery: trio.Nursery
    clock: trio.testing.MockClock
    port: int = 1000

    async def connect(self, host: str) -> Peer:
        """A connection from `host` (a port of its own), handled by the server."""
        ours, theirs = trio.testing.memory_stream_pair()
        self.port += 1
        address = (host, self.port)
        theirs.socket = type("Sock", (), {"getpeername": lambda self: address})()
        self.nursery.start_soon(self.server.handle, theirs)
        return Peer(ours)

    async def login(
        self, host: str, name: str, token: str, answer: Callable[[Peer, bytes], Any] | None = None
    ) -> Peer:
        """A connection from `host` that sends a login line and reads all it is sent,
        handing each line to `answer`; once the server has nothing left to do at once."""
        peer = await self.connect(host)
        line = b'{"type":"login","name":"%s","token":"%s","protocol":1}' % (
            name.encode(),
            token.encode(),
        )
        await peer.send(line)
        self.nursery.start_soon(peer.read, answer)
        await trio.testing.wait_all_tasks_blocked()
        return peer

    async def bot(self, host: str, name: str, token: str) -> Peer:
        """A bot that logs in, says ready and answers every ping."""

        async def answer(peer: Peer, line: bytes) -> None:
            if line.startswith(b'{"type":"hello"'):
                await peer.send(b'{"type":"ready","name":"%s"}' % name.encode())
            elif line.startswith(b'{"type":"ping"'):
                nonce = line.split(b'"nonce":')[1].split(b",")[0].rstrip(b"}")
                await peer.send(b'{"type":"pong","nonce":%s}' % nonce)

        peer = await self.login(host, name, token, answer)
        assert self.server.slots[name].connected is not None
        return peer

    async def jump(self, seconds: float) -> None:
        self.clock.jump(seconds)
        await trio.testing.wait_all_tasks_blocked()


@asynccontextmanager
async def fake_server(
    tmp_path: Path, clock: trio.testing.MockClock, guard: LoginGuard | None = None
) -> AsyncIterator[Fake]:
    """The test league's server on the fake clock; serving (for its summary lines),
    though nothing connects to its port: `Fake.connect` hands it memory streams."""
    server = BotServer(write_league(tmp_path, tcp=True), guard=guard)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, "127.0.0.1", 0)
        yield Fake(server, nursery, clock)
        nursery.cancel_scope.cancel()


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the server compared a token: one entry per comparison."""
    calls: list[int] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(server_module.hmac, "compare_digest", counting)
    return calls


async def test_a_wrong_token_and_a_connected_bots_token_get_the_same_bytes_at_the_same_time(
    tmp_path: Path, mock_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="referee")
    async with fake_server(tmp_path, mock_clock) as on:
        bot = await on.bot("10.0.0.9", "c", TOKEN_C)
        start = trio.current_time()
        wrong = await on.login(A, "c", WRONG)
        right = await on.login(B, "c", TOKEN_C)  # c is connected: this one is pinged
        assert wrong.received == right.received == b""
        await on.jump(REFUSAL_S - 0.001)
        assert wrong.received == right.received == b""
        await on.jump(0.001)
        assert wrong.closed_at is not None and right.closed_at is not None
        assert wrong.first_at == right.first_at == start + REFUSAL_S
        assert bytes(wrong.received) == bytes(right.received)
        message = LOGIN_REFUSED.format(name="'c'")
        assert wrong.lines() == [
            b'{"type":"error","code":"login","message":"%s","request":null}' % message.encode(),
            b'{"type":"bye","reason":"login refused"}',
        ]
        # Both count as failed logins of their addresses; the bot is still there.
        assert on.server.guard.table[A].failures == on.server.guard.table[B].failures == 1
        assert on.server.slots["c"].connected is not None and bot.closed_at is None
        # The organiser's log says which was which.
        assert sorted(summaries(caplog)) == [
            f"login from {A}:1002 refused: wrong token for 'c'",
            f"login from {B}:1003 refused: c is already connected",
        ]


async def test_after_five_failures_an_address_is_refused_unchecked_until_its_wait_is_over(
    tmp_path: Path,
    mock_clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
    compared: list[int],
) -> None:
    caplog.set_level(logging.WARNING, logger="referee")
    async with fake_server(tmp_path, mock_clock) as on:
        guesses = [await on.login(A, "c", WRONG[:-1] + str(i)) for i in range(5)]
        assert len(compared) == 5
        # The right token, from the same address: refused at once, not even compared.
        early = await on.login(A, "c", TOKEN_C)
        assert len(compared) == 5 and early.closed_at == trio.current_time()
        assert early.lines()[0] == (
            b'{"type":"error","code":"busy","message":"too many failed logins from '
            b'10.0.0.1; none is checked for 1 s; try again","request":null}'
        )
        # Another address is not held up.
        other = await on.login(B, "d", TOKEN_D)
        assert other.lines()[0].startswith(b'{"type":"hello"') and len(compared) == 6
        await on.jump(0.5)
        assert (await on.login(A, "c", TOKEN_C)).lines()[0].startswith(b'{"type":"error"')
        assert len(compared) == 6
        await on.jump(REFUSAL_S - 0.5)  # the guesses' answers; the wait (1 s) is over
        assert all(g.lines()[0].startswith(b'{"type":"error","code":"login"') for g in guesses)
        late = await on.login(A, "c", TOKEN_C)
        assert late.lines()[0].startswith(b'{"type":"hello"') and len(compared) == 7
        # One line for the first failure answered (trio wakes the five in any order);
        # the rest in a summary a minute later.
        [first] = summaries(caplog)
        ports = range(1001, 1006)
        assert first in [f"login from {A}:{p} refused: wrong token for 'c'" for p in ports]
        await on.jump(60)
        assert summaries(caplog)[1:] == [
            f"4 failed logins from {A} in the last 62 s, and 2 more refused unchecked "
            "(too many failures)"
        ]
        assert [r.levelno for r in caplog.records if r.name == "referee.server"] == []


async def test_a_right_token_for_a_connected_bot_counts_towards_the_back_off(
    tmp_path: Path, mock_clock: trio.testing.MockClock, compared: list[int]
) -> None:
    # Four wrong guesses and the connected bot's token: the fifth failure starts the wait
    # as a fifth wrong guess would, so the next login shows nothing either way.
    async with fake_server(tmp_path, mock_clock) as on:
        await on.bot("10.0.0.9", "c", TOKEN_C)
        for i in range(4):
            await on.login(A, "c", WRONG[:-1] + str(i))
        await on.login(A, "c", TOKEN_C)
        assert on.server.guard.table[A].failures == 5
        probe = await on.login(A, "d", TOKEN_D)
        assert b"too many failed logins" in probe.lines()[0]


async def test_another_protocol_is_answered_before_the_token_is_looked_at(
    tmp_path: Path, mock_clock: trio.testing.MockClock, compared: list[int]
) -> None:
    # The right token and a wrong one get the same answer, at once: nothing compared,
    # nothing counted.
    async with fake_server(tmp_path, mock_clock) as on:
        answers = []
        for token in (TOKEN_C, WRONG):
            peer = await on.connect(A)
            line = {"type": "login", "name": "c", "token": token, "protocol": 2}
            await peer.send(json.dumps(line).encode())
            on.nursery.start_soon(peer.read)
            await trio.testing.wait_all_tasks_blocked()
            assert peer.closed_at == trio.current_time()
            answers.append(bytes(peer.received))
        assert answers[0] == answers[1] and b"bot speaks protocol 2" in answers[0]
        assert compared == [] and on.server.guard.table[A].failures == 0


async def test_many_addresses_cannot_grow_the_table(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    async with fake_server(tmp_path, mock_clock, LoginGuard(size=16)) as on:
        for i in range(200):
            await on.login(f"10.3.{i // 250}.{i % 250}", "c", WRONG)
        await on.jump(REFUSAL_S)
        assert len(on.server.guard.table) == 16 and on.server.guard.evicted >= 200 - 16


# ---------------------------------------------------------------- a real brute-force client


def test_a_brute_force_client_gets_few_tokens_checked_and_serve_writes_a_summary(
    tmp_path: Path,
) -> None:
    """Forty guesses at once from 127.0.0.1 against `referee serve`: the first five are
    checked, and at most ten in a minute (the run takes far less); the rest are refused
    unchecked, or pushed out of the lobby (8 connections an address), which checks
    nothing either. serve's stderr has one line for the first failure and a summary
    of the others when it stops, not a line for each."""
    config = write_league(tmp_path, tcp=True, startup_ms=60_000)  # nobody plays: no bots
    with serve_until_interrupted(config, "--port", "0", "-j", "1", "-q") as served:
        assert served.host == "127.0.0.1"
        brute = subprocess.run(
            [sys.executable, BRUTE, served.host, str(served.port), "c", "40"],
            capture_output=True,
            text=True,
            timeout=50,
        )
    err = served.stderr
    assert brute.returncode == 0, brute.stderr
    answers = json.loads(brute.stdout)
    refused = LOGIN_REFUSED.format(name="'c'")
    checked = [a for a in answers if refused in a]
    backed_off = [a for a in answers if "too many failed logins from 127.0.0.1" in a]
    pushed_out = [a for a in answers if "server busy" in a]
    assert len(checked) + len(backed_off) + len(pushed_out) == 40, answers
    assert 5 <= len(checked) <= 10, answers
    error = {"type": "error", "code": "login", "message": refused, "request": None}
    bye = {"type": "bye", "reason": "login refused"}
    assert set(checked) == {
        "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in (error, bye))
    }
    assert served.returncode == 130, err
    lines = [line for line in err.splitlines() if "127.0.0.1" in line]
    first = r"referee: referee\.logins: login from 127\.0\.0\.1:\d+ refused: wrong token for 'c'"
    assert re.fullmatch(first, lines[0]), err
    summary = re.compile(
        r"referee: referee\.logins: (\d+|no) failed logins? from 127\.0\.0\.1 in the last \d+ s"
        r"(?:, and (\d+) more refused unchecked \(too many failures\))?"
    )
    found = [summary.fullmatch(line) for line in lines[1:]]
    assert all(found) and len(found) <= 2, err  # one at the end; one more after a minute
    told = [m for m in found if m is not None]
    assert sum(int(m[1].replace("no", "0")) for m in told) == len(checked) - 1
    assert sum(int(m[2] or 0) for m in told) == len(backed_off)
