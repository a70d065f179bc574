"""Where the referee's own disk is full, the referee stops nothing it need not stop: a
bot whose stderr file cannot be written plays on.

Without root, the stderr file is a symlink to /dev/full, whose every write fails with
ENOSPC.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from protocol import messages as m
from referee.gamelog import read_log
from referee.process import BotSpec
from referee.rules import preset
from referee.runner import run_game
from tests.league.test_run import ROOT

FULL = Path("/dev/full")
BOTS = ROOT / "tests" / "bots"


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
