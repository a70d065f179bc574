"""Faults of the command line itself, on real processes (issue 37, part 4).

- A stderr folder (`play --stderr-dir`) inside the bots' working folder, even inside
  the log folder there: the bots start and play, in bubblewrap, and see neither
  folder (an empty cover where each is), so no bot reads another's stderr file.
- A game, or a league run with --keep-going, in which no bot could start: one line
  saying so, exit status 2, never 0.
- Standard output that cannot be written (`> /dev/full`): one line on stderr naming
  it, exit status 4 (not 3, the referee's own disk full), no traceback, with or
  without -q, and every file on disk complete.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.bots.sandbox import check_bwrap
from referee.logs.gamelog import log_bytes, read_log
from referee.logs.replay import verify

PY = sys.executable
BIN = Path(PY).parent
ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
TINY = ["--set", "max_pip=6", "--set", "rounds=single", "--seed", "7"]
DEAD = "import sys; print('no strategy here', file=sys.stderr); sys.exit(3)"
STDOUT_LOST = 4
PROBLEM = check_bwrap()
needs_bwrap = pytest.mark.skipif(
    PROBLEM is not None and not os.environ.get("CI"),
    reason=f"SANDBOX TESTS SKIPPED: bubblewrap cannot sandbox here: {PROBLEM}",
)

# Says on its stderr what it sees of the places named in its arguments (a folder's
# names, or a file's text), then plays as the random sample bot (bot.py beside it).
PEEK = """\
import json, os, runpy, sys
seen = {}
for place in sys.argv[1:]:
    try:
        if os.path.isdir(place):
            seen[place] = sorted(os.listdir(place))
        else:
            with open(place) as handle:
                seen[place] = handle.read()
    except OSError as exc:
        seen[place] = exc.strerror
print("PEEK " + json.dumps(seen), file=sys.stderr, flush=True)
sys.argv = ["bot.py"]
runpy.run_path("bot.py", run_name="__main__")
"""


def referee(
    *args: str, cwd: Path, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "referee"), *args],
        cwd=cwd,
        env=ENV,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        check=False,
    )


def to_dev_full(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The referee run with /dev/full as its standard output: every write to it fails
    with ENOSPC, as on a full disk."""
    with open("/dev/full", "w") as full:
        return referee(*args, cwd=cwd, stdout=full.fileno())


def one_error_line(stderr: str) -> str:
    """The only line of `stderr`, an error of the referee's (no traceback)."""
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith("referee: error: "), stderr
    return lines[0]


def checked(path: Path) -> None:
    """A finished game log (compressed, with its footer) that the engine verifies."""
    assert path.name.endswith(".jsonl.gz"), path
    assert json.loads(log_bytes(path).splitlines()[-1])["type"] == "footer"
    verdict = verify(read_log(path))
    assert verdict.ok and verdict.complete, verdict


# ------------------------------------------------- a stderr folder in the bots' folder


GONE = "No such file or directory"


@needs_bwrap
@pytest.mark.parametrize(
    ("log_dir", "stderr_dir", "view"),
    [
        # The stderr folder inside the log folder, both in the bots' folder.
        ("out", "out/errs", {"out": [], "out/errs": GONE, "out/errs/other.stderr": GONE}),
        # The log folder inside the stderr folder.
        ("out/logs", "out", {"out": [], "out/logs": GONE, "out/other.stderr": GONE}),
        # The log folder elsewhere.
        (None, "errs", {"errs": [], "errs/other.stderr": GONE}),
    ],
    ids=["stderr-in-logs", "logs-in-stderr", "logs-elsewhere"],
)
def test_a_stderr_folder_in_the_bots_folder_is_hidden_and_the_bots_play(
    tmp_path: Path, log_dir: str | None, stderr_dir: str, view: dict[str, object]
) -> None:
    if PROBLEM is not None:
        pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {PROBLEM}")
    bots = tmp_path / "bots"  # the bots' working folder (readable by others, as root)
    bots.mkdir(mode=0o755)
    (bots / "bot.py").write_text((SAMPLES / "random_bot.py").read_text())
    (bots / "peek.py").write_text(PEEK)
    # A stderr file already there, as another bot's would be.
    (bots / stderr_dir).mkdir(parents=True)
    (bots / stderr_dir / "other.stderr").write_text("SECRET\n")
    logs = bots / log_dir if log_dir is not None else tmp_path / "logs"
    peek = f"{PY} peek.py {' '.join(view)}"
    done = referee(
        "play",
        "--sandbox",
        "bwrap",
        "--log-dir",
        log_dir or str(logs),
        "--stderr-dir",
        stderr_dir,
        *TINY,
        "--json",
        f"a={peek}",
        f"b={peek}",
        cwd=bots,
    )
    assert done.returncode == 0, done.stderr
    seats = json.loads(done.stdout)["seats"]
    assert [s["status"] for s in seats] == ["ok", "ok"], seats
    assert all(s["faults"] == [] for s in seats), seats
    for seat in seats:
        # Each bot saw an empty folder where the stderr folder (or the log folder
        # holding it) is, nothing inside it, and no stderr file of another bot.
        lines = (bots / seat["stderr"]).read_text().splitlines()
        seen = [json.loads(line[5:]) for line in lines if line.startswith("PEEK ")]
        assert seen == [view], lines
    (log,) = logs.glob("*.jsonl.gz")
    checked(log)


# ------------------------------------------------------------ nothing could be played


def test_a_game_in_which_no_bot_starts_fails_in_one_line(tmp_path: Path) -> None:
    dead = f"{PY} -c {shlex.quote(DEAD)}"
    done = referee("play", *TINY, "--log-dir", "logs", f"x={dead}", f"y={dead}", cwd=tmp_path)
    assert done.returncode == 2, done
    line = one_error_line(done.stderr)
    assert line.startswith("referee: error: no bot could start, so the game was not played")
    # It names the first seat and why: it exited before its ready, or (a bot that is gone
    # before the hello reaches it, as a loaded machine may make it) the hello found it gone.
    assert "x: exited before ready" in line or "x: could not send hello" in line, line
    (log,) = (tmp_path / "logs").glob("*.jsonl.gz")
    assert read_log(log).footer is not None  # the log says what happened


def test_a_game_in_which_one_bot_starts_is_played(tmp_path: Path) -> None:
    dead = f"x={PY} -c {shlex.quote(DEAD)}"
    random = f"r={PY} {SAMPLES / 'random_bot.py'}"
    done = referee("play", *TINY, "--log-dir", "logs", dead, random, cwd=tmp_path)
    assert done.returncode == 0, done


def league_file(folder: Path, bots: Mapping[str, Sequence[str]], **league: Any) -> Path:
    """A league of one deal at tables of two (two games), double-6, one round."""
    settings = {"name": "t", "table": 2, "deals": 1, "seed": 3, "out": "out", "jobs": 1, **league}
    lines = ["[league]", *(f"{k} = {json.dumps(v)}" for k, v in settings.items())]
    lines += ["", "[rules]", "max_pip = 6", 'rounds = "single"']
    for name, argv in bots.items():
        lines += ["", "[[bot]]", f"name = {json.dumps(name)}", f"command = {json.dumps(argv)}"]
    path = folder / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def recorded(out: Path) -> int:
    db = sqlite3.connect(out / "league.db")
    try:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    finally:
        db.close()


def test_keep_going_where_no_bot_ever_starts_fails_in_one_line(tmp_path: Path) -> None:
    dead = [PY, "-c", DEAD]
    path = league_file(tmp_path, {"x": dead, "y": dead})
    done = referee("league", str(path), "--sandbox", "none", "--keep-going", cwd=tmp_path)
    assert done.returncode == 2, done
    line = one_error_line(done.stderr)
    assert line.startswith(
        "referee: error: no bot could start in any of the 2 recorded games, so nothing was played"
    )
    # --keep-going recorded them, as it says, and the standings list every failed start.
    assert recorded(tmp_path / "out") == 2
    standings = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert len(standings["failed_starts"]) == 4


# ------------------------------------------------- standard output that cannot be written


@pytest.mark.parametrize("flag", [None, "-q", "--json"])
def test_play_to_dev_full_says_so_and_keeps_its_log(tmp_path: Path, flag: str | None) -> None:
    random = f"{PY} {SAMPLES / 'random_bot.py'}"
    extra = [flag] if flag else []
    done = to_dev_full("play", *TINY, *extra, "--log-dir", "logs", random, random, cwd=tmp_path)
    assert done.returncode == STDOUT_LOST, done.stderr
    lines = done.stderr.strip().splitlines()
    if flag == "--json":  # the rounds go to stderr then: the error is the last line
        assert "Traceback" not in done.stderr
        line = lines[-1]
    else:
        line = one_error_line(done.stderr)
    assert line.startswith("referee: error: cannot write to standard output: ")
    assert "No space left on device" in line
    (log,) = (tmp_path / "logs").glob("*.jsonl.gz")
    checked(log)


@pytest.fixture(scope="module", params=[None, "-q"], ids=["progress", "quiet"])
def full_league(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A league of two games run with /dev/full as its standard output."""
    folder = tmp_path_factory.mktemp("full-league")
    bots = {name: [PY, str(SAMPLES / f"{name}_bot.py")] for name in ("greedy", "random")}
    path = league_file(folder, bots)
    extra = [request.param] if request.param else []
    done = to_dev_full("league", str(path), "--sandbox", "none", *extra, cwd=folder)
    return done, folder / "out"


def test_a_league_to_dev_full_says_so_in_one_line(
    full_league: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, _ = full_league
    assert done.returncode == STDOUT_LOST, done.stderr
    line = one_error_line(done.stderr)
    assert line.startswith("referee: error: cannot write to standard output: ")
    assert "No space left on device" in line
    assert "league stopped" not in line  # its own disk is not full


def test_a_league_to_dev_full_keeps_every_result(
    full_league: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = full_league
    assert recorded(out) == 2
    logs = sorted((out / "logs").iterdir())
    assert len(logs) == 2
    for log in logs:
        checked(log)
    standings = json.loads((out / "standings.json").read_text())
    assert standings["games"] == 2
    assert (out / "standings.md").is_file() and (out / "results.json").is_file()
