"""Protocol errors, split by who is at fault (after h11).

`RemoteProtocolError`: the other side sent something the protocol forbids; its
`code` is the stable code the referee reports. `LocalProtocolError`: this side
tried to send something invalid, which is a bug here, not in the bot.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base of every protocol error."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol; `code` is one of the documented error codes."""

    code = "malformed"

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.lines: list[str] = []  # framing: good lines completed before the bad one


class MalformedMessageError(RemoteProtocolError):
    """Not valid JSON, not an object, or not a message of the expected shape."""

    code = "malformed"


class OversizeLineError(RemoteProtocolError):
    """A line longer than the agreed maximum."""

    code = "oversize"


class InvalidUTF8Error(RemoteProtocolError):
    """A line that is not valid UTF-8."""

    code = "malformed"


class TruncatedLineError(RemoteProtocolError):
    """The stream ended in the middle of a line."""

    code = "malformed"


class LocalProtocolError(ProtocolError):
    """This side tried to send something the protocol forbids."""
