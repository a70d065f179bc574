"""A kept process waits for its next game stopped: it played one seat rotation of a
deal and must not compute while another process of its bot plays the next (it could
signal the hands it saw through CPU timing). `tests/bots/spinner.py` keeps a thread
and a child busy: while idle in the pool every process of it is frozen (its freezer
cgroup says so where it has one, else each is stopped, state T), and the CPU time of
its tree does not grow; taken again it runs and answers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from referee.bots import cgroups
from referee.bots.keeper import descendants
from referee.bots.process import BotProcess
from referee.league.config import parse_config
from referee.league.pool import BotPool
from tests.league.test_run import PY

BOTS = Path(__file__).parents[1] / "bots"


def states(proc: BotProcess) -> list[str]:
    found = []
    for pid in descendants(proc.pid):
        with open(f"/proc/{pid}/stat", "rb") as handle:
            found.append(handle.read().rsplit(b")", 1)[1].split()[0].decode())
    return found


def cpu_ticks(proc: BotProcess) -> int:
    """User and system time of every thread below the bot keeper, in clock ticks."""
    total = 0
    for pid in descendants(proc.pid):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
async def test_an_idle_kept_process_is_stopped_until_its_next_game(
    tmp_path: Path, sandbox: str
) -> None:
    data = {
        "league": {"name": "idle", "table": 2, "out": str(tmp_path / "out")},
        "bot": [
            {"name": "spin", "command": [PY, str(BOTS / "spinner.py")], "sandbox": sandbox},
            {"name": "other", "command": [PY, str(BOTS / "spinner.py")], "sandbox": sandbox},
        ],
    }
    config = parse_config(data, tmp_path / "league.toml", check_programs=False)
    async with trio.open_nursery() as nursery:
        pool = BotPool(config, nursery, tmp_path)
        try:
            [(proc, why)] = await pool.acquire_all([config.bots[0]], 1)
            assert proc is not None, why
            await pool.release(config.bots[0], proc, healthy=True)
            assert pool.idle["spin"] == [proc]
            stopped = states(proc)
            if proc.groups.freezer is not None:
                assert stopped and cgroups.frozen(proc.groups.freezer)
            else:
                assert stopped and set(stopped) <= {"T", "t"}, stopped
            before = cpu_ticks(proc)
            await trio.sleep(0.5)  # what a spinning thread would use, were it running
            assert cpu_ticks(proc) == before
            [(again, why)] = await pool.acquire_all([config.bots[0]], 2)  # another deal
            assert again is proc, why  # reused: it answered its ping
            assert "T" not in states(proc)
            assert proc.groups.freezer is None or not cgroups.frozen(proc.groups.freezer)
        finally:
            await pool.close()
            nursery.cancel_scope.cancel()


async def test_a_kept_process_that_cannot_be_frozen_is_ended_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Freezing that does not succeed (no freezer cgroup, and pids that hop faster than
    # the SIGSTOP passes find them: tests/test_idle_hopper.py) ends the process: the
    # bot's next game gets a fresh one, and nothing of it runs while it would wait.
    data = {
        "league": {"name": "idle", "table": 2, "out": str(tmp_path / "out")},
        "bot": [
            {"name": "spin", "command": [PY, str(BOTS / "spinner.py")], "sandbox": "none"},
            {"name": "other", "command": [PY, str(BOTS / "spinner.py")], "sandbox": "none"},
        ],
    }
    config = parse_config(data, tmp_path / "league.toml", check_programs=False)

    async def cannot_freeze(self: BotProcess) -> bool:
        return False

    monkeypatch.setattr(BotProcess, "freeze", cannot_freeze)
    async with trio.open_nursery() as nursery:
        pool = BotPool(config, nursery, tmp_path)
        try:
            [(proc, why)] = await pool.acquire_all([config.bots[0]], 1)
            assert proc is not None, why
            await pool.release(config.bots[0], proc, healthy=True)
            assert pool.idle["spin"] == []
            assert proc.stopped.is_set() and proc.keeper_gone.is_set()
            assert descendants(proc.pid) == []
        finally:
            await pool.close()
            nursery.cancel_scope.cancel()
