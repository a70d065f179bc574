"""A sans-I/O line framer: feed it bytes as they arrive, take whole lines out.

It enforces the maximum line length while data arrives, so a peer that sends
100 MB without a newline costs at most `max_line` bytes of memory, and rejects
invalid UTF-8. A trailing carriage return is dropped, so CRLF peers work.
"""

from __future__ import annotations

from .errors import InvalidUTF8Error, OversizeLineError, RemoteProtocolError, TruncatedLineError
from .messages import MAX_LINE_DEFAULT


class LineFramer:
    """Splits a byte stream into `\\n`-terminated UTF-8 lines of bounded length."""

    def __init__(self, max_line: int = MAX_LINE_DEFAULT) -> None:
        if max_line < 1:
            raise ValueError("max_line must be positive")
        self.max_line = max_line
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer known to hold no newline
        self._skipping = False  # inside an oversize line: drop bytes up to its newline

    @property
    def pending(self) -> int:
        """Bytes held that do not yet make a whole line."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[str]:
        """Add `data`; return every line it completes, without their newlines.

        A bad line (longer than `max_line`, or not UTF-8) is consumed, then its
        error is raised: the error's `lines` holds the good lines completed before
        it, and data after it stays buffered, so `feed(b"")` goes on from there.
        A line that grows past `max_line` before its newline arrives is reported at
        once and the rest of it is skipped as it comes, so memory stays bounded.
        """
        if data and not self._buffer and not self._skipping and data.find(b"\n") == len(data) - 1:
            # The usual case, one whole line and nothing held: no trip through the buffer.
            raw = data[:-1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if len(raw) <= self.max_line:
                try:
                    return [self._text(raw)]
                except RemoteProtocolError as exc:
                    exc.lines = []
                    raise
        if self._skipping:
            nl = data.find(b"\n")
            if nl < 0:
                return []
            data = data[nl + 1 :]
            self._skipping = False
        buf = self._buffer
        buf += data
        lines: list[str] = []
        start = 0
        while True:
            nl = buf.find(b"\n", max(start, self._scanned))
            if nl < 0:
                break
            raw = bytes(buf[start:nl])
            start = nl + 1
            self._scanned = start
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            try:
                if len(raw) > self.max_line:
                    raise OversizeLineError(
                        f"line of {len(raw)} bytes exceeds the {self.max_line}-byte maximum"
                    )
                lines.append(self._text(raw))
            except RemoteProtocolError as exc:
                del buf[:start]
                self._scanned = 0
                exc.lines = lines
                raise
        del buf[:start]
        self._scanned = len(buf)
        if len(buf) > self.max_line + 1:  # +1: a CR may still precede the newline
            size = len(buf)
            self._reset()
            self._skipping = True
            error = OversizeLineError(
                f"line of more than {size - 1} bytes exceeds the {self.max_line}-byte maximum"
            )
            error.lines = lines
            raise error
        return lines

    def eof(self) -> None:
        """The stream ended; raises `TruncatedLineError` if a partial line is left."""
        if self._buffer:
            size = len(self._buffer)
            self._reset()
            raise TruncatedLineError(f"stream ended inside a line ({size} bytes, no newline)")

    def _reset(self) -> None:
        self._buffer.clear()
        self._scanned = 0

    @staticmethod
    def _text(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidUTF8Error(f"line is not valid UTF-8 (byte {exc.start})") from None
