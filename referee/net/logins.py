"""Failed logins of `referee serve`, counted per address: back-off, a cap a minute,
and the organiser's summary lines instead of a warning for each.

An address is what the lobby counts by (`referee.net.server.address_key`: an IPv4
address, or the /64 of an IPv6 one). Every token check that does not log a bot
in is a failed login: a wrong token, an unknown name, and the right token of a
bot that is already connected alike (a stranger must not learn which it was,
not even from when its address is backed off). From one address:

- after `threshold` (5) failures, the next login is not checked for 1 s, then
  2, 4, ... up to `max_s` (60 s) after each further failure;
- at most `per_minute` (10) failures in any `window_s` (60 s): the next login
  waits until the oldest of them is a minute old;
- a login that comes while it must wait is refused at once, its token never
  compared (`refusal` says why, in words for the peer): it costs the server
  nothing and tells nothing, and it does not make the wait longer, so a bot
  sharing the address gets in once the wait is over;
- a good login does not wipe the count (a bot's owner could otherwise guess at
  other bots' tokens between logins of its own); an address is forgotten
  `forget_s` (10 min) after its last failure.

The table holds at most `size` addresses: a new one pushes out the address whose
last failure is oldest. A client with more addresses than that gets fresh
counts for some of them; each still waits like any other once it has failed.

The organiser's log (logger `referee.net.logins`, a warning) gets the first refusal
from an address in full, then at most one line per address every `summary_s`
(60 s): "N failed logins from ADDR in the last M s", with the logins refused
unchecked and the connections refused before any login (no login line in time,
a bad one) in the same line. `flush` writes the lines that are due (the server
calls it every few seconds, and with `final` when it stops).

Only the standard library; times are trio's clock (`trio.current_time()`), given
by the caller, so tests can run on a fake clock.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict, deque
from dataclasses import dataclass

log = logging.getLogger("referee.logins")  # its name before the move: serve prints it

THRESHOLD = 5  # failures before the first wait
BASE_S = 1.0  # the first wait; it doubles with each failure after
MAX_S = 60.0
PER_MINUTE = 10  # failures in any window_s
WINDOW_S = 60.0
FORGET_S = 600.0
SUMMARY_S = 60.0
SIZE = 4096  # addresses kept


@dataclass
class _Address:
    """What is known of one address."""

    recent: deque[float]  # the times of its latest failures, at most per_minute of them
    since: float  # when it was seen first, or last logged: what "the last M s" counts from
    failures: int = 0  # since it was (last) first seen: what the back-off counts
    last_failure: float = -math.inf
    blocked_until: float = -math.inf
    reported_at: float = -math.inf  # when a line about it was last logged
    failed: int = 0  # failed logins refused since then, not in a line yet
    unchecked: int = 0  # logins refused unchecked since then
    junk: int = 0  # connections refused before a login since then

    def untold(self) -> bool:
        """Whether refusals are counted that no line has told yet."""
        return bool(self.failed or self.unchecked or self.junk)


class LoginGuard:
    """The failed logins of one server, by address (see the module)."""

    def __init__(
        self,
        *,
        threshold: int = THRESHOLD,
        base_s: float = BASE_S,
        max_s: float = MAX_S,
        per_minute: int = PER_MINUTE,
        window_s: float = WINDOW_S,
        forget_s: float = FORGET_S,
        summary_s: float = SUMMARY_S,
        size: int = SIZE,
        backoff: bool = True,
    ) -> None:
        self.threshold = threshold
        self.base_s = base_s
        self.max_s = max_s
        self.per_minute = per_minute
        self.window_s = window_s
        self.forget_s = forget_s
        self.summary_s = summary_s
        self.size = size
        self.backoff = backoff  # False: count and log, never refuse (a benchmark's reference)
        self.table: OrderedDict[str, _Address] = OrderedDict()  # oldest last failure first
        self.evicted = 0

    # ---------------------------------------------------------------- back-off

    def refusal(self, address: str, now: float) -> str | None:
        """Why a login from `address` is not checked at `now`, for the peer; None when
        it may be. A refusal is counted for the organiser's next line."""
        record = self.table.get(address)
        if record is None or not self.backoff:
            return None
        until = record.blocked_until
        if len(record.recent) >= self.per_minute:
            until = max(until, record.recent[0] + self.window_s)
        if now >= until:
            return None
        record.unchecked += 1
        return (
            f"too many failed logins from {address}; none is checked for "
            f"{math.ceil(round((until - now) * 10, 6)) / 10:g} s"
        )

    def failed(self, address: str, now: float) -> None:
        """A token check from `address` at `now` did not log a bot in."""
        record = self._record(address, now)
        record.failures += 1
        record.last_failure = now
        record.recent.append(now)
        beyond = record.failures - self.threshold
        if beyond >= 0:
            wait = self.max_s if beyond >= 64 else min(self.max_s, self.base_s * 2**beyond)
            record.blocked_until = max(record.blocked_until, now + wait)
        self.table.move_to_end(address)

    def _record(self, address: str, now: float) -> _Address:
        """The record of `address`, a new one (pushing out the oldest) if it has none."""
        record = self.table.get(address)
        if record is None:
            while len(self.table) >= self.size:
                old_address, old = self.table.popitem(last=False)
                self.evicted += 1
                if old.untold():
                    self._summary(old_address, old, now)
            record = _Address(recent=deque(maxlen=self.per_minute), since=now)
            self.table[address] = record
        return record

    # ---------------------------------------------------------------- the organiser's log

    def refused(self, address: str, peer: str, why: str, now: float, *, login: bool) -> None:
        """A connection from `peer` (at `address`) was refused at `now` for `why` (a
        failed login with `login`, else no good login line): logged in full when
        nothing was logged about its address in the last `summary_s`, else counted for
        the next line."""
        record = self.table.get(address)
        if record is None:
            record = self._record(address, now)
            self.table.move_to_end(address, last=False)  # no failure: the first to go
        due = record.reported_at + self.summary_s <= now
        if due and not (record.failed or record.junk):
            log.warning("login from %s refused: %s", peer, why)
            record.reported_at = now
            if not record.untold():  # logins refused unchecked before it: in the next line
                record.since = now
            return
        if login:
            record.failed += 1
        else:
            record.junk += 1
        if due:
            self._summary(address, record, now)

    def flush(self, now: float, *, final: bool = False) -> None:
        """Log the summary lines that are due at `now` (every one with `final`), and
        forget the addresses quiet for `forget_s`."""
        for address, record in list(self.table.items()):
            if record.untold() and (final or record.reported_at + self.summary_s <= now):
                self._summary(address, record, now)
            quiet = max(record.last_failure, record.reported_at) + self.forget_s <= now
            if quiet and record.blocked_until <= now and not record.untold():
                del self.table[address]

    def _summary(self, address: str, record: _Address, now: float) -> None:
        n = record.failed
        line = f"{n or 'no'} failed login{'' if n == 1 else 's'} from {address}"
        line += f" in the last {max(0.0, now - record.since):.0f} s"
        if record.unchecked:
            line += f", and {record.unchecked} more refused unchecked (too many failures)"
        if record.junk:
            s = "" if record.junk == 1 else "s"
            line += f", and {record.junk} connection{s} refused without a good login line"
        log.warning("%s", line)
        record.reported_at = record.since = now
        record.failed = record.unchecked = record.junk = 0
