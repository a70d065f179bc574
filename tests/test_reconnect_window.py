"""The reconnect window inside a game, on memory streams and a fake clock: a seat whose
connection drops is taken back by a new connection that names how many lines it had,
gets `resumed` and exactly the lines it missed, and its clock runs while it is away on
its turn; one not back within `reconnect_ms` has a crash, one whose clock runs out
while away a timeout (the whole network path, with a real bridge and a cut: tests/
server/test_reconnect.py)."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from protocol import messages as m
from referee.bots.connection import Connection
from referee.bots.session import ResumeHandler
from referee.game.match import Decision, Game, GameResult, Recorder, Seat
from referee.rules import State, legal_moves, preset

MOVE_MS, BANK_MS, GRACE_MS = 1000, 2000, 50


class Session:
    """What the game holds of a tcp session: the handler a new login is given to."""

    def __init__(self) -> None:
        self.handler: ResumeHandler | None = None

    def hold(self, game: str, handler: ResumeHandler | None) -> None:
        self.handler = handler


class Kept(Recorder):
    def __init__(self) -> None:
        self.decisions: list[Decision] = []

    def decision(self, record: Decision, state: State) -> None:
        self.decisions.append(record)


class Bot:
    """Plays legal move 0, keeping every line it is sent; it drops its connection
    instead of answering its `drop_at`-th turn request."""

    def __init__(self, drop_at: int) -> None:
        self.drop_at = drop_at
        self.seen: list[bytes] = []
        self.turns = 0
        self.dropped = trio.Event()

    async def run(self, stream: trio.testing.StapledStream, skip: int = 0) -> None:
        """Read and answer until the stream ends (or it drops); the first `skip` lines
        are not the game's (`resumed`)."""
        buffer = b""
        while True:
            data = await stream.receive_some()
            if not data:
                return
            buffer += data
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                if skip:
                    skip -= 1
                    assert json.loads(raw)["type"] == "resumed"
                    continue
                self.seen.append(raw)
                message = json.loads(raw)
                if message["type"] != "turn":
                    continue
                self.turns += 1
                if self.turns == self.drop_at and not self.dropped.is_set():
                    self.seen.pop()  # lost with the line: it never reached the bot
                    self.turns -= 1
                    self.dropped.set()
                    await stream.aclose()
                    return
                reply = {"type": "move", "id": message["id"], "index": 0}
                await stream.send_all(json.dumps(reply).encode() + b"\n")


async def play(
    bot: Bot, *, away_s: float | None, reconnect_ms: int
) -> tuple[GameResult, list[Decision], Connection]:
    """A game of seat 0 (`bot`, which drops) against a local player; the bot comes
    back `away_s` after its drop (None: never)."""
    ours, theirs = trio.testing.memory_stream_pair()
    conn = Connection(ours, ours, name="tcp")
    session = Session()
    seats = [
        Seat("tcp", connection=conn, rejoin=session, reconnect_ms=reconnect_ms),
        Seat("local", local=lambda s: legal_moves(s)[0]),
    ]
    kept = Kept()
    time = m.TimeControl(move_ms=MOVE_MS, bank_ms=BANK_MS, grace_ms=GRACE_MS)
    rules = preset("standard", players=2, max_pip=6, rounds="single")
    game = Game(seats, rules, 3, game_id="g7", time=time, recorder=kept, bot_seed_key=bytes(16))
    fresh = Connection(*[trio.testing.memory_stream_pair()[0]] * 2, name="unused")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        nursery.start_soon(bot.run, theirs)

        async def come_back() -> None:
            nonlocal fresh
            await bot.dropped.wait()
            if away_s is None:
                return
            await trio.sleep(away_s)
            ours2, theirs2 = trio.testing.memory_stream_pair()
            fresh = Connection(ours2, ours2, name="tcp again")
            nursery.start_soon(fresh.writer)
            assert session.handler is not None
            got = await session.handler(fresh, len(bot.seen))
            assert got is not None
            nursery.start_soon(bot.run, theirs2, 1)

        nursery.start_soon(come_back)
        result = await game.play()
        nursery.cancel_scope.cancel()
    assert session.handler is None  # given up when the game ended
    return result, [d for d in kept.decisions if d.seat == 0], fresh


def unclocked(line: bytes) -> dict[str, object]:
    message: dict[str, object] = json.loads(line)
    message.pop("clock", None)
    return message


async def straight_lines() -> list[bytes]:
    bot = Bot(drop_at=10**6)
    await play(bot, away_s=None, reconnect_ms=5000)
    return bot.seen


async def test_a_seat_back_in_time_gets_every_line_once_and_pays_for_its_time_away(
    autojump_clock: trio.testing.MockClock,
) -> None:
    straight = await straight_lines()
    bot = Bot(drop_at=3)
    result, decisions, fresh = await play(bot, away_s=1.5, reconnect_ms=5000)
    assert result.faults == ((), ())
    # Nothing missed, nothing twice; only its clock differs, charged for its time away.
    assert [unclocked(line) for line in bot.seen] == [unclocked(line) for line in straight]
    turns = [json.loads(line) for line in bot.seen if b'"type":"turn"' in line]
    banks = [turn["clock"]["bank_ms"] for turn in turns]
    assert banks[:3] == [BANK_MS] * 3 and banks[3] == BANK_MS - (1500 - MOVE_MS - GRACE_MS)
    asked = [d for d in decisions if not d.auto]
    third = asked[2]
    # The request went out as the connection died: the bot's clock ran the 1.5 s it
    # was away, past its move time, into its bank.
    assert third.latency_ms == pytest.approx(1500, abs=1)
    assert third.faults == ()
    # Request ids go on across connections: every decision's id is the next one.
    assert [d.request for d in asked] == list(range(1, len(asked) + 1))
    assert fresh.requests == len(asked)


async def test_a_seat_not_back_within_its_window_crashes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot = Bot(drop_at=3)
    result, decisions, _ = await play(bot, away_s=None, reconnect_ms=800)
    (fault,) = result.faults[0]
    assert fault.kind.value == "crash"
    assert fault.detail == "disconnected, and not back within 800 ms"
    assert result.forfeited == (True, False)
    assert [d.latency_ms for d in decisions if d.faults] == [pytest.approx(800, abs=1)]


async def test_a_seat_whose_clock_runs_out_while_away_times_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot = Bot(drop_at=3)
    result, _, _ = await play(bot, away_s=None, reconnect_ms=60_000)
    (fault,) = result.faults[0]
    assert fault.kind.value == "timeout"
    assert fault.detail.endswith("(away)"), fault.detail
