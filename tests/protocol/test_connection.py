"""referee.bots.connection.Connection over in-memory trio streams, with fake clocks for time."""

from __future__ import annotations

import math
import random

import pytest
import trio
import trio.testing

from protocol import (
    InvalidUTF8Error,
    MalformedMessageError,
    OversizeLineError,
    RemoteProtocolError,
    encode,
)
from protocol import messages as m
from referee.bots.connection import (
    BotGoneError,
    BotStalledError,
    Connection,
    deadline_after,
)
from referee.bots.session import StartupError, goodbye, handshake, ping
from referee.game.checkbot import add_unknown_field
from referee.game.match import Game, Seat
from referee.game.wire import rules_info
from referee.rules import legal_moves, preset

PONG = b'{"type":"pong","nonce":1}'


def pair(max_line: int = m.MAX_LINE_DEFAULT) -> tuple[Connection, trio.testing.StapledStream]:
    """A connection on one end of an in-memory stream pair, and the bot's end."""
    ours, theirs = trio.testing.memory_stream_pair()
    return Connection(ours, ours, name="membot", max_line=max_line), theirs


async def read_lines(stream: trio.abc.ReceiveStream, count: int) -> bytes:
    """The next `count` lines the stream delivers, as bytes."""
    data = b""
    with trio.fail_after(10):
        while data.count(b"\n") < count:
            chunk = await stream.receive_some()
            assert chunk, f"end of stream after {data!r}"
            data += chunk
    return data


# ---------------------------------------------------------------- sending


async def test_send_and_flush_deliver_the_encoded_lines() -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        conn.send(m.Ping(nonce=7))
        conn.send(m.Bye(reason="done"))
        await conn.flush()
        expected = encode(m.Ping(nonce=7)) + encode(m.Bye(reason="done"))
        assert await read_lines(bot, 2) == expected
        assert conn.bytes_out == len(expected)
        nursery.cancel_scope.cancel()


async def test_flush_with_nothing_queued_returns_at_once() -> None:
    conn, _ = pair()
    with trio.fail_after(1):
        await conn.flush()


async def test_transcript_records_every_byte_sent() -> None:
    conn, bot = pair()
    conn.transcript = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        conn.send(m.Ping(nonce=1))
        conn.mangle = add_unknown_field
        conn.send(m.Passed(seat=2))
        conn.mangle = None
        conn.send_raw(b'{"type":"x_future_notice"}\n')
        await conn.flush()
        received = await read_lines(bot, 3)
        nursery.cancel_scope.cancel()
    assert conn.transcript == [
        encode(m.Ping(nonce=1)),
        add_unknown_field(encode(m.Passed(seat=2))),
        b'{"type":"x_future_notice"}\n',
    ]
    assert received == b"".join(conn.transcript)
    assert b'"x_future_field"' in conn.transcript[1]


async def test_a_bot_that_stops_reading_stalls_once_its_backlog_is_full() -> None:
    ours, _theirs = trio.testing.lockstep_stream_pair()  # send_all waits for a reader: none
    conn = Connection(ours, ours, name="deaf")
    line = b'{"type":"passed","seat":1,"pad":"' + b"x" * 4000 + b'"}\n'
    accepted = 0
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        conn.send(m.Ping(nonce=0))
        nursery.start_soon(conn.flush)  # the writer takes it and blocks in send_all
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(BotStalledError, match="deaf stopped reading"):
            for _ in range(100_000):
                conn.send_raw(line)
                accepted += 1
        # Megabytes of backlog are allowed (a slow reader catches up), but not without end.
        assert 1 << 20 < accepted * len(line) < 64 << 20
        with pytest.raises(BotStalledError):
            conn.send_raw(line)
        nursery.cancel_scope.cancel()


async def test_flush_does_not_return_while_the_bot_does_not_read(autojump_clock) -> None:
    ours, _theirs = trio.testing.lockstep_stream_pair()
    conn = Connection(ours, ours)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        conn.send(m.Ping(nonce=0))
        with trio.move_on_after(30) as scope:
            await conn.flush()
        assert scope.cancelled_caught
        assert trio.current_time() == pytest.approx(30)
        nursery.cancel_scope.cancel()


async def test_a_closed_bot_input_makes_flush_and_send_fail() -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        await bot.receive_stream.aclose()
        conn.send(m.Ping(nonce=1))
        with pytest.raises(BotGoneError, match="cannot write"):
            await conn.flush()
        with pytest.raises(BotGoneError):
            conn.send(m.Ping(nonce=2))


async def test_close_output_drains_then_ends_the_writer() -> None:
    conn, bot = pair()
    conn.send(m.Ping(nonce=1))
    conn.send(m.Ping(nonce=2))
    conn.close_output()
    with trio.fail_after(1):
        await conn.writer()  # returns once the queue is drained
    assert await read_lines(bot, 2) == encode(m.Ping(nonce=1)) + encode(m.Ping(nonce=2))
    with pytest.raises(BotGoneError):
        conn.send(m.Ping(nonce=3))


async def test_aclose_ends_the_bots_input() -> None:
    conn, bot = pair()
    await conn.aclose()
    assert await bot.receive_some() == b""


# ---------------------------------------------------------------- receiving


async def test_receive_line_splits_and_strips_crlf() -> None:
    conn, bot = pair()
    first = PONG + b"\r\nsecond\n\nthi"
    await bot.send_all(first)
    assert await conn.receive_line() == PONG.decode()
    assert await conn.receive_line() == "second"
    assert await conn.receive_line() == ""
    await bot.send_all(b"rd\n")
    assert await conn.receive_line() == "third"
    assert conn.bytes_in == len(first) + 3


async def test_receive_waits_for_a_whole_line() -> None:
    conn, bot = pair()
    got: list[m.FromBot] = []

    async def receive() -> None:
        got.append(await conn.receive())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(receive)
        for i in range(len(PONG)):
            await bot.send_all(PONG[i : i + 1])
            await trio.testing.wait_all_tasks_blocked()
            assert got == []
        await bot.send_all(b"\n")
    assert got == [m.Pong(nonce=1)]


async def test_receive_decodes_or_raises_malformed() -> None:
    conn, bot = pair()
    await bot.send_all(b'{"type":"move","id":3,"index":1}\n{"type":"move","id":"3"}\nnope\n')
    assert await conn.receive() == m.MoveReply(id=3, index=1)
    with pytest.raises(MalformedMessageError) as info:
        await conn.receive()
    assert info.value.path == "$.id"
    with pytest.raises(MalformedMessageError):
        await conn.receive()


async def test_an_oversize_line_from_the_bot_is_a_remote_error() -> None:
    conn, bot = pair(max_line=100)
    await bot.send_all(b"x" * 101 + b"\n")
    with pytest.raises(OversizeLineError) as info:
        await conn.receive_line()
    assert isinstance(info.value, RemoteProtocolError)
    assert info.value.code == "oversize"


async def test_an_endless_line_is_rejected_before_it_ends() -> None:
    conn, bot = pair(max_line=1000)
    async with trio.open_nursery() as nursery:

        async def flood() -> None:
            for _ in range(10_000):  # 10 MB, never a newline
                await bot.send_all(b"y" * 1000)
                await trio.sleep(0)

        nursery.start_soon(flood)
        with pytest.raises(OversizeLineError):
            await conn.receive_line()
        assert conn.bytes_in < 100_000  # noticed long before the flood ends
        nursery.cancel_scope.cancel()


async def test_invalid_utf8_from_the_bot_is_a_remote_error() -> None:
    conn, bot = pair()
    await bot.send_all(b"\xfe\xff\n")
    with pytest.raises(InvalidUTF8Error):
        await conn.receive_line()


async def test_end_of_output_is_bot_gone_after_the_last_line() -> None:
    conn, bot = pair()
    await bot.send_all(PONG + b"\n")
    await bot.send_stream.aclose()
    assert await conn.receive_line() == PONG.decode()
    with pytest.raises(BotGoneError, match="closed its output"):
        await conn.receive_line()
    with pytest.raises(BotGoneError):  # and stays gone
        await conn.receive_line()


async def test_end_of_output_inside_a_line_is_bot_gone() -> None:
    conn, bot = pair()
    await bot.send_all(b'{"type":"po')
    await bot.send_stream.aclose()
    with pytest.raises(BotGoneError, match="mid-line"):
        await conn.receive_line()


async def test_a_cancelled_receive_loses_nothing(autojump_clock) -> None:
    conn, bot = pair()
    with trio.move_on_after(5) as scope:
        await conn.receive_line()
    assert scope.cancelled_caught
    assert trio.current_time() == pytest.approx(5)
    await bot.send_all(b"par")
    with trio.move_on_after(5):
        await conn.receive_line()
    await bot.send_all(b"tial\n")
    assert await conn.receive_line() == "partial"


async def test_deadline_after(autojump_clock) -> None:
    await trio.sleep(12.5)  # fake time: the clock jumps
    assert deadline_after(3) == pytest.approx(15.5)
    assert deadline_after(math.inf) == math.inf


# ---------------------------------------------------------------- the session around games

HELLO = m.Hello(
    referee="test", players=4, rules=rules_info(preset("standard")), time=m.TimeControl()
)


async def answer(bot: trio.testing.StapledStream, *lines: bytes) -> None:
    """Read one line the referee sent, then send `lines`."""
    await read_lines(bot, 1)
    for line in lines:
        await bot.send_all(line)


async def test_handshake_skips_other_messages_before_ready(autojump_clock) -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        nursery.start_soon(
            answer, bot, PONG + b"\n", b'{"type":"ready","name":"b","version":"3"}\n'
        )
        ready, took = await handshake(conn, HELLO, 5)
        assert ready == m.Ready(name="b", version="3")
        assert took == 0  # fake time: no time passed
        nursery.cancel_scope.cancel()


async def test_handshake_times_out_without_ready(autojump_clock) -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        nursery.start_soon(answer, bot, PONG + b"\n")
        with pytest.raises(StartupError, match="no ready within 2 s"):
            await handshake(conn, HELLO, 2)
        assert trio.current_time() == pytest.approx(2)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (b"hello yourself\n", "bad line"),
        (b'{"type":"ready"}\n', "bad line"),
        (b"\xff\n", "bad line before ready"),
        (b'{"type":"ready","name":"x"', "exited before ready"),
        (b"", "exited before ready"),
    ],
)
async def test_handshake_failures(autojump_clock, reply: bytes, words: str) -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)

        async def bot_side() -> None:
            await answer(bot, reply)
            await bot.send_stream.aclose()

        nursery.start_soon(bot_side)
        with pytest.raises(StartupError, match=words):
            await handshake(conn, HELLO, 5)
        nursery.cancel_scope.cancel()


async def test_handshake_rejects_another_protocol_version(autojump_clock) -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        nursery.start_soon(answer, bot, b'{"type":"ready","name":"new","protocol":2}\n')
        with pytest.raises(StartupError, match="protocol 2"):
            await handshake(conn, HELLO, 5)
        sent = (await read_lines(bot, 2)).splitlines()
        assert b'"type":"error"' in sent[0] and b'"code":"version"' in sent[0]
        assert b'"type":"bye"' in sent[1]
        nursery.cancel_scope.cancel()


async def test_ping_waits_for_its_own_nonce(autojump_clock) -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        lines = (b'{"type":"pong","nonce":1}\n', b'{"type":"pong","nonce":99}\n')
        nursery.start_soon(answer, bot, *lines)
        assert await ping(conn, 99, 1) == 0
        nursery.start_soon(answer, bot, b'{"type":"pong","nonce":1}\n')
        with pytest.raises(trio.TooSlowError):
            await ping(conn, 100, 1.5)
        assert trio.current_time() == pytest.approx(1.5)
        nursery.cancel_scope.cancel()


async def test_goodbye_sends_bye_and_closes() -> None:
    conn, bot = pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        await goodbye(conn, "all done")
        assert await read_lines(bot, 1) == encode(m.Bye(reason="all done"))
        with pytest.raises(BotGoneError):
            conn.send(m.Ping(nonce=1))


async def test_a_bot_that_never_reads_times_out_instead_of_hanging(autojump_clock) -> None:
    ours, _theirs = trio.testing.lockstep_stream_pair()  # nobody reads: input stays full
    conn = Connection(ours, ours, name="deaf")
    rng = random.Random(1)
    seats = [
        Seat("deaf", connection=conn),
        Seat("local", local=lambda state: rng.choice(legal_moves(state))),
    ]
    rules = preset("standard", players=2, rounds="single")
    game = Game(seats, rules, 1, game_id="g", time=m.TimeControl(move_ms=100, bank_ms=100))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        with trio.move_on_after(3600):  # fake time: an hour passes at once
            result = await game.play()
            assert [f.kind.value for f in result.faults[0]] == ["timeout"]
        nursery.cancel_scope.cancel()
    assert seats[0].forfeited
