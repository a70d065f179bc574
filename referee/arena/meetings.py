"""A model of the arena's seating over time, to measure how long two versions can go
without meeting: a stable pool of versions, `jobs` tables at once, games of random
length, every new table chosen by `referee.arena.matchmaking.table` as the arena
chooses it (`fair=True`) or as it did before the meeting rules (`fair=False`: no
overdue pairs, and a table may repeat the set that just played). Pure and seeded; the
tests and `bench/bench_arena.py` use it."""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass

from . import matchmaking as mm


@dataclass(frozen=True)
class Meetings:
    """What one simulated arena showed."""

    worst: int  # the most games a version played between two meetings with another
    tables_at_once: float  # the mean number of tables in play (at most `jobs`)
    games: int  # games played in all


def simulate(
    n: int,
    size: int,
    jobs: int,
    seed: int,
    tables: int,
    *,
    authors: int | None = None,
    fair: bool = True,
) -> Meetings:
    """`tables` tables of `size` among `n` versions (of `authors` authors, versions
    dealt to them in turn; default one each), `jobs` at a time, each game lasting a
    uniform 0.5 to 1.5 time units; versions of one author never meet and do not count."""
    rng = random.Random(seed)
    names = [f"v{i}@1" for i in range(n)]
    author = {v: f"a{i % (authors or n)}" for i, v in enumerate(names)}
    mu = {v: rng.gauss(25.0, 4.0) for v in names}
    games = dict.fromkeys(names, 0)
    last_end = dict.fromkeys(names, 0.0)
    apart: dict[str, dict[str, int]] = {v: {} for v in names}
    last: dict[str, frozenset[str]] = dict.fromkeys(names, frozenset())
    overdue = mm.overdue_games(n, size) if fair else 0
    busy: set[str] = set()
    heap: list[tuple[float, int, list[str]]] = []
    now, started, worst, seat_time = 0.0, 0, 0, 0.0
    while started < tables:
        while len(heap) < jobs:
            free = [
                mm.Candidate(
                    v,
                    author[v],
                    mu[v],
                    games[v],
                    idle_s=now - last_end[v],
                    since=apart[v],
                    last=last[v],
                )
                for v in names
                if v not in busy
            ]
            chosen = mm.table(free, size, rng, overdue=overdue, others_busy=fair and bool(heap))
            if chosen is None:
                break
            seats = [c.name for c in chosen]
            busy.update(seats)
            heapq.heappush(heap, (now + rng.uniform(0.5, 1.5), started, seats))
            started += 1
        if not heap:
            raise ValueError(f"{n} versions of {authors or n} authors cannot fill a table")
        end, _, seats = heapq.heappop(heap)
        seat_time += (end - now) * (len(heap) + 1)
        now = end
        for v in seats:
            busy.discard(v)
            games[v] += 1
            last_end[v] = now
            last[v] = frozenset(seats)
            for other in names:
                if other == v or author[other] == author[v]:
                    continue
                if other in seats:
                    apart[v][other] = 0
                else:
                    apart[v][other] = gap = apart[v].get(other, games[v] - 1) + 1
                    worst = max(worst, gap)
    return Meetings(worst, seat_time / now if now else 0.0, started)
