"""referee.game.lag (the loop-lag monitor) and the game clocks that use it, on trio's fake clock.

A jump of the fake clock from inside a task is a stall: time passes and no other
task of the loop runs, as when the referee is stopped or busy. The games here
play over in-memory streams against a scripted bot.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from protocol import messages as m
from referee.bots.connection import Connection
from referee.game import lag
from referee.game.lag import LagMonitor
from referee.game.match import Decision, Fanout, Game, GameResult, Recorder, Seat
from referee.logs.gamelog import LogBot, LogWriter, make_header, read_log
from referee.rules import State, legal_moves, preset


def still(at: float = 0.0) -> LagMonitor:
    """A monitor that is not running, whose stalls a test records by hand."""
    return LagMonitor(period_s=0.005, tolerance_s=0.002, clock=lambda: at)


# ---------------------------------------------------------------- the record


def test_only_a_wake_later_than_the_tolerance_is_a_stall() -> None:
    monitor = still()
    monitor.note(1.000, 1.0015)  # timer rounding
    monitor.note(2.000, 2.300)
    assert monitor.stalls == [(2.0, 2.3)]
    assert monitor.wakes == 2


def test_stalled_sums_the_overlap_with_an_interval() -> None:
    monitor = still(at=100.0)
    for due, woke in [(1.0, 1.3), (2.0, 2.1), (3.0, 3.05)]:
        monitor.note(due, woke)
    assert monitor.stalled(0.0, 10.0) == pytest.approx(0.45)
    assert monitor.stalled(1.1, 2.05) == pytest.approx(0.2 + 0.05)
    assert monitor.stalled(1.1, 1.2) == pytest.approx(0.1)  # inside one stall
    assert monitor.stalled(1.3, 2.0) == 0.0  # between two
    assert monitor.stalled(3.05, 1.0) == 0.0


def test_waited_counts_only_the_run_of_stalls_that_reaches_the_end() -> None:
    monitor = still(at=100.0)
    monitor.note(1.0, 1.3)  # a stall, then the loop on time for a second
    monitor.note(2.0, 2.010)  # three late wakes in a row: one run
    monitor.note(2.015, 2.030)
    monitor.note(2.035, 2.100)
    assert monitor.waited(0.0, 2.100) == pytest.approx(0.010 + 0.015 + 0.065)
    assert monitor.waited(0.0, 2.106) == pytest.approx(0.090)  # just after: still counted
    assert monitor.waited(0.0, 2.5) == 0.0  # read long after the run: it arrived after it
    assert monitor.waited(2.020, 2.100) == pytest.approx(0.010 + 0.065)
    assert monitor.waited(0.0, 1.2) == pytest.approx(0.2)  # read during the first stall


def test_the_record_is_bounded_and_keeps_the_recent_stalls() -> None:
    monitor = LagMonitor(keep=4, clock=lambda: 1000.0)
    for second in range(100):
        monitor.note(float(second), second + 0.5)
    assert 4 <= len(monitor.stalls) <= 8
    assert monitor.stalled(97.0, 100.0) == pytest.approx(1.5)
    assert monitor.stalled(0.0, 100.0) == pytest.approx(0.5 * len(monitor.stalls))
    assert monitor.waited(98.0, 99.5) == pytest.approx(0.5)


# ---------------------------------------------------------------- the running monitor


async def test_a_stall_in_progress_counts_before_the_monitor_has_woken(autojump_clock) -> None:
    monitor = LagMonitor()
    async with trio.open_nursery() as nursery:
        await nursery.start(monitor.run)
        with monitor.watching():
            await trio.sleep(0.1)  # on time: nothing recorded
            assert monitor.stalls == []
            start = trio.current_time()
            autojump_clock.jump(0.3)  # the loop runs nothing for 300 ms
            now = trio.current_time()
            # The monitor was due within one period of the start of the stall.
            assert 0.3 - monitor.period_s <= monitor.stalled(start, now) <= 0.3
            assert monitor.waited(start, now) == monitor.stalled(start, now)
            await trio.sleep(0.001)  # the monitor runs and records it
            assert len(monitor.stalls) == 1
            due, woke = monitor.stalls[0]
            assert start <= due <= start + monitor.period_s and woke == pytest.approx(now)
        nursery.cancel_scope.cancel()


async def test_the_monitor_sleeps_while_nothing_waits(autojump_clock) -> None:
    monitor = LagMonitor(period_s=0.005)
    async with trio.open_nursery() as nursery:
        await nursery.start(monitor.run)
        await trio.sleep(10)
        assert monitor.wakes == 0
        with monitor.watching():
            await trio.sleep(0.1)
        assert 15 <= monitor.wakes <= 21
        await trio.sleep(10)
        assert monitor.wakes <= 22
        nursery.cancel_scope.cancel()


async def test_a_guarded_scope_outlives_a_stall_and_ends_after_its_budget(autojump_clock) -> None:
    monitor = LagMonitor()
    async with trio.open_nursery() as nursery:
        await nursery.start(monitor.run)
        start = trio.current_time()
        with trio.CancelScope() as scope, monitor.guard(scope, start, 0.1):
            await trio.sleep(0.05)
            autojump_clock.jump(0.3)  # the loop stops for 300 ms, past the budget
            await trio.sleep(0.002)  # a write that can go on now is not cut short
            assert not scope.cancel_called
            await trio.sleep_forever()  # one that cannot is ended soon after
        assert scope.cancelled_caught
        assert 0.35 < trio.current_time() - start <= 0.35 + 3 * monitor.period_s
        nursery.cancel_scope.cancel()


async def test_a_guard_without_a_running_monitor_is_a_deadline(autojump_clock) -> None:
    monitor = LagMonitor()
    with trio.CancelScope() as scope, monitor.guard(scope, trio.current_time(), 0.1):
        await trio.sleep_forever()
    assert trio.current_time() == pytest.approx(0.1)


async def test_one_monitor_per_loop() -> None:
    assert lag.current() is None
    monitor = lag.ensure_running()
    assert lag.ensure_running() is monitor is lag.current()


# ---------------------------------------------------------------- game clocks

MOVE_MS, GRACE_MS = 50, 50

Behaviour = Callable[[int], Awaitable[bool]]  # turn number -> reply (False: stay silent)


class Kept(Recorder):
    def __init__(self) -> None:
        self.decisions: list[Decision] = []

    def decision(self, record: Decision, state: State) -> None:
        self.decisions.append(record)


class ReadLate(trio.abc.ReceiveStream):
    """A receive stream whose reads return `seconds` of the mock clock after their bytes
    came, with no checkpoint in between: a deadline that passes meanwhile cuts nothing."""

    def __init__(
        self, inner: trio.abc.ReceiveStream, clock: trio.testing.MockClock, seconds: float
    ):
        self.inner, self.clock, self.seconds = inner, clock, seconds

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        data = await self.inner.receive_some(max_bytes)
        self.clock.jump(self.seconds)
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


async def bot(stream: trio.testing.StapledStream, behaviour: Behaviour) -> None:
    """Answer every turn with legal move 0, after `behaviour` for that turn."""
    buffer = b""
    turns = 0
    while True:
        data = await stream.receive_some()
        if not data:
            return
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if message["type"] != "turn":
                continue
            turns += 1
            if await behaviour(turns):
                reply = {"type": "move", "id": message["id"], "index": 0}
                await stream.send_all(json.dumps(reply).encode() + b"\n")


async def play(
    behaviour: Behaviour,
    bank_ms: int = 0,
    prepare: Callable[[trio.testing.MemorySendStream], None] | None = None,
    log: Path | None = None,
    read_late: tuple[trio.testing.MockClock, float] | None = None,
) -> tuple[GameResult, list[Decision]]:
    """A one-round game against a local player, with a running monitor; `prepare`
    may set hooks on the referee's sending end; the game is logged to `log`, if given;
    with `read_late`, each read the referee makes ends that many seconds after the
    bytes came, without a checkpoint between (its loop was busy elsewhere)."""
    ours, theirs = trio.testing.memory_stream_pair()
    if prepare is not None:
        prepare(ours.send_stream)
    receiving: trio.abc.ReceiveStream = ours
    if read_late is not None:
        receiving = ReadLate(ours, *read_late)
    conn = Connection(ours, receiving, name="scripted")
    seats = [Seat("scripted", connection=conn), Seat("local", local=lambda s: legal_moves(s)[0])]
    kept = Kept()
    monitor = LagMonitor()
    time = m.TimeControl(move_ms=MOVE_MS, bank_ms=bank_ms, grace_ms=GRACE_MS)
    rules = preset("standard", players=2, max_pip=6, rounds="single")
    recorder: Recorder = kept
    writer = None
    if log is not None:
        bots = [LogBot(seat=i, name=seat.name, command="scripted") for i, seat in enumerate(seats)]
        header = make_header(
            game="g", rules=rules, seed=3, bots=bots, time=time, policy="forfeit", max_faults=3
        )
        writer = LogWriter(log, header)
        recorder = Fanout(kept, writer)
    game = Game(seats, rules, 3, game_id="g", time=time, recorder=recorder, monitor=monitor)
    async with trio.open_nursery() as nursery:
        await nursery.start(monitor.run)
        nursery.start_soon(conn.writer)
        nursery.start_soon(bot, theirs, behaviour)
        result = await game.play()
        nursery.cancel_scope.cancel()
    if writer is not None:
        writer.finish(result)
    return result, [d for d in kept.decisions if d.seat == 0 and not d.auto]


def stop_referee(clock: trio.testing.MockClock, turn: int, seconds: float) -> Behaviour:
    """On `turn`, the referee is stopped for `seconds` (the bot goes on: it answers)."""

    async def behaviour(number: int) -> bool:
        if number == turn:
            clock.jump(seconds)
            await trio.sleep(0)  # the referee's deadline passes before the reply is sent
        return True

    return behaviour


async def test_a_reply_that_waited_for_a_stopped_referee_is_in_time(autojump_clock) -> None:
    result, decisions = await play(stop_referee(autojump_clock, 2, 0.3))
    assert result.faults[0] == ()
    stopped = decisions[1]
    assert stopped.latency_ms is not None and stopped.latency_ms <= 5.001  # one period, at most
    assert stopped.late_ms == pytest.approx(300 - stopped.latency_ms, abs=0.5)
    assert all(d.late_ms == 0 for d in decisions if d is not stopped)


async def test_a_game_sums_the_time_charged_and_the_time_excused(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    # The bot answers at once, except that the referee stops for 300 ms while the reply
    # to its second request waits: nearly all of its decision time was excused.
    path = tmp_path / "g.jsonl"
    result, decisions = await play(stop_referee(autojump_clock, 2, 0.3), log=path)
    charged = sum(d.latency_ms for d in decisions if d.latency_ms is not None)
    excused = sum(d.late_ms for d in decisions)
    assert result.charged_ms == pytest.approx(charged) and charged <= 5.001 * len(decisions)
    assert result.excused_ms == pytest.approx(excused)
    stopped = decisions[1].latency_ms
    assert stopped is not None and result.excused_ms == pytest.approx(300 - stopped, abs=0.5)
    assert result.excused_share == pytest.approx(excused / (charged + excused))
    assert result.excused_share > 0.9
    # The log's footer keeps both sums, as the decisions' lines add up.
    kept = read_log(path)
    assert kept.footer is not None
    assert kept.footer.charged_ms == round(result.charged_ms, 3)
    assert kept.footer.excused_ms == round(result.excused_ms, 3)
    lines = kept.decisions
    assert sum(d.referee_late_ms for d in lines) == pytest.approx(kept.footer.excused_ms, abs=0.01)
    assert sum(d.latency_ms or 0 for d in lines) == pytest.approx(kept.footer.charged_ms, abs=0.01)


async def test_a_game_on_time_excuses_nothing(autojump_clock: trio.testing.MockClock) -> None:
    async def at_once(number: int) -> bool:
        return True

    result, _ = await play(at_once)
    assert result.excused_ms == 0.0 and result.excused_share == 0.0


async def test_a_stall_before_the_reply_is_the_bots_time(autojump_clock) -> None:
    # The referee stops while the bot thinks; the bot answers 20 ms after it is back:
    # it took 320 ms of its own, over its 100 ms, and times out as it always did.
    async def behaviour(number: int) -> bool:
        if number == 2:
            autojump_clock.jump(0.3)
            await trio.sleep(0.02)
        return True

    result, decisions = await play(behaviour)
    assert [(f.kind.value, f.detail) for f in result.faults[0]] == [
        ("timeout", f"no reply within {MOVE_MS} ms + bank 0 ms")
    ]
    assert len(decisions) == 1  # forfeited at its second decision


async def test_a_bot_that_never_answers_still_times_out(autojump_clock) -> None:
    async def behaviour(number: int) -> bool:
        if number == 1:
            autojump_clock.jump(0.3)  # a stall at once, and then no reply
            return False
        return True

    start = trio.current_time()
    result, _ = await play(behaviour, bank_ms=200)
    assert [f.kind.value for f in result.faults[0]] == ["timeout"]
    assert trio.current_time() - start < 0.3 + 0.3  # soon after the stall, not a budget later


async def test_a_bot_is_charged_its_own_time_around_a_stall(autojump_clock) -> None:
    # Thinks 80 ms of its 100 (no bank), and the referee is stopped while the reply waits.
    async def behaviour(number: int) -> bool:
        if number == 3:
            await trio.sleep(0.08)
            autojump_clock.jump(0.3)
            await trio.sleep(0)
        return True

    result, decisions = await play(behaviour)
    assert result.faults[0] == ()
    slow = decisions[2]
    assert slow.latency_ms is not None and 80 <= slow.latency_ms <= 85.001
    assert slow.latency_ms + slow.late_ms == pytest.approx(380, abs=0.5)


async def test_a_referee_stalled_while_writing_a_request_faults_nobody(autojump_clock) -> None:
    writes = 0

    def prepare(stream: trio.testing.MemorySendStream) -> None:
        pump = stream.send_all_hook  # moves the bytes to the bot's end
        assert pump is not None

        async def stall_on_the_third_write() -> None:
            nonlocal writes
            writes += 1
            if writes == 3:
                autojump_clock.jump(0.3)  # the referee stops while it writes a request
                await trio.sleep(0)
            await pump()

        stream.send_all_hook = stall_on_the_third_write

    async def at_once(number: int) -> bool:
        return True

    result, decisions = await play(at_once, prepare=prepare)
    assert result.faults[0] == ()
    assert writes > 3
    assert all(d.latency_ms is not None and d.latency_ms < 1 for d in decisions)


async def test_a_reply_accepted_in_time_is_charged_at_most_its_budget(autojump_clock) -> None:
    # The reply comes 0.5 ms before the deadline, and the referee's loop runs its read
    # 1 ms later (busy with other games, too briefly to be a stall): the read ends after
    # the deadline but the reply is accepted, so the bot is charged its budget, no more.
    async def behaviour(number: int) -> bool:
        if number == 2:
            await trio.sleep((MOVE_MS + GRACE_MS - 0.5) / 1000)
        return True

    result, decisions = await play(behaviour, read_late=(autojump_clock, 0.0015))
    assert result.faults[0] == ()
    assert decisions[1].latency_ms == MOVE_MS + GRACE_MS
