"""A referee that dies or is interrupted mid-game leaves no bot process behind.

`referee play` runs as a real subprocess with a bot that forks a grandchild, one
that leaves a daemon (fork, setsid, fork: out of its process group), a bot that
ignores SIGTERM and a slow good bot (so the game is still on when the signal
comes). Once the log shows decisions, the referee gets SIGKILL (it cannot clean
up: each bot's keeper must notice its socket close and end everything below it,
and the referee's keeper its own socket and exit; tried with each bot in a cgroup
of its own and with the bot keepers as subreapers alone, REFEREE_CGROUP=off) or
SIGINT (Ctrl-C: the referee ends every bot itself, exits 130 and says the log is
incomplete). Either way no process carrying the test's token may remain.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.bots.cgroups import SWITCH as REFEREE_CGROUP
from referee.cli import main
from referee.logs.gamelog import read_log
from referee.logs.replay import verify
from tests._procs import (
    alive,
    assert_none_left,
    keepers_below,
    kill_all,
    new_token,
    processes_with,
    wait_for_none,
)

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
REFEREE = str(Path(PY).parent / "referee")
CLOCKS = ["--startup-ms", "3000", "--move-ms", "300", "--bank-ms", "300", "--grace-ms", "50"]


def _default_sigint() -> None:
    # A shell may start a background job with SIGINT ignored, and an ignored signal stays
    # ignored across exec; the referee must get Ctrl-C as a terminal would deliver it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    token: str
    log: Path
    out: Path
    err: Path


def start_referee(tmp_path: Path, cgroup: str = "on") -> Running:
    """`referee play` with two forking bots, one that ignores SIGTERM, and a slow one."""
    token = new_token()

    def bot(name: str, *args: str) -> str:
        return f"{name}={shlex.join([PY, str(BOTS / f'{name}.py'), *args, token])}"

    bots = [
        bot("grandchild"),
        bot("slow", "0.1"),  # a tenth of a second per move: the game lasts seconds
        bot("double_fork", "play"),
        bot("ignore_sigterm"),
    ]
    log = tmp_path / "game.jsonl"
    out, err = tmp_path / "referee.out", tmp_path / "referee.err"
    args = [REFEREE, "play", *bots, "--set", "max_pip=6", "--seed", "4", *CLOCKS]
    args += ["--log", str(log), "-q"]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=_default_sigint,
            env={**os.environ, REFEREE_CGROUP: cgroup},
        )
    return Running(process, token, log, out, err)


def wait_until_playing(running: Running, decisions: int = 3, timeout_s: float = 15.0) -> None:
    """Poll the log until it holds `decisions` decision lines (bots are all up by then)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert running.process.poll() is None, running.err.read_text()
        try:
            lines = running.log.read_bytes().splitlines()
        except FileNotFoundError:
            lines = []
        if sum(1 for line in lines if b'"type":"decision"' in line) >= decisions:
            return
        time.sleep(0.05)
    raise AssertionError("the game did not start in time")


def bot_processes(running: Running, expected: int = 6) -> list[int]:
    """Bots and grandchildren of this referee, found by the token: 4 bots and 2
    grandchildren (one in a session of its own), all up once the log shows decisions."""
    deadline = time.monotonic() + 5
    while len(found := processes_with(running.token)) < expected:
        assert time.monotonic() < deadline, f"only {len(found)} processes of the game found"
        time.sleep(0.05)
    return found


def log_is_incomplete(log_path: Path) -> None:
    lines = log_path.read_bytes().splitlines()
    assert b'"type":"footer"' not in b"\n".join(lines)
    assert json.loads(lines[0])["type"] == "header"
    log = read_log(log_path)
    assert not log.complete
    verdict = verify(log)
    assert verdict.ok, str(verdict.divergence)
    assert verdict.decisions == len(log.decisions) >= 3
    replayed = CliRunner().invoke(main, ["replay", str(log_path)])
    assert replayed.exit_code == 0, replayed.output
    assert "the log is INCOMPLETE" in replayed.stdout


# ---------------------------------------------------------------- SIGKILL


@pytest.mark.parametrize("cgroup", ["on", "off"])
def test_sigkill_of_the_referee_leaves_no_bot_process(tmp_path: Path, cgroup: str) -> None:
    running = start_referee(tmp_path, cgroup)
    try:
        wait_until_playing(running)
        before = bot_processes(running)
        assert len(before) >= 6
        # The referee's keeper and one bot keeper for each bot, and no more.
        keepers = keepers_below(running.process.pid)
        assert len(keepers) == 5
        os.kill(running.process.pid, signal.SIGKILL)
        assert running.process.wait(timeout=5) == -signal.SIGKILL
        # Nobody ends the bots now but their keepers, when their sockets reach end of file;
        # then the keepers themselves are gone.
        assert_none_left(running.token, timeout_s=5.0)
        assert wait_for_none(lambda: alive(keepers), timeout_s=5.0) == []
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
        kill_all(processes_with(running.token))
    log_is_incomplete(running.log)


# ---------------------------------------------------------------- Ctrl-C


@dataclass
class Interrupted:
    returncode: int
    stdout: str
    stderr: str
    log: Path
    left: list[int]
    seconds: float


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    """One game interrupted with SIGINT; the tests below each check one consequence."""
    running = start_referee(tmp_path_factory.mktemp("sigint"))
    try:
        wait_until_playing(running)
        assert len(bot_processes(running)) >= 6
        started = time.monotonic()
        running.process.send_signal(signal.SIGINT)
        returncode = running.process.wait(timeout=20)
        seconds = time.monotonic() - started
        # The referee itself ends every bot before it exits: nothing to wait for.
        left = processes_with(running.token)
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
        kill_all(processes_with(running.token))
    return Interrupted(
        returncode,
        running.out.read_text(),
        running.err.read_text(),
        running.log,
        left,
        seconds,
    )


def test_ctrl_c_ends_every_bot_process_before_the_referee_exits(interrupted: Interrupted) -> None:
    assert interrupted.left == []
    assert interrupted.seconds < 10  # bye-less stop: clean-exit wait, SIGTERM, SIGKILL


def test_ctrl_c_leaves_a_log_without_footer_that_replays_as_incomplete(
    interrupted: Interrupted,
) -> None:
    log_is_incomplete(interrupted.log)


def test_ctrl_c_exits_130_saying_the_log_is_incomplete(interrupted: Interrupted) -> None:
    tail = interrupted.stderr[-400:]
    assert interrupted.returncode == 130, f"exit status {interrupted.returncode}; stderr: {tail}"
    expected = f"referee: interrupted; every bot was ended; {interrupted.log} is incomplete\n"
    assert interrupted.stderr == expected
