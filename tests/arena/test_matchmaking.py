"""The arena's matchmaking (`referee.arena.matchmaking`): who seeds a table, who fills
it, and the rules no table may break, over many seeds."""

from __future__ import annotations

import itertools
import random
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from referee.arena.matchmaking import Candidate, priority, seed_of, table


def pool(n: int, *, authors: int | None = None) -> list[Candidate]:
    return [
        Candidate(name=f"b{i}@1", author=f"a{i % (authors or n)}", mu=20.0 + i, games=10)
        for i in range(n)
    ]


def test_the_seed_is_the_version_with_fewest_games() -> None:
    field = pool(5)
    field[3] = Candidate("b3@1", "a3", 23.0, games=2)
    assert seed_of(field, random.Random(1)) == field[3]


def test_a_long_wait_outweighs_a_few_games() -> None:
    rested = Candidate("old@1", "x", 25.0, games=20, idle_s=600.0)
    busy = Candidate("new@1", "y", 25.0, games=5, idle_s=0.0)
    assert priority(rested) < priority(busy)
    assert seed_of([busy, rested], random.Random(0)) == rested


def test_sigma_plays_no_part_in_the_seed() -> None:
    """The candidate carries no σ at all: a version whose σ grew is not fed games."""
    assert "sigma" not in Candidate.__dataclass_fields__


def test_a_newcomer_in_its_burst_seeds_every_table() -> None:
    field = pool(6)
    newcomer = Candidate("fresh@1", "new", 25.0, games=3, burst=9)
    rng = random.Random(3)
    for _ in range(20):
        seats = table([*field, newcomer], 2, rng)
        assert seats is not None and seats[0] == newcomer


def test_a_newcomers_burst_spreads_over_its_opponents() -> None:
    """Its opponents are those it met least, or once more: over its burst each meets
    it about as often (here 12 games among 6 opponents: about twice each)."""
    field = pool(6)
    met: Counter[str] = Counter()
    rng = random.Random(5)
    for k in range(12):
        newcomer = Candidate("fresh@1", "new", 25.0, games=k, burst=12 - k, met=dict(met))
        seats = table([*field, newcomer], 2, rng)
        assert seats is not None
        met.update(c.name for c in seats[1:])
    assert len(met) == 6 and max(met.values()) - min(met.values()) <= 2


def test_at_four_seats_no_pair_of_opponents_meets_in_every_burst_game() -> None:
    field = pool(8)
    pairs: Counter[tuple[str, str]] = Counter()
    met: Counter[str] = Counter()
    rng = random.Random(11)
    games = 8
    for k in range(games):
        newcomer = Candidate("fresh@1", "new", 25.0, games=k, burst=games - k, met=dict(met))
        seats = table([*field, newcomer], 4, rng)
        assert seats is not None
        others = sorted(c.name for c in seats[1:])
        met.update(others)
        pairs.update(itertools.combinations(others, 2))
    assert max(pairs.values()) < games
    assert max(met.values()) - min(met.values()) <= 2


def test_one_authors_versions_never_share_a_table() -> None:
    field = pool(9, authors=3)
    rng = random.Random(2)
    for _ in range(200):
        seats = table(field, 3, rng)
        assert seats is not None
        assert len({c.author for c in seats}) == 3
    assert table(field, 4, rng) is None  # three authors cannot fill four seats


def test_a_pair_at_its_cap_is_not_seated_together() -> None:
    a, b, c = pool(3)
    pairs = {(a.name, b.name): 5}
    rng = random.Random(4)
    for _ in range(50):
        seats = table([a, b, c], 2, rng, pairs=pairs, pair_cap=5)
        assert seats is not None
        assert {s.name for s in seats} != {a.name, b.name}
    assert table([a, b], 2, rng, pairs=pairs, pair_cap=5) is None


def test_the_random_window_reaches_every_stratum() -> None:
    """Close ratings come first, but the window's size is random: the seed meets the
    far end of the field too, and the nearest most often."""
    field = pool(10)
    seed = Candidate("seed@1", "s", 20.0, games=0)
    rng = random.Random(9)
    met: Counter[str] = Counter()
    for _ in range(2000):
        seats = table([seed, *field], 2, rng)
        assert seats is not None and seats[0] == seed
        met[seats[1].name] += 1
    assert set(met) == {c.name for c in field}
    assert met["b0@1"] > met["b9@1"]


@given(
    st.integers(2, 12),
    st.integers(2, 6),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_every_table_is_whole_and_legal(
    n: int, size: int, authors: int, seed: int, randomly: bool
) -> None:
    field = pool(n, authors=authors)
    rng = random.Random(seed)
    seats = table(field, size, rng, randomly=randomly)
    distinct_authors = len({c.author for c in field})
    if seats is None:
        assert distinct_authors < size
        return
    assert len(seats) == size
    assert len({c.name for c in seats}) == size
    assert len({c.author for c in seats}) == size


def test_the_same_state_gives_the_same_tables() -> None:
    field = pool(7)
    one = [table(field, 3, random.Random(8)) for _ in range(3)]
    assert one[0] == one[1] == one[2]
