"""`referee match NEW BASE` with real bot processes, run as the command a CI job would run.

The sample greedy bot against the sample random bot on double-6, one round:
greedy is some 150 Elo better there, so a test of H0 -100 against H1 +100 accepts
H1 within a few dozen games (the chance of H0 is far below beta). Each command
line carries a unique token, and no process with it may be left at the end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.commands.match_lines import Lines
from referee.league.judge import match_lines, progress_line
from referee.logs.gamelog import read_log
from referee.proof.commitment import deal_seed
from referee.stats import Sprt, Unit
from tests._procs import assert_none_left, new_token
from tests.league.test_run import secrets_of

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
REFEREE = str(Path(PY).parent / "referee")
TINY = ["--set", "max_pip=6", "--set", "rounds=single"]


def bot(name: str, token: str) -> str:
    return f"{name}={PY} {SAMPLES / f'{name}_bot.py'} {token}"


def game_log(out: Path, unit: int, which: str) -> Path:
    """The log of unit `unit`'s (from 1) game with NEW or BASE in the tested seat: the
    match is a league, whose games are numbered in schedule order, NEW's game first."""
    return out / "logs" / f"g{2 * unit - (which == 'new'):05d}.jsonl.gz"


def test_greedy_beats_random_h1_exit_0(tmp_path: Path) -> None:
    token = new_token()
    out = tmp_path / "logs"
    args = [REFEREE, "match", bot("greedy", token), bot("random", token), *TINY]
    args += ["--sprt", "elo0=-100,elo1=100", "--max-games", "400", "--jobs", "2"]
    first = [*args, "--out", str(out), "--json", "--tc-new", "move_ms=1500,bank_ms=20000"]
    done = subprocess.run(first, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "H1"
    for key in ("llr", "lower", "upper", "units", "games", "score", "elo", "elo_ci95", "los"):
        assert isinstance(result[key], int | float), key
    assert result["upper"] > 0 > result["lower"]
    # Whichever test crossed its bound decided (the deals are new each run).
    if result["decided_by"] == "llr":
        assert result["llr"] >= result["upper"]
    else:
        assert result["decided_by"] == "mixture"
        assert result["mixture_llr"] >= result["mixture_upper"] > 0 > result["mixture_lower"]
    assert result["games"] == 2 * result["units"]
    assert result["score"] > 0.5 and result["elo"] > 0 and result["los"] > 0.5
    # With --json the live report goes to stderr: one line per counted unit, in order.
    lines = [line for line in done.stderr.splitlines() if line.startswith("units ")]
    assert [int(line.split()[1]) for line in lines] == list(range(1, result["units"] + 1))
    # A unit's two games: one deal, one bot-seed key, NEW and BASE swapped in the
    # tested seat, which moves round the table from unit to unit.
    for unit in (1, 2):
        a = read_log(game_log(out, unit, "new")).header
        b = read_log(game_log(out, unit, "base")).header
        assert a.seed == b.seed and a.bot_seed_key == b.bot_seed_key
        tested = (unit - 1) % 2
        assert a.bots[tested].name == "greedy" and b.bots[tested].name == "random"
        assert a.bots[1 - tested].name == "random" and b.bots[1 - tested].name == "greedy"
        # Time odds: NEW's own clock follows it from seat to seat, in the log's header.
        odds = (1500, 20000)
        for log, seat in ((a, tested), (b, 1 - tested)):
            clock = log.bots[seat].time
            assert clock is not None and (clock.move_ms, clock.bank_ms) == odds
            assert log.bots[1 - seat].time is None and log.time.move_ms == 1000
    seed = read_log(game_log(out, 1, "new")).header.seed
    assert seed != read_log(game_log(out, 2, "new")).header.seed
    assert_none_left(token)

    # A decided match resumed: the same result at once, no game played.
    again = subprocess.run(
        [*first, "--resume"], capture_output=True, text=True, timeout=60, check=False
    )
    assert again.returncode == 0 and json.loads(again.stdout) == result, again.stderr

    # Run out of games undecided: the chess testers' report, and exit status 1; with
    # --luck the games' logs are replayed for their rollout luck on the way.
    out2 = tmp_path / "undecided"
    short = [*args, "--luck", "--out", str(out2)]
    done = subprocess.run([*short, "--max-games", "2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith("SPRT elo0=-100, elo1=100, alpha=0.05, ")
    assert done.stdout.splitlines()[1].startswith("units 1 games 2 pairs W/D/L ")
    # One unit: an interval with LOS, or (won, lost or drawn) a bound instead.
    assert "Elo difference: " in done.stdout
    assert "LOS: " in done.stdout or ": every unit " in done.stdout
    assert done.stdout.rstrip().endswith("- no decision (--max-games ran out)")
    # --resume goes on from the next unit with the saved deal key: unit 2's deal is
    # the one the match would have dealt without the stop.
    deal_key = secrets_of(out2)[1]
    more = [*short, "--max-games", "4", "--resume"]
    done = subprocess.run(more, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[1].startswith("units 2 games 4 pairs W/D/L ")
    assert read_log(game_log(out2, 2, "new")).header.seed == deal_seed(deal_key, 0, 1, 0)
    assert_none_left(token)


def test_bad_input_exit_2_one_line() -> None:
    runner = CliRunner()
    good = [bot("greedy", "x"), bot("random", "x"), *TINY]
    for extra, words in (
        (["--sprt", "elo0=5,elo1=0"], "elo0 must be below elo1"),
        (["--sprt", "alpha=0.6,beta=0.5"], "alpha + beta must be below 1"),
        (["--sprt", "elo1=big"], "not a number"),
        (["--sprt", "gamma=1"], "expected one of elo0, elo1"),
        (["--sprt", ""], "--sprt '': empty: give key=value with keys among elo0, elo1"),
        (["--sprt", " , "], "empty"),
        (["--sprt", "elo0=0,elo1=5,"], "--sprt 'elo0=0,elo1=5,': a trailing comma"),
        (["--sprt", "elo0=0,,elo1=5"], "a double comma; give key=value pairs"),
        (["--tc-new", ",move_ms=5"], "a leading comma"),
        (["--sprt", "elo0=0,elo0=1"], "--sprt 'elo0=0,elo0=1': elo0 is given twice"),
        (["--tc-new", "move_ms=1,move_ms=2"], "move_ms is given twice"),
        (["--table", "3"], "give the field"),
        (["--table", "4", "--field", good[1], "--field", good[1]], "needs 1 or 3"),
        (["--set", "players=3"], "--table"),
        (["--tc-new", "move=3"], "expected one of startup_ms"),
        (["--tc-base", "bank_ms=-1"], "must not be negative"),
        (["--tc-new", f"move_ms={2**31}"], f"move_ms={2**31}: must be at most {2**31 - 1}"),
        (["--resume"], "--resume needs the --out"),
    ):
        result = runner.invoke(main, ["match", *good, *extra])
        assert result.exit_code == 2, (extra, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("referee: error: "), result.output
        assert words in lines[0], lines[0]


def test_a_sweep_is_said_as_such_and_stops_in_a_handful_of_units(tmp_path: Path) -> None:
    # BASE plays a tile it does not hold at its first turn and forfeits: NEW wins every
    # game, and so every unit. 0 against 5 Elo: the GSPRT alone needed over 200 units.
    token = new_token()
    illegal = f"illegal={PY} {ROOT / 'tests' / 'bots' / 'illegal.py'} {token}"
    args = [REFEREE, "match", bot("greedy", token), illegal, *TINY, "--sprt", "elo1=5"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "SPRT elo0=0, elo1=5, alpha=0.05, beta=0.05 (elo0, alpha, beta: the defaults): "
        "stops when the LLR leaves (-3.18, 3.18) or the mixture leaves (-4.61, 4.61)"
    )
    units = [line for line in lines if line.startswith("units ")]
    assert len(units) == 9  # the mixture crosses 4.61 at the ninth straight win
    for n, line in enumerate(units, start=1):
        assert line.startswith(f"units {n} games {2 * n} pairs W/D/L {n}/0/0 score 1.000 ")
        assert "every unit won: Elo > " in line and "+/- " not in line
        assert re.search(
            r" LLR \d+\.\d\d \(-3\.18, 3\.18\), mixture \d+\.\d\d \(-4\.61, 4\.61\)", line
        )
        # A sweep's rate is exact: the units still needed count down to the stop.
        left = len(units) - n
        ahead = f" - ~{left} more unit{'s' * (left != 1)} at this rate (mixture)"
        assert line.endswith(ahead if left else " - H1 accepted (mixture)"), line
    final = lines[len(units) + 1 :]
    assert final[0].startswith(f"Results of greedy vs illegal: {len(units)} units, ")
    assert final[1].startswith("Elo difference: more than +") and final[1].endswith(
        "(95%, one-sided: every unit won)"
    )
    assert final[2].endswith("- H1 was accepted by the mixture test")
    assert "+/- 0.0" not in done.stdout
    assert_none_left(token)

    # No --sprt: every value is a default, and the line says so (on stderr with --json).
    out = subprocess.run(
        [*args[:-2], "--max-games", "2", "--json"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 1, out.stderr
    assert out.stderr.splitlines()[0].startswith(
        "SPRT elo0=0, elo1=5, alpha=0.05, beta=0.05 (all the defaults): stops when"
    )
    result = json.loads(out.stdout)
    assert (result["unanimous"], result["to_go"], result["to_go_by"]) == ("won", 8, "mixture")
    assert result["elo_low"] == pytest.approx(-511.5, abs=0.1) and result["elo_ci95"] > 800
    assert_none_left(token)


def test_resume_with_nothing_to_resume_says_so_and_starts_the_match(tmp_path: Path) -> None:
    token = new_token()
    out = tmp_path / "typo"
    args = [REFEREE, "match", bot("greedy", token), bot("random", token), *TINY]
    args += ["--max-games", "2", "--out", str(out), "--resume"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # undecided after one unit: not H1
    said = f"referee: nothing to resume in {out}: starting a new match"
    assert done.stderr.splitlines().count(said) == 1, done.stderr
    assert (out / "league.db").is_file()
    assert_none_left(token)


def test_a_bot_that_cannot_start_is_named_as_the_command_names_it(tmp_path: Path) -> None:
    # NEW and BASE, and the field by its --field, not "bot 1" and "bot 2".
    good = bot("random", "x")
    ghost = str(tmp_path / "ghost.py")
    for args, said in (
        ([f"ghost={ghost}", good], "NEW (ghost): cannot start it: "),
        ([good, f"ghost={ghost}"], "BASE (ghost): cannot start it: "),
        ([good, good, "--table", "3", "--field", good, "--field", ghost], "--field 2 (ghost): "),
        (["x=", good], "NEW: empty command line"),
        ([good, "bad\tname=x"], "BASE: the name "),
    ):
        result = CliRunner().invoke(main, ["match", *args, *TINY])
        assert result.exit_code == 2, (args, result.output)
        assert result.stdout == ""
        assert result.stderr.startswith(f"referee: error: {said}"), result.stderr
        assert result.stderr.count("\n") == 1


def test_a_match_on_a_cluster_plays_its_games_on_the_workers(tmp_path: Path) -> None:
    token = new_token()
    out = tmp_path / "out"
    args = [REFEREE, "match", bot("greedy", token), bot("random", token), *TINY]
    args += ["--sprt", "elo0=-100,elo1=100", "--cluster", "local:1", "--out", str(out), "--json"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr  # no --max-games: until the test decides
    result = json.loads(done.stdout)
    assert result["verdict"] == "H1" and result["games"] == 2 * result["units"]
    with sqlite3.connect(out / "league.db") as db:
        workers = [w for (w,) in db.execute("SELECT worker FROM placements ORDER BY idx")]
    # Every game was played on the worker; some may have ended after the deciding unit.
    assert len(workers) >= result["games"] and all(w.startswith("tcp://") for w in workers)
    assert_none_left(token)


def test_a_report_saved_before_the_mixture_test_still_reads() -> None:
    # A match's standings keep its summary; one written before the mixture fields.
    old = {
        **{"new": "a", "base": "b", "verdict": "H1", "units": 22, "games": 44},
        **{"wins": 12, "draws": 8, "losses": 2, "score": 0.705, "raw_score": 0.705},
        **{"elo": 151.0, "elo_ci95": 116.7, "elo_low": 50.0, "elo_high": 283.4, "los": 0.999},
        **{"llr": 3.08, "lower": -2.94, "upper": 2.94, "luck_scale": 1.0},
        **{"elo0": 0.0, "elo1": 100.0, "alpha": 0.05, "beta": 0.05},
    }
    assert match_lines(old) == [
        "Results of a vs b: 22 units, 44 games, pairs W/D/L 12/8/2, score 0.705",
        "Elo difference: 151.0 +/- 116.7, LOS: 99.9 %",
        "SPRT ([0.00, 100.00]): LLR 3.08 (-2.94, 2.94) - H1 was accepted",
    ]


def test_the_live_line_is_rewritten_in_place_only_where_it_fits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sprt = Sprt(0, 5)
    sprt.add(Unit(1.0, 0.0))
    line = progress_line(sprt.summary())
    # Two units' lines, then the end of the live report; click leaves out the line's
    # erase-to-end escape, as stdout is not a terminal here.
    for columns, expected in (
        (len(line) + 1, f"\r{line}\r{line}\n"),  # rewritten in place, then a newline
        (len(line), f"\r{line}\n\r{line}\n"),  # too wide: each printed in full
    ):
        size = os.terminal_size((columns, 24))
        monkeypatch.setattr(shutil, "get_terminal_size", lambda size=size: size)
        lines = Lines()
        lines.live = True  # as on a terminal
        lines(sprt.summary())
        lines(sprt.summary())
        lines.end()
        assert capsys.readouterr().out == expected
