"""`referee check-bot` against real bot processes, each misbehaving in one way.

These run real processes in real time, so the clocks are small: 300 ms a move, a
300 ms bank, 2 s to start. Every test ends by making sure no process it started
(the bot, or anything the bot forked) is left running.
"""

from __future__ import annotations

import os
import re
import select
import signal
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from protocol import messages as m
from referee.bots.process import STDERR_CAP, BotSpec
from referee.cli import main
from referee.game import checkbot
from referee.game.checkbot import Check, battery, check_bot
from tests._procs import processes_with

BOTS = Path(__file__).parent / "bots"
GOOD = Path(__file__).parents[1] / "sample_bots" / "random_bot.py"
TIME = m.TimeControl(startup_ms=2000, move_ms=300, bank_ms=300)
PLAN = battery(["standard"])
HEAD = ["handshake", "version", "ping"]
TAIL = ["several games", "unknown fields", "bye"]


# ---------------------------------------------------------------- no process left behind


def wait_gone(pid: int, timeout_s: float) -> bool:
    """True once `pid` has ended (a SIGKILL just sent may take a moment to land)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        return bool(ready)
    finally:
        os.close(fd)


@dataclass
class Launcher:
    """Makes bot specs tagged with a unique token and remembers the pids started."""

    token: str = field(default_factory=lambda: f"test-token-{uuid.uuid4().hex}")
    pids: list[int] = field(default_factory=list)

    def argv(self, bot: str, *args: str) -> tuple[str, ...]:
        # The token rides at the end of the command line; the bots ignore it.
        path = GOOD if bot == "good" else BOTS / f"{bot}.py"
        return (sys.executable, str(path), *args, self.token)

    def spec(self, bot: str, *args: str) -> BotSpec:
        return BotSpec(name=bot, argv=self.argv(bot, *args))


@pytest.fixture
def launcher(monkeypatch: pytest.MonkeyPatch) -> Iterator[Launcher]:
    launch = Launcher()
    real_start = checkbot.start_bot

    async def start_and_record(spec, stderr_path=None):
        bot = await real_start(spec, stderr_path)
        launch.pids.append(bot.pid)
        return bot

    monkeypatch.setattr(checkbot, "start_bot", start_and_record)
    yield launch
    leftovers = [pid for pid in processes_with(launch.token) if not wait_gone(pid, 2.0)]
    for pid in leftovers:  # clean up before failing, so one failure does not leak
        os.kill(pid, signal.SIGKILL)
    assert leftovers == [], f"processes left running: {leftovers}"
    assert launch.pids, "no bot was started"
    # Each bot's keeper has ended too (the referee's keeper reaps it a moment later).
    assert all(wait_gone(pid, 2.0) for pid in launch.pids)


# ---------------------------------------------------------------- helpers


async def run_check(
    launcher: Launcher, bot: str, *args: str, plan=PLAN, stderr_path: Path | None = None
) -> list[Check]:
    reported: list[Check] = []
    checks = await check_bot(
        launcher.spec(bot, *args),
        plan=plan,
        time=TIME,
        stderr_path=stderr_path,
        report=reported.append,
    )
    assert reported == checks  # each check is reported as it happens
    return checks


def names(checks: list[Check]) -> list[str]:
    return [c.name for c in checks]


def assert_all_pass(checks: list[Check]) -> None:
    failed = [c.line() for c in checks if not c.ok]
    assert failed == []
    assert names(checks) == [*HEAD, "standard", *TAIL]


def the_failure(checks: list[Check]) -> Check:
    """The one failed check, which must be the last: check-bot stops at a failure."""
    failed = [c for c in checks if not c.ok]
    assert len(failed) == 1, [c.line() for c in checks]
    assert checks[-1] is failed[0]
    return failed[0]


def game_fault(checks: list[Check]) -> str:
    """The kind of fault that failed the standard group (after a clean start)."""
    failure = the_failure(checks)
    assert names(checks) == [*HEAD, "standard"]
    match = re.search(r"\): (\w+): ", failure.detail)
    assert match, failure.detail
    return match.group(1)


# ---------------------------------------------------------------- good bots


async def test_good_bot_passes_every_check(launcher: Launcher) -> None:
    checks = await run_check(launcher, "good")
    assert_all_pass(checks)
    standard = checks[3]
    # Seven seat counts of one round (the top engine) and one whole game of 13 rounds.
    assert standard.detail.startswith(f"{len(PLAN.groups[0][1])} games (1 whole), 20 rounds, ")
    assert "'random' '1.0'" in checks[0].detail
    assert checks[-1].detail == "exit status 0 after bye"


async def test_stale_replies_are_not_fatal(launcher: Launcher) -> None:
    checks = await run_check(launcher, "wrong_id")
    assert_all_pass(checks)
    # One stale reply before each of its decisions: counted in the report, never a fault.
    decisions = int(re.search(r"(\d+) decisions", checks[3].detail).group(1))
    assert checks[3].detail.endswith(f", {decisions} stale replies ignored")


async def test_a_late_answer_covered_by_the_bank_passes(launcher: Launcher) -> None:
    checks = await run_check(launcher, "late_once")
    assert_all_pass(checks)
    slowest = float(re.search(r"slowest ([\d.]+) ms", checks[3].detail).group(1))
    assert slowest > TIME.move_ms  # it was late, and the bank paid for it


async def test_unsolicited_messages_are_ignored(launcher: Launcher) -> None:
    assert_all_pass(await run_check(launcher, "chatty"))


async def test_stderr_flood_is_drained_and_capped(launcher: Launcher, tmp_path: Path) -> None:
    stderr = tmp_path / "bot.stderr"
    checks = await run_check(launcher, "stderr_flood", stderr_path=stderr)
    assert_all_pass(checks)
    kept = stderr.read_bytes()
    assert kept.startswith(b"flood flood")
    assert kept.endswith(b"[referee: stderr cut at the size cap]\n")
    assert STDERR_CAP < len(kept) < STDERR_CAP + 100


async def test_a_forked_grandchild_is_killed_too(launcher: Launcher) -> None:
    # The fixture finds the grandchild by the token it inherited and fails if it lives.
    assert_all_pass(await run_check(launcher, "grandchild"))


# ---------------------------------------------------------------- what is played


def test_the_battery_plays_single_rounds_and_one_whole_game_a_preset_or_all_whole() -> None:
    def shape(plan: checkbot.Battery) -> dict[str, list[tuple[int, int]]]:
        """(players, rounds) of each game, by group."""
        return {label: [(r.players, len(r.engines)) for r in rules] for label, rules in plan.groups}

    single = shape(battery())
    full = shape(battery(full_games=True))
    assert (
        list(single) == list(full) == ["standard", "masters", "celko", "private-trains", "variants"]
    )
    for label in ("standard", "masters", "celko"):
        assert single[label] == [(n, 1) for n in range(2, 9)] + [(4, 13)]
        assert full[label] == [(n, 13) for n in range(2, 9)]
    # Private trains deals the denomination table: not every seat count.
    assert single["private-trains"][-1] == (4, 13)
    assert {rounds for _, rounds in single["private-trains"][:-1]} == {1}
    assert {rounds for _, rounds in full["private-trains"]} == {13}
    assert [n for n, _ in full["private-trains"]] == [n for n, _ in single["private-trains"][:-1]]
    assert {rounds for _, rounds in single["variants"]} == {1}
    assert {rounds for _, rounds in full["variants"]} == {13}
    assert len(full["variants"]) == len(single["variants"]) == 7


async def test_a_bot_failing_in_round_two_fails_in_the_one_whole_game(launcher: Launcher) -> None:
    checks = await run_check(launcher, "round_two")
    assert game_fault(checks) == "illegal"
    # Games 1 to 7 are single rounds; game 8 is whole.
    assert checks[-1].detail.startswith("game 8 (double-12, 4 players, seat 2 of 4): illegal")


def test_cli_full_plays_whole_games_from_the_first(
    launcher: Launcher, quiet_stderr_file: Path
) -> None:
    args = ["check-bot", *LIMITS, "--full", "--", *launcher.argv("round_two")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert re.search(
        r"^FAIL  standard +game 1 \(double-12, 2 players, seat 0 of 2\): illegal",
        result.output,
        re.MULTILINE,
    )


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("nosuchcmd --x", "'nosuchcmd' is not an executable program (looked in PATH)"),
        ("python3 /nonexistent/bot.py", "'/nonexistent/bot.py': no such file"),
        ("python3 nothere.py", "'nothere.py': no such file in "),
    ],
)
def test_a_command_that_cannot_start_is_one_line_naming_it(command: str, said: str) -> None:
    # A mistyped command is bad input (exit 2), not a bot that fails its checks, and its
    # message names the program or the script (was "[Errno 2]", or a failed handshake).
    result = CliRunner().invoke(main, ["check-bot", command])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"referee: error: {command}: cannot start it: ")
    assert said in lines[0] and "Errno" not in lines[0]


# ---------------------------------------------------------------- bad bots


@pytest.mark.parametrize("mode", ["tile", "index"])
async def test_illegal_move_fails(launcher: Launcher, mode: str) -> None:
    checks = await run_check(launcher, "illegal", mode)
    assert game_fault(checks) == "illegal"
    expected = "does not hold" if mode == "tile" else "outside the"
    assert expected in checks[-1].detail


async def test_too_slow_fails_with_timeout(launcher: Launcher) -> None:
    delay = (TIME.move_ms + TIME.bank_ms + TIME.grace_ms) / 1000 + 0.4
    checks = await run_check(launcher, "slow", str(delay))
    assert game_fault(checks) == "timeout"


async def test_slow_within_the_move_time_passes(launcher: Launcher) -> None:
    # The same bot, a little quicker than move_ms: the control for the test above.
    plan = checkbot.Battery((("standard", PLAN.groups[0][1][:2]),))
    checks = await run_check(launcher, "slow", "0.02", plan=plan)
    assert [c.line() for c in checks if not c.ok] == []


async def test_garbage_fails_as_malformed(launcher: Launcher) -> None:
    checks = await run_check(launcher, "garbage")
    assert game_fault(checks) == "malformed"
    assert "move zero, please" in checks[-1].detail  # the evidence


async def test_silence_fails_with_timeout(launcher: Launcher) -> None:
    checks = await run_check(launcher, "silent")
    assert game_fault(checks) == "timeout"


async def test_crash_midgame_fails_as_crash(launcher: Launcher) -> None:
    checks = await run_check(launcher, "crash_midgame")
    assert game_fault(checks) == "crash"


async def test_crash_midgame_names_the_exit_status(launcher: Launcher) -> None:
    checks = await run_check(launcher, "crash_midgame")
    assert "exit status 1" in checks[-1].detail


async def test_huge_line_fails_as_oversize(launcher: Launcher) -> None:
    checks = await run_check(launcher, "huge_line")
    assert game_fault(checks) == "oversize"


async def test_deeply_nested_json_fails_as_malformed(launcher: Launcher) -> None:
    checks = await run_check(launcher, "deep_json")
    assert game_fault(checks) == "malformed"


@pytest.mark.parametrize(
    ("bot", "status"), [("crash_before_ready", "exit status 3"), ("exit_at_once", "exit status 0")]
)
async def test_exit_before_ready_fails_the_handshake(
    launcher: Launcher, bot: str, status: str
) -> None:
    checks = await run_check(launcher, bot)
    assert names(checks) == ["handshake"]
    assert not checks[0].ok
    assert status in checks[0].detail


async def test_closed_stdout_fails_the_ping(launcher: Launcher) -> None:
    checks = await run_check(launcher, "close_stdout")
    failure = the_failure(checks)
    assert names(checks) == HEAD
    assert failure.name == "ping"
    assert "closed its output" in failure.detail


async def test_ignoring_bye_and_sigterm_fails_the_bye_check(launcher: Launcher) -> None:
    checks = await run_check(launcher, "ignore_sigterm")
    failure = the_failure(checks)
    assert failure.name == "bye"
    assert names(checks) == [*HEAD, "standard", *TAIL]
    assert "still running" in failure.detail


async def test_a_missing_program_fails_to_start() -> None:
    spec = BotSpec(name="nothing", argv=(str(BOTS / "no-such-bot"),))
    checks = await check_bot(spec, plan=PLAN, time=TIME)
    assert [(c.name, c.ok) for c in checks] == [("start", False)]
    assert "no-such-bot" in checks[0].detail


# ---------------------------------------------------------------- the command line

LIMITS = ["--rules", "standard", "--move-ms", "300", "--bank-ms", "300", "--startup-ms", "2000"]


@pytest.fixture
def quiet_stderr_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "cli.stderr"
    monkeypatch.setattr(checkbot, "stderr_file", lambda: path)
    return path


def test_cli_illegal_bot_exits_1(launcher: Launcher, quiet_stderr_file: Path) -> None:
    args = ["check-bot", *LIMITS, "--", *launcher.argv("illegal")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert re.search(r"^FAIL  standard .*illegal", result.output, re.MULTILINE)
    assert "the bot does not conform" in result.output
    # The bot wrote nothing to stderr, so no file is left behind to point at.
    assert not quiet_stderr_file.exists()
    assert str(quiet_stderr_file) not in result.output


def test_cli_good_bot_exits_0(launcher: Launcher, quiet_stderr_file: Path) -> None:
    args = ["check-bot", *LIMITS, "--name", "goodie", "--", *launcher.argv("good")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.output
    assert result.output.count("PASS  ") == 7
    assert "the bot conforms" in result.output
    assert not quiet_stderr_file.exists()


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--move-ms", "-1", "--move-ms=-1: must not be negative"),
        ("--bank-ms", str(2**31), f"--bank-ms={2**31}: must be at most {2**31 - 1}"),
    ],
)
def test_cli_a_clock_out_of_range_exits_2_before_starting(
    option: str, value: str, words: str, quiet_stderr_file: Path
) -> None:
    result = CliRunner().invoke(main, ["check-bot", option, value, "--", "true"])
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert "checking" not in result.output  # the bot was never started
