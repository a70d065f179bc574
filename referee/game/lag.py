"""How late the referee's own event loop was: time that is never a bot's.

A monitor task sleeps a short period and, each time it wakes, compares the time
it woke with the time it was due. A wake more than `tolerance` late marks the
interval [due, woke] as a stall: the loop was not running (the process stopped,
the machine overloaded) or was busy with something else (a garbage collection,
a long computation). Stalls on consecutive wakes form one run: the loop was late
the whole time.

A reply read at the end of a run may have arrived at any moment of it and
waited unread; one read after the loop was on time again arrived after the run,
when the bot was still thinking. `waited` gives the first, which game clocks do
not charge (`referee.game.match.Game`); `stalled` gives all stall time in an interval.

The monitor wakes only while some decision is waiting (`watching`): a stall
matters to nobody else, and an idle referee (a cluster worker between leagues)
then costs nothing. One monitor runs per trio loop, started with
`ensure_running()` and found by `current()`. Stalls are kept in a bounded
record; a decision looks back seconds, never far enough to miss a dropped one.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import trio

PERIOD_S = 0.005  # how often the monitor wakes while watched: a stall is missed by at most this
TOLERANCE_S = 0.002  # lateness up to this is timer rounding, not a stall
KEEP = 4096  # stalls kept; the oldest are dropped in halves


class LagMonitor:
    """Records the intervals in which its trio loop woke it late."""

    def __init__(
        self,
        *,
        period_s: float = PERIOD_S,
        tolerance_s: float = TOLERANCE_S,
        keep: int = KEEP,
        clock: Callable[[], float] = trio.current_time,
    ) -> None:
        self.period_s = period_s
        self.tolerance_s = tolerance_s
        self.keep = keep
        self.clock = clock
        # Stalls in time order, never overlapping: starts, ends, the running total of stall
        # time up to and including each, and that total just before the run each one is
        # part of. Totals are absolute, so a query is a few bisections and subtractions.
        self._starts: list[float] = []
        self._ends: list[float] = []
        self._totals: list[float] = []
        self._run_from: list[float] = []
        self._base = 0.0  # the total before the oldest stall kept
        self._due: float | None = None  # when the sleeping monitor should wake; None if idle
        self._sleep: trio.CancelScope | None = None  # the monitor's current sleep
        self._watchers = 0
        self._guards: dict[trio.CancelScope, tuple[float, float]] = {}  # scope: start, budget
        self.wakes = 0

    @property
    def join_s(self) -> float:
        """Stalls this close together are one run: the monitor was late wake after wake."""
        return self.period_s + self.tolerance_s

    # ------------------------------------------------------------ recording

    def note(self, due: float, woke: float) -> None:
        """One wake of the monitor, due at `due`, at `woke`: a stall if it came late."""
        self.wakes += 1
        if woke - due <= self.tolerance_s:
            return
        last = self._ends[-1] if self._ends else -math.inf
        start = max(due, last)
        if woke <= start:
            return
        before = self._totals[-1] if self._totals else self._base
        joined = start - last <= self.join_s
        self._run_from.append(self._run_from[-1] if joined else before)
        self._starts.append(start)
        self._ends.append(woke)
        self._totals.append(before + woke - start)
        if len(self._starts) > 2 * self.keep:
            drop = len(self._starts) - self.keep
            self._base = self._totals[drop - 1]
            del self._starts[:drop], self._ends[:drop], self._totals[:drop], self._run_from[:drop]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Wake every `period_s` while watched and record each late wake, until cancelled."""
        if self.clock is trio.current_time:
            # The same clock without the three calls `trio.current_time` makes to reach it.
            self.clock = trio.lowlevel.current_clock().current_time
        try:
            self._sleep = trio.CancelScope()
            task_status.started()
            while True:
                with self._sleep:
                    if self._watchers:
                        self._due = self.clock() + self.period_s
                        self._sleep.deadline = self._due
                    await trio.sleep_forever()
                self._sleep = trio.CancelScope()
                due, self._due = self._due, None
                if due is not None:
                    self.note(due, self.clock())
                    self._end_overdue()
        finally:
            self._sleep = self._due = None

    @contextmanager
    def watching(self) -> Iterator[None]:
        """Measure while the block runs: a decision is waiting for a reply."""
        self.watch()
        try:
            yield
        finally:
            self.unwatch()

    def watch(self) -> None:
        """Start measuring, until the matching `unwatch` (what `watching` does, without a
        context manager's objects: a game calls these once per decision)."""
        self._watchers += 1
        if self._watchers == 1 and self._sleep is not None and self._due is None:
            # Called from a running task, so the loop is not late now: start from here.
            self._due = self.clock() + self.period_s
            self._sleep.deadline = self._due

    def unwatch(self) -> None:
        """End a `watch`. The wake already due stays (moving a deadline costs more than a
        wake at this pace); after it the monitor sleeps until the next decision."""
        self._watchers -= 1

    @contextmanager
    def guard(self, scope: trio.CancelScope, started: float, budget_s: float) -> Iterator[None]:
        """While the block runs, cancel `scope` once `budget_s` from `started` has
        passed, less the stall that reaches the moment of the check (see `waited`).

        For work that a deadline cannot be allowed to cut at the end of a stall: a
        write, whose cancellation loses what was not written. The check runs at
        each wake, so the scope ends up to one period late. A monitor that is not
        running checks nothing: then `scope` gets the plain deadline."""
        if self._sleep is None:
            scope.deadline = min(scope.deadline, started + budget_s)
            yield
            return
        self._guards[scope] = (started, budget_s)
        try:
            with self.watching():
                yield
        finally:
            del self._guards[scope]

    def _end_overdue(self) -> None:
        now = self.clock()
        for scope, (started, budget_s) in self._guards.items():
            if now - started - self.waited(started, now) >= budget_s:
                scope.cancel()

    # ------------------------------------------------------------ asking

    @property
    def stalls(self) -> list[tuple[float, float]]:
        """The stalls still kept, oldest first (one going on now is not among them)."""
        return list(zip(self._starts, self._ends, strict=True))

    def stalled(self, t0: float, t1: float) -> float:
        """Seconds of stall within [t0, t1], one going on now included."""
        if t1 <= t0:
            return 0.0
        total = self._upto(t1) - self._upto(t0)
        now = self._pending()
        if now is not None:
            total += max(0.0, min(now[1], t1) - max(now[0], t0))
        return total

    def waited(self, t0: float, t1: float) -> float:
        """Seconds within [t0, t1] of the run of stalls that reaches `t1`: how long
        something that became ready during the run waited for the loop, at most."""
        if t1 <= t0:
            return 0.0
        now = self._pending()
        if now is not None and now[0] < t1:
            # The loop is late right now; the run may have begun with earlier stalls.
            ongoing = max(0.0, min(now[1], t1) - max(now[0], t0))
            if self._ends and now[0] - self._ends[-1] <= self.join_s:
                run_from = self._run_from[-1]
            else:
                run_from = self._totals[-1] if self._totals else self._base
            return ongoing + max(0.0, self._upto(t1) - max(self._upto(t0), run_from))
        last = bisect_left(self._starts, t1) - 1  # the last stall that began before t1
        if last < 0 or t1 - self._ends[last] > self.period_s + self.tolerance_s:  # join_s
            return 0.0  # the loop was on time for a while before t1
        return max(0.0, self._upto(t1) - max(self._upto(t0), self._run_from[last]))

    def _upto(self, t: float) -> float:
        """The running total of recorded stall time at `t`."""
        k = bisect_right(self._ends, t)  # the first stall that ends after t
        total = self._totals[k - 1] if k else self._base
        if k < len(self._starts) and self._starts[k] < t:
            total += t - self._starts[k]
        return total

    def _pending(self) -> tuple[float, float] | None:
        """The stall going on now, if the monitor is overdue: the caller often runs first
        after a stall, before the monitor has recorded it."""
        due = self._due
        if due is None:
            return None
        now = self.clock()
        if now - due <= self.tolerance_s:
            return None
        start = max(due, self._ends[-1]) if self._ends else due
        return (start, now) if now > start else None


_current: trio.lowlevel.RunVar[LagMonitor | None] = trio.lowlevel.RunVar(
    "referee_lag_monitor", default=None
)


def ensure_running() -> LagMonitor:
    """This loop's monitor, started as a system task the first time (it ends with the loop)."""
    monitor = _current.get()
    if monitor is None:
        monitor = LagMonitor()
        _current.set(monitor)
        trio.lowlevel.spawn_system_task(monitor.run, name="referee.game.lag")
    return monitor


def current() -> LagMonitor | None:
    """The monitor of the running trio loop, if one was started."""
    return _current.get()
