"""Leagues on a Dask cluster (`referee league --cluster`): the same standings as on
one machine, a worker killed mid-game costs no game, a resource no worker offers is
refused before any game, Ctrl-C resumes with the cluster, Dask is never imported
without the option, and `[cluster] bot_root` maps the bots' paths on the workers.

Cluster runs are real `referee` subprocesses: a LocalCluster spawns its worker
processes, which are children of the referee (`multiprocessing.spawn` on their
command line). Leagues are the small ones of test_run, and every bot carries a
token so that /proc shows whether any process outlived a test. Routing by resources
on a real scheduler is tested in test_cluster_setup.

Three tests are expected failures for product bugs, named in their reasons: Dask's
warning about a busy port 8787 beside the one-line error, worker folders left in the
temporary folder after Ctrl-C, and an absolute `cwd` that `bot_root` does not map.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from referee.bots.sandbox import check_bwrap
from referee.league import remote
from referee.league.cluster import Cluster, ClusterError, check_target, needs, worker_tag
from referee.league.config import ConfigError, load_config, parse_config
from referee.league.ledger import Ledger
from referee.league.remote import LeagueBlob, check_worker, code_digest, league_blob, worker_config
from referee.league.schedule import schedule
from tests._procs import assert_none_left, kill_all, new_token, processes_with
from tests.league.test_run import (
    DEAL_KEY,
    DEAL_KEY_HEX,
    ENV,
    KEY,
    KEY_HEX,
    PY,
    REFEREE,
    ROOT,
    check_logs,
    core,
    first,
    gated_league,
    inline,
    ledger_records,
    no_process_left,
    outcomes,
    pinned,
    poll,
    recorded_count,
    run,
    sample,
    secrets_of,
    standard_bots,
    start_cli,
    stop,
    write_league,
)

# Plays legal move 0 like FIRST, but takes 20 ms over each move, so that a game lasts
# a while; writes its pid to stderr when it starts.
SLOW = (
    "import os, sys, time; sys.path.insert(0, sys.argv[1])\n"
    "print(f'started {os.getpid()}', file=sys.stderr, flush=True)\n"
    "from _common import move, serve\n"
    "def on_turn(turn):\n"
    "    time.sleep(0.02)\n"
    "    return move(turn)\n"
    "serve('slow', on_turn)\n"
)

# The scheduler of a LocalCluster serves HTTP on port 8787 even without a dashboard.
DASHBOARD_PORT = 8787


def placements(out: Path) -> dict[int, str]:
    ledger = Ledger(out / "league.db")
    try:
        return ledger.placements()
    finally:
        ledger.close()


def reference(
    path: Path, out: Path, key: bytes = KEY, deal_key: bytes = DEAL_KEY
) -> tuple[dict[str, Any], list[Any]]:
    """The league of `path` played in-process: its standings (as written) and outcomes."""
    standings = trio.run(run, pinned(path, out, key, deal_key), 2)
    return core(json.loads(json.dumps(standings.to_json()))), outcomes(ledger_records(out))


def finish(process: subprocess.Popen[bytes], tmp_path: Path, tag: str, timeout_s: float) -> str:
    """Wait for `process` (killing it after `timeout_s`); its stderr."""
    try:
        process.wait(timeout=timeout_s)
    finally:
        stop(process)
    return (tmp_path / f"{tag}.err").read_text()


def children(pid: int) -> list[int]:
    """Live processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            rest = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(rest[1]) == pid and rest[0] != b"Z":
            found.append(int(entry.name))
    return found


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def dask_workers(referee: int) -> list[int]:
    """The worker processes a `--cluster local:N` referee spawned."""
    return [pid for pid in children(referee) if "multiprocessing.spawn" in cmdline(pid)]


def open_files(pid: int) -> list[str]:
    """What the file descriptors of `pid` point at now."""
    found = []
    with contextlib.suppress(OSError):
        for fd in (Path("/proc") / str(pid) / "fd").iterdir():
            with contextlib.suppress(OSError):
                found.append(os.readlink(fd))
    return found


def games_in_flight(worker: int) -> list[Path]:
    """The logs a worker process is writing now: one per game it is playing."""
    return [
        Path(f)
        for f in open_files(worker)
        if re.search(r"/referee-[^/]+/[0-9a-f]{16}/logs/g\d+\.jsonl$", f)
    ]


def just_begun(log: Path, name: str) -> bool:
    """The game of `log` has the bot `name` and has had few decisions yet."""
    try:
        lines = log.read_bytes().splitlines()
    except OSError:
        return False
    if not lines or len(lines) > 4:
        return False
    try:
        header = json.loads(lines[0])
    except ValueError:
        return False
    return name in [b["name"] for b in header["bots"]]


def listening_addresses(pid: int) -> set[str]:
    """`tcp://127.0.0.1:PORT` for each TCP port `pid` listens on, read from /proc."""
    inodes = {f[len("socket:[") : -1] for f in open_files(pid) if f.startswith("socket:[")}
    found = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in (Path("/proc/net") / table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                    found.add(f"tcp://127.0.0.1:{int(fields[1].rsplit(':', 1)[1], 16)}")
    return found


def placed(db: Path) -> dict[int, str]:
    """The placements recorded so far, read without writing (empty before the table)."""
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return dict(conn.execute("SELECT idx, worker FROM placements").fetchall())
    except sqlite3.OperationalError:
        return {}


@contextlib.contextmanager
def busy_port(port: int) -> Iterator[None]:
    """`port` on 127.0.0.1 taken for the duration (by us, or already by another process)."""
    sock = socket.socket()
    try:
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
        yield
    finally:
        sock.close()


def with_resources(path: Path, name: str, table: str) -> Path:
    """`path` with `resources = TABLE` added to the bot `name`."""
    text = path.read_text()
    line = f'name = "{name}"\n'
    assert line in text
    path.write_text(text.replace(line, f"{line}resources = {table}\n"))
    return path


def worker_folders(path: Path) -> list[Path]:
    """The folders workers of this machine keep for the league of `path` now."""
    digest = league_blob(load_config(path)).digest
    scratch = Path(tempfile.gettempdir()) / "dask-scratch-space"
    return sorted(scratch.glob(f"worker-*/referee-*/{digest}"))


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


# ---------------------------------------------------------------- same seeds, same standings


def test_a_local_cluster_gives_the_same_standings_as_one_machine(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token), bot_seed_key=KEY_HEX, deal_key=DEAL_KEY_HEX)
    out = tmp_path / "cluster"
    process = start_cli(
        ["league", str(path), "--out", str(out), "-q", "--cluster", "local:2"], tmp_path, "run"
    )
    try:
        stderr = finish(process, tmp_path, "run", 120)
        assert process.returncode == 0, stderr
        assert_none_left(token, timeout_s=10)
    finally:
        kill_all(processes_with(token))
    expected, expected_outcomes = reference(path, tmp_path / "whole")
    assert_none_left(token)

    records = ledger_records(out)
    assert [r.idx for r in records] == list(range(24))
    assert outcomes(records) == expected_outcomes
    assert core(json.loads((out / "standings.json").read_text())) == expected
    check_logs(records, out / "logs")
    assert not list((out / "logs").glob(".*.part"))
    # Every game says which worker played it; with 24 games both workers had some.
    where = placements(out)
    assert sorted(where) == list(range(24))
    assert all(w.startswith("tcp://127.0.0.1:") for w in where.values()), where
    assert len(set(where.values())) == 2, Counter(where.values())
    for suffix in ("csv", "md", "svg"):
        assert (out / f"standings.{suffix}").stat().st_size > 0
    said = (tmp_path / "run.out").read_text()
    assert "standings written to" in said
    assert re.search(r"cluster local:2: 24 games in \d+ tasks on 2 workers", said), said
    assert worker_folders(path) == []  # the workers removed theirs when they ended


# ---------------------------------------------------------------- a worker lost mid-league


def test_a_worker_killed_mid_game_costs_no_game(tmp_path: Path) -> None:
    token = new_token()
    bots = [*standard_bots(token)[:3], inline("slow", SLOW, token)]
    path = write_league(tmp_path, bots, bot_seed_key=KEY_HEX, deal_key=DEAL_KEY_HEX)
    out = tmp_path / "cluster"
    db = out / "league.db"
    total = 24
    process = start_cli(
        ["league", str(path), "--out", str(out), "-q", "--cluster", "local:2"], tmp_path, "run"
    )
    victim: dict[str, Any] = {}

    def ready_to_kill() -> bool:
        # A worker that has a recorded game, and has just begun one with the slow bot:
        # that one cannot end in the moment it takes to kill the worker.
        if process.poll() is not None:
            return True
        recorded = placed(db)
        for worker in dask_workers(process.pid):
            addresses = listening_addresses(worker) & set(recorded.values())
            playing = [log for log in games_in_flight(worker) if just_begun(log, "slow")]
            if addresses and playing:
                victim.update(pid=worker, addresses=addresses, playing=playing)
                return True
        return False

    try:
        poll(ready_to_kill, 60, "a worker with a recorded game and a game in flight")
        assert process.poll() is None, "the league ended before the kill"
        os.kill(victim["pid"], signal.SIGKILL)
        recorded_at_kill = recorded_count(db)
        stderr = finish(process, tmp_path, "run", 120)
        assert process.returncode == 0, stderr
        # The coordinator says which worker left, and counts it at the end.
        gone = [a for a in victim["addresses"] if f"worker {a} left the cluster" in stderr]
        assert gone, stderr
        said = (tmp_path / "run.out").read_text()
        # Every worker that left is counted, the victim among them. On a loaded machine
        # Dask may also drop a live worker that missed its heartbeats: counted the same.
        left = set(re.findall(r"worker (\S+) left the cluster", stderr))
        counted = re.search(
            r"cluster local:2: 24 games in \d+ tasks on \d workers, (\d+) lost", said
        )
        assert counted is not None, said
        assert int(counted[1]) == len(left) >= 1, (said, stderr)
        # The killed worker's bots end when their keepers see its sockets close.
        assert_none_left(token, timeout_s=10)
        # The others remove their folders; SIGKILL leaves the killed worker no chance,
        # and its folder (in Dask's scratch space) is purged by the next worker to start,
        # which is usually its own restart, but not if the league ended first.
        left_behind = worker_folders(path)
        assert left_behind in ([], [victim["playing"][0].parents[1]])
    finally:
        stop(process)
        kill_all(processes_with(token))
        for folder in worker_folders(path):
            shutil.rmtree(folder.parent, ignore_errors=True)
    assert recorded_at_kill < total
    expected, expected_outcomes = reference(path, tmp_path / "whole")
    assert_none_left(token)

    records = ledger_records(out)
    assert [r.idx for r in records] == list(range(total))
    assert Counter(r.game_id for r in records).most_common(1)[0][1] == 1
    assert outcomes(records) == expected_outcomes
    assert core(json.loads((out / "standings.json").read_text())) == expected
    check_logs(records, out / "logs")
    assert not list((out / "logs").glob(".*.part"))
    # The game the killed worker was playing was played again, on another worker.
    where = placements(out)
    assert sorted(where) == list(range(total))
    lost = [p.stem for p in victim["playing"]]
    by_id = {r.game_id: r.idx for r in records}
    assert all(where[by_id[game]] not in victim["addresses"] for game in lost), (lost, where)
    assert set(where.values()) & victim["addresses"]
    # Two workers at least; a third address when the restarted worker got games in time.
    assert len(set(where.values())) >= 2, Counter(where.values())
    # The bots' stderr is kept per worker: NAME-N@HOST-PORT.stderr.
    tags = {worker_tag(w) for w in where.values()}
    files = sorted((out / "stderr").glob("slow-*.stderr"))
    assert files
    for f in files:
        match = re.fullmatch(r"slow-\d+@(.+)\.stderr", f.name)
        assert match and match[1] in tags, f.name
        assert re.fullmatch(r"(started \d+\n)+", f.read_text()), f.read_text()


# ---------------------------------------------------------------- refused before any game


def test_a_resource_no_worker_offers_is_refused_before_any_game(tmp_path: Path) -> None:
    token = new_token()
    path = with_resources(write_league(tmp_path, standard_bots(token)), "greedy", "{ GPU = 1 }")
    out = tmp_path / "out"
    # Another cluster on this machine may hold the scheduler's default HTTP port; hold it
    # here, so that the test always sees what a user running two leagues at once sees.
    with busy_port(DASHBOARD_PORT):
        process = start_cli(
            ["league", str(path), "--out", str(out), "-q", "--cluster", "local:2"],
            tmp_path,
            "run",
        )
        try:
            stderr = finish(process, tmp_path, "run", 60)
        finally:
            kill_all(processes_with(token))
    assert process.returncode == 2, stderr
    lines = error_lines(stderr)
    assert lines[-1].startswith("referee: error: bot[2].resources: 'greedy' needs GPU=1"), stderr
    assert "no worker of local:2 offers it" in lines[-1]
    assert not (out / "league.db").exists() or recorded_count(out / "league.db") == 0
    assert not (out / "logs").exists() or not list((out / "logs").iterdir())
    assert processes_with(token) == []
    assert len(lines) == 1, stderr  # no Dask noise, even with port 8787 taken


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nonsense", "--cluster 'nonsense': expected local:N or a scheduler address"),
        ("local:0", "--cluster local:0: a local cluster needs at least 1 worker"),
        ("local:", "--cluster 'local:': expected local:N"),
    ],
)
def test_a_bad_cluster_option_is_a_one_line_error(
    tmp_path: Path, target: str, message: str
) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    result = subprocess.run(
        [REFEREE, "league", str(path), "--out", str(tmp_path / "out"), "--cluster", target],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith(f"referee: error: {message}"), result.stderr
    assert not (tmp_path / "out").exists()
    assert processes_with(token) == []


def test_an_unreachable_scheduler_is_a_one_line_error(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    start = time.monotonic()
    result = subprocess.run(
        [
            REFEREE,
            "league",
            str(path),
            "--out",
            str(tmp_path / "out"),
            "--cluster",
            "tcp://127.0.0.1:1",
        ],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - start
    assert result.returncode == 2, result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "referee: error: --cluster tcp://127.0.0.1:1: cannot reach the scheduler"
    )
    # A refused connection is said at once (Dask's client would retry for its 10 s
    # connect timeout): starting Python and the referee on a loaded machine is the rest.
    assert "Connection refused" in lines[0]
    assert took < 30, took
    assert not (tmp_path / "out" / "league.db").exists()
    assert processes_with(token) == []


# ---------------------------------------------------------------- Ctrl-C and resume


def test_ctrl_c_on_a_cluster_league_resumes_with_the_cluster(tmp_path: Path) -> None:
    token = new_token()
    path, gate, marks = gated_league(tmp_path, token)
    out = tmp_path / "out"
    logs = out / "logs"
    # Ctrl-C in a terminal signals the whole foreground process group: the referee, its
    # Dask workers and every bot keeper.
    with (tmp_path / "cut.out").open("wb") as stdout, (tmp_path / "cut.err").open("wb") as stderr:
        process = subprocess.Popen(
            [REFEREE, "league", str(path), "--out", str(out), "--cluster", "local:2"],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=ENV,
            cwd=tmp_path,
            start_new_session=True,
        )
    try:
        # Game 1 (no gate bot) is recorded; games with the gate bot wait, one per worker.
        poll(
            lambda: len(list(marks.iterdir())) >= 2 and recorded_count(out / "league.db") >= 1,
            60,
            "two blocked games and one recorded",
        )
        os.killpg(process.pid, signal.SIGINT)
        returncode = process.wait(timeout=60)
        left = processes_with(token)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        kill_all(processes_with(token))
    interrupted = (tmp_path / "cut.err").read_text()
    assert returncode == 130, interrupted
    assert left == [], "bots outlived the referee"
    resume_line = f"referee league {path} --out {out} --resume --cluster local:2"
    assert interrupted.rstrip().endswith(f"Resume with: {resume_line}"), interrupted
    assert "interrupted" in interrupted
    records = ledger_records(out)
    assert records and all("gate" not in r.seats for r in records)
    # A game on a worker is written whole when it ends, or not at all: no partial logs.
    assert sorted(p.name for p in logs.iterdir()) == [f"{r.game_id}.jsonl.gz" for r in records]
    assert not (out / "standings.json").exists()
    kept = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in logs.iterdir()}
    left_behind = worker_folders(path)

    # Resume exactly as printed, with the gate open.
    gate.touch()
    try:
        resumed = subprocess.run(
            shlex.split(resume_line),
            env=ENV,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert_none_left(token, timeout_s=10)
    finally:
        kill_all(processes_with(token))
        for folder in worker_folders(path):
            shutil.rmtree(folder.parent, ignore_errors=True)
    assert resumed.returncode == 0, resumed.stderr
    records = ledger_records(out)
    assert [r.idx for r in records] == list(range(24))
    assert sorted(placements(out)) == list(range(24))
    check_logs(records, logs)
    # The games recorded before Ctrl-C were not played again.
    assert {p: ((logs / p).stat().st_mtime_ns, (logs / p).read_bytes()) for p in kept} == kept
    expected, expected_outcomes = reference(path, tmp_path / "whole", *secrets_of(out))
    assert outcomes(records) == expected_outcomes
    assert core(json.loads((out / "standings.json").read_text())) == expected
    # Workers ended during a game leave nothing behind: their folders are Dask's.
    assert left_behind == []


# ---------------------------------------------------------------- no Dask without --cluster

# Runs the league argv[1] into argv[2] through the command line, in this process, then
# prints the Dask modules it imported.
NO_DASK = """
import json, sys
from click.testing import CliRunner
from referee.cli import main
result = CliRunner().invoke(main, ["league", sys.argv[1], "--out", sys.argv[2], "-q"])
assert result.exit_code == 0, result.output
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("distributed", "dask"))
print(json.dumps(loaded))
"""


def test_a_league_without_cluster_never_imports_dask(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(
        tmp_path, [first("first", token), sample("greedy", "greedy_bot.py", token)], table=2
    )
    with no_process_left(token):
        found = subprocess.run(
            [PY, "-c", NO_DASK, str(path), str(tmp_path / "out")],
            env=ENV,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == []
    assert recorded_count(tmp_path / "out" / "league.db") == 4
    assert placements(tmp_path / "out") == {}


# Runs the command line with argv[1:] as if Dask distributed were not installed.
WITHOUT_DASK = """
import sys
sys.modules["distributed"] = None  # `import distributed` raises ImportError
from referee.cli import main
main(sys.argv[1:])
"""


def test_cluster_without_dask_installed_is_a_one_line_error(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    result = subprocess.run(
        [
            PY,
            "-c",
            WITHOUT_DASK,
            "league",
            str(path),
            "--out",
            str(tmp_path / "out"),
            "--cluster",
            "local:1",
        ],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr) == [
        "referee: error: --cluster needs Dask distributed: "
        "pip install 'mexican-train-referee[cluster]'"
    ]
    assert not (tmp_path / "out" / "league.db").exists()
    assert processes_with(token) == []


# ---------------------------------------------------------------- the parts, one by one


def test_cluster_targets() -> None:
    for good in (
        "local:1",
        "local:12",
        "tcp://10.0.0.5:8786",
        "scheduler.lan:8786",
        "tls://[::1]:8786",
    ):
        assert check_target(good) == good
    for bad in ("local:0", "local:", "local:x", "nonsense", "tcp://host", "http://h:1", ""):
        with pytest.raises(ClusterError):
            check_target(bad)


def test_worker_tags_are_file_name_parts() -> None:
    assert worker_tag("tcp://10.0.0.5:40123") == "10.0.0.5-40123"
    assert worker_tag("tls://[::1]:8786") == "1-8786"
    assert worker_tag("inproc://10.0.0.5/123/4") == "10.0.0.5-123-4"


def test_a_game_needs_what_its_seats_need_together(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    with_resources(path, "r1", "{ GPU = 1, memory = 2.5 }")
    with_resources(path, "r2", "{ GPU = 0.5 }")
    config = load_config(path)
    assert needs(config, ["r1", "r2", "greedy"]) == {"GPU": 1.5, "memory": 2.5}
    assert needs(config, ["greedy", "first"]) == {}
    assert needs(config, ["r2", "first", "r2"]) == {"GPU": 1.0}


class FakeClient:
    """What `Cluster.check` asks of a Dask client: the workers and a run on each."""

    def __init__(self, offers: list[dict[str, float]]) -> None:
        self.offers = offers

    def scheduler_info(self, n_workers: int = -1) -> dict[str, Any]:
        return {
            "workers": {
                f"tcp://10.0.0.{i}:4000": {"nthreads": 1, "resources": o}
                for i, o in enumerate(self.offers)
            }
        }

    def run(self, function: Any, *args: Any) -> dict[str, str]:
        return {address: "" for address in self.scheduler_info()["workers"]}


def test_the_resource_error_names_the_bot_the_need_and_what_workers_offer(
    tmp_path: Path,
) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    with_resources(path, "r1", "{ GPU = 1 }")
    with_resources(path, "r2", "{ TPU = 2 }")
    config = load_config(path)
    blob = league_blob(config)
    games = schedule(config, bytes(32))
    offers: list[dict[str, float]] = [{"GPU": 1.0}, {}, {"GPU": 1.0}]
    local = Cluster("local:3", FakeClient(offers), local=object())  # no waiting for joiners
    first_game = next(g for g in games if "r2" in g.seats)
    assert "r1" in first_game.seats  # the first game that cannot run has both
    index = [b.name for b in config.bots].index("r1")
    with pytest.raises(ClusterError) as caught:
        local.check(config, blob, games)
    assert str(caught.value) == (
        f"bot[{index}].resources: a game of r1, r2 needs GPU=1, TPU=2, but no worker of "
        "local:3 offers it (workers offer: GPU=1); start workers with --resources, e.g. "
        'dask worker ADDRESS --resources "GPU=1 TPU=2"'
    )
    # Offered everywhere it is needed: the check passes.
    Cluster("local:1", FakeClient([{"GPU": 1.0, "TPU": 2.0}]), local=object()).check(
        config, blob, games
    )


# ---------------------------------------------------------------- [cluster] bot_root


def with_raw(blob: LeagueBlob, raw: dict[str, Any]) -> LeagueBlob:
    """`blob` for another parsed league file, with the digest a coordinator would give it."""
    changed = msgspec.structs.replace(blob, raw=raw)
    return msgspec.structs.replace(changed, digest=remote._blob_digest(changed, code_digest()))


def test_bot_root_maps_the_league_folder_to_the_workers_copy(tmp_path: Path) -> None:
    """The coordinator's league folder is at another place on the workers: absolute paths
    under it move to `bot_root`, relative ones are taken from `bot_root`."""
    here, there = tmp_path / "coordinator", tmp_path / "worker"
    (here / "bots").mkdir(parents=True)
    script = here / "bots" / "run.sh"
    script.write_text("#!/bin/sh\nexec true\n")
    script.chmod(0o755)
    (here / "bots" / "play.py").write_text("")
    (here / "only_here.sh").write_text("#!/bin/sh\n")
    (here / "only_here.sh").chmod(0o755)
    bots = [
        {"name": "absolute", "command": [str(script), "--fast"]},
        {"name": "argument", "command": [PY, str(here / "bots" / "play.py")], "cwd": "bots"},
        {"name": "relative", "command": ["./run.sh"], "cwd": "bots"},
        {"name": "elsewhere", "command": [PY, "/opt/elsewhere/bot.py"]},
        {"name": "missing", "command": [str(here / "only_here.sh")]},
    ]
    path = write_league(here, bots, table=2)
    path.write_text(path.read_text() + f'\n[cluster]\nbot_root = "{there}"\n')
    blob = league_blob(load_config(path))
    # The worker has a copy of the folder without only_here.sh; the coordinator's
    # folder does not exist there.
    shutil.copytree(here / "bots", there / "bots")
    shutil.rmtree(here)
    found = with_raw(blob, dict(blob.raw, bot=blob.raw["bot"][:4]))
    config = worker_config(found)
    by = {b.name: b.spec for b in config.bots}
    assert by["absolute"].argv == (str(there / "bots" / "run.sh"), "--fast")
    assert by["absolute"].cwd == str(there)
    assert by["argument"].argv == (PY, str(there / "bots" / "play.py"))
    assert by["argument"].cwd == str(there / "bots")
    assert by["relative"].argv == ("./run.sh",)
    assert by["relative"].cwd == str(there / "bots")
    assert by["elsewhere"].argv == (PY, "/opt/elsewhere/bot.py")  # not under the folder
    assert config.path == Path(blob.path)

    with pytest.raises(ConfigError, match=r"^bot\[4\]\.command: cannot start '.*only_here\.sh'"):
        worker_config(blob)
    # The same, as the preflight every worker runs before the league says it.
    assert check_worker(msgspec.msgpack.encode(found)) == ""
    problem = check_worker(msgspec.msgpack.encode(blob))
    assert problem.startswith("bot[4].command: cannot start"), problem


def test_a_worker_with_other_referee_code_refuses_the_league(tmp_path: Path) -> None:
    token = new_token()
    blob = league_blob(load_config(write_league(tmp_path, standard_bots(token))))
    assert check_worker(msgspec.msgpack.encode(blob)) == ""
    other = msgspec.structs.replace(blob, digest="0" * 16)
    assert check_worker(msgspec.msgpack.encode(other)).startswith("runs another referee")


def test_workers_sandbox_as_the_coordinator_decided_and_check_the_bots_folders(
    tmp_path: Path,
) -> None:
    problem = check_bwrap()
    if problem is not None:
        pytest.skip(f"SANDBOX TEST SKIPPED: bubblewrap cannot sandbox here: {problem}")
    token = new_token()
    blob = league_blob(load_config(write_league(tmp_path, standard_bots(token))))
    # "auto" is decided once, on the coordinator, and the workers follow it: the
    # standings' record of the sandbox holds for every game, wherever it was played.
    assert blob.sandbox_auto == "bwrap"
    bare = msgspec.structs.replace(blob, sandbox_auto="none")
    bare = msgspec.structs.replace(bare, digest=remote._blob_digest(bare, code_digest()))
    assert {b.spec.sandbox for b in worker_config(bare).bots} == {"none"}
    assert {b.spec.sandbox for b in worker_config(blob).bots} == {"bwrap"}
    # A worker walks the bots' folders afresh for each league, as the coordinator does.
    os.mkfifo(tmp_path / "pipe")
    assert check_worker(msgspec.msgpack.encode(blob)) == (
        f"bot[0] (r1): {tmp_path / 'pipe'} is a FIFO in {tmp_path}, a folder the bot sees: a "
        "read-only view does not close it, and bots that see it could talk through it; remove it"
    )
    assert check_worker(msgspec.msgpack.encode(bare)) == ""  # not sandboxed: not its business


def test_without_bot_root_workers_see_the_league_folder_where_it_is(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    blob = league_blob(load_config(path))
    config = worker_config(blob)
    assert [b.spec for b in config.bots] == [b.spec for b in load_config(path).bots]
    moved = msgspec.structs.replace(blob, path=str(tmp_path / "nowhere" / "league.toml"))
    moved = msgspec.structs.replace(moved, digest=remote._blob_digest(moved, code_digest()))
    with pytest.raises(ConfigError, match=r"^bot\[0\]\.cwd: .*nowhere is not a folder"):
        worker_config(moved)


def test_an_absolute_cwd_under_the_league_folder_is_mapped_too(tmp_path: Path) -> None:
    here, there = tmp_path / "coordinator", tmp_path / "worker"
    (here / "bots").mkdir(parents=True)
    bots = [
        {"name": "a", "command": [PY, "bot.py"], "cwd": str(here / "bots")},
        {"name": "b", "command": [PY, "bot.py"], "cwd": "bots"},
    ]
    path = write_league(here, bots, table=2)
    path.write_text(path.read_text() + f'\n[cluster]\nbot_root = "{there}"\n')
    blob = league_blob(load_config(path))
    shutil.copytree(here, there)
    shutil.rmtree(here)
    config = worker_config(blob)
    assert [b.spec.cwd for b in config.bots] == [str(there / "bots")] * 2


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'bot_root = "/srv/league"\nroot = "/x"',
            r"^cluster\.root: unknown key; expected one of bot_root$",
        ),
        ('bot_root = "srv/league"', r"^cluster\.bot_root: 'srv/league' must be an absolute path$"),
        ("bot_root = 3", r"^cluster\.bot_root: "),
    ],
)
def test_a_bad_cluster_table_is_refused(tmp_path: Path, table: str, message: str) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    data = tomllib.loads(path.read_text() + f"\n[cluster]\n{table}\n")
    with pytest.raises(ConfigError, match=message):
        parse_config(data, path)


def test_bot_root_does_not_change_the_league_on_the_coordinator(tmp_path: Path) -> None:
    token = new_token()
    path = write_league(tmp_path, standard_bots(token))
    plain = load_config(path)
    path.write_text(path.read_text() + '\n[cluster]\nbot_root = "/srv/league"\n')
    rooted = load_config(path)
    assert rooted.bot_root == "/srv/league"
    assert [b.spec for b in rooted.bots] == [b.spec for b in plain.bots]
