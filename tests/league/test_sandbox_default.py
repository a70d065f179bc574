"""A league sandboxes its bots by default, wherever bubblewrap works; where it does
not, the league says so in one line at the start, runs without, and its standings
record it. Asking for bwrap where it cannot work is an error before any game.

The machine without bubblewrap is made by leaving it out of PATH.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from referee.bots.sandbox import user_line

PY = sys.executable
BIN = Path(PY).parent
REFEREE = str(BIN / "referee")
RANDOM = str(Path(__file__).resolve().parents[2] / "sample_bots" / "random_bot.py")
NO_BWRAP = {**os.environ, "PATH": str(BIN), "COLUMNS": "150"}  # python and referee only
MISSING = "bubblewrap is not installed (Debian: apt-get install bubblewrap)"


def duel(folder: Path, sandbox: str | None = None) -> Path:
    """Two random bots, one game."""
    folder.mkdir()
    key = f'sandbox = "{sandbox}"\n' if sandbox else ""
    bots = "".join(
        f'[[bot]]\nname = "{name}"\ncommand = {json.dumps([PY, RANDOM])}\n{key}'
        for name in ("r1", "r2")
    )
    path = folder / "league.toml"
    path.write_text(
        '[league]\nname = "duel"\ntable = 2\ndeals = 1\nduplicate = false\nout = "out"\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n' + bots
    )
    return path


def referee(*args: str, env: dict[str, str] = NO_BWRAP) -> subprocess.CompletedProcess[str]:
    return subprocess.run([REFEREE, *args], env=env, capture_output=True, text=True, timeout=120)


def test_without_bubblewrap_a_league_says_so_runs_and_the_standings_record_it(
    tmp_path: Path,
) -> None:
    path = duel(tmp_path / "l")
    done = referee("league", str(path), "-q")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"referee: warning: bubblewrap does not work here ({MISSING}): r1, r2 run WITHOUT a "
        "sandbox and can read the logs of their games, and league.db, which holds the deal "
        "key (every hand of every game); the standings will say so"
    ]
    said = (
        f"NO SANDBOX: every bot ran without the sandbox ({MISSING}), as {user_line('none')}; "
        "they could read the logs of the games they played, and league.db, which holds the "
        "deal key (every hand of every game, those still to come included)"
    )
    assert said in " ".join(done.stdout.split())  # the printed standings
    out = tmp_path / "l" / "out"
    assert said in (out / "standings.md").read_text()
    standings = json.loads((out / "standings.json").read_text())
    assert standings["games"] == 1
    assert standings["sandbox"] == {
        "bots": {"r1": "none", "r2": "none"},
        "note": MISSING,
        "unsandboxed": ["r1", "r2"],
        "users": {"none": user_line("none")},
    }
    with sqlite3.connect(out / "league.db") as db:
        (kept,) = db.execute("SELECT value FROM meta WHERE key = 'sandbox'").fetchone()
    assert json.loads(kept) == standings["sandbox"]


def test_asking_for_bwrap_where_it_does_not_work_stops_before_any_game(tmp_path: Path) -> None:
    flag = referee("league", str(duel(tmp_path / "flag")), "--sandbox", "bwrap")
    assert flag.returncode == 2
    assert flag.stderr.splitlines() == [f"referee: error: --sandbox bwrap: {MISSING}"]
    key = referee("league", str(duel(tmp_path / "key", sandbox="bwrap")))
    assert key.returncode == 2
    assert key.stderr.splitlines() == [f'referee: error: bot[0].sandbox = "bwrap": {MISSING}']
    assert not (tmp_path / "flag" / "out").exists() and not (tmp_path / "key" / "out").exists()
    # `play` too; its default stays none, and `--sandbox auto` says it runs without.
    bots = [f"{PY} {RANDOM}"] * 2
    tiny = ["--set", "max_pip=6", "--set", "rounds=single", "--log-dir", str(tmp_path)]
    played = referee("play", "--sandbox", "bwrap", *tiny, *bots)
    assert played.returncode == 2
    assert played.stderr.splitlines() == [f"referee: error: --sandbox bwrap: {MISSING}"]
    auto = referee("play", "--sandbox", "auto", "-q", *tiny, *bots)
    assert auto.returncode == 0, auto.stderr
    assert auto.stderr.splitlines() == [
        f"referee: warning: --sandbox auto: bots run WITHOUT a sandbox ({MISSING})"
    ]
    assert referee("play", "-q", *tiny, *bots).stderr == ""
