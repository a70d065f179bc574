"""The ledger's running totals give exactly the standings of the full computation over
every record (`compute`), to the last bit and in the same order of keys: whatever the
order the games are recorded in (jobs finish out of order, a resumed league fills its
gaps, a game far behind leaves its replay to the next read), with ties, faults,
notices, forfeits, decision time charged and excused, a game recorded twice, a bot
seated twice, bulk inserts, and ledgers written before the totals (or before notices
and decision time) were kept.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.league import tally
from referee.league.ledger import Ledger, Record
from referee.league.output import csv_text, markdown
from referee.league.standings import Standings, compute
from referee.league.tally import TABLES

NAMES = ["a", "b", "c", "d", "idle"]  # idle never plays
FAULTS = ["timeout", "illegal", "crash", "stale_reply"]  # a stale reply in an old ledger

# The games table before notices were kept (a ledger from then has neither notices nor
# totals, and its stale replies are among the faults).
OLD_GAMES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE games (
    idx INTEGER PRIMARY KEY, game_id TEXT NOT NULL, unit INTEGER NOT NULL,
    deal INTEGER NOT NULL, rotation INTEGER NOT NULL, seed TEXT NOT NULL,
    seats TEXT NOT NULL, scores TEXT NOT NULL, ranks TEXT NOT NULL, forfeited TEXT NOT NULL,
    faults TEXT NOT NULL, latency_mean TEXT NOT NULL, latency_max TEXT NOT NULL,
    decisions INTEGER NOT NULL, log_path TEXT NOT NULL, finished TEXT NOT NULL
);
"""


@st.composite
def records(draw: st.DrawFn) -> list[Record]:
    """Games at distinct schedule indices, in schedule order."""
    indices = draw(st.lists(st.integers(0, 80), min_size=1, max_size=30, unique=True))
    out = []
    for idx in sorted(indices):
        k = draw(st.integers(2, 4))
        players = st.sampled_from(NAMES[:4])
        if draw(st.integers(0, 9)):
            seats = draw(st.lists(players, min_size=k, max_size=k, unique=True))
        else:  # now and then one bot in two seats: the totals stay per record
            seats = draw(st.lists(players, min_size=k, max_size=k))
        scores = draw(st.lists(st.integers(0, 6), min_size=k, max_size=k))  # ties often
        ranks = [1 + sum(o < s for o in scores) for s in scores]
        faults = draw(
            st.lists(
                st.builds(
                    lambda seat, kind: {"seat": seat, "kind": kind, "detail": "x"},
                    st.integers(0, k - 1),
                    st.sampled_from(FAULTS[:3]),
                ),
                max_size=3,
            )
        )
        notices = [
            {"seat": seat, "kind": "stale_reply", "detail": "y"}
            for seat in draw(st.lists(st.integers(0, k - 1), max_size=2))
        ]
        latencies = draw(
            st.lists(
                st.one_of(
                    st.none(),
                    st.tuples(st.floats(0, 50, width=32), st.floats(0, 200, width=32)),
                ),
                min_size=k,
                max_size=k,
            )
        )
        out.append(
            Record(
                idx=idx,
                game_id=f"g{idx + 1:05d}",
                unit=draw(st.integers(0, 6)),
                deal=0,
                rotation=0,
                seed=2**100 + idx,
                seats=seats,
                scores=scores,
                ranks=ranks,
                forfeited=draw(st.lists(st.booleans(), min_size=k, max_size=k)),
                faults=faults,
                latency_mean=[None if x is None else x[0] for x in latencies],
                latency_max=[None if x is None else x[1] for x in latencies],
                decisions=idx,
                log_path=f"logs/g{idx + 1:05d}.jsonl",
                finished="2026-01-01T00:00:00+00:00",
                notices=notices,
                # Decision time to the microsecond, as games record it.
                charged_ms=draw(st.integers(0, 10**7)) / 1000,
                excused_ms=draw(st.integers(0, 10**6)) / 1000,
            )
        )
    return out


def bot_lines(s: Standings) -> list[Any]:
    """Every field of every line, dicts with their order of keys, in the table's order."""
    return [
        (
            dataclasses.asdict(b),
            list(b.units.items()),
            list(b.faults.items()),
            list(b.notices.items()),
            b.ci95,
        )
        for b in s.bots
    ]


def assert_same(ledger: Ledger) -> None:
    full = compute(NAMES, ledger.records(), ledger.sandbox())
    kept = ledger.standings(NAMES, history=True)
    assert bot_lines(kept) == bot_lines(full)
    assert kept.head == full.head and kept.games == full.games == ledger.count()
    assert kept.clocks == full.clocks
    assert json.dumps(kept.to_json()) == json.dumps(full.to_json())
    assert csv_text(kept) == csv_text(full)
    assert markdown(kept, "t") == markdown(full, "t")
    without = ledger.standings(NAMES)  # what `referee standings` reads
    assert json.dumps(without.to_json()) == json.dumps(full.to_json())
    assert all(b.history == [] for b in without.bots)


def opened(path: Path) -> Ledger:
    ledger = Ledger(path)
    ledger.db.execute("PRAGMA synchronous=OFF")  # the test needs no power-cut safety
    return ledger


def write_old(path: Path, games: list[Record], *, before_notices: bool) -> None:
    """A ledger from before the totals were kept: with notices, or from before them too
    (its notices then recorded as faults)."""
    if before_notices:
        db = sqlite3.connect(path)
        db.executescript(OLD_GAMES)
        for r in games:
            faults = r.faults + r.notices  # as the referee recorded them then
            db.execute(
                "INSERT INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    r.idx,
                    r.game_id,
                    r.unit,
                    r.deal,
                    r.rotation,
                    str(r.seed),
                    *map(
                        json.dumps,
                        (r.seats, r.scores, r.ranks, r.forfeited, faults, r.latency_mean),
                    ),
                    json.dumps(r.latency_max),
                    r.decisions,
                    r.log_path,
                    r.finished,
                ),
            )
        db.commit()
        db.close()
        return
    ledger = opened(path)
    for r in games:
        assert ledger.record(r)
    for table in TABLES:
        ledger.db.execute(f"DROP TABLE {table}")
    ledger.db.execute("DELETE FROM meta WHERE key = 'tallies'")
    ledger.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(games=records(), data=st.data())
def test_the_kept_totals_are_the_full_computation(games: list[Record], data: st.DataObject) -> None:
    order = data.draw(st.permutations(games))  # the order the games finish in
    old = data.draw(st.integers(0, len(order)))  # recorded before the totals were kept
    bulk = data.draw(st.integers(old, len(order)))  # then one by one, then in bulk
    how = data.draw(st.sampled_from(["totals", "notices"]))  # what the old ledger lacked
    # How many later games a recorded game replays at once; past that, the next read does.
    replay_now = data.draw(st.sampled_from([0, 2, tally.REPLAY_NOW]))
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(tally, "REPLAY_NOW", replay_now):
        path = Path(tmp) / "league.db"
        write_old(path, order[:old], before_notices=how == "notices")
        ledger = opened(path)  # converted once, here
        try:
            assert_same(ledger)
            for i, r in enumerate(order[old:bulk]):
                assert ledger.record(r)
                if i % 7 == 3:  # a game delivered twice is recorded once
                    assert not ledger.record(dataclasses.replace(r, scores=[0] * len(r.seats)))
                    assert_same(ledger)
            if bulk < len(order):
                ledger.record_many(order[bulk:])
            assert_same(ledger)
        finally:
            ledger.close()
        again = opened(path)  # a resumed league reads what was kept: no conversion again
        try:
            assert again.db.execute("SELECT value FROM meta WHERE key='tallies'").fetchone()
            assert_same(again)
            assert compute(NAMES, again.records()).games == len(games)
        finally:
            again.close()


def test_a_game_recorded_twice_leaves_the_totals_alone(tmp_path: Path) -> None:
    ledger = opened(tmp_path / "league.db")
    first = Record(
        idx=3,
        game_id="g00004",
        unit=0,
        deal=0,
        rotation=0,
        seed=7,
        seats=["a", "b"],
        scores=[5, 9],
        ranks=[1, 2],
        forfeited=[False, False],
        faults=[{"seat": 1, "kind": "timeout", "detail": "slow"}],
        latency_mean=[1.0, 2.0],
        latency_max=[3.0, 4.0],
        decisions=10,
        log_path="logs/g00004.jsonl",
        finished="2026-01-01T00:00:00+00:00",
    )
    try:
        assert ledger.record(first)
        before = ledger.standings(NAMES).to_json()
        assert not ledger.record(dataclasses.replace(first, scores=[9, 5], ranks=[2, 1]))
        assert ledger.standings(NAMES).to_json() == before
        try:
            ledger.record_many([dataclasses.replace(first, idx=4), first])
        except sqlite3.IntegrityError:
            pass
        else:
            raise AssertionError("a bulk insert of a recorded game must fail")
        assert ledger.standings(NAMES).to_json() == before  # and insert none of the batch
        assert ledger.count() == 1
    finally:
        ledger.close()
