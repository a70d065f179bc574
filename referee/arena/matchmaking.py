"""Who sits down next: the arena's matchmaking, pure (candidates in, seats out).

A new table is **seeded** by the free version that most needs games: a newcomer in its
burst first (its first `newcomer_games` games run one after another), else the one
with the fewest games, weighted by how long it has waited (`priority`): σ is not used,
since it can grow, and a version whose σ grew would be fed games for ever. The table is
then **filled seat by seat**: the free versions of other authors, not capped with anyone
seated already, ordered by closeness of rating to the seed (|μ − μ_seed|); a window of
random size is taken from the front of that order and one version drawn from it at
random. The window's size is uniform over 1 … all, so most tables are close in rating
and every version still meets every stratum now and then: nobody is locked into one.

A newcomer's burst is **balanced**: while it is in its burst, only the versions that
have met it least in the burst, or once more, may fill its table (closest rating
first, from a window of random size, as above), so its opponents each meet it about
as often (within two games), and no pair of them meets in every one of its games
(which would tilt their results against each other by its presence). Closeness still
counts among those: a close opponent's result says the most about the newcomer.

Everyone **meets everyone**: a pair of versions (of different authors) that is
**overdue** (one of them has played `overdue_games(n, size)` games since they last met,
n the active versions) is seated together as soon as both are free, the most overdue
pair first, before any seed by need (outside a newcomer's burst). And while other
tables are in play, a table never gives more than half its seats (rounded up) to
versions that last sat at one same table: with as many seats in play as versions, the
versions that come free together are exactly the ones that just played, and seating
them together again would lock the arena into the same pairings for good; the table
waits for another to end instead. `tests/arena/test_matchmaking.py`
simulates arenas of every pool size, table size and number of tables at once, and
checks that no pair goes more than `meeting_bound(n, size)` games of either without
meeting.

Everything random comes from the `random.Random` handed in: the same state, the same
tables (the tests and `bench/bench_arena.py` rely on it).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

IDLE_SCALE_S = 60.0  # a version idle this long weighs as if it had played half its games


def overdue_games(n: int, size: int) -> int:
    """Games of a version after which a pair that has not met is overdue: six times what
    tables drawn at random would take on average, (n − 1)/(size − 1), rounded up (late
    enough to leave the tables close in rating, which rank a newcomer fastest)."""
    return 6 * -(-max(n - 1, 1) // max(size - 1, 1))


def meeting_bound(n: int, size: int) -> int:
    """The most games either version of a pair plays between two of its meetings, for a
    stable pool of `n` versions at tables of `size`, any number of tables at once:
    `overdue_games` + 4n. An empirical bound: the simulations of
    `referee.arena.meetings` (tests/arena/test_matchmaking.py, bench/bench_arena.py)
    stay within it."""
    return overdue_games(n, size) + 4 * n


def history(name: str, recent: Sequence[Sequence[str]]) -> tuple[dict[str, int], frozenset[str]]:
    """`Candidate.since` and `Candidate.last` of version `name` from the seats of its
    most recent games, newest first: the games since it met each version seen there,
    and the versions of its last table."""
    since: dict[str, int] = {}
    for k, seats in enumerate(recent):
        for other in seats:
            if other != name:
                since.setdefault(other, k)
    return since, frozenset(recent[0]) if recent else frozenset()


@dataclass(frozen=True)
class Candidate:
    """A version that may be seated now (active, not in a game, connected if tcp)."""

    name: str
    author: str
    mu: float
    games: int
    idle_s: float = 0.0  # since its last game ended, or it was accepted
    burst: int = 0  # games left of its newcomer burst; 0 when it is not a newcomer
    met: Mapping[str, int] = field(default_factory=dict)  # a newcomer's: opponents met in its burst
    # Its games since it last met each other version (a name not given: all its games).
    since: Mapping[str, int] = field(default_factory=dict)
    last: frozenset[str] = frozenset()  # the versions of its last table, itself included

    def apart(self, other: str) -> int:
        """Its games since it last met `other`."""
        return self.since.get(other, self.games)


def priority(c: Candidate) -> float:
    """The seed's measure, lowest first: games played, less for a long wait."""
    return (c.games + 1.0) / (1.0 + c.idle_s / IDLE_SCALE_S)


def seed_of(candidates: Sequence[Candidate], rng: random.Random) -> Candidate | None:
    """The version a new table is built around: a newcomer in its burst (the one that
    joined first: fewest games, then name), else the lowest `priority`, ties at random."""
    if not candidates:
        return None
    newcomers = [c for c in candidates if c.burst > 0]
    if newcomers:
        return min(newcomers, key=lambda c: (c.games, c.name))
    low = min(priority(c) for c in candidates)
    tied = sorted((c for c in candidates if priority(c) <= low + 1e-12), key=lambda c: c.name)
    return rng.choice(tied)


def _capped(a: str, b: str, pairs: Mapping[tuple[str, str], int], cap: int) -> bool:
    if cap <= 0:
        return False
    x, y = sorted((a, b))
    return pairs.get((x, y), 0) >= cap


def table(
    candidates: Sequence[Candidate],
    size: int,
    rng: random.Random,
    *,
    pairs: Mapping[tuple[str, str], int] | None = None,
    pair_cap: int = 0,
    randomly: bool = False,
    overdue: int = 0,
    others_busy: bool = False,
) -> list[Candidate] | None:
    """The versions of one new table of `size` seats (the seed first), or None when the
    free versions cannot fill it. `pairs` counts this hour's games per pair (names
    sorted), capped at `pair_cap` (0: no cap). `randomly`: the reference the benchmark
    compares with, `size` versions of distinct authors drawn uniformly. `overdue` (0:
    none): the games apart after which a free pair is seated first. `others_busy`: other
    tables are in play, so a table may wait rather than repeat its versions' last one."""
    pairs = pairs or {}
    if randomly:
        pool = list(candidates)
        rng.shuffle(pool)
        chosen: list[Candidate] = []
        for c in pool:
            if all(c.author != o.author for o in chosen):
                chosen.append(c)
            if len(chosen) == size:
                return chosen
        return None
    seed = seed_of(candidates, rng)
    if seed is None:
        return None
    seated = [seed]
    newcomer = seed if seed.burst > 0 else None
    if newcomer is None and overdue > 0:
        late = _most_overdue(candidates, overdue, pairs, pair_cap)
        if late is not None:
            seed, partner = late
            seated = [seed, partner]
    while len(seated) < size:
        free = [
            c
            for c in candidates
            if all(c.author != o.author for o in seated)
            and not any(_capped(c.name, o.name, pairs, pair_cap) for o in seated)
        ]
        if others_busy:
            free = [c for c in free if not _too_alike([*seated, c], size)]
        if not free:
            return None
        if newcomer is not None:
            met = newcomer.met
            least = min(met.get(c.name, 0) for c in free)
            front = [c for c in free if met.get(c.name, 0) <= least + 1]
            front.sort(key=lambda c: (abs(c.mu - seed.mu), c.name))
            window = rng.randint(1, len(front))
            seated.append(rng.choice(front[:window]))
        else:
            free.sort(key=lambda c: (abs(c.mu - seed.mu), c.name))
            window = rng.randint(1, len(free))
            seated.append(rng.choice(free[:window]))
    return seated


def _most_overdue(
    candidates: Sequence[Candidate], overdue: int, pairs: Mapping[tuple[str, str], int], cap: int
) -> tuple[Candidate, Candidate] | None:
    """The free pair (of different authors, not capped) longest apart, once at least
    `overdue` games of one of them; the one with more games apart first. None when no
    pair is overdue."""
    best: tuple[int, str, str] | None = None
    found: tuple[Candidate, Candidate] | None = None
    for a, b in itertools.combinations(candidates, 2):
        if a.author == b.author or _capped(a.name, b.name, pairs, cap):
            continue
        first, second = (a, b) if a.apart(b.name) >= b.apart(a.name) else (b, a)
        gap = first.apart(second.name)
        if gap < overdue:
            continue
        key = (-gap, first.name, second.name)
        if best is None or key < best:
            best, found = key, (first, second)
    return found


def _too_alike(seats: Sequence[Candidate], size: int) -> bool:
    """Whether more than half the seats of a table of `size` (rounded up) would go to
    versions that last played at one same table."""
    tables: dict[frozenset[str], int] = {}
    for c in seats:
        if c.last:
            tables[c.last] = tables.get(c.last, 0) + 1
    return max(tables.values(), default=0) > -(-size // 2)
