"""A league on a real scheduler and real workers started with the `dask` command,
as an organiser would: resources route a bot's games to the workers that offer
them, and a worker that cannot start a bot stops the league before any game.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.bots.sandbox import check_bwrap
from referee.league.ledger import Ledger
from tests._procs import assert_none_left, new_token

BIN = Path(sys.executable).parent
DASK = str(BIN / "dask")
REFEREE = str(BIN / "referee")
ROOT = Path(__file__).resolve().parents[2]
RANDOM = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
GREEDY = [sys.executable, str(ROOT / "sample_bots" / "greedy_bot.py")]
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def dask_cluster(tmp: Path, workers: list[list[str]]) -> Iterator[tuple[str, list[str]]]:
    """A scheduler and one worker per entry of `workers` (extra `dask worker` options),
    each on a known port: yields the scheduler's and the workers' addresses."""
    file = tmp / "scheduler.json"
    procs = [
        subprocess.Popen(
            [
                DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(file),
            ],
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    ]
    try:
        deadline = time.monotonic() + 30
        while not (file.exists() and file.read_text().strip()):
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.05)
        time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        addresses = []
        for extra in workers:
            port = free_port()
            addresses.append(f"tcp://127.0.0.1:{port}")
            procs.append(
                subprocess.Popen(
                    [
                        DASK,
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--worker-port",
                        str(port),
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        *extra,
                    ],
                    env=ENV,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        yield address, addresses
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def league(folder: Path, extra_a: str = "", cluster: str = "", token: str = "t") -> Path:
    """Bots a (with `extra_a`), b, c at tables of two, one deal: three games. Each
    bot's command line ends with `token`, to find its processes."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "league.toml"
    path.write_text(
        f"""{cluster}
[league]
name = "setup"
table = 2
deals = 1
duplicate = false
seed = 3
out = "out"
[rules]
max_pip = 6
rounds = "single"
[[bot]]
name = "a"
command = {json.dumps([*RANDOM, token])}
{extra_a}
[[bot]]
name = "b"
command = {json.dumps([*GREEDY, token])}
[[bot]]
name = "c"
command = {json.dumps([*RANDOM, token])}
"""
    )
    return path


def run(path: Path, address: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REFEREE, "league", str(path), "-q", "--cluster", address],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_resources_send_a_bot_to_the_workers_that_offer_them(tmp_path: Path) -> None:
    token = new_token()
    with dask_cluster(tmp_path, [["--resources", "GPU=1"], []]) as (address, workers):
        gpu, plain = workers
        done = run(league(tmp_path / "l", "resources = { GPU = 1 }", token=token), address)
        # The workers live on, but the league's bots are told to leave when it ends.
        assert_none_left(token, timeout_s=10)
    assert done.returncode == 0, done.stderr
    ledger = Ledger(tmp_path / "l" / "out" / "league.db")
    try:
        records, placements = ledger.records(), ledger.placements()
    finally:
        ledger.close()
    assert len(records) == 3 and set(placements) == {0, 1, 2}
    with_a = [placements[r.idx] for r in records if "a" in r.seats]
    assert len(with_a) == 2 and set(with_a) == {gpu}, placements
    assert set(placements.values()) <= {gpu, plain}


def test_a_worker_that_cannot_start_a_bot_stops_the_league_before_any_game(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "not-here"
    path = league(tmp_path / "l", cluster=f'[cluster]\nbot_root = "{missing}"\n')
    with dask_cluster(tmp_path, [[]]) as (address, workers):
        done = run(path, address)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"referee: error: worker {workers[0]}: bot[0].cwd: {missing}")
    assert not (tmp_path / "l" / "out" / "logs").exists() or not any(
        (tmp_path / "l" / "out" / "logs").iterdir()
    )


# ---------------------------------------------------------------- the sandbox on workers

SPY = str(ROOT / "tests" / "bots" / "spy.py")
SANDBOX_PROBLEM = check_bwrap()


def spy_league(folder: Path, token: str) -> Path:
    """Two spies at one table (tests/bots/spy.py): one game."""
    folder.mkdir(parents=True)
    ports = [free_port(), free_port()]
    log = folder / "out" / "logs" / "g00001.jsonl"
    bots = ""
    for i, role in enumerate("ab"):
        argv = [sys.executable, SPY, token, role, str(ports[i]), str(ports[1 - i]), str(log)]
        argv.append(str(ROOT / "sample_bots"))
        bots += f'[[bot]]\nname = "spy-{role}"\ncommand = {json.dumps(argv)}\n'
    path = folder / "league.toml"
    path.write_text(
        '[league]\nname = "spies"\ntable = 2\ndeals = 1\nduplicate = false\nseed = 7\n'
        'out = "out"\n[rules]\nrounds = "single"\n[time]\nmove_ms = 3000\n' + bots
    )
    return path


def channels(out: Path) -> dict[str, bool]:
    """What the spies say came through, from the stderr the workers sent back."""
    got: dict[str, bool] = {}
    for path in (out / "stderr").glob("spy-*@*.stderr"):
        for line in path.read_text().splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                got[entry["channel"]] = got.get(entry["channel"], False) or entry["got"]
    return got


def test_bots_on_workers_are_sandboxed_and_their_stderr_comes_back(tmp_path: Path) -> None:
    if SANDBOX_PROBLEM is not None:
        if os.environ.get("CI"):
            pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {SANDBOX_PROBLEM}")
        pytest.skip(f"SANDBOX TEST SKIPPED: bubblewrap cannot sandbox here: {SANDBOX_PROBLEM}")
    got = {}
    # A league sandboxes by default: "open" says none, "boxed" asks for bwrap explicitly.
    for mode, extra in (("open", ["--sandbox", "none"]), ("boxed", ["--sandbox", "bwrap"])):
        token = new_token()  # each run its own: what one run's spies leave, the next ignores
        try:
            path = spy_league(tmp_path / mode, token)
            done = subprocess.run(
                [REFEREE, "league", str(path), "-q", "--cluster", "local:1", *extra],
                env=ENV,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            got[mode] = channels(tmp_path / mode / "out")
            assert_none_left(token, timeout_s=10)
        finally:
            bots = ROOT / "tests" / "bots"
            for leftover in [*Path("/tmp").glob(f"spy-{token}-*"), *bots.glob(f"spy-{token}-*")]:
                leftover.unlink(missing_ok=True)
    assert len(got["open"]) == 8 and set(got["boxed"]) == set(got["open"]), got
    for channel in ("tmp file", "tcp", "other folder"):
        assert got["open"][channel], got  # on a worker too, without a sandbox
    assert not any(got["boxed"].values()), f"channels open inside the sandbox: {got['boxed']}"
