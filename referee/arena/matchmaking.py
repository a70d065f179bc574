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

Everything random comes from the `random.Random` handed in: the same state, the same
tables (the tests and `bench/bench_arena.py` rely on it).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

IDLE_SCALE_S = 60.0  # a version idle this long weighs as if it had played half its games


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
) -> list[Candidate] | None:
    """The versions of one new table of `size` seats (the seed first), or None when the
    free versions cannot fill it. `pairs` counts this hour's games per pair (names
    sorted), capped at `pair_cap` (0: no cap). `randomly`: the reference the benchmark
    compares with, `size` versions of distinct authors drawn uniformly."""
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
    while len(seated) < size:
        free = [
            c
            for c in candidates
            if all(c.author != o.author for o in seated)
            and not any(_capped(c.name, o.name, pairs, pair_cap) for o in seated)
        ]
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
