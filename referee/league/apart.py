"""Games of one deal never in play at the same time, whatever `--jobs` or the cluster.

The games of a duplicate unit (one deal at one table: its seat rotations, or a
match's NEW and BASE games) are separate games, each with its own processes of the
same bots (`league.pool`). Played at once, two processes of one bot could pass a
hand from one sandbox to the other while both games run, through a covert channel
such as CPU timing. So a game starts only when no other game of its unit is in
play: here (from the moment a job takes it until it is played) or on a cluster
(from the submission of its task until its result is delivered, since the games of
a task wait on their worker for the one before).

`Apart` keeps the units in play. Each side that starts games (the league's jobs,
the cluster's submissions) takes them from a `Queue` of its own games, in schedule
order: the first game whose unit is free. The games passed over wait in the queue
for their unit; every one of them belongs to a unit in play, so a queue holds at
most (jobs) x (games per unit) of them, and a match's schedule, which may not end,
is read only that far ahead. A job finds no game only when every game left waits for
a unit in play: the others keep playing other deals, and the league is never
played one game at a time for this.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Final

import trio

from .schedule import Scheduled


class _Blocked(enum.Enum):
    BLOCKED = "blocked"


BLOCKED: Final = _Blocked.BLOCKED  # games are left, but each one's unit is in play


class Apart:
    """The units with a game in play, shared by every side that starts games."""

    def __init__(self) -> None:
        self.playing: set[int] = set()
        self._lot = trio.lowlevel.ParkingLot()  # jobs waiting for a unit to be free
        self._wakers: list[Callable[[], None]] = []

    def queue(self, games: Iterable[Scheduled]) -> Queue:
        """A side's games, in schedule order (read as they are needed)."""
        return Queue(self, iter(games))

    def done(self, game: Scheduled) -> None:
        """`game` is no longer in play: the next game of its unit may start."""
        self.playing.remove(game.unit)
        self._lot.unpark_all()
        for wake in self._wakers:
            wake()

    @contextmanager
    def waking(self, wake: Callable[[], None]) -> Iterator[None]:
        """While the block runs, `wake()` is called each time a unit becomes free (how
        the cluster, which waits for its results, hears of the games played here)."""
        self._wakers.append(wake)
        try:
            yield
        finally:
            self._wakers.remove(wake)

    async def take(self, queue: Queue) -> Scheduled | None:
        """The next game of `queue`, now in play; None when it has no game left. Waits
        while every game it has left belongs to a unit in play."""
        while (game := queue.take()) is BLOCKED:
            await self._lot.park()
        return game


class Queue:
    """The games of one side still to start, in schedule order."""

    def __init__(self, apart: Apart, source: Iterator[Scheduled]) -> None:
        self._apart = apart
        self._source = source
        self.waiting: list[Scheduled] = []  # read from the source, not taken yet, in order

    def _first_free(self) -> int | None:
        """The place in `waiting` of the first game whose unit is free, reading games
        from the source until one is (None: there is none)."""
        playing = self._apart.playing
        for place, game in enumerate(self.waiting):
            if game.unit not in playing:
                return place
        for game in self._source:
            self.waiting.append(game)
            if game.unit not in playing:
                return len(self.waiting) - 1
        return None

    def peek(self) -> Scheduled | _Blocked | None:
        """What `take` would give now, not taken."""
        place = self._first_free()
        if place is None:
            return BLOCKED if self.waiting else None
        return self.waiting[place]

    def take(self) -> Scheduled | _Blocked | None:
        """The first game whose unit is free, now in play; BLOCKED when every game left
        belongs to a unit in play; None when no game is left."""
        place = self._first_free()
        if place is None:
            return BLOCKED if self.waiting else None
        game = self.waiting.pop(place)
        self._apart.playing.add(game.unit)
        return game

    def fill(self, n: int) -> int:
        """Read games from the source until `n` are waiting; how many are (fewer only
        near the end of the schedule)."""
        while len(self.waiting) < n:
            game = next(self._source, None)
            if game is None:
                break
            self.waiting.append(game)
        return len(self.waiting)
