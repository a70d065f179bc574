"""Standings arithmetic against hand-computed cases, the files they are written to, and
the ledger they are computed from (one record per game, never two).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import random
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import trio
from click.testing import CliRunner
from openskill.models import PlackettLuce
from rich.console import Console

from referee.cli import main
from referee.league.ledger import Ledger, LedgerError, Record, SandboxRecord
from referee.league.output import csv_text, markdown, print_standings, write_files
from referee.league.standings import compute
from referee.league.stats import t_quantile
from referee.site import build_site

T1 = 12.706204736174707  # t(0.975) with one degree of freedom: two duplicate units

NAMES = ["a", "b", "c"]


def rec(
    idx: int,
    seats: list[str],
    scores: list[int],
    ranks: list[int],
    *,
    unit: int = 0,
    forfeited: list[bool] | None = None,
    faults: list[dict[str, Any]] | None = None,
    notices: list[dict[str, Any]] | None = None,
    lat_mean: list[float | None] | None = None,
    lat_max: list[float | None] | None = None,
) -> Record:
    n = len(seats)
    return Record(
        idx=idx,
        game_id=f"g{idx + 1:05d}",
        unit=unit,
        deal=unit,
        rotation=idx % n,
        seed=1000 + unit,
        seats=seats,
        scores=scores,
        ranks=ranks,
        forfeited=forfeited or [False] * n,
        faults=faults or [],
        latency_mean=lat_mean or [None] * n,
        latency_max=lat_max or [None] * n,
        decisions=10 * (idx + 1),
        log_path=f"logs/g{idx + 1:05d}.jsonl",
        finished="2026-01-01T00:00:00+00:00",
        notices=notices or [],
    )


def hand_records() -> list[Record]:
    """Two units: three rotations of one deal, then one game of another deal."""
    return [
        rec(
            0,
            ["a", "b", "c"],
            [10, 20, 30],
            [1, 2, 3],
            lat_mean=[1.0, 2.0, None],
            lat_max=[3.0, 4.0, None],
        ),
        rec(
            1,
            ["b", "c", "a"],
            [0, 15, 15],
            [1, 2, 2],
            faults=[{"seat": 2, "kind": "timeout", "detail": "no reply"}],
            lat_mean=[5.0, None, 1.0],
            lat_max=[6.0, None, 9.0],
        ),
        rec(2, ["c", "a", "b"], [5, 5, 40], [1, 1, 3]),
        rec(
            3,
            ["a", "b", "c"],
            [40, 0, 8],
            [3, 1, 2],
            unit=1,
            forfeited=[True, False, False],
            faults=[{"seat": 0, "kind": "illegal", "detail": "x"}],
            notices=[{"seat": 1, "kind": "stale_reply", "detail": "y"}],
        ),
    ]


def by_name(standings: Any) -> dict[str, Any]:
    return {b.name: b for b in standings.bots}


def test_counts_wins_ranks_and_points_by_hand() -> None:
    s = compute(NAMES, hand_records())
    assert s.games == 4
    bots = by_name(s)
    a, b, c = bots["a"], bots["b"], bots["c"]
    assert (a.games, b.games, c.games) == (4, 4, 4)
    # A shared first place counts 1/k: c and a share game 2.
    assert (a.wins, b.wins, c.wins) == (1.5, 2.0, 0.5)
    assert (a.rank_sum, b.rank_sum, c.rank_sum) == (7, 7, 8)
    assert (a.avg_rank, b.avg_rank, c.avg_rank) == (1.75, 1.75, 2.0)
    assert (a.points, b.points, c.points) == (70, 60, 58)
    assert (a.mean_points, b.mean_points, c.mean_points) == (17.5, 15.0, 14.5)


def test_confidence_intervals_over_duplicate_units_by_hand() -> None:
    # Two units each: Student's t with one degree of freedom, 12.71, not the normal 1.96.
    assert t_quantile(0.975, 1) == pytest.approx(T1)
    bots = by_name(compute(NAMES, hand_records()))
    # a: unit means 10 and 40 -> sample variance 450, standard error sqrt(450 / 2) = 15.
    assert bots["a"].units == {0: (30, 3), 1: (40, 1)}  # (points, games) per unit
    assert bots["a"].ci95 == pytest.approx(T1 * 15)
    # b: unit means 20 and 0 -> variance 200, standard error 10.
    assert bots["b"].ci95 == pytest.approx(T1 * 10)
    # c: unit means 50/3 and 8 -> variance 338/9, standard error 13/3.
    assert bots["c"].ci95 == pytest.approx(T1 * 13 / 3)


def test_one_unit_has_no_interval_and_no_games_none_at_all() -> None:
    s = compute(["a", "b", "c", "idle"], hand_records()[:3])
    bots = by_name(s)
    assert math.isinf(bots["a"].ci95)
    idle = bots["idle"]
    assert (idle.games, idle.wins, idle.points, idle.ci95, idle.avg_rank) == (0, 0, 0, 0.0, 0.0)
    assert (idle.mu, idle.sigma) == (25.0, 25.0 / 3)
    row = {r["name"]: r for r in s.to_json()["bots"]}
    assert row["a"]["ci95"] is None
    assert row["idle"]["ci95"] == 0.0
    line_a = next(line for line in markdown(s, "t").splitlines() if "| a |" in line)
    assert line_a.split(" | ")[6] == "-"  # a's interval shows as "-"


def test_head_to_head_by_hand() -> None:
    head = compute(NAMES, hand_records()).head
    assert head["a"]["b"] == (2, 4) and head["b"]["a"] == (2, 4)
    assert head["a"]["c"] == (1, 4) and head["c"]["a"] == (1, 4)  # two ties
    assert head["b"]["c"] == (3, 4) and head["c"]["b"] == (1, 4)


def test_faults_forfeits_and_latencies_by_hand() -> None:
    bots = by_name(compute(NAMES, hand_records()))
    assert bots["a"].faults == {"timeout": 1, "illegal": 1}
    # A stale reply is a notice, never a fault: b has no fault, and its notice is kept.
    assert bots["b"].faults == {}
    assert bots["b"].notices == {"stale_reply": 1}
    assert bots["c"].faults == bots["c"].notices == bots["a"].notices == {}
    assert (bots["a"].forfeits, bots["b"].forfeits, bots["c"].forfeits) == (1, 0, 0)
    # The mean of the games' mean latencies, and the worst single one.
    assert (bots["a"].latency_mean, bots["a"].latency_worst) == (1.0, 9.0)
    assert (bots["b"].latency_mean, bots["b"].latency_worst) == (3.5, 6.0)
    assert (bots["c"].latency_mean, bots["c"].latency_worst, bots["c"].latency_n) == (0, 0, 0)


def test_ratings_follow_plackett_luce_in_schedule_order() -> None:
    records = hand_records()
    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in NAMES}
    for r in records:
        new = model.rate([[ratings[n]] for n in r.seats], ranks=[float(x) for x in r.ranks])
        for n, team in zip(r.seats, new, strict=True):
            ratings[n] = team[0]
    s = compute(NAMES, records)
    for b in s.bots:
        assert b.mu == pytest.approx(ratings[b.name].mu)
        assert b.sigma == pytest.approx(ratings[b.name].sigma)
        assert b.rating == pytest.approx(b.mu - 3 * b.sigma)
    # Best first by the conservative rating.
    assert [b.rating for b in s.bots] == sorted((b.rating for b in s.bots), reverse=True)
    # History: one point per game played, rating and mean points after that game.
    a = by_name(s)["a"]
    assert [h[0] for h in a.history] == [0, 1, 2, 3]
    assert [h[2] for h in a.history] == [10.0, 12.5, 10.0, 17.5]
    assert a.history[-1][1] == pytest.approx(a.rating)


def test_a_two_bot_tie_moves_no_mean_and_a_sweep_ranks_first() -> None:
    tie = compute(["x", "y"], [rec(0, ["x", "y"], [5, 5], [1, 1])])
    x, y = by_name(tie)["x"], by_name(tie)["y"]
    assert x.mu == pytest.approx(25.0) and y.mu == pytest.approx(25.0)
    assert x.wins == y.wins == 0.5
    assert tie.head["x"]["y"] == (0, 1)
    # Same points and rating: the name breaks the tie, so the order is fixed.
    assert [b.name for b in tie.bots] == ["x", "y"]

    sweep = [
        rec(i, seats, [0, 10, 20], [1, 2, 3], unit=i // 3)
        for i, seats in enumerate([["c", "a", "b"], ["c", "b", "a"]] * 3)
    ]
    s = compute(NAMES, sweep)
    assert s.bots[0].name == "c"
    assert by_name(s)["c"].wins == 6
    assert s.head["c"]["a"] == (6, 6) and s.head["a"]["c"] == (0, 6)
    assert s.head["a"]["b"] == (3, 6)


def test_the_order_of_arrival_does_not_matter() -> None:
    records = hand_records() + [
        rec(4 + i, seats, [i, 10, 30 - i], [1, 2, 3], unit=2 + i // 3)
        for i, seats in enumerate([["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]] * 2)
    ]
    ordered = compute(NAMES, records)
    for seed in range(5):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        again = compute(NAMES, shuffled)
        assert again.to_json() == ordered.to_json()
        assert [b.history for b in again.bots] == [b.history for b in ordered.bots]


def test_json_csv_markdown_and_chart_files(tmp_path: Path) -> None:
    s = compute(NAMES, hand_records())
    paths = write_files(s, tmp_path, "cup: standings")
    assert [p.name for p in paths] == [
        "standings.json",
        "standings.csv",
        "standings.md",
        "standings.svg",
    ]
    assert not list(tmp_path.glob("*.tmp"))

    data = json.loads((tmp_path / "standings.json").read_text())
    assert data == json.loads(json.dumps(s.to_json()))
    assert data["games"] == 4
    assert [b["name"] for b in data["bots"]] == [b.name for b in s.bots]
    a = next(b for b in data["bots"] if b["name"] == "a")
    assert a["wins"] == 1.5 and a["points"] == 70 and a["mean_points"] == 17.5
    assert a["avg_rank"] == 1.75 and a["ci95"] == round(T1 * 15, 4)
    assert a["faults"] == {"timeout": 1, "illegal": 1} and a["forfeits"] == 1
    b = next(b for b in data["bots"] if b["name"] == "b")
    assert b["faults"] == {} and b["notices"] == {"stale_reply": 1}
    assert data["head_to_head"]["b"]["c"] == [3, 4]

    text = (tmp_path / "standings.csv").read_bytes().decode()
    assert text == csv_text(s)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["bot"] for r in rows] == [b.name for b in s.bots]
    assert [r["rank"] for r in rows] == ["1", "2", "3"]
    row_a = next(r for r in rows if r["bot"] == "a")
    assert row_a["games"] == "4" and row_a["wins"] == "1.5"
    assert row_a["mean_points"] == "17.5000" and row_a["forfeits"] == "1"
    # Faults as plain numbers: the total, and one column per kind.
    assert row_a["faults"] == "2"
    assert (row_a["faults_illegal"], row_a["faults_timeout"], row_a["faults_crash"]) == (
        "1",
        "1",
        "0",
    )
    assert (row_a["mu"], row_a["sigma"]) == (
        f"{by_name(s)['a'].mu:.4f}",
        f"{by_name(s)['a'].sigma:.4f}",
    )
    assert row_a["latency_mean_ms"] == "1.000" and row_a["latency_worst_ms"] == "9.000"

    md = (tmp_path / "standings.md").read_text()
    assert md.startswith("# cup: standings\n\n4 games.\n")
    line_a = next(line for line in md.splitlines() if line.startswith("| ") and "| a |" in line)
    assert "| 4 | 1.5 | 1.75 | 17.5 |" in line_a
    assert "| 2 (illegal 1, timeout 1) | 1.0 / 9 |" in line_a
    # The legend under the table says what the columns mean.
    assert "- rating: μ − 3σ (openskill" in md
    assert "- latency ms: decision time in ms, mean / worst" in md
    assert "fewer points are better" in md
    assert "Student's t over the bot's n duplicate units" in md
    head_b = next(line for line in md.splitlines() if line.startswith("| b | "))
    assert head_b.endswith("|") and "3/4" in head_b

    svg = (tmp_path / "standings.svg").read_text()
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    assert all(f">{b.name}</text>" in svg for b in s.bots)


# ---------------------------------------------------------------- the ledger


def test_a_game_is_recorded_once(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "league.db")
    try:
        first = hand_records()[1]
        assert ledger.record(first)
        again = rec(1, ["a", "b", "c"], [1, 2, 3], [1, 2, 3])  # same index, other content
        assert not ledger.record(again)
        assert ledger.records() == [dataclasses.replace(first, seq=1)]  # the first recorded
        assert ledger.done() == {1}
    finally:
        ledger.close()
    count = sqlite3.connect(tmp_path / "league.db").execute("SELECT COUNT(*) FROM games")
    assert count.fetchone()[0] == 1


def test_records_come_back_whole_and_in_schedule_order(tmp_path: Path) -> None:
    records = hand_records()
    ledger = Ledger(tmp_path / "league.db")
    for r in reversed(records):
        assert ledger.record(r)
    ledger.close()
    reopened = Ledger(tmp_path / "league.db")
    try:
        # In schedule order, each with its place in the order of recording (reversed here).
        orders = [len(records) - k for k in range(len(records))]
        assert reopened.records() == [
            dataclasses.replace(r, seq=n) for r, n in zip(records, orders, strict=True)
        ]
        assert reopened.done() == {0, 1, 2, 3}
    finally:
        reopened.close()


async def test_a_commit_in_a_thread_ends_whole_when_the_league_is_cut_short(
    tmp_path: Path,
) -> None:
    ledger = Ledger(tmp_path / "league.db")
    first, second = hand_records()[:2]
    inside = threading.Event()  # the commit has begun
    go_on = threading.Event()  # and may finish
    busy: list[str] = []

    def slow_record(record: Record) -> bool:
        busy.append(f"begin {record.idx}")
        inside.set()
        go_on.wait(10)
        busy.append(f"end {record.idx}")
        return ledger.record(record)

    told: list[int] = []

    async def commit(record: Record, scope: trio.CancelScope) -> None:
        with scope:
            if await ledger.in_thread(slow_record, record):
                told.append(record.idx)

    try:
        cut, other = trio.CancelScope(), trio.CancelScope()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(commit, first, cut)
            while not inside.is_set():
                await trio.sleep(0.001)
            nursery.start_soon(commit, second, other)  # waits for its turn
            await trio.sleep(0.05)
            cut.cancel()  # Ctrl-C during the first commit
            await trio.sleep(0.05)
            go_on.set()
        assert cut.cancel_called and told == [0, 1]  # the caller learns of the commit
        assert busy == ["begin 0", "end 0", "begin 1", "end 1"]  # one user at a time
        assert ledger.records() == [
            dataclasses.replace(first, seq=1),
            dataclasses.replace(second, seq=2),
        ]
        assert not await ledger.in_thread(ledger.record, first)  # and only once
    finally:
        ledger.close()


def test_the_ledger_belongs_to_one_league(tmp_path: Path) -> None:
    path = tmp_path / "league.db"
    ledger = Ledger(path)
    ledger.claim("f1", resume=False)
    ledger.claim("f1", resume=False)  # no finished game yet: starting over is fine
    ledger.record(hand_records()[0])
    with pytest.raises(LedgerError, match="add --resume"):
        ledger.claim("f1", resume=False)
    ledger.claim("f1", resume=True)
    with pytest.raises(LedgerError, match="other settings"):
        ledger.claim("f2", resume=True)
    ledger.close()


def test_the_bot_seed_key_is_made_once_and_kept(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "league.db")
    key = ledger.bot_seed_key(None)
    assert len(key) == 16
    assert ledger.bot_seed_key(None) == key
    with pytest.raises(LedgerError, match="bot_seed_key differs"):
        ledger.bot_seed_key(b"\x01" * 16)  # a resumed league cannot change its key
    assert ledger.bot_seed_key(key) == key
    ledger.close()
    reopened = Ledger(tmp_path / "league.db")
    assert reopened.bot_seed_key(None) == key
    reopened.close()
    other = Ledger(tmp_path / "other.db")
    assert other.bot_seed_key(None) != key
    other.close()


def test_the_ledger_keeps_how_the_bots_were_sandboxed_across_runs(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "league.db")
    assert ledger.sandbox() is None  # a league recorded before this was kept
    first = ledger.note_sandbox({"a": "bwrap", "b": "bwrap", "t": "tcp"}, None)
    assert first.unsandboxed == []
    assert first.line() == "sandbox: every bot the referee started ran in the bubblewrap sandbox"
    # A resumed run where bubblewrap did not work: the league ran partly without it.
    ledger.note_sandbox({"a": "none", "b": "none", "t": "tcp"}, "bubblewrap is not installed")
    # A third run with the sandbox again does not wipe that out.
    ledger.note_sandbox({"a": "bwrap", "b": "bwrap", "t": "tcp"}, None)
    ledger.close()
    kept = Ledger(tmp_path / "league.db").sandbox()
    assert kept == SandboxRecord(
        {"a": "none", "b": "none", "t": "tcp"}, "bubblewrap is not installed"
    )
    assert kept.line() == (
        "NO SANDBOX: every bot ran without the sandbox (bubblewrap is not installed); "
        "they could read the logs of the games they played, and league.db, which holds the "
        "deal key (every hand of every game, those still to come included)"
    )
    one = SandboxRecord({"a": "bwrap", "b": "none"})
    assert one.line().startswith("NO SANDBOX: b ran without the sandbox; ")


def test_the_standings_say_whether_the_bots_were_sandboxed(tmp_path: Path) -> None:
    bare = SandboxRecord({"a": "none", "b": "bwrap", "c": "bwrap"})
    s = compute(NAMES, hand_records(), bare)
    write_files(s, tmp_path, "cup: standings")
    data = json.loads((tmp_path / "standings.json").read_text())
    assert data["sandbox"] == {
        "bots": {"a": "none", "b": "bwrap", "c": "bwrap"},
        "note": "",
        "unsandboxed": ["a"],
        "users": {},
    }
    md = (tmp_path / "standings.md").read_text()
    assert md.startswith(
        "# cup: standings\n\n4 games.\n\nNO SANDBOX: a ran without the sandbox; they could "
        "read the logs of the games they played, and league.db, which holds the deal key "
        "(every hand of every game, those still to come included).\n"
    )
    # `referee standings` prints it too, read back from the database.
    ledger = Ledger(tmp_path / "league.db")
    ledger.db.execute("INSERT INTO meta VALUES ('name', 'cup'), ('bots', ?)", (json.dumps(NAMES),))
    for r in hand_records():
        ledger.record(r)
    ledger.note_sandbox(bare.bots, None)
    ledger.close()
    table = CliRunner().invoke(main, ["standings", str(tmp_path)], env={"COLUMNS": "150"})
    assert table.exit_code == 0, table.output
    assert table.stdout.rstrip().endswith(bare.line())
    as_json = CliRunner().invoke(main, ["standings", str(tmp_path), "--json"])
    assert json.loads(as_json.stdout)["sandbox"] == data["sandbox"]


def clocked_records() -> list[Record]:
    """`hand_records` with their decision time: 660 ms charged, 340 ms excused in all."""
    times = [(300.0, 200.0), (200.0, 100.0), (160.0, 40.0), (0.0, 0.0)]
    return [
        dataclasses.replace(r, charged_ms=charged, excused_ms=excused)
        for r, (charged, excused) in zip(hand_records(), times, strict=True)
    ]


OVERLOADED = (
    "clocks barely enforced: 34% of decision time was excused for referee lag (machine overloaded)"
)


def test_the_standings_say_when_the_clocks_were_barely_enforced(tmp_path: Path) -> None:
    s = compute(NAMES, clocked_records())  # the default warns above 10%
    assert s.clocks.share == pytest.approx(0.34) and s.clocks.overloaded
    assert s.clocks.line() == OVERLOADED
    write_files(s, tmp_path, "cup: standings")
    data = json.loads((tmp_path / "standings.json").read_text())
    assert data["clocks"] == {
        "charged_ms": 660.0,
        "excused_ms": 340.0,
        "excused_share": 0.34,
        "warn_at": 0.1,
        "overloaded": True,
    }
    md = (tmp_path / "standings.md").read_text()
    assert "\n\n**Clocks barely enforced: 34% of decision time" in md
    console = Console(file=io.StringIO(), width=150)
    print_standings(console, s, "cup")
    assert OVERLOADED in console.file.getvalue()  # type: ignore[attr-defined]
    # Under its threshold a league says how much was excused, and warns of nothing.
    calm = compute(NAMES, clocked_records(), lag_warning=0.5)
    assert not calm.clocks.overloaded
    assert calm.clocks.line() == "clocks: 34.0% of decision time was excused for referee lag"
    assert "Clocks: 34.0% of decision time was excused for referee lag.\n" in markdown(calm, "t")
    assert "**" not in markdown(calm, "t")
    # A league recorded before decision time was kept says nothing of it.
    old = compute(NAMES, hand_records())
    assert not old.clocks.measured and "lag" not in markdown(old, "t")

    # From the ledger, with the threshold the league ran with: the same as computed.
    ledger = Ledger(tmp_path / "league.db")
    ledger.db.execute("INSERT INTO meta VALUES ('name', 'cup'), ('bots', ?)", (json.dumps(NAMES),))
    for r in clocked_records():
        ledger.record(r)
    ledger.note_lag_warning(0.5)
    assert ledger.standings(NAMES).clocks == calm.clocks
    ledger.note_lag_warning(0.2)
    assert (
        ledger.standings(NAMES).clocks == compute(NAMES, clocked_records(), lag_warning=0.2).clocks
    )
    ledger.close()
    table = CliRunner().invoke(main, ["standings", str(tmp_path)], env={"COLUMNS": "150"})
    assert table.exit_code == 0, table.output
    assert OVERLOADED in table.stdout
    as_json = CliRunner().invoke(main, ["standings", str(tmp_path), "--json"])
    assert json.loads(as_json.stdout)["clocks"] == {**data["clocks"], "warn_at": 0.2}
    # And the results site, on its front page.
    build_site(tmp_path)
    front = (tmp_path / "site" / "index.html").read_text()
    assert (
        '<p class="warn" id="clocks"><strong>Clocks barely enforced: 34% of decision time '
        "was excused for referee lag (machine overloaded).</strong></p>"
    ) in front


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "league.db"
    path.write_bytes(b"this is not sqlite at all, not at all" * 100)
    with pytest.raises(LedgerError, match="cannot use the database"):
        Ledger(path)


def test_referee_standings_prints_them_again(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "league.db")
    ledger.db.execute("INSERT INTO meta VALUES ('name', 'cup'), ('bots', ?)", (json.dumps(NAMES),))
    for r in hand_records():
        ledger.record(r)
    ledger.close()
    expected = compute(NAMES, hand_records())

    as_json = CliRunner().invoke(main, ["standings", str(tmp_path), "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == json.loads(json.dumps(expected.to_json()))

    table = CliRunner().invoke(main, ["standings", str(tmp_path)], env={"COLUMNS": "150"})
    assert table.exit_code == 0, table.output
    assert "cup: 4 games" in table.stdout
    assert "Head to head" in table.stdout
    body = [line for line in table.stdout.splitlines() if line.startswith("│ ")]
    first = [cell.strip() for cell in body[0].split("│")[1:-1]]
    assert first[:4] == ["1", expected.bots[0].name, "4", f"{expected.bots[0].wins:g}"]

    missing = CliRunner().invoke(main, ["standings", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert "no league.db" in missing.stderr
