"""Bots that do not start: named at once on every output, and a league, match or
serve that cannot be played stops with exit 2 and records nothing it did not play.

The rule itself (`Starts`) is tested on hand-made records; the commands with real
processes: tests/bots/crash_before_ready.py exits at once with a line on stderr,
the way a bot whose script is missing does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.league.records import Record
from referee.league.starts import Starts

PY = sys.executable
BIN = Path(PY).parent
ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
SAMPLES = ROOT / "sample_bots"
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
# Writes one line to stderr, then exits before ready: as `python missing.py` does.
DEAD = "import sys; print('ImportError: no module named strategy', file=sys.stderr); sys.exit(3)"


def record(idx: int, seats: list[str], failed: set[str] = frozenset()) -> Record:  # type: ignore[assignment]
    faults = [
        {"seat": i, "kind": "startup_failure", "detail": f"{name} would not start"}
        for i, name in enumerate(seats)
        if name in failed
    ]
    return Record(
        idx=idx,
        game_id=f"g{idx + 1:05d}",
        unit=idx,
        deal=0,
        rotation=0,
        seed=0,
        seats=seats,
        scores=[0] * len(seats),
        ranks=[1] * len(seats),
        forfeited=[name in failed for name in seats],
        faults=faults,
        latency_mean=[None] * len(seats),
        latency_max=[None] * len(seats),
        decisions=0,
        log_path="",
        finished="",
    )


# ------------------------------------------------------------------------ the rule


def test_a_bot_failing_its_first_games_stops_the_league_and_its_games_are_held() -> None:
    starts = Starts(limit=2)
    lines, ready = starts.see(record(0, ["a", "b"], {"b"}))
    assert lines == ["b failed to start in g00001: b would not start"]
    assert ready == [] and starts.stopped is None  # held: b may start yet
    lines, ready = starts.see(record(1, ["a", "c"]))
    assert lines == [] and [r.idx for r in ready] == [1]
    lines, ready = starts.see(record(2, ["b", "c"], {"b"}))
    assert lines == []  # named once
    assert ready == []
    assert starts.stopped is not None
    assert starts.stopped.startswith("b failed to start in each of its first 2 games (last g00003)")
    assert [r.idx for r in starts.held] == [0, 2]  # never recorded


def test_held_games_are_recorded_once_the_bot_starts() -> None:
    starts = Starts(limit=3)
    assert starts.see(record(0, ["a", "b"], {"b"}))[1] == []
    assert starts.see(record(1, ["b", "c"], {"b"}))[1] == []
    _, ready = starts.see(record(2, ["b", "c"]))  # b started after all: a flaky start
    assert [r.idx for r in ready] == [0, 1, 2]
    assert starts.held == [] and starts.stopped is None
    # Once a bot has started, a later failed start is recorded at once.
    _, ready = starts.see(record(3, ["a", "b"], {"b"}))
    assert [r.idx for r in ready] == [3]


def test_a_game_where_no_bot_starts_before_any_did_stops_at_once() -> None:
    starts = Starts(limit=5)
    lines, ready = starts.see(record(0, ["a", "b", "c"], {"a", "b", "c"}))
    assert len(lines) == 3 and ready == []
    assert starts.stopped is not None and starts.stopped.startswith("no bot could start in g00001")


def test_a_bot_that_failed_every_game_it_had_stops_the_league_at_its_end() -> None:
    starts = Starts(limit=3)
    starts.see(record(0, ["a", "b"], {"b"}))
    starts.see(record(1, ["a", "c"]))
    starts.finish()
    assert starts.stopped is not None
    assert starts.stopped.startswith("b failed to start in every game it had (1; last g00001)")


def test_keep_going_records_every_game_and_still_names_each_bot_once() -> None:
    starts = Starts(limit=0)
    for i in range(4):
        lines, ready = starts.see(record(i, ["a", "b", "c"], {"a", "b", "c"}))
        assert [r.idx for r in ready] == [i]
        assert len(lines) == (3 if i == 0 else 0)
    starts.finish()
    assert starts.stopped is None


def test_a_resumed_league_knows_which_bots_started_before() -> None:
    starts = Starts.of([record(0, ["a", "b"])], limit=1)
    _, ready = starts.see(record(1, ["a", "b"], {"b"}))
    assert [r.idx for r in ready] == [1] and starts.stopped is None


@settings(max_examples=300)
@given(
    games=st.lists(
        st.tuples(
            st.lists(st.sampled_from("abcd"), min_size=2, max_size=3, unique=True),
            st.sets(st.sampled_from("abcd")),
        ),
        max_size=25,
    ),
    limit=st.integers(0, 4),
)
def test_every_game_is_recorded_once_or_held_and_no_result_is_a_game_nobody_started(
    games: list[tuple[list[str], set[str]]], limit: int
) -> None:
    starts = Starts(limit=limit)
    recorded: list[int] = []
    seen: list[Record] = []
    for i, (seats, failed) in enumerate(games):
        rec = record(i, seats, failed & set(seats))
        seen.append(rec)
        _, ready = starts.see(rec)
        recorded += [r.idx for r in ready]
        if starts.stopped is not None:
            break
    if starts.stopped is None:
        starts.finish()
    held = [r.idx for r in starts.held]
    assert len(set(recorded)) == len(recorded)  # never twice
    assert not set(recorded) & set(held)
    if starts.stopped is None:
        assert sorted(recorded) == [r.idx for r in seen]  # nothing dropped
    if limit:
        # Every recorded failed start is of a bot that started in some game seen.
        started = {b for r in seen for b in r.seats if b not in {s for s, *_ in _failed(r)}}
        for r in seen:
            if r.idx in recorded:
                assert {s for s, *_ in _failed(r)} <= started


def _failed(rec: Record) -> list[tuple[str, str]]:
    return [(rec.seats[f["seat"]], f["detail"]) for f in rec.faults]


# ------------------------------------------------------------ commands, real bots


def league_file(folder: Path, bots: dict[str, list[str]], **league: Any) -> Path:
    settings_ = {"name": "t", "table": 2, "deals": 1, "seed": 3, "out": "out", **league}
    lines = ["[league]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in settings_.items()]
    lines += ["", "[rules]", "max_pip = 6", 'rounds = "single"', "", "[time]"]
    lines += ["startup_ms = 10000", "move_ms = 2000", "bank_ms = 10000"]
    for name, argv in bots.items():
        lines += ["", "[[bot]]", f"name = {json.dumps(name)}", f"command = {json.dumps(argv)}"]
    path = folder / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def referee(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "referee"), *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )


def games_in(out: Path) -> list[tuple[str, list[str], list[dict[str, Any]]]]:
    db = sqlite3.connect(out / "league.db")
    try:
        rows = db.execute("SELECT game_id, seats, faults FROM games ORDER BY idx").fetchall()
    finally:
        db.close()
    return [(g, json.loads(s), json.loads(f)) for g, s, f in rows]


GREEDY = [PY, str(SAMPLES / "greedy_bot.py")]
RANDOM = [PY, str(SAMPLES / "random_bot.py")]


def test_a_league_whose_bot_never_starts_stops_with_exit_2_naming_it(tmp_path: Path) -> None:
    path = league_file(
        tmp_path, {"greedy": GREEDY, "random": RANDOM, "dead": [PY, "-c", DEAD]}, jobs=1
    )
    done = referee("league", str(path), cwd=tmp_path)
    assert done.returncode == 2, done
    # Named at once, in one line: the bot, the game, the command, its folder, its
    # stderr file and the last line there.
    first = [line for line in done.stdout.splitlines() if line.startswith("dead failed")]
    assert len(first) == 1, done.stdout
    assert "exit status 3" in first[0] and f"ran {PY} -c" in first[0]
    assert f"in {tmp_path}" in first[0]
    assert "stderr in " in first[0] and "ImportError: no module named strategy" in first[0]
    error = done.stderr.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("referee: error: dead failed to start in each")
    assert "--keep-going" in error[0] and "--resume" in error[0]
    # Nothing recorded of a game dead was in; no log of one left.
    out = tmp_path / "out"
    assert all("dead" not in seats for _, seats, _ in games_in(out))
    logged = {p.name.split(".")[0] for p in (out / "logs").iterdir()}
    assert logged == {g for g, _, _ in games_in(out)} | _unfinished(out)
    assert not (out / "standings.md").exists()


def _unfinished(out: Path) -> set[str]:
    """Games cut short by the stop (plain, incomplete logs): none with one job."""
    return {p.name.split(".")[0] for p in (out / "logs").glob("*.jsonl")}


def test_keep_going_plays_every_game_and_the_standings_flag_each_failed_start(
    tmp_path: Path,
) -> None:
    path = league_file(tmp_path, {"greedy": GREEDY, "dead": [PY, "-c", DEAD]})
    done = referee("league", str(path), "--keep-going", cwd=tmp_path)
    assert done.returncode == 0, done
    out = tmp_path / "out"
    played = games_in(out)
    assert len(played) == 2  # one deal, both seatings
    assert [line for line in done.stdout.splitlines() if line.startswith("dead failed")]
    assert "2 games had a bot that failed to start (dead in 2)" in done.stdout
    md = (out / "standings.md").read_text()
    assert "## Failed starts" in md
    for game_id, _, _ in played:
        assert f"| {game_id} | dead | " in md
    data = json.loads((out / "standings.json").read_text())
    assert [f["game"] for f in data["failed_starts"]] == [g for g, _, _ in played]
    assert all("ImportError" in f["detail"] for f in data["failed_starts"])


def test_a_league_where_no_bot_can_start_stops_at_its_first_game(tmp_path: Path) -> None:
    dead = [PY, "-c", DEAD]
    path = league_file(tmp_path, {"x": dead, "y": dead, "z": dead}, jobs=1)
    done = referee("league", str(path), cwd=tmp_path)
    assert done.returncode == 2, done
    assert "referee: error: no bot could start in g00001" in done.stderr
    assert games_in(tmp_path / "out") == []


def test_a_missing_script_is_refused_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    path = league_file(tmp_path, {"greedy": GREEDY, "mine": ["python", "my_bot.py"]})
    done = referee("league", str(path), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"referee: error: bot[1].command (mine): 'my_bot.py': no such file in {tmp_path} "
        f"(no cwd given, relative to {tmp_path}); set bot[1].cwd to the folder that holds it"
    )
    assert not (tmp_path / "out").exists()


def test_a_match_whose_new_never_starts_stops_with_exit_2(tmp_path: Path) -> None:
    dead = tmp_path / "dead.py"
    dead.write_text(DEAD + "\n")
    done = referee(
        "match",
        f"{PY} {dead}",
        f"{PY} {SAMPLES / 'random_bot.py'}",
        "--jobs",
        "1",
        "--set",
        "max_pip=6",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done
    assert "failed to start in g00001" in done.stderr
    assert "ImportError: no module named strategy" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("referee: error: ")


@pytest.mark.parametrize("keep_going", [False, True])
def test_the_cluster_stops_the_same_way(tmp_path: Path, keep_going: bool) -> None:
    path = league_file(tmp_path, {"greedy": GREEDY, "dead": [PY, "-c", DEAD]})
    extra = ["--keep-going"] if keep_going else []
    done = referee("league", str(path), "--cluster", "local:1", *extra, cwd=tmp_path)
    failed = [line for line in done.stdout.splitlines() if line.startswith("dead failed")]
    assert len(failed) == 1, done
    if keep_going:
        assert done.returncode == 0, done
        assert len(games_in(tmp_path / "out")) == 2
    else:
        assert done.returncode == 2, done
        assert "dead failed to start in each of its first 2 games" in done.stderr
        assert games_in(tmp_path / "out") == []
