"""Bot faults as values: the closed set of kinds, one recorded fault, the policies;
and notices, what a bot did that the referee ignored.

A fault is recorded at its seat with evidence; it never escapes a game as an
exception. An exception out of a game is a referee bug. A notice (a stale reply)
is recorded the same way but is never a fault: it costs nothing, counts towards
nothing, and is kept apart so no fault table ever holds it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

EVIDENCE_LIMIT = 200  # characters of an offending line kept as evidence


class FaultKind(enum.Enum):
    """What a bot did wrong."""

    STARTUP_FAILURE = "startup_failure"  # did not start or did not answer hello in time
    TIMEOUT = "timeout"  # no reply within move time + bank + grace, or stopped reading
    MALFORMED = "malformed"  # a line that is not a protocol message
    ILLEGAL = "illegal"  # a move the rules do not allow
    CRASH = "crash"  # end of output, or the process ended
    OVERSIZE = "oversize"  # a line longer than the maximum
    RESOURCE_LIMIT = "resource_limit"  # killed by a resource limit


class Policy(enum.Enum):
    """What a fault costs the seat."""

    FORFEIT = "forfeit"  # the bot is ended; its seat draws and passes; it ranks last
    DEFAULT_MOVE = "default-move"  # the first legal move is played; too many faults forfeit


# Faults after which the bot cannot go on, whatever the policy.
FATAL = frozenset({FaultKind.STARTUP_FAILURE, FaultKind.CRASH, FaultKind.RESOURCE_LIMIT})


def evidence(text: str | bytes) -> str:
    """An offending line cut to a readable length."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = text.replace("\n", "\\n")
    if len(text) > EVIDENCE_LIMIT:
        return text[:EVIDENCE_LIMIT] + f"... ({len(text)} characters)"
    return text


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault at one seat."""

    seat: int
    kind: FaultKind
    detail: str
    request: int | None = None
    round: int | None = None

    def __str__(self) -> str:
        return _describe(self.seat, self.kind.value, self.request, self.detail)


class NoticeKind(enum.Enum):
    """What a bot did that the referee ignored (PROTOCOL.md: never a fault)."""

    STALE_REPLY = "stale_reply"  # a reply to a request that is not open


@dataclass(frozen=True, slots=True)
class Notice:
    """One ignored misstep at one seat, kept for the organiser; it costs nothing."""

    seat: int
    kind: NoticeKind
    detail: str
    request: int | None = None
    round: int | None = None

    def __str__(self) -> str:
        return _describe(self.seat, self.kind.value, self.request, self.detail)


def _describe(seat: int, kind: str, request: int | None, detail: str) -> str:
    where = f" (request {request})" if request is not None else ""
    return f"seat {seat}: {kind}{where}: {detail}"
