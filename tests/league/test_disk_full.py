"""Where the referee's own disk is full, a league stops cleanly: its ledger stays whole
and holds only finished games, the games in progress are abandoned (never scored, their
logs left plain and never presented as complete), one line says what happened and how
to resume (exit 3), and the resumed league, with space again, plays exactly the games
that were not recorded.

The disk is full for real: as root, a private tmpfs of 2 MB (mounted inside `unshare
-m`, so nobody else sees it and it goes with the test) is the output folder, filled
up while the league runs; the whole folder, or only its ledger. Without root, the file
a league writes is a symlink to /dev/full, whose every write fails with ENOSPC, and a
full database is SQLite's own (`max_page_count`). A bot whose stderr file cannot be
written is not stopped for it: it plays on.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from protocol import messages as m
from referee.bots.process import BotSpec
from referee.league.ledger import Ledger, Record
from referee.league.output import write_files
from referee.league.records import read_records
from referee.league.remote import Done
from referee.league.run import write_remote
from referee.league.standings import compute
from referee.logs.gamelog import LogError, read_log
from referee.logs.outputs import WriteError
from referee.play.runner import run_game
from referee.rules import preset
from tests._procs import assert_none_left, kill_all, new_token, processes_with
from tests.league.test_run import (
    ENV,
    REFEREE,
    ROOT,
    check_logs,
    ledger_records,
    no_process_left,
    standard_bots,
    write_league,
)
from tests.league.test_standings import rec

FULL = Path("/dev/full")
BOTS = ROOT / "tests" / "bots"
GAMES = 24  # standard_bots at tables of three, two deals


def record(idx: int) -> Record:
    """A game of a and b whose fault's detail takes about a page of the database."""
    fault = {"seat": 1, "kind": "timeout", "detail": "x" * 3000}
    game = rec(idx, ["a", "b"], [1, 2], [1, 2], unit=idx, faults=[fault])
    return dataclasses.replace(game, charged_ms=5.0)


def stopped_line(stderr: str, what: str, out: Path) -> tuple[int, str]:
    """The one line of a league stopped by a full disk: the games it says it kept, and the
    command it says resumes it."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith(f"referee: error: cannot write {what}"), line
    head, _, rest = line.partition("; the league stopped: its ")
    assert head and rest, line
    kept, _, rest = rest.partition(f" kept in {out}/league.db, ")
    count = int(kept.split()[0])
    assert (
        kept == f"{count} recorded game{'' if count == 1 else 's'} {'is' if count == 1 else 'are'}"
    )
    said, _, resume = rest.partition(". Free some space, then resume with: ")
    assert said == "the games in progress were abandoned (not scored)", line
    return count, resume


def whole_or_plain(logs: Path, recorded: set[str]) -> None:
    """Every log in `logs` reads as a log: those of recorded games complete and compressed,
    the others (games abandoned) plain, or compressed only when whole; nothing half
    written under a temporary name."""
    for path in logs.iterdir():
        assert not path.name.startswith("."), f"left behind: {path.name}"
        try:
            log = read_log(path)
        except LogError as exc:
            pytest.fail(f"{path.name} is not a log: {exc}")
        stem = path.name.split(".")[0]
        if path.name.endswith(".gz"):
            assert log.complete, path.name  # only a finished log is ever compressed
        elif stem in recorded:
            pytest.fail(f"{path.name}: a recorded game's log is plain")


# ---------------------------------------------------------------- without root


async def test_a_bot_whose_stderr_file_cannot_be_written_plays_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The flood bot writes 2 MB to stderr as it starts and 64 KB before each reply; its
    # stderr file is /dev/full. The referee stops writing it, says so, and the game goes on.
    stderr_dir = tmp_path / "stderr"
    stderr_dir.mkdir()
    (stderr_dir / "g-seat0-flood.stderr").symlink_to(FULL)
    specs = [
        BotSpec("flood", (sys.executable, str(BOTS / "stderr_flood.py"))),
        BotSpec("greedy", (sys.executable, str(ROOT / "sample_bots" / "greedy_bot.py"))),
    ]
    clock = m.TimeControl(startup_ms=15000, move_ms=5000, bank_ms=15000)
    report = await run_game(
        specs,
        preset("standard", players=2, max_pip=6, rounds="single"),
        7,
        game_id="g",
        time=clock,
        log_path=tmp_path / "g.jsonl.gz",
        stderr_dir=stderr_dir,
    )
    assert report.result.faults == ((), ())
    assert read_log(tmp_path / "g.jsonl.gz").complete
    said = [r.getMessage() for r in caplog.records if "stderr file" in r.getMessage()]
    assert said == [
        f"bot flood: cannot write its stderr file {stderr_dir}/g-seat0-flood.stderr "
        "(No space left on device); the rest of its stderr is dropped"
    ]


def test_a_game_whose_log_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    token = new_token()
    log = tmp_path / "game.jsonl"
    log.symlink_to(FULL)
    bots = [
        f"{sys.executable} {ROOT / 'sample_bots' / name}.py {token}"
        for name in ("random_bot", "greedy_bot")
    ]
    with no_process_left(token):
        played = subprocess.run(
            [REFEREE, "play", *bots, "--set", "max_pip=6", "--log", str(log), "-q"],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert played.returncode == 2
    assert played.stderr == (
        f"referee: error: cannot write {log}: No space left on device; the game's log "
        f"stays {log}, as far as it was written\n"
    )
    assert log.is_symlink() and Path(os.readlink(log)) == FULL  # nothing else touched


def test_a_full_database_refuses_a_game_whole(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "league.db")
    try:
        pages = ledger.db.execute("PRAGMA page_count").fetchone()[0]
        ledger.db.execute(f"PRAGMA max_page_count = {pages + 4}")  # SQLITE_FULL beyond
        kept = 0
        with pytest.raises(WriteError) as caught:
            for idx in range(100):
                ledger.record(record(idx))
                kept += 1
        assert str(caught.value) == (f"cannot write {tmp_path}/league.db: database or disk is full")
        assert 0 < kept < 100
        # Only the games before it, and their totals: the full one is not there at all.
        assert [r.idx for r in ledger.records()] == list(range(kept))
        assert ledger.count() == kept
        standings = ledger.standings(["a", "b"])
        assert standings.to_json() == compute(["a", "b"], ledger.records()).to_json()
        ledger.db.execute("PRAGMA max_page_count = 1000000")  # space again
        assert ledger.record(record(kept))
    finally:
        ledger.close()
    again = Ledger(tmp_path / "league.db")
    try:
        assert [r.idx for r in read_records(again.db)] == list(range(kept + 1))
    finally:
        again.close()


def test_standings_files_are_written_whole_or_not_at_all(tmp_path: Path) -> None:
    standings = compute(["a", "b"], [record(0)])
    write_files(standings, tmp_path, "t")
    before = (tmp_path / "standings.json").read_bytes()
    (tmp_path / ".standings.json.tmp").symlink_to(FULL)  # the file it writes first
    with pytest.raises(WriteError, match=r"^cannot write .*/standings\.json: No space left"):
        write_files(compute(["a", "b"], [record(0), record(1)]), tmp_path, "t")
    assert (tmp_path / "standings.json").read_bytes() == before
    assert not (tmp_path / ".standings.json.tmp").is_symlink()


def test_a_log_from_a_cluster_worker_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    logs, stderr_dir = tmp_path / "logs", tmp_path / "stderr"
    logs.mkdir()
    stderr_dir.mkdir()
    (logs / ".g00001.jsonl.gz.part").symlink_to(FULL)
    done = Done(record(0), "0", b"\x1f\x8b" + b"x" * 100_000, [], "tcp://10.0.0.5:4000", 1.0)
    with pytest.raises(WriteError, match=r"^cannot write .*g00001\.jsonl\.gz.*: No space left"):
        write_remote(logs / "g00001.jsonl.gz", stderr_dir, done)
    assert list(logs.iterdir()) == []  # no log, and nothing half written


def test_a_log_that_cannot_be_written_stops_the_league_and_resume_finishes_it(
    tmp_path: Path,
) -> None:
    token = new_token()
    path = write_league(tmp_path / "league", standard_bots(token))
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "g00003.jsonl").symlink_to(FULL)  # the third game's log: ENOSPC
    with no_process_left(token):
        cut = subprocess.run(
            [REFEREE, "league", str(path), "--out", str(out), "-q", "--jobs", "2"],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert cut.returncode == 3, cut.stderr
    assert cut.stdout == ""
    count, resume = stopped_line(cut.stderr, f"{out}/logs/g00003.jsonl: No space left", out)
    assert resume == shlex.join(
        ["referee", "league", str(path), "--out", str(out), "--resume", "--jobs", "2", "--quiet"]
    )
    records = ledger_records(out)
    assert len(records) == count < GAMES
    assert "g00003" not in {r.game_id for r in records}
    check_logs(records, out / "logs")
    (out / "logs" / "g00003.jsonl").unlink()  # space again
    whole_or_plain(out / "logs", {r.game_id for r in records})
    assert not (out / "standings.json").exists()
    kept = {r.game_id: r.finished for r in records}

    with no_process_left(token):
        resumed = subprocess.run(
            shlex.split(resume), env=ENV, capture_output=True, text=True, timeout=300
        )
    assert resumed.returncode == 0, resumed.stderr
    records = ledger_records(out)
    assert [r.idx for r in records] == list(range(GAMES))
    assert {r.game_id: r.finished for r in records if r.game_id in kept} == kept
    check_logs(records, out / "logs")
    assert json.loads((out / "standings.json").read_text())["games"] == GAMES


# ---------------------------------------------------------------- a real full disk (root)

# Runs as root in a mount namespace of its own: the output folder is a tmpfs of 2 MB,
# filled up once the league has recorded a few games. The folder is copied out after
# each run (the tmpfs goes with the namespace), then given space again for the resume,
# which runs the command the stopped league printed.
INSIDE = r"""
import json, os, shlex, shutil, sqlite3, subprocess, sys, time

league, out, save, referee, variant = sys.argv[1:]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", out], check=True)
if variant == "ledger":  # only the ledger on the small disk
    for name in ("logs", "stderr"):
        os.mkdir(f"{save}/{name}")
        os.symlink(f"{save}/{name}", f"{out}/{name}")


def recorded():
    try:
        with sqlite3.connect(f"file:{out}/league.db?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.Error:
        return 0


def run(argv, tag):
    with open(f"{save}/{tag}.err", "w") as err:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=err, timeout=600).returncode


def keep(tag):
    shutil.copytree(out, f"{save}/{tag}", ignore=shutil.ignore_patterns("filler"))


first = subprocess.Popen(
    [referee, "league", league, "--out", out, "-q", "--jobs", "2"],
    stdout=subprocess.DEVNULL,
    stderr=open(f"{save}/first.err", "w"),
)
deadline = time.monotonic() + 120
while recorded() < 3 and first.poll() is None and time.monotonic() < deadline:
    time.sleep(0.02)
with open(f"{out}/filler", "wb", buffering=0) as filler:  # the disk fills up
    try:
        while True:
            filler.write(bytes(1 << 16))
            filler.flush()
    except OSError:
        pass
codes = {"first": first.wait(timeout=600)}
keep("first")
os.unlink(f"{out}/filler")
subprocess.run(["mount", "-o", "remount,size=64m", out], check=True)
line = open(f"{save}/first.err").read()
resume = line.rsplit("resume with: ", 1)[-1].strip()
codes["second"] = run(shlex.split(resume), "second") if "resume with: " in line else None
keep("second")
json.dump(codes, open(f"{save}/codes.json", "w"))
"""


def can_mount(tmp_path: Path) -> str | None:
    """Why a private tmpfs cannot be mounted here, or None."""
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    probe = tmp_path / "probe"
    probe.mkdir()
    tried = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", str(probe)],
        capture_output=True,
        text=True,
    )
    probe.rmdir()
    return None if tried.returncode == 0 else f"cannot mount a tmpfs: {tried.stderr.strip()}"


@pytest.mark.parametrize("variant", ["folder", "ledger"])
def test_a_full_disk_stops_the_league_cleanly_and_resume_finishes_it(
    tmp_path: Path, variant: str
) -> None:
    if (why := can_mount(tmp_path)) is not None:
        pytest.skip(why)
    token = new_token()
    path = write_league(tmp_path / "league", standard_bots(token))
    out, save = tmp_path / "out", tmp_path / "save"
    out.mkdir()
    save.mkdir()
    try:
        inside = subprocess.run(
            [
                *("unshare", "-m", "--propagation", "private", sys.executable, "-c", INSIDE),
                *(str(path), str(out), str(save), REFEREE, variant),
            ],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert inside.returncode == 0, inside.stderr
        assert_none_left(token)
    finally:
        kill_all(processes_with(token))
    codes = json.loads((save / "codes.json").read_text())
    first_err = (save / "first.err").read_text()
    assert codes["first"] == 3, first_err
    # The first write that failed is named: a log, the database, or another league file.
    what = f"{out}/league.db: database or disk is full" if variant == "ledger" else f"{out}/"
    count, resume = stopped_line(first_err, what, out)
    assert "--resume" in shlex.split(resume)

    first = save / "first"
    logs = first / "logs" if variant == "folder" else save / "logs"
    records = ledger_records(first)  # the ledger opens, whole
    assert len(records) == count and 3 <= count < GAMES
    assert not (first / "standings.json").exists()
    if variant == "folder":  # the logs were copied out when the first run stopped
        check_logs(records, logs)
        whole_or_plain(logs, {r.game_id for r in records})

    assert codes["second"] == 0, (save / "second.err").read_text()
    second = save / "second"
    again = ledger_records(second)
    assert [r.idx for r in again] == list(range(GAMES))
    assert Counter(r.game_id for r in again).most_common(1)[0][1] == 1
    first_run = {r.idx: r for r in records}
    assert all(r == first_run[r.idx] for r in again if r.idx in first_run)  # not played again
    check_logs(again, second / "logs" if variant == "folder" else save / "logs")
    assert json.loads((second / "standings.json").read_text())["games"] == GAMES
