"""Whole leagues with real bot processes: the same standings with one job or many,
resumed after SIGKILL at random points or after Ctrl-C, misbehaving bots counted,
processes reused or restarted, and none left behind.

Leagues are small and fast: double-6, one round, tables of two or three, sample
bots and the hand-written bots of tests/bots. Every bot carries a token on its
command line, so that /proc shows whether any process of a test outlived it.
Bots' own seeds come from a bot seed key; tests that compare two fresh runs pin it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import random
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from click.testing import CliRunner
from rich.console import Console

from referee.cli import main
from referee.league.config import LeagueConfig, load_config
from referee.league.ledger import Ledger, LedgerError, Record
from referee.league.run import run_league
from referee.league.schedule import schedule
from referee.league.standings import Standings, compute
from referee.logs.gamelog import read_log
from referee.logs.replay import verify
from tests._procs import assert_none_left, kill_all, new_token, processes_with

PY = sys.executable
BIN = Path(PY).parent
REFEREE = str(BIN / "referee")
ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
SAMPLES = ROOT / "sample_bots"
KEY_HEX = "00112233445566778899aabbccddeeff"
KEY = bytes.fromhex(KEY_HEX)
# Deals come from a secret key made when a league starts: fresh runs compared pin it.
DEAL_KEY_HEX = "f0e1d2c3b4a5968778695a4b3c2d1e0f" * 2
DEAL_KEY = bytes.fromhex(DEAL_KEY_HEX)
LATENCY = ("latency_sum", "latency_n", "latency_mean", "latency_worst")
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "150"}

# A bot that plays legal move 0 with the helpers of tests/bots (argv[1] is that folder).
FIRST = "import sys; sys.path.insert(0, sys.argv[1]); from _common import serve; serve('first')"
# The same, saying `started ID` on stderr when it starts, with an ID of its own: a pid
# would not do, as every sandboxed bot is pid 2 of its own PID namespace.
LOUD = (
    "import os, sys; sys.path.insert(0, sys.argv[1])\n"
    "print(f'started {os.urandom(8).hex()}', file=sys.stderr, flush=True)\n"
    "from _common import serve; serve('loud')\n"
)
# Plays legal move 0, but while the file argv[2] does not exist it first marks itself
# blocked (a file named by its pid in the folder argv[3]) and waits for that file.
GATE = (
    "import os, sys, time; sys.path.insert(0, sys.argv[1])\n"
    "from _common import move, serve\n"
    "gate, marks = sys.argv[2], sys.argv[3]\n"
    "def on_turn(turn):\n"
    "    if not os.path.exists(gate):\n"
    "        open(os.path.join(marks, str(os.getpid())), 'w').close()\n"
    "        while not os.path.exists(gate):\n"
    "            time.sleep(0.01)\n"
    "    return move(turn)\n"
    "serve('gate', on_turn)\n"
)

Bot = dict[str, Any]


def bot(name: str, argv: list[str], token: str, **extra: Any) -> Bot:
    return {"name": name, "command": [*argv, token], **extra}


def sample(name: str, script: str, token: str) -> Bot:
    return bot(name, [PY, str(SAMPLES / script)], token)


def inline(name: str, code: str, token: str, *args: str, **extra: Any) -> Bot:
    """A bot given as code that imports _common from tests/bots (its argv[1]); it runs
    there, as in its own folder, which the sandbox (the league default) shows it."""
    return bot(name, [PY, "-c", code, str(BOTS), *args], token, cwd=str(BOTS), **extra)


def first(name: str, token: str) -> Bot:
    return inline(name, FIRST, token)


def misbehaving(name: str, script: str, token: str, *args: str) -> Bot:
    return bot(name, [PY, str(BOTS / script), *args], token)


def standard_bots(token: str) -> list[Bot]:
    """Two random bots (their games depend on their own seeds), greedy, and move 0."""
    return [
        sample("r1", "random_bot.py", token),
        sample("r2", "random_bot.py", token),
        sample("greedy", "greedy_bot.py", token),
        first("first", token),
    ]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):  # an inline table
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)  # strings and lists of strings: valid TOML too


def write_league(
    folder: Path,
    bots: list[Bot],
    *,
    table: int = 3,
    deals: int = 2,
    seed: int = 11,
    time_ms: dict[str, int] | None = None,
    file: str = "league.toml",
    **league: Any,
) -> Path:
    """A LEAGUE.toml in `folder`; games are double-6, one round."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"name": "t", "table": table, "deals": deals, "seed": seed, **league}
    clocks = time_ms or {"startup_ms": 15000, "move_ms": 3000, "bank_ms": 15000}
    lines = ["[league]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in settings.items()]
    lines += ["", "[rules]", "max_pip = 6", 'rounds = "single"', "", "[time]"]
    lines += [f"{k} = {v}" for k, v in clocks.items()]
    for b in bots:
        lines += ["", "[[bot]]"]
        lines += [f"{k} = {toml_value(v)}" for k, v in b.items()]
    path = folder / file
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def core(standings: dict[str, Any]) -> dict[str, Any]:
    """Standings without the latencies and the decision time excused for the referee's
    lag, which are measured, not decided by the seeds, nor the commitment, which names
    each run's own key and time."""
    bots = [{k: v for k, v in b.items() if k not in LATENCY} for b in standings["bots"]]
    kept = {k: v for k, v in standings.items() if k not in ("clocks", "commitment")}
    return {**kept, "bots": bots}


def outcomes(records: list[Record]) -> list[tuple[Any, ...]]:
    """What the seeds decide about each recorded game."""
    return [
        (
            r.idx,
            r.game_id,
            r.unit,
            r.seed,
            r.seats,
            r.scores,
            r.ranks,
            r.forfeited,
            sorted(f["kind"] for f in r.faults),
            r.decisions,
        )
        for r in records
    ]


def ledger_records(out: Path) -> list[Record]:
    ledger = Ledger(out / "league.db")
    try:
        return ledger.records()
    finally:
        ledger.close()


def meta(out: Path) -> dict[str, str]:
    with sqlite3.connect(out / "league.db") as db:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())


def recorded_count(db: Path) -> int:
    """Games in the ledger now, read without writing (0 before the table exists)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def poll(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def check_logs(records: list[Record], logs: Path) -> None:
    """Every recorded game has a complete, compressed log that re-derives, with the same
    result, and no plain log beside it."""
    for r in records:
        assert r.log_path.endswith(f"{r.game_id}.jsonl.gz")
        assert not (logs / f"{r.game_id}.jsonl").exists()
        log = read_log(logs / f"{r.game_id}.jsonl.gz")
        assert log.complete, r.game_id
        assert log.footer is not None
        assert (log.footer.scores, log.footer.ranks) == (r.scores, r.ranks)
        assert [(f.seat, f.kind) for f in log.footer.faults] == [
            (f["seat"], f["kind"]) for f in r.faults
        ]
        assert [(n.seat, n.kind) for n in log.footer.notices] == [
            (n["seat"], n["kind"]) for n in r.notices
        ]
        assert log.header.seed == r.seed
        verdict = verify(log)
        assert verdict.ok, f"{r.game_id}: {verdict.divergence}"


async def run(config: LeagueConfig, jobs: int, **kwargs: Any) -> Standings:
    console = Console(file=io.StringIO(), width=150)
    kwargs.setdefault("resume", False)
    return await run_league(config, jobs=jobs, console=console, quiet=True, **kwargs)


def pinned(path: Path, out: Path, key: bytes = KEY, deal_key: bytes = DEAL_KEY) -> LeagueConfig:
    """The league of `path` with its deal key and bot seed key pinned, writing to `out`."""
    return dataclasses.replace(load_config(path), bot_seed_key=key, deal_key=deal_key, out=out)


def secrets_of(out: Path) -> tuple[bytes, bytes]:
    """The bot seed key and deal key a league made when it started, kept since."""
    kept = meta(out)
    return bytes.fromhex(kept["bot_seed_key"]), bytes.fromhex(kept["deal_key"])


@contextmanager
def no_process_left(token: str) -> Iterator[None]:
    try:
        yield
    finally:
        assert_none_left(token)


def start_cli(args: list[str], tmp_path: Path, tag: str) -> subprocess.Popen[bytes]:
    def default_sigint() -> None:  # a background job may inherit SIGINT ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    with (tmp_path / f"{tag}.out").open("wb") as out, (tmp_path / f"{tag}.err").open("wb") as err:
        return subprocess.Popen(
            [REFEREE, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=ENV,
            cwd=tmp_path,
            preexec_fn=default_sigint,
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


# ---------------------------------------------------------------- same seeds, same standings


async def test_one_job_or_four_give_the_same_standings(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    with no_process_left(token):
        one = await run(pinned(path, tmp_path / "one"), jobs=1)
        four = await run(pinned(path, tmp_path / "four"), jobs=4)
        other_key = await run(pinned(path, tmp_path / "other", b"\x07" * 16), jobs=2)
    assert one.games == four.games == 24
    assert core(one.to_json()) == core(four.to_json())
    assert outcomes(ledger_records(tmp_path / "one")) == outcomes(ledger_records(tmp_path / "four"))
    assert [b.history for b in one.bots] == [b.history for b in four.bots]
    # The comparison means something: the random bots play other games with another key.
    assert outcomes(ledger_records(tmp_path / "one")) != outcomes(
        ledger_records(tmp_path / "other")
    )
    assert other_key.games == 24
    for out in ("one", "four"):
        for suffix in ("json", "csv", "md", "svg"):
            assert (tmp_path / out / f"standings.{suffix}").stat().st_size > 0
        written = json.loads((tmp_path / out / "standings.json").read_text())
        assert core(written) == core(json.loads(json.dumps(one.to_json())))
    check_logs(ledger_records(tmp_path / "four"), tmp_path / "four" / "logs")


def test_a_bot_seed_key_pinned_in_the_file_makes_fresh_runs_identical(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token), bot_seed_key=KEY_HEX, deal_key=DEAL_KEY_HEX)
    with no_process_left(token):
        results = [
            CliRunner().invoke(
                main, ["league", str(path), "--out", str(tmp_path / out), "-q", "--jobs", jobs]
            )
            for out, jobs in (("a", "1"), ("b", "3"))
        ]
    for result in results:
        assert result.exit_code == 0, result.output
    a = json.loads((tmp_path / "a" / "standings.json").read_text())
    b = json.loads((tmp_path / "b" / "standings.json").read_text())
    assert a["games"] == 24
    assert core(a) == core(b)
    assert outcomes(ledger_records(tmp_path / "a")) == outcomes(ledger_records(tmp_path / "b"))


# ---------------------------------------------------------------- interrupted and resumed


async def test_resume_plays_exactly_the_games_not_recorded(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    config = pinned(path, tmp_path / "cut")
    everything = {g.index for g in schedule(config, DEAL_KEY)}
    first_run: list[int] = []
    with no_process_left(token):
        with trio.CancelScope() as scope:

            def cut_after_five(record: Record) -> None:
                first_run.append(record.idx)
                if len(first_run) == 5:
                    scope.cancel()

            await run(config, jobs=3, on_record=cut_after_five)
        assert scope.cancelled_caught
        recorded = {r.idx for r in ledger_records(config.out)}
        assert recorded == set(first_run)
        assert 5 <= len(recorded) < len(everything)
        assert not (config.out / "standings.json").exists()  # written only at the end

        with pytest.raises(LedgerError, match="add --resume"):
            await run(config, jobs=2)

        second_run: list[int] = []
        resumed = await run(
            config, jobs=3, resume=True, on_record=lambda r: second_run.append(r.idx)
        )
        assert len(second_run) == len(set(second_run))
        assert set(second_run) == everything - recorded

        third_run: list[int] = []
        again = await run(config, jobs=3, resume=True, on_record=lambda r: third_run.append(r.idx))
        assert third_run == []  # nothing left: a finished game is never played again

        reference = await run(pinned(path, tmp_path / "whole"), jobs=2)
    records = ledger_records(config.out)
    assert [r.idx for r in records] == sorted(everything)
    assert outcomes(records) == outcomes(ledger_records(tmp_path / "whole"))
    assert core(resumed.to_json()) == core(reference.to_json())
    assert core(again.to_json()) == core(reference.to_json())
    check_logs(records, config.out / "logs")


def test_resume_after_sigkill_at_random_points_gives_the_same_standings(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token), deals=4)  # 48 games
    out = tmp_path / "out"
    db = out / "league.db"
    total = 48
    chooser = random.Random()
    seed = chooser.randrange(2**32)
    points = sorted(random.Random(seed).sample(range(total - 8), 3))
    note = f"kill points {points} (random seed {seed})"
    kills = 0
    try:
        for n, point in enumerate(points):
            args = ["league", str(path), "--out", str(out), "-q", "--jobs", "2"]
            process = start_cli(args + (["--resume"] if n else []), tmp_path, f"run{n}")
            try:
                # A point of 0 kills as soon as the database exists, during setup.
                def reached(p: int = point, proc: subprocess.Popen[bytes] = process) -> bool:
                    return (db.exists() and recorded_count(db) >= p) or proc.poll() is not None

                poll(reached, 60, f"{point} recorded games; {note}")
                if process.poll() is None:
                    process.send_signal(signal.SIGKILL)
                    kills += 1
                process.wait(timeout=10)
            finally:
                stop(process)
            # Only the keepers end the bots now, when their sockets close.
            assert_none_left(token, timeout_s=10)
        final = start_cli(
            ["league", str(path), "--out", str(out), "-q", "--jobs", "2", "--resume"],
            tmp_path,
            "final",
        )
        try:
            assert final.wait(timeout=120) == 0, (tmp_path / "final.err").read_text() + note
        finally:
            stop(final)
        assert_none_left(token)
    finally:
        kill_all(processes_with(token))
    assert kills >= 1, note

    records = ledger_records(out)
    assert [r.idx for r in records] == list(range(total)), note
    check_logs(records, out / "logs")
    key, deal_key = secrets_of(out)  # made by the first run, kept since
    reference = trio.run(run, pinned(path, tmp_path / "whole", key, deal_key), 2)
    assert outcomes(records) == outcomes(ledger_records(tmp_path / "whole")), note
    written = json.loads((out / "standings.json").read_text())
    assert core(written) == core(json.loads(json.dumps(reference.to_json()))), note
    for suffix in ("csv", "md", "svg"):
        assert (out / f"standings.{suffix}").stat().st_size > 0


def gated_league(tmp_path: Path, token: str, folder: str = "league") -> tuple[Path, Path, Path]:
    """A league whose bot `gate` blocks on its first turn until the file `gate` exists."""
    gate, marks = tmp_path / "gate", tmp_path / "blocked"
    marks.mkdir()
    bots = [
        sample("greedy", "greedy_bot.py", token),
        first("first", token),
        sample("random", "random_bot.py", token),
        # Without the sandbox: it talks with the test through files outside its folder
        # (the gate it waits for, the marks it leaves), which the sandbox rightly closes.
        bot("gate", [PY, "-c", GATE, str(BOTS), str(gate), str(marks)], token, sandbox="none"),
    ]
    return write_league(tmp_path / folder, bots), gate, marks


def test_ctrl_c_stops_cleanly_and_resume_finishes_the_league(tmp_path: Path) -> None:
    token = new_token()
    path, gate, marks = gated_league(tmp_path, token)
    out = tmp_path / "out"
    logs = out / "logs"
    # Game 1 (greedy, first, random) finishes; games 2 and 3 have the gate bot and wait
    # for it, one per worker: at Ctrl-C two games are certainly in progress.
    process = start_cli(["league", str(path), "--out", str(out), "--jobs", "2"], tmp_path, "cut")
    try:
        poll(
            lambda: len(list(marks.iterdir())) >= 2 and recorded_count(out / "league.db") >= 1,
            60,
            "two blocked games and one recorded",
        )
        process.send_signal(signal.SIGINT)
        returncode = process.wait(timeout=30)
        left = processes_with(token)  # the referee ends every bot before it exits
    finally:
        stop(process)
        kill_all(processes_with(token))
    stderr = (tmp_path / "cut.err").read_text()
    assert returncode == 130, stderr
    assert left == []
    # Every option given is kept (--jobs above all), so the resumed league runs as this one.
    resume_line = f"referee league {path} --out {out} --resume --jobs 2"
    assert stderr.rstrip().endswith(f"Resume with: {resume_line}"), stderr
    assert "interrupted" in stderr

    records = ledger_records(out)
    assert [r.game_id for r in records] == ["g00001"]
    check_logs(records, logs)
    # The games running at Ctrl-C left incomplete logs, plain (only a finished log is
    # compressed), and no record; replay says they are incomplete.
    incomplete = sorted(p.name for p in logs.iterdir() if not read_log(p).complete)
    assert incomplete == ["g00002.jsonl", "g00003.jsonl"]
    assert sorted(p.name for p in logs.iterdir()) == ["g00001.jsonl.gz", *incomplete]
    replayed = CliRunner().invoke(main, ["replay", str(logs / "g00002.jsonl")])
    assert replayed.exit_code == 0, replayed.output
    assert "the log is INCOMPLETE" in replayed.stdout
    assert not (out / "standings.json").exists()
    kept = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in logs.glob("g00001.jsonl.gz")}
    finished = records[0].finished

    # Resume exactly as printed, with the gate open.
    gate.touch()
    with no_process_left(token):
        resumed = subprocess.run(
            shlex.split(resume_line),
            env=ENV,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert resumed.returncode == 0, resumed.stderr
    records = ledger_records(out)
    assert [r.idx for r in records] == list(range(24))
    assert Counter(r.game_id for r in records).most_common(1)[0][1] == 1
    check_logs(records, logs)  # the partial logs were replaced by the games played again
    replayed = CliRunner().invoke(main, ["replay", str(logs / "g00002.jsonl.gz")])
    assert replayed.exit_code == 0, replayed.output
    assert "the log is complete" in replayed.stdout
    # The recorded game was not played again: its log is untouched.
    assert {p: (logs / p).stat().st_mtime_ns for p in kept} == {p: v[0] for p, v in kept.items()}
    assert {p: (logs / p).read_bytes() for p in kept} == {p: v[1] for p, v in kept.items()}
    assert records[0].finished == finished

    key, deal_key = secrets_of(out)
    reference = trio.run(run, pinned(path, tmp_path / "whole", key, deal_key), 2)
    written = json.loads((out / "standings.json").read_text())
    assert core(written) == core(json.loads(json.dumps(reference.to_json())))
    for suffix in ("csv", "md", "svg"):
        assert (out / f"standings.{suffix}").stat().st_size > 0
    assert "standings written to" in resumed.stdout

    # `referee standings DIR` prints them again, and --json gives standings.json.
    again = CliRunner().invoke(main, ["standings", str(out), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == written
    table = CliRunner().invoke(main, ["standings", str(out)], env={"COLUMNS": "150"})
    assert table.exit_code == 0, table.output
    assert "t: 24 games" in table.stdout
    for b in written["bots"]:
        assert f"│ {b['name']} " in table.stdout


def test_the_printed_resume_command_survives_spaces_in_paths(tmp_path: Path) -> None:
    token = new_token()
    path, _, marks = gated_league(tmp_path, token, folder="my league")
    out = tmp_path / "league results"
    # Short and long names, a flag, a choice: the command is rebuilt from what click
    # parsed, with each option's long name.
    options = ["-j", "2", "--sandbox", "none", "-q"]
    process = start_cli(["league", str(path), "--out", str(out), *options], tmp_path, "cut")
    try:
        poll(lambda: len(list(marks.iterdir())) >= 1, 60, "a blocked game")
        process.send_signal(signal.SIGINT)
        returncode = process.wait(timeout=30)
    finally:
        stop(process)
        kill_all(processes_with(token))
    stderr = (tmp_path / "cut.err").read_text()
    assert returncode == 130, stderr
    printed = stderr.rsplit("Resume with: ", 1)[1].strip()
    assert shlex.split(printed) == [
        *("referee", "league", str(path), "--out", str(out), "--resume"),
        *("--sandbox", "none", "--jobs", "2", "--quiet"),
    ]


def test_the_command_line_refuses_a_finished_ledger_without_resume_or_a_changed_league(
    tmp_path: Path,
) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    out = tmp_path / "out"
    out.mkdir()
    ledger = Ledger(out / "league.db")
    ledger.claim(load_config(path).fingerprint(), resume=False)
    ledger.record(
        Record(
            idx=0,
            game_id="g00001",
            unit=0,
            deal=0,
            rotation=0,
            seed=1,
            seats=["r1", "r2", "greedy"],
            scores=[1, 2, 3],
            ranks=[1, 2, 3],
            forfeited=[False] * 3,
            faults=[],
            latency_mean=[None] * 3,
            latency_max=[None] * 3,
            decisions=5,
            log_path="x",
            finished="now",
        )
    )
    ledger.close()
    fresh = CliRunner().invoke(main, ["league", str(path), "--out", str(out), "-q"])
    assert fresh.exit_code == 2
    assert "already holds 1 finished games; add --resume" in fresh.stderr
    changed = write_league(tmp_path / "changed", standard_bots(token), seed=12)
    other = CliRunner().invoke(main, ["league", str(changed), "--out", str(out), "--resume"])
    assert other.exit_code == 2
    assert "holds a league with other settings" in other.stderr
    assert len(ledger_records(out)) == 1
    assert processes_with(token) == []


def test_resume_with_nothing_to_resume_says_so_and_starts_the_league(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, [first("a", token), first("b", token)], table=2, deals=1)
    out = tmp_path / "out"
    args = ["league", str(path), "--out", str(out), "--resume", "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    said = f"referee: nothing to resume in {out}: starting a new league"
    assert result.stderr.splitlines().count(said) == 1, result.stderr
    assert len(ledger_records(out)) == 2  # the whole league, played
    again = CliRunner().invoke(main, args)  # now there is a ledger: nothing said
    assert again.exit_code == 0, again.output
    assert "nothing to resume" not in again.stderr
    assert len(ledger_records(out)) == 2
    assert processes_with(token) == []


def test_a_ledger_from_before_notices_moves_its_stale_replies_out_of_faults(
    tmp_path: Path,
) -> None:
    db = tmp_path / "league.db"
    ledger = Ledger(db)
    seats = {"seats": ["a", "b"], "scores": [1, 2], "ranks": [1, 2], "forfeited": [False] * 2}
    for idx, faults in enumerate(
        [
            [{"seat": 0, "kind": "timeout", "detail": "t"}],
            [
                {"seat": 1, "kind": "stale_reply", "detail": "s"},
                {"seat": 0, "kind": "illegal", "detail": "i"},
            ],
        ]
    ):
        ledger.record(
            Record(
                idx=idx,
                game_id=f"g{idx}",
                unit=idx,
                deal=idx,
                rotation=0,
                seed=idx,
                **seats,
                faults=faults,
                latency_mean=[None] * 2,
                latency_max=[None] * 2,
                decisions=5,
                log_path="x",
                finished="now",
            )
        )
    ledger.close()
    # As an earlier referee wrote it: no notices column, stale replies among the faults.
    with sqlite3.connect(db) as old:
        old.execute("ALTER TABLE games DROP COLUMN notices")
    kinds = [[(f["seat"], f["kind"]) for f in r.faults] for r in ledger_records(tmp_path)]
    assert kinds == [[(0, "timeout")], [(0, "illegal")]]
    assert [r.notices for r in ledger_records(tmp_path)] == [
        [],
        [{"seat": 1, "kind": "stale_reply", "detail": "s"}],
    ]
    standings = compute(["a", "b"], ledger_records(tmp_path))
    assert {b.name: (b.faults, b.notices) for b in standings.bots} == {
        "a": ({"timeout": 1, "illegal": 1}, {}),
        "b": ({}, {"stale_reply": 1}),
    }


@pytest.mark.parametrize(
    ("command", "out", "named"),
    [
        ("league", "{file}/results", "--out {file}/results: cannot write there: {file} is a file"),
        ("league", "{file}", "--out {file}: cannot write there: {file} is a file, not a folder"),
        ("league", None, "league.out {file}/x: cannot write there: {file} is a file"),
        ("league", "{out}", "the logs folder {out}/logs: cannot write there: {out}/logs is a"),
        ("serve", "{file}/results", "--out {file}/results: cannot write there: {file} is a file"),
        ("league", "{locked}/results", "--out {locked}/results: cannot write there: Permission"),
    ],
    ids=["under-a-file", "a-file", "league.out", "logs-a-file", "serve", "read-only"],
)
def test_an_output_folder_that_cannot_be_written_is_one_line(
    command: str, out: str | None, named: str, tmp_path: Path
) -> None:
    if "locked" in named and os.geteuid() == 0:
        pytest.skip("root writes in a read-only folder")
    token = new_token()
    places = {"file": tmp_path / "afile", "out": tmp_path / "out", "locked": tmp_path / "locked"}
    places["file"].write_text("")
    places["out"].mkdir()
    (places["out"] / "logs").write_text("")  # a file where the league's logs go
    places["locked"].mkdir(mode=0o555)
    path = write_league(tmp_path / "league", standard_bots(token), out=str(places["file"] / "x"))
    given = ["--out", out.format(**places)] if out else []
    result = CliRunner().invoke(main, [command, str(path), *given, "-q"])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.startswith("referee: error: ") and result.stderr.count("\n") == 1
    assert named.format(**places) in result.stderr, result.stderr
    assert not (places["out"] / "league.db").exists()
    assert processes_with(token) == []


# ---------------------------------------------------------------- faults and processes


async def test_a_league_with_misbehaving_bots_finishes_with_their_faults_counted(
    tmp_path: Path,
) -> None:
    token = new_token()
    bots = [
        sample("greedy", "greedy_bot.py", token),
        # Plays move 0, each time after a reply to a request that is not open: stale
        # replies are ignored, so it is a good bot, with notices and no fault.
        misbehaving("stale", "wrong_id.py", token),
        misbehaving("illegal", "illegal.py", token),
        misbehaving("crasher", "crash_midgame.py", token),
        misbehaving("deadborn", "crash_before_ready.py", token),
        misbehaving("silent", "silent.py", token),
    ]
    clocks = {"startup_ms": 5000, "move_ms": 300, "bank_ms": 300, "grace_ms": 50}
    # deadborn never starts: the organiser plays on regardless (--keep-going).
    path = write_league(tmp_path, bots, table=2, deals=1, time_ms=clocks, start_failures=0)
    config = pinned(path, tmp_path / "out")
    with no_process_left(token):
        standings = await run(config, jobs=3)
    assert standings.games == 30  # 15 pairs, both seatings
    records = ledger_records(config.out)
    assert [r.idx for r in records] == list(range(30))
    check_logs(records, config.out / "logs")
    by = {b.name: b for b in standings.bots}
    assert all(b.games == 10 for b in standings.bots)
    # The good bots: no fault, no forfeit.
    for name in ("greedy", "stale"):
        assert by[name].faults == {} and by[name].forfeits == 0, by[name]
    # Each stale reply is a notice of its game, one before every decision "stale" made.
    stale = [n for r in records for n in r.notices]
    assert stale and all(r.seats[n["seat"]] == "stale" for r in records for n in r.notices)
    assert {n["kind"] for n in stale} == {"stale_reply"}
    assert by["stale"].notices == {"stale_reply": len(stale)}
    assert all(b.notices == {} for b in standings.bots if b.name != "stale")
    # Each fault recorded in a game is counted once for the bot in that seat.
    counted: dict[str, Counter[str]] = {b.name: Counter() for b in standings.bots}
    for r in records:
        for f in r.faults:
            counted[r.seats[f["seat"]]][f["kind"]] += 1
        # A seat that forfeited ranks below every seat that did not.
        for s, lost in enumerate(r.forfeited):
            for t, kept_on in enumerate(r.forfeited):
                if lost and not kept_on:
                    assert r.ranks[s] > r.ranks[t], r
    for b in standings.bots:
        assert b.faults == dict(counted[b.name]), b.name
    assert by["deadborn"].faults == {"startup_failure": 10}
    assert by["deadborn"].forfeits == 10
    # Every game of the others comes to their fault: one turn for "illegal" and
    # "silent", four decisions for "crasher" (it holds seven tiles), and the forfeited
    # seat of an opponent only draws and passes.
    assert (by["illegal"].faults, by["illegal"].forfeits) == ({"illegal": 10}, 10)
    assert (by["silent"].faults, by["silent"].forfeits) == ({"timeout": 10}, 10)
    assert (by["crasher"].faults, by["crasher"].forfeits) == ({"crash": 10}, 10)
    # The misbehaving bots rank below the good ones.
    assert {b.name for b in standings.bots[:2]} == {"greedy", "stale"}
    md = (config.out / "standings.md").read_text()
    assert "startup_failure 10" in md


def started(stderr_dir: Path, name: str = "*") -> set[str]:
    """The `started ID` lines of LOUD bots named `name`: one per process."""
    return {
        line
        for f in stderr_dir.glob(f"{name}-*.stderr")
        for line in f.read_text().splitlines()
        if line.startswith("started ")
    }


async def test_processes_are_reused_unless_restart_is_always(tmp_path: Path) -> None:
    token = new_token()
    bots = [
        inline("kept", LOUD, token),
        inline("fresh", LOUD, token, restart="always"),
        sample("greedy", "greedy_bot.py", token),
    ]
    path = write_league(tmp_path, bots, table=2, deals=2)
    config = pinned(path, tmp_path / "out")
    with no_process_left(token):
        standings = await run(config, jobs=1)
    assert standings.games == 12
    by = {b.name: b for b in standings.bots}
    assert by["kept"].games == by["fresh"].games == 8
    # Two processes served every game of "kept" (pinged before each reuse): one per
    # seat rotation, since no process plays a deal twice; "fresh" had a new process
    # for each of its games.
    assert len(started(config.out / "stderr", "kept")) == 2
    assert len(started(config.out / "stderr", "fresh")) == 8
    assert all(b.faults == {} for b in standings.bots)


async def cut_after(config: LeagueConfig, games: int, jobs: int = 2) -> set[int]:
    """Run `config` and cancel it (like Ctrl-C) once `games` games are recorded."""
    seen: list[int] = []
    with trio.CancelScope() as scope:

        def count(record: Record) -> None:
            seen.append(record.idx)
            if len(seen) == games:
                scope.cancel()

        await run(config, jobs=jobs, on_record=count)
    assert scope.cancelled_caught
    return {r.idx for r in ledger_records(config.out)}


async def test_resume_refuses_another_bot_seed_key(tmp_path: Path) -> None:
    # The bot seed key decides the random bots' games as much as the league seed does;
    # resuming under another key would mix games of two different leagues.
    token = new_token()
    path = write_league(tmp_path, standard_bots(token), deals=1)
    out = tmp_path / "out"
    with no_process_left(token):
        await cut_after(pinned(path, out, b"\x01" * 16), 3)
        played: list[int] = []
        with pytest.raises(LedgerError):
            await run(
                pinned(path, out, b"\x02" * 16),
                jobs=2,
                resume=True,
                on_record=lambda r: played.append(r.idx),
            )
    assert played == []


async def test_bot_stderr_of_an_interrupted_run_survives_the_resume(tmp_path: Path) -> None:
    token = new_token()
    bots = [
        inline("loud", LOUD, token, restart="always"),
        sample("greedy", "greedy_bot.py", token),
        first("first", token),
    ]
    path = write_league(tmp_path, bots, table=2, deals=2)
    config = pinned(path, tmp_path / "out")
    stderr_dir = config.out / "stderr"
    with no_process_left(token):
        # One game: "loud" against greedy; the next one, the first of the resumed run,
        # starts "loud" first again.
        assert await cut_after(config, 1, jobs=1) == {0}
        before = started(stderr_dir)
        assert len(before) == 1
        await run(config, jobs=1, resume=True)
    after = started(stderr_dir)
    assert before <= after, f"stderr of the first run lost on resume: {sorted(before - after)}"
    assert len(after) == 8  # "loud" played 8 games, each in a fresh process
