"""The referee's own stalls are not the bots' time: real referees, stopped or overloaded.

A `referee play` process is stopped (SIGSTOP) for 300 ms of every second while
two bots answer quickly; a league plays 64 games at once on one event loop with
100 ms moves. In both, a reply that waited while the referee itself was not
running must cost its bot nothing, and the log must say how late the referee was.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import trio
from rich.console import Console

from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.run import run_league
from referee.logs.gamelog import read_log
from referee.logs.replay_text import select, show
from tests._procs import assert_none_left, new_token

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
FAST_BOT = ROOT / "bench" / "fast_bot.py"  # answers at once, imports next to nothing
REFEREE = str(Path(PY).parent / "referee")

MOVE_MS, BANK_MS, GRACE_MS = 50, 400, 100
STOP_S, EVERY_S = 0.3, 1.0


class Stopper(threading.Thread):
    """Stops a process for `STOP_S` of every `EVERY_S` once `ready()` says so, until it ends."""

    def __init__(self, proc: subprocess.Popen[bytes], ready: Path) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.ready = ready
        self.stops = 0

    def started(self) -> bool:
        try:
            return b'"decision"' in self.ready.read_bytes()
        except OSError:
            return False

    def run(self) -> None:
        while self.proc.poll() is None and not self.started():
            time.sleep(0.01)
        while self.proc.poll() is None:
            time.sleep(EVERY_S - STOP_S)
            try:
                os.kill(self.proc.pid, signal.SIGSTOP)
            except ProcessLookupError:
                return
            self.stops += 1
            try:
                time.sleep(STOP_S)
            finally:
                os.kill(self.proc.pid, signal.SIGCONT)


@pytest.mark.alone  # its subject is timing: other tests' load is not the referee's
def test_a_stopped_referee_charges_no_bot(tmp_path: Path) -> None:
    token = new_token()
    log_path = tmp_path / "game.jsonl"
    # Double-6, two bots that think 10 ms: some 180 decisions, two seconds of play,
    # nearly all of it spent waiting for a reply, where a stop lands.
    bots = [f"{name}={PY} {BOTS / 'bank_watch.py'} 0.01 {token}" for name in ("a", "b")]
    args = [REFEREE, "play", *bots, "--set", "max_pip=6", "--seed", "5", "--json", "-q"]
    args += ["--move-ms", str(MOVE_MS), "--bank-ms", str(BANK_MS), "--grace-ms", str(GRACE_MS)]
    args += ["--log", str(log_path)]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stopper = Stopper(proc, log_path)
    stopper.start()
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        stopper.join(timeout=5)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
    assert proc.returncode == 0, err.decode()
    assert stopper.stops >= 2, f"the game ended after {stopper.stops} stop(s)"
    result = json.loads(out)
    assert [s["faults"] for s in result["seats"]] == [[], []]

    log = read_log(log_path)
    budget = MOVE_MS + GRACE_MS
    assert all(d.latency_ms is not None for d in log.decisions)
    charged = [d.latency_ms or 0.0 for d in log.decisions]
    assert max(charged) < budget, f"a bot was charged {max(charged)} ms"
    # The stops were seen, and recorded where they fell, apart from what the bots are charged.
    late = [d.referee_late_ms for d in log.decisions if d.referee_late_ms]
    assert max(late) > 0.8 * STOP_S * 1000, late
    shown = "\n".join(show(log, select(log, None, None, None)))
    assert "referee late" in shown
    # The bots see the same: a request's bank never drops by more than a few milliseconds.
    for seat in (0, 1):
        banks = [
            int(line.split()[2])
            for line in (tmp_path / f"game-seat{seat}-{'ab'[seat]}.stderr").read_text().split("\n")
            if line.startswith("bank ")
        ]
        assert len(banks) > 50
        drops = [before - after for before, after in itertools.pairwise(banks)]
        assert max(drops) <= 5, f"seat {seat} lost {max(drops)} ms of bank in one decision"
    assert_none_left(token, [])


@pytest.mark.alone  # its subject is timing: other tests' load is not the referee's
def test_sixty_four_games_at_once_with_100_ms_moves_time_out_nobody(tmp_path: Path) -> None:
    # 64 two-seat games of one double-6 round, all at once on one event loop: 128 bot
    # processes start together and every decision has 150 ms (no bank). About ten
    # seconds on two busy cores, most of it starting the processes.
    token = new_token()
    bots = "".join(
        f'\n[[bot]]\nname = "{name}"\nsandbox = "none"\n'
        f"command = {json.dumps([PY, str(FAST_BOT), token])}\n"
        for name in ("a", "b")
    )
    league = tmp_path / "league.toml"
    league.write_text(
        '[league]\nname = "crowd"\ntable = 2\ndeals = 32\nduplicate = true\nseed = 5\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n'
        "[time]\nstartup_ms = 60000\nmove_ms = 100\nbank_ms = 0\ngrace_ms = 50\n" + bots,
        encoding="utf-8",
    )
    config = load_config(league, out=tmp_path / "out")
    console = Console(file=io.StringIO())
    try:
        trio.run(lambda: run_league(config, jobs=64, resume=False, console=console, quiet=True))
    finally:
        assert_none_left(token, [])
    ledger = Ledger(tmp_path / "out" / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    assert len(records) == 64
    assert [f for r in records for f in r.faults] == []
    logs = [read_log(Path(r.log_path)) for r in records]
    charged = [d.latency_ms or 0.0 for log in logs for d in log.decisions]
    assert max(charged) < 100 + 50
