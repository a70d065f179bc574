"""bench/bench_events.py's simulated events: sanity only (the figures are the bench's).
A few seeded events of every format, small enough to take a fraction of a second."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_events.py"


def _bench() -> ModuleType:
    name = "bench_events"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the dataclasses look their module up
    spec.loader.exec_module(module)
    return module


b = _bench()
FORMATS = b.formats_for([2, 3], 1, 2)


def test_every_format_ranks_every_entrant_once_and_plays_games() -> None:
    # 10 entrants at tables of 4 (4, 3, 3) and 7 at tables of 3 (3, 2, 2), so that
    # smaller tables take up the rest; 8 at tables of 3 (3, 3, 2) too.
    for table, n in ((4, 10), (3, 7), (3, 8)):
        strength = b.even_strengths(n, 1.5)
        for fmt in FORMATS:
            for i in range(3):
                seeding = list(strength)
                random.Random(i).shuffle(seeding)
                out = b.run_event(fmt, strength, seeding, table, b.Model(), random.Random(i))
                assert sorted(out.ranking) == sorted(strength), fmt.name
                assert out.games > 0 and out.seat_games >= 2 * out.games
                for tables, _ in out.seating:
                    assert all(2 <= len(t) <= table for t in tables)
                if fmt.kind in ("swiss", "random"):
                    assert len(out.seating) == fmt.rounds
                if fmt.kind in ("swiss", "swiss+final", "random"):
                    rounds = out.seating[: fmt.rounds]
                    for tables, byes in rounds:  # every entrant once a round
                        seated = [x for t in tables for x in t] + byes
                        assert sorted(seated) == sorted(strength), fmt.name


def test_the_rows_count_every_event() -> None:
    strength = b.even_strengths(8, 1.5)
    rows = b.measure(FORMATS, strength, 4, b.Model(), 4, 0)
    for row in rows:
        assert row.events == 4 and len(row.ranks) == 4
        assert all(1 <= r <= 8 for r in row.ranks) and 0 <= row.wins <= row.top3 <= 4
        assert all(-1 <= rho <= 1 for rho in row.rhos) and min(row.games) > 0
    low, high = b.wilson(3, 10)
    assert 0 < low < 0.3 < high < 1


def test_without_luck_the_strongest_wins_every_format() -> None:
    # A level field: with a graded one, an entrant that never meets the strongest at
    # random tables wins all its games too, and the seed decides between the two.
    strength = dict.fromkeys((f"e{i}" for i in range(9)), 0.0)
    strength["e4"] = 1000.0  # the strongest, far ahead of the others
    for table in (3, 4):
        rows = b.measure(FORMATS, strength, table, b.Model(0.0, 0.0), 3, 1)
        for row in rows:
            assert row.wins == row.events == 3, (table, row.fmt.name)
    # A graded field: every format but random tables, where the seed may decide.
    graded = {f"e{i}": float(i) for i in range(9)}
    graded["e8"] = 1000.0
    for table in (3, 4):
        rows = b.measure(FORMATS, graded, table, b.Model(0.0, 0.0), 3, 2)
        for row in rows:
            if row.fmt.kind != "random":
                assert row.wins == row.events == 3, (table, row.fmt.name)
