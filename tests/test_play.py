"""`referee play` with real bot processes: the sample bots, and every misbehaving bot.

Games run in-process through `referee.play.runner.run_game` where the test needs the
report, the log or the referee's own memory, and through the command line
elsewhere. Clocks are small (300 ms a move, a 300 ms bank, 3 s to start) and the
set is double-6, so a whole game takes well under a second of play. Every test
ends by checking that no process it started (keeper, bot or anything a bot
forked) is left: each command line carries a unique token, found in /proc.
"""

from __future__ import annotations

import json
import re
import resource
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pytest
import trio
from click.testing import CliRunner, Result

from protocol import messages as m
from referee.bots.faults import Policy
from referee.bots.process import STDERR_CAP, BotSpec, Limits
from referee.cli import main
from referee.logs.gamelog import GameLog, log_bytes, move_of_spec, read_log
from referee.logs.replay import states, verify
from referee.play import runner
from referee.play.runner import GameReport, run_game
from referee.rules import Rules, legal_moves, preset
from referee.text import NAME_MAX, name_problem
from tests._procs import assert_none_left, new_token

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
SAMPLES = ROOT / "sample_bots"
REFEREE = str(Path(PY).parent / "referee")
TIME = m.TimeControl(startup_ms=3000, move_ms=300, bank_ms=300, increment_ms=0, grace_ms=50)
CLOCKS = ["--startup-ms", "3000", "--move-ms", "300", "--bank-ms", "300", "--grace-ms", "50"]
GOOD = {
    "random": (PY, str(SAMPLES / "random_bot.py")),
    "greedy": (PY, str(SAMPLES / "greedy_bot.py")),
    "js": ("node", str(SAMPLES / "js" / "bot.js")),
    "minimal": ("sh", str(SAMPLES / "minimal.sh")),
}
MIB = 1 << 20


def small(players: int, **options: object) -> Rules:
    """Double-6, every round (seven): quick, and long enough for every misbehaviour."""
    return preset("standard", max_pip=6, players=players, **options)


# ---------------------------------------------------------------- processes


@dataclass
class Table:
    """Bot specs tagged with this test's token, and the process groups started."""

    token: str = field(default_factory=new_token)
    groups: list[int] = field(default_factory=list)

    def good(self, kind: str) -> BotSpec:
        return BotSpec(name=kind, argv=(*GOOD[kind], self.token))

    def bad(self, bot: str, *args: str, limits: Limits | None = None) -> BotSpec:
        argv = (PY, str(BOTS / f"{bot}.py"), *args, self.token)
        return BotSpec(name=bot, argv=argv, limits=limits or Limits())

    def cli(self, spec: BotSpec) -> str:
        """The spec as a `referee play` argument: NAME=command line."""
        return f"{spec.name}={shlex.join(spec.argv)}"


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Table]:
    tab = Table()
    real_start = runner.start_bot

    async def start_and_record(spec, stderr_path=None):
        proc = await real_start(spec, stderr_path)
        tab.groups.append(proc.pid)  # the keeper leads the bot's process group
        return proc

    monkeypatch.setattr(runner, "start_bot", start_and_record)
    yield tab
    assert_none_left(tab.token, tab.groups)


# ---------------------------------------------------------------- helpers


def max_rss_mb() -> float:
    """This process's peak resident size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def play(
    specs: list[BotSpec],
    tmp_path: Path,
    *,
    rules: Rules | None = None,
    policy: Policy = Policy.FORFEIT,
    max_faults: int = 3,
    time: m.TimeControl = TIME,
    output_cap: int | None = None,
    seed: int = 7,
) -> tuple[GameReport, GameLog]:
    """Play one game in-process and check its log: complete, and the rules agree."""
    rules = rules or small(len(specs))
    with trio.fail_after(60):
        report = await run_game(
            specs,
            rules,
            seed,
            game_id=f"test-{seed}",
            time=time,
            log_path=tmp_path / "game.jsonl",
            policy=policy,
            max_faults=max_faults,
            stderr_dir=tmp_path,
            output_cap=output_cap,
        )
    return report, checked_log(report.log_path, report)


def checked_log(path: Path, report: GameReport | None = None) -> GameLog:
    """Read a game log, check it ends with a footer and verifies against the engine."""
    lines = log_bytes(path).splitlines()
    assert json.loads(lines[-1])["type"] == "footer"
    log = read_log(path)
    verdict = verify(log)
    assert verdict.ok, str(verdict.divergence)
    assert verdict.complete
    assert verdict.decisions == len(log.decisions)
    if report is not None:
        result = report.result
        assert log.footer is not None
        assert log.footer.ranks == list(result.ranks)
        assert log.footer.forfeited == list(result.forfeited)
        assert log.footer.scores == list(result.outcome.scores)
        assert log.footer.decisions == result.decisions == len(log.decisions)
        kinds = [f.kind.value for seat in result.faults for f in seat]
        assert sorted(f.kind for f in log.footer.faults) == sorted(kinds)
        ignored = [n.kind.value for seat in result.notices for n in seat]
        assert sorted(n.kind for n in log.footer.notices) == sorted(ignored)
    return log


def engine_ranks_ok(ranks: list[int], rounds: list[list[int]]) -> bool:
    """Ranks as RULES.md gives them without forfeits, from each seat's round scores.

    The lowest total wins; a tie goes to the most zero-point rounds, then to the
    lowest non-zero round; a tie that remains is shared (1 + sides strictly better).
    """

    def key(mine: list[int]) -> tuple[int, int, int]:
        nonzero = [r for r in mine if r]
        return (sum(mine), -mine.count(0), min(nonzero) if nonzero else 0)

    keys = [key(mine) for mine in rounds]
    return ranks == [1 + sum(1 for k in keys if k < mine) for mine in keys]


@dataclass
class Played:
    """One finished game of a misbehaving bot, for the case's own checks."""

    report: GameReport
    log: GameLog
    seat: int
    rss_growth_mb: float

    def decisions(self) -> list:
        return [d for d in self.log.decisions if d.seat == self.seat]

    def stderr(self) -> bytes:
        path = self.report.stderr_paths[self.seat]
        assert path is not None
        return path.read_bytes()


# ---------------------------------------------------------------- every misbehaving bot


def bounded_memory(played: Played) -> None:
    assert played.rss_growth_mb < 50, f"the referee grew by {played.rss_growth_mb:.0f} MB"


def never_decided(played: Played) -> None:
    # A bot that never got through the handshake is never asked: the referee moves for it.
    assert played.decisions()
    assert all(d.auto and d.latency_ms is None and d.request == 0 for d in played.decisions())


def three_moves_then_crash(played: Played) -> None:
    assert [d.auto for d in played.decisions()][:4] == [False, False, False, True]
    assert played.decisions()[3].faults[0].kind == "crash"


def stderr_capped(played: Played) -> None:
    kept = played.stderr()
    assert kept.startswith(b"flood flood")
    assert kept.endswith(b"[referee: stderr cut at the size cap]\n")
    assert STDERR_CAP < len(kept) < STDERR_CAP + 100
    bounded_memory(played)


def late_but_covered_by_the_bank(played: Played) -> None:
    mine = [d for d in played.decisions() if not d.auto]
    assert mine and all(d.latency_ms is not None for d in mine)
    # It was late: its reply took longer than move_ms, counting the part the referee
    # excused for its own lag (on a loaded machine that part can bring the charge under
    # move_ms, and then the bank is not needed); no fault, and what was charged stayed
    # within move + bank + grace.
    assert max((d.latency_ms or 0) + d.referee_late_ms for d in mine) > TIME.move_ms
    assert max(d.latency_ms or 0 for d in mine) < TIME.move_ms + TIME.bank_ms + TIME.grace_ms


def stale_replies_cost_nothing(played: Played) -> None:
    # Ignored and never a fault: no fault anywhere, each one a notice of its decision.
    mine = played.decisions()
    assert all(not d.auto and d.faults == [] for d in mine)
    stale = [n for d in mine for n in d.notices]
    assert len(stale) == len(mine)  # one stale reply before every right one
    assert {n.kind for n in stale} == {"stale_reply"}
    assert all("while" in n.detail and n.request == d.request for d in mine for n in d.notices)
    result = played.report.result
    assert [len(n) for n in result.notices] == [
        len(stale) if s == played.seat else 0 for s in range(len(result.notices))
    ]
    assert played.log.footer is not None and len(played.log.footer.notices) == len(stale)


def memory_error_in_stderr(played: Played) -> None:
    assert b"MemoryError" in played.stderr()


@dataclass(frozen=True)
class Case:
    bot: str
    args: tuple[str, ...] = ()
    fault: str | None = None  # the kind of every fault at the bot's seat; None: no fault
    evidence: str = ""
    goods: int = 2
    limits: Limits | None = None
    time: m.TimeControl = TIME
    output_cap: int | None = None
    check: Callable[[Played], None] | None = None

    @property
    def fatal(self) -> bool:
        return self.fault is not None


CASES = [
    Case("crash_before_ready", fault="startup_failure", evidence="exit status 3", goods=1),
    Case("exit_at_once", fault="startup_failure", evidence="exit status 0", check=never_decided),
    Case("crash_midgame", fault="crash", evidence="exit status 1", goods=3),
    Case("crash_midgame", fault="crash", evidence="exit status 1", check=three_moves_then_crash),
    Case("close_stdout", fault="crash", evidence="closed its output", goods=1),
    Case("silent", fault="timeout", evidence="no reply within 300 ms + bank 300 ms", goods=3),
    Case("slow", ("1.5",), fault="timeout", evidence="no reply within"),
    Case("deaf", fault="timeout", goods=1),
    Case("timeout_once", fault="timeout", evidence="no reply within 300 ms + bank 300 ms"),
    Case("garbage", fault="malformed", evidence="move zero, please", goods=3),
    Case("deep_json", fault="malformed", evidence="x_pad"),
    Case("huge_line", fault="oversize", evidence="1048576-byte maximum", check=bounded_memory),
    Case("illegal", ("tile",), fault="illegal", evidence="does not hold", goods=1),
    Case("illegal", ("index",), fault="illegal", evidence="outside the", goods=3),
    # A number outside its field's range is malformed, said with the number and its bound.
    Case("out_of_range", ("index",), fault="malformed", evidence="-1 is out of range at `$.index`"),
    Case(
        "out_of_range",
        ("id",),
        fault="malformed",
        evidence=f"{2**53} is out of range at `$.id`: it must be at most {m.COUNTER_MAX}",
        goods=1,
    ),
    Case(
        "out_of_range",
        ("tile",),
        fault="malformed",
        evidence="19 is out of range at `$.tile[0]`: it must be at most 18",
        goods=3,
    ),
    Case(
        "spin",
        fault="resource_limit",
        evidence="(killed by SIGXCPU) at the CPU limit of 1 s",
        limits=Limits(cpu_s=1),
        time=msgspec.structs.replace(TIME, move_ms=5000),
        goods=1,
    ),
    Case(
        "memory_hog",
        ("512",),
        fault="resource_limit",  # its MemoryError under the limit is told from a crash
        evidence="out of memory at the 100 MB limit",
        limits=Limits(memory_mb=100),
        check=memory_error_in_stderr,
    ),
    Case(
        "line_flood",
        ("2048",),
        fault="resource_limit",
        evidence="wrote over 65536 bytes in one decision",
        output_cap=64 * 1024,
        check=bounded_memory,
    ),
    Case("wrong_id", check=stale_replies_cost_nothing),
    Case("late_once", check=late_but_covered_by_the_bank, goods=1),
    Case("chatty", goods=3),
    Case("stderr_flood", check=stderr_capped),
    Case("grandchild", goods=1),  # the fixture fails if the sleeping grandchild survives
    Case("ignore_sigterm"),  # never exits: SIGKILL ends it, after bye and SIGTERM
    Case(
        "line_flood",
        ("2048",),
        time=msgspec.structs.replace(TIME, move_ms=3000),
        check=bounded_memory,
    ),
]


def case_id(case: Case) -> str:
    extra = f"-{case.args[0]}" if case.args and case.bot in ("illegal", "out_of_range") else ""
    policy = "-capped" if case.output_cap else ""
    return f"{case.bot}{extra}{policy}-{case.goods + 1}p"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
async def test_misbehaving_bot_game(case: Case, table: Table, tmp_path: Path) -> None:
    players = case.goods + 1
    seat = CASES.index(case) % players  # spread the bad bots over the seats
    goods = iter(["random", "greedy", "js"])
    specs = [
        table.bad(case.bot, *case.args, limits=case.limits)
        if s == seat
        else table.good(next(goods))
        for s in range(players)
    ]
    before = max_rss_mb()
    report, log = await play(specs, tmp_path, time=case.time, output_cap=case.output_cap)
    played = Played(report, log, seat, max_rss_mb() - before)
    result = report.result

    for other in range(players):
        if other != seat:
            assert result.faults[other] == (), result.faults[other]
    mine = result.faults[seat]
    if case.fault is None:
        assert mine == ()
        assert result.forfeited == (False,) * players
        assert result.ranks == result.outcome.ranks
    else:
        assert mine, "no fault recorded"
        assert {f.kind.value for f in mine} == {case.fault}, [str(f) for f in mine]
        assert case.evidence in mine[0].detail
    if case.fatal:
        assert len(mine) == 1, [str(f) for f in mine]
        assert result.forfeited == tuple(s == seat for s in range(players))
        assert result.ranks[seat] == players  # below every side that did not forfeit
        assert all(result.ranks[s] < players for s in range(players) if s != seat)
        assert engine_ranks_ok(
            [r for s, r in enumerate(result.ranks) if s != seat],
            [[r[s] for r in result.outcome.rounds] for s in range(players) if s != seat],
        )
        # After its fault the referee moves for the seat, and asks it nothing more.
        fault_at = next((i for i, d in enumerate(played.decisions()) if d.faults), -1)
        after = played.decisions()[fault_at + 1 :]
        assert all(d.auto and d.latency_ms is None for d in after)
    else:
        assert not result.forfeited[seat]
    if case.check is not None:
        case.check(played)


# ---------------------------------------------------------------- default-move policy


async def test_default_move_a_timeout_costs_one_move_and_the_bot_plays_on(
    table: Table, tmp_path: Path
) -> None:
    specs = [table.good("random"), table.bad("timeout_once")]
    report, log = await play(specs, tmp_path, policy=Policy.DEFAULT_MOVE, max_faults=3)
    faults = report.result.faults[1]
    assert [f.kind.value for f in faults] == ["timeout"]
    assert [n.kind.value for n in report.result.notices[1]] == ["stale_reply"]
    assert report.result.forfeited == (False, False)
    mine = [(s.line, s.before) for s in states(log) if s.line.seat == 1]
    timed_out = next(i for i, (line, _) in enumerate(mine) if line.faults)
    line, before = mine[timed_out]
    assert line.auto and line.faults[0].kind == "timeout"
    assert move_of_spec(line.move) == legal_moves(before)[0]  # the default move
    later = [line for line, _ in mine[timed_out + 1 :]]
    assert later and all(not d.auto and d.latency_ms is not None for d in later)
    assert later[0].faults == []  # its late answer, ignored: a notice, not a fault
    assert [n.kind for n in later[0].notices] == ["stale_reply"]


async def test_default_move_the_late_bot_covered_by_its_bank_has_no_fault(
    table: Table, tmp_path: Path
) -> None:
    specs = [table.bad("late_once"), table.good("greedy")]
    report, log = await play(specs, tmp_path, policy=Policy.DEFAULT_MOVE, max_faults=1)
    assert report.result.faults == ((), ())
    mine = [d for d in log.decisions if d.seat == 0]
    assert all(not d.auto for d in mine)
    # Late: charged and excused (the referee's own lag, under load) past move_ms.
    assert max((d.latency_ms or 0) + d.referee_late_ms for d in mine) > TIME.move_ms


@pytest.mark.parametrize(("bot", "kind"), [("huge_line", "oversize"), ("crash_midgame", "crash")])
async def test_default_move_still_forfeits_at_once_for(
    table: Table, tmp_path: Path, bot: str, kind: str
) -> None:
    specs = [table.good("random"), table.bad(bot)]
    report, _ = await play(specs, tmp_path, policy=Policy.DEFAULT_MOVE, max_faults=3)
    assert [f.kind.value for f in report.result.faults[1]] == [kind]
    assert report.result.forfeited == (False, True)
    assert report.result.ranks == (1, 2)


# ---------------------------------------------------------------- the command line


def run_cli(*args: str) -> Result:
    # Wide, so that rich never folds a long temporary path.
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "400"})


def test_four_sample_bots_play_a_whole_game_with_json_output(table: Table, tmp_path: Path) -> None:
    bots = [table.cli(table.good(k)) for k in ("random", "greedy", "js", "minimal")]
    args = [REFEREE, "play", *bots, "--set", "max_pip=6", "--seed", "11"]
    args += ["--log-dir", str(tmp_path), *CLOCKS, "--json", "--seat-logs"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1 and done.stdout.endswith("}\n")
    summary = json.loads(done.stdout)
    assert set(summary) == {"seed", "log", "decisions", "rounds", "seats"}
    assert summary["seed"] == 11
    seats = summary["seats"]
    assert [s["name"] for s in seats] == ["random", "greedy", "js", "minimal"]
    assert [s["seat"] for s in seats] == [0, 1, 2, 3]
    assert all(s["status"] == "ok" and s["faults"] == [] for s in seats)
    scores = [s["score"] for s in seats]
    by_seat = [[r[s] for r in summary["rounds"]] for s in range(4)]
    assert engine_ranks_ok([s["rank"] for s in seats], by_seat)
    assert len(summary["rounds"]) == 7
    assert [sum(r[s] for r in summary["rounds"]) for s in range(4)] == scores
    # Rounds went to stderr, leaving stdout to the JSON.
    assert re.search(r"^round  7 0-0", done.stderr, re.MULTILINE)

    log_path = Path(summary["log"])
    assert log_path == tmp_path / "game-11.jsonl.gz"  # --log-dir: compressed
    log = checked_log(log_path)
    assert log.footer is not None
    assert log.footer.scores == scores
    assert log.footer.decisions == summary["decisions"]
    assert [b.name for b in log.header.bots] == ["random", "greedy", "js", "minimal"]
    # Each bot's stderr beside the log; a bot that wrote nothing leaves no file.
    kept = {p.name for p in tmp_path.glob("*.stderr")}
    names = ["random", "greedy", "js", "minimal"]
    assert kept <= {f"game-11-seat{s}-{name}.stderr" for s, name in enumerate(names)}
    assert all((tmp_path / name).stat().st_size > 0 for name in kept)
    # --seat-logs: one log per seat, the same decisions, only that seat's drawn tiles.
    for seat in range(4):
        mine = read_log(tmp_path / f"game-11.seat{seat}.jsonl.gz", allow_redacted=True)
        assert mine.header.seat == seat and mine.complete and mine.header.seed is None
        assert [(d.seat, d.move) for d in mine.decisions] == [
            (d.seat, d.move) for d in log.decisions
        ]
        for line, whole in zip(mine.decisions, log.decisions, strict=True):
            assert line.drew == (whole.drew if line.seat == seat else None)

    replayed = subprocess.run(
        [REFEREE, "replay", str(log_path)], capture_output=True, text=True, timeout=30
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"verified {summary['decisions']} decisions and 7 rounds" in replayed.stdout
    assert "the log is complete" in replayed.stdout


def test_quiet_leaves_out_the_round_lines(table: Table, tmp_path: Path) -> None:
    # stderr_flood plays legal move 0 and writes to stderr; the random bot writes nothing.
    bots = [table.cli(table.good("random")), table.cli(table.bad("stderr_flood"))]
    # The same seed and the same bot-seed key: the same game, bots' own randomness included.
    common = [*bots, "--set", "max_pip=6", "--seed", "5", "--bot-seed-key", "00ff", *CLOCKS]
    loud = run_cli("play", *common, "--log", str(tmp_path / "loud.jsonl"))
    quiet = run_cli(
        "play",
        *common,
        "-q",
        "--log",
        str(tmp_path / "quiet.jsonl.gz"),  # compressed, as its name asks
        "--stderr-dir",
        str(tmp_path / "err"),
    )
    assert loud.exit_code == 0, loud.output
    assert quiet.exit_code == 0, quiet.output
    round_line = re.compile(r"^round +\d+ ", re.MULTILINE)
    assert len(round_line.findall(loud.stdout)) == 7
    # The game id is random: it must not carry the seed, which bots would see.
    started = r"game game-[0-9a-f]{8}: random, stderr_flood \| standard \| seed 5"
    assert re.search(started, loud.stdout)
    assert round_line.findall(quiet.stdout) == []
    assert not re.search(started, quiet.stdout)
    for result, name in ((loud, "loud.jsonl"), (quiet, "quiet.jsonl.gz")):
        assert f"log: {tmp_path / name}" in result.stdout
        assert "Result" in result.stdout
    # `--log FILE` is written as named: plain for `.jsonl`, compressed for `.jsonl.gz`.
    assert sorted(p.name for p in tmp_path.glob("*.jsonl*")) == ["loud.jsonl", "quiet.jsonl.gz"]
    assert (tmp_path / "loud.jsonl").read_bytes().startswith(b'{"type":"header"')
    assert (tmp_path / "quiet.jsonl.gz").read_bytes().startswith(b"\x1f\x8b")
    # Each bot's stderr is named after the log it goes with.
    assert [p.name for p in (tmp_path / "err").iterdir()] == ["quiet-seat1-stderr_flood.stderr"]
    assert sorted(p.name for p in tmp_path.glob("*.stderr")) == ["loud-seat1-stderr_flood.stderr"]
    # Same seed, same bots: the same game, quiet or not.
    assert [d.move for d in checked_log(tmp_path / "loud.jsonl").decisions] == [
        d.move for d in checked_log(tmp_path / "quiet.jsonl.gz").decisions
    ]


def test_default_move_and_max_faults_from_the_command_line(table: Table, tmp_path: Path) -> None:
    bots = [table.cli(table.good("random")), table.cli(table.bad("illegal", "index"))]
    args = [*bots, "--set", "max_pip=6", "--set", "rounds=single", "--seed", "3", *CLOCKS]
    args += ["--policy", "default-move", "--max-faults", "2", "--json", "-q"]
    result = run_cli("play", *args, "--log", str(tmp_path / "g.jsonl"))
    assert result.exit_code == 0, result.output
    seats = json.loads(result.stdout)["seats"]
    assert [f["kind"] for f in seats[1]["faults"]] == ["illegal", "illegal"]
    assert seats[1]["status"] == "forfeit" and seats[1]["rank"] == 2
    assert seats[0]["status"] == "ok" and seats[0]["rank"] == 1
    log = checked_log(tmp_path / "g.jsonl")
    assert log.header.policy == "default-move" and log.header.max_faults == 2


def test_stale_replies_are_notices_in_the_json_the_log_and_the_replay(
    table: Table, tmp_path: Path
) -> None:
    bots = [table.cli(table.good("random")), table.cli(table.bad("wrong_id"))]
    args = [*bots, "--set", "max_pip=6", "--set", "rounds=single", "--seed", "3", *CLOCKS]
    result = run_cli("play", *args, "--json", "-q", "--log", str(tmp_path / "g.jsonl"))
    assert result.exit_code == 0, result.output
    seats = json.loads(result.stdout)["seats"]
    assert [(s["status"], s["faults"]) for s in seats] == [("ok", [])] * 2
    assert seats[0]["notices"] == []
    stale = seats[1]["notices"]
    assert stale and {n["kind"] for n in stale} == {"stale_reply"}
    assert all("while" in n["detail"] and n["request"] > 0 for n in stale)
    lines = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert not any(line.get("faults") for line in lines)
    logged = [n for line in lines if line["type"] == "decision" for n in line.get("notices", [])]
    assert logged == [{"seat": 1, **n} for n in stale]
    assert lines[-1]["notices"] == logged  # the footer holds them all
    shown = run_cli("replay", str(tmp_path / "g.jsonl"), "--show")
    assert shown.exit_code == 0, shown.output
    # At each decision, and again with the result.
    assert shown.output.count("ignored stale_reply: reply for request") == len(stale)
    assert shown.output.count("ignored seat 1 wrong_id stale_reply: reply for") == len(stale)
    assert "fault" not in shown.output


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--rules", "nosuch"], "unknown preset 'nosuch'"),
        (["--rules", "standard+nosuch"], "unknown variant 'nosuch'"),
        (["--set", "nosuch=1"], "unknown option 'nosuch'"),
        (["--set", "max_pip=lots"], "max_pip"),
        (["--set", "max_pip"], "--set 'max_pip': expected key=value"),
        (["--set", "players=3"], "players=3 but 2 bots were given"),
        (["--move-ms", "-1"], "--move-ms=-1: must not be negative"),
        (["--bank-ms", "-5"], "--bank-ms=-5: must not be negative"),
        # Every clock on the wire fits a 32-bit int (spec/PROTOCOL.md, "Integer ranges").
        (["--increment-ms", str(2**31)], f"--increment-ms={2**31}: must be at most {2**31 - 1}"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    extra: list[str], named: str, table: Table, tmp_path: Path
) -> None:
    bots = [table.cli(table.good("random")), table.cli(table.good("minimal"))]
    result = run_cli("play", *bots, *extra, "--log-dir", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("referee: error: ")
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n")
    assert named in result.stderr
    assert table.groups == []  # nothing was started
    assert list(tmp_path.iterdir()) == []  # and no log written


def named_game(tmp_path: Path, ready_name: str, *extra: str) -> tuple[Result, GameLog]:
    """`referee play` of two bots named after their program (tests/bots/ready_name.py,
    which says $READY_NAME when ready), the sample random bot (ready as "random") and
    greedy given a NAME=; one round of double-6, its log read."""
    named = f"{PY} {BOTS / 'ready_name.py'}"
    bots = [named, named, f"{PY} {SAMPLES / 'random_bot.py'}"]
    bots.append(f"g={PY} {SAMPLES / 'greedy_bot.py'}")
    args = ["play", *bots, "--set", "max_pip=6", "--set", "rounds=single", "--seed", "5"]
    args += ["--log-dir", str(tmp_path), "--env", f"READY_NAME={ready_name}", *CLOCKS, *extra]
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    return result, read_log(tmp_path / "game-5.jsonl.gz")


def test_a_seat_named_after_its_program_goes_by_its_ready_name(
    table: Table, tmp_path: Path
) -> None:
    # Two bots ready as one name stay apart (#2); a NAME= given is kept over the ready
    # name ("g", not "greedy").
    names = ["shout", "shout#2", "random", "g"]
    result, log = named_game(tmp_path / "text", "shout")
    assert [b.name for b in log.header.bots] == names
    assert result.stdout.splitlines()[0].startswith("game game-")
    assert ": shout, shout#2, random, g | standard | seed 5 |" in result.stdout.splitlines()[0]
    rows = [line for line in result.stdout.splitlines() if line.startswith(("│", "|"))]
    assert [name for name in names if any(f" {name} " in row for row in rows)] == names
    # The stderr files are named before the bots start: after the program.
    kept = sorted(p.name for p in (tmp_path / "text").glob("*.stderr"))
    assert kept == ["game-5-seat0-ready_name.stderr", "game-5-seat1-ready_name.stderr"]
    result, log = named_game(tmp_path / "json", "shout", "--json")
    seats = json.loads(result.stdout)["seats"]
    assert [seat["name"] for seat in seats] == names
    assert [Path(seat["stderr"]).name for seat in seats[:2]] == kept
    assert [b.name for b in log.header.bots] == names


@pytest.mark.parametrize(
    "ready_name", ["tab\there", "x" * 65, " padded", ""], ids=["control", "long", "space", "empty"]
)
def test_a_ready_name_that_is_no_bots_name_keeps_the_programs(
    table: Table, tmp_path: Path, ready_name: str
) -> None:
    result, log = named_game(tmp_path, ready_name, "--json")
    names = ["ready_name", "ready_name#2", "random", "g"]
    assert [seat["name"] for seat in json.loads(result.stdout)["seats"]] == names
    assert [b.name for b in log.header.bots] == names


def test_distinct_names_never_collide_and_stay_within_the_name_rule() -> None:
    assert runner.distinct(["a", "a#2", "a", "b", "a"]) == ["a", "a#2", "a#3", "b", "a#4"]
    long = "x" * NAME_MAX
    out = runner.distinct([long, long])
    assert out[0] == long and out[1] == "x" * (NAME_MAX - 2) + "#2"
    assert all(name_problem(name) is None for name in out)


def test_an_empty_command_line_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("play", "random_bot", "  ", "--log-dir", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == "referee: error: bot 2: empty command line\n"


def test_an_unnamed_bot_is_named_after_its_program_not_its_option(tmp_path: Path) -> None:
    result = run_cli("play", "nosuchbot --fast", "random_bot", "--log-dir", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == (
        "referee: error: bot 1 (nosuchbot): cannot start it: 'nosuchbot' is not an "
        "executable program (looked in PATH)\n"
    )


UNSTARTABLE = [
    ("/nonexistent/folder/bot", "'/nonexistent/folder/bot': no such file"),
    ("no-such-program-anywhere", "is not an executable program (looked in PATH)"),
    (str(BOTS / "silent.py"), "silent.py' is not executable (chmod +x"),
    (str(BOTS), "tests/bots' is a folder, not a program"),
]
UNSTARTABLE_IDS = ["missing-path", "missing-in-PATH", "not-executable", "a-folder"]


@pytest.mark.parametrize(("program", "named"), UNSTARTABLE, ids=UNSTARTABLE_IDS)
def test_play_refuses_a_program_that_cannot_start_before_the_game(
    program: str, named: str, table: Table, tmp_path: Path
) -> None:
    # As `league` refuses its file: the game would only have the bot forfeit every round
    # and end with status 0, the reason in the log alone.
    bots = [table.cli(table.good("random")), f"ghost={program} {table.token}"]
    result = run_cli("play", *bots, "--set", "max_pip=6", "--seed", "2", "--log-dir", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("referee: error: bot 2 (ghost): cannot start it: ")
    assert result.stderr.count("\n") == 1 and named in result.stderr, result.stderr
    assert table.groups == []  # not even the good bot was started
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("program", "named"), UNSTARTABLE, ids=UNSTARTABLE_IDS)
async def test_a_program_that_cannot_start_is_a_startup_failure_and_the_game_goes_on(
    program: str, named: str, table: Table, tmp_path: Path
) -> None:
    # Decided by the referee: where a program goes missing after the checks (a league's
    # bot removed in the middle of the league), it is a fault at its seat, like a bot
    # that exits before ready; the others play the whole game and it ranks last.
    ghost = BotSpec(name="ghost", argv=(program, table.token))
    report, log = await play([table.good("random"), ghost, table.good("greedy")], tmp_path)
    result = report.result
    assert result.forfeited == (False, True, False) and result.ranks[1] == 3
    assert [f.kind.value for f in result.faults[1]] == ["startup_failure"]
    assert f"cannot start {program}" in result.faults[1][0].detail
    assert named in result.faults[1][0].detail
    assert all(d.auto for d in log.decisions if d.seat == 1)
    assert len(table.groups) == 2  # only the two real bots got a process


def test_a_bot_that_crashes_is_named_with_its_stderr_file_and_last_line(
    table: Table, tmp_path: Path
) -> None:
    # crash_midgame raise: an uncaught exception on its fourth turn, as a buggy bot has;
    # the result says where its traceback is and shows the traceback's last line.
    bots = [table.cli(table.good("random")), table.cli(table.bad("crash_midgame", "raise"))]
    args = ["play", *bots, "--set", "max_pip=6", "--seed", "9", *CLOCKS, "-q"]
    shown = run_cli(*args, "--log-dir", str(tmp_path / "shown"))
    as_json = run_cli(*args, "--json", "--log-dir", str(tmp_path / "json"))
    assert shown.exit_code == 0 and as_json.exit_code == 0, shown.output + as_json.output
    kept = tmp_path / "shown" / "game-9-seat1-crash_midgame.stderr"
    why = "RuntimeError: crash_midgame: a bug on turn 4"
    assert kept.read_text().splitlines()[-1] == why
    note = [line for line in shown.stdout.splitlines() if "stderr" in line]
    assert note == [f"crash_midgame (seat 1): stderr in {kept}; last line: {why}"]
    seats = json.loads(as_json.stdout)["seats"]
    assert [f["kind"] for f in seats[1]["faults"]] == ["crash"]
    assert seats[1]["stderr"] == str(tmp_path / "json" / "game-9-seat1-crash_midgame.stderr")
    assert seats[0]["stderr"] is None  # the random bot wrote nothing: no file


def test_a_seed_played_again_keeps_the_earlier_log(table: Table, tmp_path: Path) -> None:
    # The log of a chosen seed is named after it; playing the seed again (a bot's fix,
    # tried on the same deal) writes the next free name and says so, never over a log.
    bots = [table.cli(table.good("random")), table.cli(table.good("greedy"))]
    args = ["play", *bots, "--set", "max_pip=6", "--set", "rounds=single", "--seed", "6"]
    args += [*CLOCKS, "-q", "--log-dir", str(tmp_path)]
    first = run_cli(*args)
    earlier = (tmp_path / "game-6.jsonl.gz").read_bytes()
    again = [run_cli(*args) for _ in range(2)]
    assert [r.exit_code for r in (first, *again)] == [0, 0, 0], first.output
    assert first.stderr == ""
    for result, number in zip(again, (2, 3), strict=True):
        assert result.stderr == (
            f"referee: {tmp_path / 'game-6.jsonl.gz'} exists; "
            f"this game's log is {tmp_path / f'game-6-{number}.jsonl.gz'}\n"
        )
        assert f"log: {tmp_path / f'game-6-{number}.jsonl.gz'}" in result.stdout
    assert (tmp_path / "game-6.jsonl.gz").read_bytes() == earlier
    later = [checked_log(tmp_path / f"game-6-{n}.jsonl.gz") for n in (2, 3)]
    first_log = checked_log(tmp_path / "game-6.jsonl.gz")
    assert [log.header.seed for log in (first_log, *later)] == [6, 6, 6]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (
            ["--seed", "-1"],
            "--seed -1 is out of range: a seed is a whole number from 0 to 2**128-1",
        ),
        (["--seed", str(1 << 128)], f"--seed {1 << 128} is out of range"),
        (
            ["--log-dir", "{file}/logs"],
            "--log-dir {file}/logs: cannot write there: {file} is a file",
        ),
        (["--log-dir", "{file}"], "--log-dir {file}: cannot write there: {file} is a file"),
        (
            ["--stderr-dir", "{file}/err"],
            "--stderr-dir {file}/err: cannot write there: {file} is a",
        ),
        (["--log", "{file}/g.jsonl"], "--log {file}/g.jsonl: cannot write there: {file} is a file"),
        (["--log", "{folder}"], "--log {folder}: cannot write there: it is a folder, not a file"),
    ],
    ids=[
        "negative-seed",
        "huge-seed",
        "log-dir-under-a-file",
        "log-dir-a-file",
        "stderr-dir-under-a-file",
        "log-under-a-file",
        "log-a-folder",
    ],
)
def test_bad_seeds_and_output_places_are_one_line_before_the_game(
    extra: list[str], named: str, table: Table, tmp_path: Path
) -> None:
    afile, folder = tmp_path / "afile", tmp_path / "folder"
    afile.write_text("not a folder\n")
    folder.mkdir()
    bots = [table.cli(table.good("random")), table.cli(table.good("greedy"))]
    logs = ["--log-dir", str(tmp_path / "logs")]  # a later --log-dir wins
    result = run_cli("play", *bots, *logs, *[e.format(file=afile, folder=folder) for e in extra])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("referee: error: ") and result.stderr.count("\n") == 1
    assert named.format(file=afile, folder=folder) in result.stderr, result.stderr
    assert table.groups == []
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [afile]  # nothing written
