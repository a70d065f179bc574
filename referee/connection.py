"""One bot connection: protocol lines over any pair of trio streams.

Process stdio and TCP sockets are both trio streams, so this one class serves
both kinds of bot. Outgoing messages go through a bounded queue drained by a
writer task, so a bot that stops reading cannot stall the referee; incoming
bytes go through the protocol's line framer, which bounds memory per line.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import trio

from protocol import LineFramer, RemoteProtocolError, decode_from_bot, encode
from protocol.messages import MAX_LINE_DEFAULT, FromBot, Message

log = logging.getLogger(__name__)

READ_CHUNK = 65536
QUEUE_LIMIT = 4096  # messages waiting for a bot that does not read


class BotGoneError(Exception):
    """The bot closed its end or its process ended."""


class BotStalledError(Exception):
    """The bot stopped reading: its outgoing queue is full."""


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
        self._framer = LineFramer(max_line)
        self._lines: list[str] = []
        self._eof = False
        self._queue_send, self._queue_receive = trio.open_memory_channel[bytes](QUEUE_LIMIT)
        self._send_failed: BaseException | None = None
        self._flushed = trio.Condition()
        self._pending = 0
        self.bytes_in = 0
        self.bytes_out = 0
        # Test hooks: rewrite each outgoing line (check-bot adds unknown fields), and
        # keep a copy of every byte sent (the leak checker reads it).
        self.requests = 0  # turn requests sent on this connection, across games
        self.mangle: Callable[[bytes], bytes] | None = None
        self.transcript: list[bytes] | None = None

    async def writer(self) -> None:
        """Drain the outgoing queue into the stream; run in the game's nursery."""
        async with self._queue_receive:
            async for data in self._queue_receive:
                try:
                    await self._send_stream.send_all(data)
                    self.bytes_out += len(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                    self._send_failed = exc
                finally:
                    self._pending -= 1
                    async with self._flushed:
                        self._flushed.notify_all()
                if self._send_failed is not None:
                    return

    def next_request(self) -> int:
        """A fresh turn request id, unique on this connection."""
        self.requests += 1
        return self.requests

    def send(self, message: Message) -> None:
        """Queue `message`; raises `BotGoneError` or `BotStalledError` when it cannot go."""
        data = encode(message, self.max_line)
        if self.mangle is not None:
            data = self.mangle(data)
        self.send_raw(data)

    def send_raw(self, data: bytes) -> None:
        """Queue bytes as they are (one or more whole lines)."""
        if self._send_failed is not None:
            raise BotGoneError(f"{self.name}: cannot write: {self._send_failed}")
        try:
            self._queue_send.send_nowait(data)
            self._pending += 1
            if self.transcript is not None:
                self.transcript.append(data)
        except trio.WouldBlock:
            raise BotStalledError(f"{self.name} stopped reading its input") from None
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise BotGoneError(f"{self.name}: connection closed") from None

    async def flush(self) -> None:
        """Wait until every queued message has been written to the stream."""
        async with self._flushed:
            while self._pending > 0 and self._send_failed is None:
                await self._flushed.wait()
        if self._send_failed is not None:
            raise BotGoneError(f"{self.name}: cannot write: {self._send_failed}")

    async def receive_line(self) -> str:
        """The next whole line. Raises `BotGoneError` at end of stream and
        `RemoteProtocolError` for an oversize or non-UTF-8 line."""
        while not self._lines:
            if self._eof:
                raise BotGoneError(f"{self.name} closed its output")
            try:
                data = await self._receive_stream.receive_some(READ_CHUNK)
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
            self._lines.extend(self._framer.feed(bytes(data)))
        return self._lines.pop(0)

    async def receive(self) -> FromBot:
        """The next line as a message; `RemoteProtocolError` when it is not one."""
        return decode_from_bot(await self.receive_line())

    def close_output(self) -> None:
        """No more messages will be queued; the writer ends after the queue drains."""
        self._queue_send.close()

    async def aclose(self) -> None:
        """Close both streams."""
        self._queue_send.close()
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await self._send_stream.aclose()
            if self._receive_stream is not self._send_stream:  # type: ignore[comparison-overlap]
                await self._receive_stream.aclose()


def deadline_after(seconds: float) -> float:
    """An absolute trio deadline `seconds` from now (inf stays inf)."""
    return math.inf if math.isinf(seconds) else trio.current_time() + seconds
