"""One bot connection: protocol lines over any pair of trio streams.

Process stdio and TCP sockets are both trio streams, so this one class serves
both kinds of bot. Outgoing messages collect in a bounded buffer that a writer
task hands to the stream in one write when `flush` is called: a seat gets the
events of other seats' turns in one batch just before its own request, which
keeps the referee to about one write per decision. A bot that stops reading
fills the buffer and is reported, never waited on forever. Incoming bytes go
through the protocol's line framer, which bounds memory per line.

A bot process's pipes are read and written with plain non-blocking `os.read`
and `os.write`, waiting on trio only when a pipe is not ready: trio's own pipe
stream passes through the scheduler on every call (a checkpoint before each
read and write, then the wait), which was the largest part of the referee's CPU
per decision. A read that finds data at once yields to the loop every few times
all the same (`YIELD_EVERY`), so a bot that floods its output cannot keep the
loop, or a deadline, from running. Whether a reply is there yet is asked with
`poll` (a read that finds nothing raises, which costs several times as much), and
a message is encoded straight into the buffer. Other streams (TCP) go through
trio's stream methods.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
import select
from collections import deque
from collections.abc import Callable

import trio

from protocol import LineFramer, RemoteProtocolError, decode_from_bot, encode
from protocol.codec import encode_into
from protocol.messages import MAX_LINE_DEFAULT, FromBot, Message

log = logging.getLogger("referee.connection")  # its name before the move: serve prints it

READ_CHUNK = 65536
BUFFER_LIMIT = 16 << 20  # bytes waiting for a bot that does not read
# Reads that found data without waiting, on any connection, after which one yields to the
# loop anyway (trio's own stream yields on every read).
YIELD_EVERY = 8
_reads_without_wait = 0


class BotGoneError(Exception):
    """The bot closed its end or its process ended."""


class BotStalledError(Exception):
    """The bot stopped reading: its outgoing buffer is full."""


class Connection:
    """Send messages to a bot and read its lines, with deadlines in the caller's hands."""

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        name: str = "bot",
        max_line: int = MAX_LINE_DEFAULT,
    ) -> None:
        self.name = name
        self.max_line = max_line
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        # The pipes' descriptors, read and written directly; None for other streams and
        # once this side has closed the stream (the number may then name another file).
        self._out_fd = _fd_of(send_stream)
        self._in_fd = _fd_of(receive_stream)
        self._framer = LineFramer(max_line)
        self._early: bytes | Exception | None = None  # a pipe's end or error `line_now` met
        self._empty = False  # `line_now` just found the pipe empty
        self._in_poll: select.poll | None = None  # asks whether the pipe has data
        self._lines: deque[str | RemoteProtocolError] = deque()
        self._eof = False
        self._buffer = bytearray()
        self._kick = trio.Event()  # set when the writer task should write the buffer
        self._write_lock = trio.Lock()  # one writer at a time: a flush or the writer task
        self._closing = False
        self._send_failed: BaseException | None = None
        self.bytes_in = 0
        self.bytes_out = 0
        # Test hooks: rewrite each outgoing line (check-bot adds unknown fields), and
        # keep a copy of every byte sent (the leak checker reads it).
        self.requests = 0  # turn requests sent on this connection, across games
        self.lines_in = 0  # lines (good or bad) received, counted as they are framed
        self.mangle: Callable[[bytes], bytes] | None = None
        self.transcript: list[bytes] | None = None
        # Set by a bot process: the limit that ended the bot, in words, when one shows
        # at once (a write that fails finds the bot gone before its output is read).
        self.limit_hit: Callable[[], str | None] | None = None

    def allow_lines_of(self, max_line: int) -> None:
        """Accept lines up to `max_line` bytes from now on (a login line is short)."""
        self.max_line = max_line
        self._framer.max_line = max_line

    async def writer(self) -> None:
        """Write the buffer when kicked (errors, goodbyes) and close the stream at the end;
        run in the game's nursery. A flush writes by itself, without this task."""
        while True:
            await self._kick.wait()
            self._kick = trio.Event()
            async with self._write_lock:
                await self._write_buffer()
            if self._closing or self._send_failed is not None:
                if self._send_failed is None:
                    self._out_fd = None
                    with (
                        trio.CancelScope(shield=True),
                        trio.move_on_after(1),
                        contextlib.suppress(trio.BrokenResourceError, OSError),
                    ):
                        await self._send_stream.aclose()
                return

    async def _write_buffer(self) -> None:
        while self._buffer and self._send_failed is None:
            fd = self._out_fd
            if fd is not None:
                self._write_now(fd)
                if self._buffer and self._send_failed is None:
                    # The pipe is full. A cancelled wait keeps the rest for the next write.
                    try:
                        await trio.lowlevel.wait_writable(fd)
                    except trio.ClosedResourceError as exc:
                        self._fail_send(exc)
                continue
            data = bytes(self._buffer)
            self._buffer.clear()
            try:
                await self._send_stream.send_all(data)
                self.bytes_out += len(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                self._fail_send(exc)

    def _write_now(self, fd: int) -> None:
        """Write as much of the buffer as the pipe takes now, without waiting."""
        try:
            written = os.write(fd, self._buffer)
        except BlockingIOError:
            return
        except OSError as exc:
            self._fail_send(_stream_error(exc))
            return
        self.bytes_out += written
        del self._buffer[:written]

    def _fail_send(self, exc: BaseException) -> None:
        self._send_failed = exc
        self._kick.set()  # the writer task has nothing left to do: let it end

    @property
    def finished(self) -> bool:
        """The bot's end closed, a write failed, or this side closed its output."""
        return self._eof or self._send_failed is not None or self._closing

    def next_request(self) -> int:
        """A fresh turn request id, unique on this connection: 1, 2, 3, ... At a million
        requests a second it would take 285 years to pass the largest id the protocol
        allows, `COUNTER_MAX` (2**53 - 1), so the count never wraps."""
        self.requests += 1
        return self.requests

    def send(self, message: Message) -> None:
        """Queue `message`; raises `BotGoneError` or `BotStalledError` when it cannot go."""
        if self.mangle is not None or self.transcript is not None:
            self.send_raw(encode(message, self.max_line))
            return
        # Encoded straight into the buffer (a turn request is a kilobyte or two), then
        # taken back if `send_raw` would have refused it.
        buffer = self._buffer
        start = len(buffer)
        encode_into(message, buffer, self.max_line)
        if self._send_failed is not None or self._closing or len(buffer) > BUFFER_LIMIT:
            del buffer[start:]
            self.send_raw(encode(message, self.max_line))  # raises what it has to say

    def send_raw(self, data: bytes) -> None:
        """Add bytes as they are (one or more whole lines) to what the next flush sends."""
        if self._send_failed is not None:
            raise BotGoneError(f"{self.name}: cannot write: {self._send_failed}")
        if self._closing:
            raise BotGoneError(f"{self.name}: connection closed")
        if self.mangle is not None:
            data = self.mangle(data)
        if len(self._buffer) + len(data) > BUFFER_LIMIT:
            raise BotStalledError(f"{self.name} stopped reading its input")
        self._buffer += data
        if self.transcript is not None:
            self.transcript.append(data)

    def kick(self) -> None:
        """Start writing what is buffered without waiting for it."""
        self._kick.set()

    def write_now(self) -> bool:
        """Write to a pipe what it takes at once, without waiting; True when everything
        sent so far is written (then `flush` has nothing to do). `BotGoneError` if the
        stream broke. Other streams are written by `flush` alone."""
        fd = self._out_fd
        if self._buffer and fd is not None and not self._write_lock.locked():
            self._write_now(fd)  # mostly all of it: then no lock and no wait
        if self._send_failed is not None:
            raise BotGoneError(f"{self.name}: cannot write: {self._send_failed}")
        return not self._buffer

    async def flush(self) -> None:
        """Write everything sent so far; `BotGoneError` if the stream broke."""
        if not self.write_now():
            async with self._write_lock:
                await self._write_buffer()
            if self._send_failed is not None:
                raise BotGoneError(f"{self.name}: cannot write: {self._send_failed}")

    async def receive_line(self) -> str:
        """The next whole line. Raises `BotGoneError` at end of stream and
        `RemoteProtocolError` for an oversize or non-UTF-8 line."""
        while not self._lines:
            await self._fill()
        item = self._lines.popleft()
        if isinstance(item, RemoteProtocolError):
            raise item  # a bad line, in its place among the good ones
        return item

    async def wait_input(self) -> None:
        """Return once a line (good or bad) is here to be received, taking none of
        them; `BotGoneError` once the stream has ended. What watches a connection
        while nothing is expected of it, to notice the peer gone; cancelled, it
        loses nothing (`receive_line` later reads what it had read)."""
        while not self._lines:
            await self._fill()

    async def _fill(self) -> None:
        """Read once more into the lines; `BotGoneError` at the end of the stream."""
        if self._eof:
            raise BotGoneError(f"{self.name} closed its output")
        data: bytes | bytearray
        try:
            fd = self._in_fd
            early, self._early = self._early, None
            if early is not None:  # what `line_now` read: the end, or an error
                if isinstance(early, Exception):
                    raise early
                data = early
            elif fd is None:
                data = await self._receive_stream.receive_some(READ_CHUNK)
            else:
                empty, self._empty = self._empty, False
                data = await _read_fd(fd, empty)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._eof = True
            raise BotGoneError(f"{self.name}: read failed: {exc}") from None
        if not data:
            self._eof = True
            try:
                self._framer.eof()
            except RemoteProtocolError as exc:
                raise BotGoneError(f"{self.name} closed its output mid-line: {exc}") from None
            raise BotGoneError(f"{self.name} closed its output")
        self.bytes_in += len(data)
        self._absorb(bytes(data))

    def line_now(self) -> str | None:
        """The next line if it is here or a pipe gives it without waiting, and it is a good
        one; else None, and `receive_line` waits for it or raises what it has to say (the
        end of the output, a bad line). Reads at most once, and not when the loop is due
        a yield (`YIELD_EVERY`): `receive_line` then reads and yields."""
        global _reads_without_wait
        if not self._lines:
            fd = self._in_fd
            if (
                fd is None
                or self._eof
                or self._early is not None
                or _reads_without_wait + 1 >= YIELD_EVERY
            ):
                return None
            if self._in_poll is None:
                self._in_poll = select.poll()
                self._in_poll.register(fd, select.POLLIN)
            # Asked first: a read that finds the pipe empty raises, which costs several
            # times a poll, and a reply is mostly not there yet when it is first looked for.
            if not self._in_poll.poll(0):
                self._empty = True  # `receive_line` waits for data before it reads
                return None
            try:
                data = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                self._empty = True
                return None
            except OSError as exc:
                self._early = _stream_error(exc)
                return None
            if not data:
                self._early = data
                return None
            _reads_without_wait += 1
            self.bytes_in += len(data)
            self._absorb(data)
            if not self._lines:
                return None
        item = self._lines[0]
        if isinstance(item, RemoteProtocolError):
            return None
        self._lines.popleft()
        return item

    def _absorb(self, data: bytes) -> None:
        before = len(self._lines)
        while True:
            try:
                self._lines.extend(self._framer.feed(data))
                break
            except RemoteProtocolError as exc:
                self._lines.extend(exc.lines)
                self._lines.append(exc)
                data = b""  # go on with what followed the bad line
        self.lines_in += len(self._lines) - before

    def continue_from(self, old: Connection) -> None:
        """Take over from `old`, the same bot's connection that dropped mid-game: its
        counts (request ids, bytes and lines in) go on, and the lines it received but
        nobody read yet come first here."""
        self.requests = old.requests
        self.bytes_in = old.bytes_in
        self.lines_in = old.lines_in
        self._lines.extendleft(reversed(old._lines))
        old._lines.clear()

    async def receive(self) -> FromBot:
        """The next line as a message; `RemoteProtocolError` when it is not one."""
        return decode_from_bot(await self.receive_line())

    def close_output(self) -> None:
        """No more messages: the writer writes what is buffered, then closes the stream."""
        self._closing = True
        self._kick.set()

    async def aclose(self) -> None:
        """Close both streams."""
        self._out_fd = self._in_fd = None
        self._closing = True
        self._kick.set()
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            try:
                await self._send_stream.aclose()
                if self._receive_stream is not self._send_stream:  # type: ignore[comparison-overlap]
                    await self._receive_stream.aclose()
            except (trio.BrokenResourceError, OSError):
                pass


def _fd_of(stream: object) -> int | None:
    """The descriptor of a pipe stream (trio's `FdStream`); None for any other stream."""
    return stream.fileno() if isinstance(stream, trio.lowlevel.FdStream) else None


def _stream_error(exc: OSError) -> trio.BrokenResourceError | trio.ClosedResourceError:
    """An error of `os.read` or `os.write` as trio's pipe stream reports it, so that a
    fault's words stay what they were."""
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    error = trio.BrokenResourceError()
    error.__cause__ = exc
    return error


async def _read_fd(fd: int, empty: bool = False) -> bytes:
    """What the pipe `fd` holds (b"" at its end), waiting on trio only while it is empty.
    `empty`: it was found empty just now, so the wait comes before the first read (a read
    that finds nothing is a system call and an exception)."""
    global _reads_without_wait
    # An expired deadline ends the read first: the wait for an empty pipe is a checkpoint.
    if empty:
        await trio.lowlevel.wait_readable(fd)  # a cancelled wait has read nothing
    else:
        await trio.lowlevel.checkpoint_if_cancelled()
    waited = empty
    while True:
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(fd)  # a cancelled wait has read nothing
            waited = True
            continue
        except OSError as exc:
            raise _stream_error(exc) from None
        if waited:
            _reads_without_wait = 0
        else:
            _reads_without_wait += 1
            if _reads_without_wait >= YIELD_EVERY:
                _reads_without_wait = 0
                await trio.lowlevel.cancel_shielded_checkpoint()  # the data is read: keep it
        return data


def deadline_after(seconds: float) -> float:
    """An absolute trio deadline `seconds` from now (inf stays inf)."""
    return math.inf if math.isinf(seconds) else trio.current_time() + seconds
