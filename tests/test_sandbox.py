"""The bubblewrap sandbox: two cooperating bots at one table try every channel to
pass each other their hands, and to read the referee's log and other bots'
folders. Without a sandbox the file and TCP channels work (the test has teeth);
with `bwrap` every channel fails and the game is the same. Where the machine
cannot sandbox, these tests skip loudly, and fail under CI.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from protocol.messages import TimeControl
from referee.bots.process import BotSpec
from referee.bots.sandbox import check_bwrap
from referee.play.runner import run_game
from referee.rules import preset
from tests._procs import assert_none_left, new_token

BOTS = Path(__file__).parent / "bots"
SAMPLES = Path(__file__).parents[1] / "sample_bots"
PROBLEM = check_bwrap()
needs_bwrap = pytest.mark.skipif(
    PROBLEM is not None and not os.environ.get("CI"),
    reason=f"SANDBOX TESTS SKIPPED: bubblewrap cannot sandbox here: {PROBLEM}",
)
CHANNELS = {
    "tmp file",
    "own folder file",
    "unix socket",
    "tcp",
    "shared memory",
    "signal",
    "game log",
    "other folder",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def spy_game(tmp_path: Path, sandbox: str) -> tuple[dict[str, bool], list[int], int]:
    """Play one game between two spies; what came through, the scores, the decisions."""
    if sandbox == "bwrap" and PROBLEM is not None:
        pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {PROBLEM}")
    token = new_token()
    log_path = tmp_path / "game.jsonl"
    ports = [free_port(), free_port()]
    specs = [
        BotSpec(
            name=f"spy-{role}",
            argv=(
                sys.executable,
                str(BOTS / "spy.py"),
                token,
                role,
                str(ports[i]),
                str(ports[1 - i]),
                str(log_path),
                str(SAMPLES),
            ),
            cwd=str(BOTS),  # its own folder, which the sandbox shows it, as in a league
            sandbox=sandbox,
        )
        for i, role in enumerate("ab")
    ]
    report = await run_game(
        specs,
        preset("standard", players=2, rounds="single"),
        7,
        game_id="spy",
        time=TimeControl(move_ms=3000, bank_ms=10000),
        log_path=log_path,
        stderr_dir=tmp_path,
        bot_seed_key=b"spy",
    )
    got: dict[str, bool] = {}
    for path in tmp_path.glob("*.stderr"):
        for line in path.read_text().splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                got[entry["channel"]] = got.get(entry["channel"], False) or entry["got"]
    for leftover in Path("/tmp").glob(f"spy-{token}-*"):
        leftover.unlink(missing_ok=True)
    for leftover in BOTS.glob(f"spy-{token}-*"):
        leftover.unlink(missing_ok=True)
    assert all(not faults for faults in report.result.faults), report.result.faults
    assert_none_left(token)
    return got, list(report.result.outcome.scores), report.result.decisions


async def test_without_a_sandbox_the_spies_get_through(tmp_path: Path) -> None:
    got, _, _ = await spy_game(tmp_path, "none")
    assert set(got) == CHANNELS  # every channel was tried
    for channel in ("tmp file", "tcp", "game log", "other folder"):
        assert got[channel], f"{channel} should work without a sandbox: {got}"


@needs_bwrap
async def test_with_bwrap_every_channel_fails_and_the_game_is_the_same(tmp_path: Path) -> None:
    (tmp_path / "open").mkdir()
    (tmp_path / "boxed").mkdir()
    open_got, open_scores, open_decisions = await spy_game(tmp_path / "open", "none")
    got, scores, decisions = await spy_game(tmp_path / "boxed", "bwrap")
    assert set(got) == CHANNELS
    assert not any(got.values()), f"channels open inside the sandbox: {got}"
    # Both spies play legal move 0 either way: the sandbox changes nothing in the game.
    assert (scores, decisions) == (open_scores, open_decisions)
    assert any(open_got.values())


@needs_bwrap
async def test_a_grandchild_does_not_outlive_a_sandboxed_bot(tmp_path: Path) -> None:
    if PROBLEM is not None:
        pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {PROBLEM}")
    token = new_token()
    specs = [
        BotSpec(
            "grandchild", (sys.executable, str(BOTS / "grandchild.py"), token), sandbox="bwrap"
        ),
        BotSpec("random", (sys.executable, str(SAMPLES / "random_bot.py"), token), sandbox="bwrap"),
    ]
    report = await run_game(
        specs,
        preset("standard", players=2, rounds="single"),
        3,
        game_id="gc",
        time=TimeControl(move_ms=3000, bank_ms=10000),
        log_path=tmp_path / "gc.jsonl",
    )
    assert report.result.decisions > 0
    assert_none_left(token)


def test_check_bot_reports_whether_sandboxing_works() -> None:
    from click.testing import CliRunner

    from referee.cli import main

    result = CliRunner().invoke(
        main,
        [
            "check-bot",
            "--sandbox",
            "bwrap",
            "--rules",
            "standard",
            "--",
            sys.executable,
            str(SAMPLES / "random_bot.py"),
        ],
    )
    if PROBLEM is None:
        assert "sandbox bwrap: works on this machine" in result.output
        assert result.exit_code == 0, result.output
    else:
        assert PROBLEM in result.output and result.exit_code == 1
