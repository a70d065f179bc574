"""referee.bots.connection.Connection over real pipes, which it reads and writes directly.

A bot process's stdio are pipes, and the connection writes and reads them with
non-blocking `os.write` and `os.read`, waiting on trio only when a pipe is not
ready. These tests hold that path to what trio's own pipe stream guaranteed:
every byte in order however full the pipe, nothing lost to a cancelled wait, a
deadline that still ends a read of a bot that floods, and the same words when
the other end is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import AsyncIterator

import pytest
import trio

from protocol import RemoteProtocolError, encode
from protocol import messages as m
from referee.bots import connection
from referee.bots.connection import BotGoneError, Connection

# The connection, the bot's read end and write end, and the connection's read end.
F_SETPIPE_SZ = 1031  # Linux: set a pipe's capacity
Pipes = tuple[Connection, int, int, int]


@pytest.fixture
async def pipes() -> AsyncIterator[Pipes]:
    """A connection on two pipes; the bot's ends as plain blocking descriptors."""
    to_bot_r, to_bot_w = os.pipe()
    from_bot_r, from_bot_w = os.pipe()
    streams = trio.lowlevel.FdStream(to_bot_w), trio.lowlevel.FdStream(from_bot_r)
    yield Connection(*streams, name="pipebot"), to_bot_r, from_bot_w, from_bot_r
    for stream in streams:
        await stream.aclose()
    for fd in (to_bot_r, from_bot_w):
        with contextlib.suppress(OSError):  # a test closed it already
            os.close(fd)


def read_all(fd: int, size: int) -> bytes:
    """Exactly `size` bytes from a blocking descriptor, in small reads (a slow reader)."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, 4096)
        assert chunk, "end of pipe"
        data += chunk
    return data


async def test_a_backlog_larger_than_the_pipe_arrives_whole_and_in_order(pipes: Pipes) -> None:
    conn, bot_in, _, _ = pipes
    messages = [m.Ping(nonce=i) for i in range(40_000)]  # about 1 MB: many pipefuls
    expected = b"".join(encode(msg) for msg in messages)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(read_all(bot_in, len(expected))))
    reader.start()
    with trio.fail_after(30):
        for msg in messages:
            conn.send(msg)
        await conn.flush()
    await trio.to_thread.run_sync(reader.join)
    assert got == [expected]
    assert conn.bytes_out == len(expected)


async def test_a_cancelled_flush_keeps_what_the_pipe_did_not_take(pipes: Pipes) -> None:
    conn, bot_in, _, _ = pipes
    lines = [m.Ping(nonce=i) for i in range(20_000)]
    expected = b"".join(encode(msg) for msg in lines)
    for msg in lines:
        conn.send(msg)
    with trio.move_on_after(0.2) as scope:
        await conn.flush()  # the bot reads nothing: the pipe fills and the wait is cut
    assert scope.cancelled_caught
    assert 0 < conn.bytes_out < len(expected)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(read_all(bot_in, len(expected))))
    reader.start()
    with trio.fail_after(30):
        await conn.flush()  # the rest follows: no line is cut or lost
    await trio.to_thread.run_sync(reader.join)
    assert got == [expected]


async def test_lines_split_across_reads_come_out_whole(pipes: Pipes) -> None:
    conn, _, bot_out, _ = pipes
    os.write(bot_out, b'{"type":"pong",')
    async with trio.open_nursery() as nursery:

        async def rest() -> None:
            await trio.sleep(0.05)
            os.write(bot_out, b'"nonce":1}\r\n{"type":"pong","nonce":2}\n')

        nursery.start_soon(rest)
        with trio.fail_after(10):
            assert await conn.receive_line() == '{"type":"pong","nonce":1}'
            assert await conn.receive_line() == '{"type":"pong","nonce":2}'
    assert conn.bytes_in == len(b'{"type":"pong","nonce":1}\r\n{"type":"pong","nonce":2}\n')


async def test_a_bot_that_floods_cannot_keep_the_loop_to_itself(pipes: Pipes) -> None:
    conn, _, bot_out, _ = pipes
    size = fcntl.fcntl(bot_out, F_SETPIPE_SZ, 1 << 20)  # the most a user may ask for
    line = b'{"type":"pong","nonce":1}\n'
    count = size // len(line)
    os.write(bot_out, line * count)  # many reads' worth, all there at once: no read waits
    others = 0

    async def other_task() -> None:
        nonlocal others
        while True:
            others += 1
            await trio.sleep(0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        for _ in range(count):
            await conn.receive_line()
        assert others > 0  # the loop ran the other task between the reads
        with trio.move_on_after(0.01) as scope:  # and a deadline ends a read that waits
            await conn.receive_line()
        assert scope.cancelled_caught
        nursery.cancel_scope.cancel()


async def test_end_of_pipe_and_a_gone_reader_say_what_trios_stream_said(pipes: Pipes) -> None:
    conn, bot_in, bot_out, _ = pipes
    os.write(bot_out, b'{"type":"pong","nonce":1}\n')
    os.close(bot_out)
    assert await conn.receive_line() == '{"type":"pong","nonce":1}'
    with pytest.raises(BotGoneError, match=r"^pipebot closed its output$"):
        await conn.receive_line()
    os.close(bot_in)
    conn.send(m.Ping(nonce=1))
    with pytest.raises(BotGoneError, match=r"^pipebot: cannot write: $"):
        await conn.flush()
    assert conn.finished


async def test_line_now_takes_only_a_good_line_that_is_there(
    pipes: Pipes, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, _, bot_out, _ = pipes
    monkeypatch.setattr(connection, "_reads_without_wait", 0)  # no yield due: it may read
    assert conn.line_now() is None  # nothing yet: it does not wait
    os.write(bot_out, b'{"type":"pong","nonce":1}\n' + b"\xff\xfe\n" + b'{"type":"po')
    assert conn.line_now() == '{"type":"pong","nonce":1}'
    assert conn.line_now() is None  # a bad line: receive_line says what is wrong with it
    with pytest.raises(RemoteProtocolError):
        await conn.receive_line()
    assert conn.line_now() is None  # half a line
    os.close(bot_out)
    assert conn.line_now() is None  # the end, inside a line: receive_line says so
    with pytest.raises(BotGoneError, match="closed its output mid-line"):
        await conn.receive_line()
    assert conn.line_now() is None
    assert conn.bytes_in == len(b'{"type":"pong","nonce":1}\n\xff\xfe\n{"type":"po')
