"""The schedule: every combination and rotation the expected number of times, 128-bit
deal seeds that depend on the league's secret deal key (one deal per table and deal
number, shared by the rotations of a unit), and a fixed order.

Counts are checked by property over many league shapes (hypothesis), plus a small
league written out by hand.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.league.config import LeagueConfig, parse_config
from referee.league.schedule import Scheduled, schedule, tables
from referee.proof.commitment import deal_seed

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))  # a pinned deal key: the schedule is then a fixed function


def league(
    bots: int,
    table: int,
    deals: int = 1,
    duplicate: bool = True,
    seed: int = 1,
    challengers: tuple[str, ...] = (),
) -> LeagueConfig:
    names = [f"b{i}" for i in range(bots)]
    data: dict[str, object] = {
        "league": {
            "table": table,
            "deals": deals,
            "duplicate": duplicate,
            "seed": seed,
            **({"format": "gauntlet", "challengers": list(challengers)} if challengers else {}),
        },
        "bot": [{"name": n, "command": "prog"} for n in names],
    }
    return parse_config(data, Path("/tmp/league.toml"), check_programs=False)


def rotations_of(combo: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [combo[r:] + combo[:r] for r in range(len(combo))]


@st.composite
def round_robins(draw: st.DrawFn) -> LeagueConfig:
    bots = draw(st.integers(2, 7))
    table = draw(st.integers(2, min(bots, 5)))
    return league(
        bots,
        table,
        deals=draw(st.integers(1, 3)),
        duplicate=draw(st.booleans()),
        seed=draw(st.integers(-(2**40), 2**40)),
    )


@st.composite
def gauntlets(draw: st.DrawFn) -> LeagueConfig:
    bots = draw(st.integers(2, 7))
    n_challengers = draw(st.integers(1, bots - 1))
    table = draw(st.integers(2, min(bots - n_challengers + 1, 5)))
    challengers = tuple(draw(st.permutations([f"b{i}" for i in range(bots)]))[:n_challengers])
    return league(
        bots,
        table,
        deals=draw(st.integers(1, 3)),
        duplicate=draw(st.booleans()),
        seed=draw(st.integers(0, 10**6)),
        challengers=challengers,
    )


def check_common(config: LeagueConfig, games: list[Scheduled]) -> None:
    """What every schedule promises, whatever its format."""
    combos = tables(config)
    rotations = config.table if config.duplicate else 1
    assert len(games) == config.deals * rotations * len(combos)
    assert [g.index for g in games] == list(range(len(games)))
    assert len({g.game_id for g in games}) == len(games)
    assert all(g.game_id == f"g{g.index + 1:05d}" for g in games)
    # Interleaved: deal, then rotation, then table.
    assert [(g.deal, g.rotation, g.table) for g in games] == [
        (d, r, t) for d in range(config.deals) for r in range(rotations) for t in range(len(combos))
    ]
    for g in games:
        assert len(g.seats) == config.table == len(set(g.seats))
        # The seats are rotation `g.rotation` of the table's combination.
        assert g.seats == rotations_of(combos[g.table])[g.rotation]
        # A deal's seed comes from the secret key, the deal and the table.
        assert g.seed == deal_seed(KEY, config.seed, g.deal, g.table)
        assert 0 <= g.seed < 2**128
    # Every (table, rotation) pair is played once per deal.
    pairs = Counter((g.table, g.rotation) for g in games)
    assert set(pairs) == {(t, r) for t in range(len(combos)) for r in range(rotations)}
    assert set(pairs.values()) == {config.deals}
    # A unit is one table at one deal: its games are the rotations, with one seed.
    units: dict[int, list[Scheduled]] = {}
    for g in games:
        units.setdefault(g.unit, []).append(g)
    assert len(units) == config.deals * len(combos)
    for members in units.values():
        assert len({(g.table, g.deal) for g in members}) == 1
        assert sorted(g.rotation for g in members) == list(range(rotations))
        assert len({g.seed for g in members}) == 1
    # No two units share a deal: a bot at two tables never sees one deal twice.
    assert len({g.seed for g in games}) == len(units)
    # With duplicate deals, every bot of a table sits in every seat once per deal.
    if config.duplicate:
        for (t, d), count in Counter((g.table, g.deal) for g in games).items():
            assert count == config.table
            seated = Counter(
                (name, seat)
                for g in games
                if (g.table, g.deal) == (t, d)
                for seat, name in enumerate(g.seats)
            )
            assert set(seated.values()) == {1}
            assert len(seated) == config.table**2


@settings(max_examples=150, deadline=None)
@given(round_robins())
def test_round_robin_plays_every_combination_in_every_rotation(config: LeagueConfig) -> None:
    games = schedule(config, KEY)
    check_common(config, games)
    names = [b.name for b in config.bots]
    rotations = config.table if config.duplicate else 1
    expected = {frozenset(c) for c in itertools.combinations(names, config.table)}
    met = Counter(frozenset(g.seats) for g in games)
    assert set(met) == expected
    assert set(met.values()) == {config.deals * rotations}
    assert len(tables(config)) == math.comb(len(names), config.table)
    # Every bot plays the same number of games, in every seat equally often.
    per_bot = Counter(name for g in games for name in g.seats)
    assert set(per_bot) == set(names)
    assert len(set(per_bot.values())) == 1
    if config.duplicate:
        per_seat = Counter((name, seat) for g in games for seat, name in enumerate(g.seats))
        assert len(set(per_seat.values())) == 1
        assert len(per_seat) == len(names) * config.table


@settings(max_examples=150, deadline=None)
@given(gauntlets())
def test_gauntlet_plays_each_challenger_against_every_field_combination(
    config: LeagueConfig,
) -> None:
    games = schedule(config, KEY)
    check_common(config, games)
    challengers = set(config.challengers)
    field = [b.name for b in config.bots if b.name not in challengers]
    rotations = config.table if config.duplicate else 1
    met = Counter(frozenset(g.seats) for g in games)
    expected = {
        frozenset((c, *others))
        for c in config.challengers
        for others in itertools.combinations(field, config.table - 1)
    }
    assert set(met) == expected
    assert set(met.values()) == {config.deals * rotations}
    for g in games:
        assert len(challengers & set(g.seats)) == 1  # challengers never meet each other
    # Every challenger plays the same number of games.
    per_challenger = Counter(name for g in games for name in g.seats if name in challengers)
    assert set(per_challenger) == challengers
    assert len(set(per_challenger.values())) == 1


def test_a_small_round_robin_written_out() -> None:
    games = schedule(league(4, 3, deals=2), KEY)
    assert len(games) == 2 * 3 * 4
    assert [g.seats for g in games[:8]] == [
        ("b0", "b1", "b2"),
        ("b0", "b1", "b3"),
        ("b0", "b2", "b3"),
        ("b1", "b2", "b3"),
        ("b1", "b2", "b0"),
        ("b1", "b3", "b0"),
        ("b2", "b3", "b0"),
        ("b2", "b3", "b1"),
    ]
    assert [g.seats for g in games[8:12]] == [
        ("b2", "b0", "b1"),
        ("b3", "b0", "b1"),
        ("b3", "b0", "b2"),
        ("b3", "b1", "b2"),
    ]
    assert games[12].seats == games[0].seats and games[12].deal == 1
    assert [g.unit for g in games[:12]] == [0, 1, 2, 3] * 3
    assert [g.unit for g in games[12:]] == [4, 5, 6, 7] * 3
    assert [g.seed for g in games[:4]] == [deal_seed(KEY, 1, 0, t) for t in range(4)]
    assert [g.seed for g in games[:12]] == [g.seed for g in games[:4]] * 3
    assert [g.seed for g in games[12:16]] == [deal_seed(KEY, 1, 1, t) for t in range(4)]


def test_without_duplicate_each_table_plays_each_deal_once() -> None:
    games = schedule(league(4, 2, deals=3, duplicate=False), KEY)
    assert len(games) == 3 * 6
    assert {g.rotation for g in games} == {0}
    assert Counter(frozenset(g.seats) for g in games) == Counter(
        {frozenset(c): 3 for c in itertools.combinations([f"b{i}" for i in range(4)], 2)}
    )


def test_a_gauntlet_written_out() -> None:
    games = schedule(league(4, 3, challengers=("b3",)), KEY)
    assert [g.seats for g in games] == [
        ("b3", "b0", "b1"),
        ("b3", "b0", "b2"),
        ("b3", "b1", "b2"),
        ("b0", "b1", "b3"),
        ("b0", "b2", "b3"),
        ("b1", "b2", "b3"),
        ("b1", "b3", "b0"),
        ("b2", "b3", "b0"),
        ("b2", "b3", "b1"),
    ]


def test_deal_seeds_are_fixed_values() -> None:
    # The ledger of an interrupted league is resumed by a later referee: with the key it
    # keeps, the seed of a deal must never change between runs, processes or versions.
    assert deal_seed(KEY, 2026, 0, 0) == 0x15CA930BE6F5EC9BD80E969B3C88F538
    seeds = {deal_seed(KEY, 7, d, t) for d in range(50) for t in range(4)}
    assert len(seeds) == 200
    assert len({deal_seed(KEY, s, 0, 0) for s in range(200)}) == 200


def test_deals_depend_on_the_secret_key_not_on_the_league_seed_alone() -> None:
    config = league(4, 3, deals=2, seed=2026)
    one, other = schedule(config, KEY), schedule(config, bytes(32))
    assert [g.seats for g in one] == [g.seats for g in other]
    assert not {g.seed for g in one} & {g.seed for g in other}
    assert all(g.seed.bit_length() > 64 for g in one[:3])  # 128 bits: no small numbers


def test_the_schedule_is_the_same_in_another_process() -> None:
    config = league(5, 3, deals=3, seed=99)
    code = (
        "from pathlib import Path\n"
        "from tests.league.test_schedule import league\n"
        "from referee.league.schedule import schedule\n"
        "for g in schedule(league(5, 3, deals=3, seed=99), bytes(range(32))):\n"
        "    print(g.index, g.unit, g.table, g.deal, g.rotation, g.seed, *g.seats)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    here = [
        " ".join(str(x) for x in (g.index, g.unit, g.table, g.deal, g.rotation, g.seed, *g.seats))
        for g in schedule(config, KEY)
    ]
    assert out.splitlines() == here
    assert schedule(config, KEY) == schedule(league(5, 3, deals=3, seed=99), KEY)
    assert schedule(config, KEY) != schedule(league(5, 3, deals=3, seed=100), KEY)
