"""A kept process waits for its next game stopped: it played one seat rotation of a
deal and must not compute while another process of its bot plays the next (it could
signal the hands it saw through CPU timing). `tests/bots/spinner.py` keeps a thread
and a child busy: while idle in the pool every process of it is stopped (state T),
and the CPU time of its tree does not grow; taken again it runs and answers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

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
            assert stopped and set(stopped) <= {"T", "t"}, stopped
            before = cpu_ticks(proc)
            await trio.sleep(0.5)  # what a spinning thread would use, were it running
            assert cpu_ticks(proc) == before
            [(again, why)] = await pool.acquire_all([config.bots[0]], 2)  # another deal
            assert again is proc, why  # reused: it answered its ping
            assert "T" not in states(proc)
        finally:
            await pool.close()
            nursery.cancel_scope.cancel()
