"""Isolation that holds whoever runs the referee: real hostile bot processes in the
bubblewrap sandbox, with the referee run as root and as an unprivileged user.

The suite runs as whichever user CI gives it. As root, each test runs twice: once
as root, and once as a throwaway unprivileged user (a uid no account has, through
`setpriv`, with Debian's python3 and this checkout on PYTHONPATH, since the
referee's own interpreter may lie in root's home). As a user, the root run skips.

- `break_out.py` tries what a bot run as root could: read /etc/shadow, open
  /proc/sys for writing, remount /usr and its own folder read-write, write into its
  own folder, /usr, /etc, the referee's virtual environment and its code. All fail,
  and it has no capability, `no_new_privs`, and (as root) a host uid of its own.
- `peek.py`, in a league signed with the organiser's key kept in the bots' own folder,
  reads neither the key, the league file nor the output folder.
- `stash.py` keeps its request (its hand) in every folder it can write and looks
  for what other processes kept, in a duplicate league that starts a fresh process
  for every game: it finds nothing, though the same bots without the sandbox, kept
  to one shared folder, find each other's (the test has teeth).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import referee
from referee.bots.sandbox import BOT_UID_BASE, BOT_UIDS, check_bwrap

ROOT = Path(__file__).parents[1]
BOTS = Path(__file__).parent / "bots"
PROBLEM = check_bwrap()
SYSTEM_PYTHON = "/usr/bin/python3"
THROWAWAY_UID = 1_890_000_000 + os.getpid() % 10_000  # below the bots' own uids
needs_bwrap = pytest.mark.skipif(
    PROBLEM is not None and not os.environ.get("CI"),
    reason=f"SANDBOX TESTS SKIPPED: bubblewrap cannot sandbox here: {PROBLEM}",
)
MODES = ["root", "user"]


def searchable_by_others(path: Path) -> None:
    """Let other users pass through `path` and every folder above it (search permission,
    o+x: they may open what they know the name of, never list a folder). The throwaway
    user imports the referee from this checkout and its venv, and a checkout cloned
    into `mktemp -d` (mode 0700, as CI may make it) would keep it out. The permission is
    left in place: taking it back while another test worker's user run goes on would
    break that run, and it reveals no file name."""
    for folder in (path, *path.parents):
        mode = stat.S_IMODE(folder.stat().st_mode)
        if not mode & stat.S_IXOTH:
            folder.chmod(mode | stat.S_IXOTH)


class Runner:
    """How to run the referee's CLI as one kind of user, and the python its bots use."""

    def __init__(self, mode: str, folder: Path) -> None:
        self.mode = mode
        self.folder = folder  # writable by that user
        site = [p for p in sys.path if p.endswith("site-packages")]
        if mode == "root" or os.geteuid() != 0:
            self.prefix = [sys.executable, "-m", "referee"]
            self.python = sys.executable
            self.env = {**os.environ}
        else:
            for path in (ROOT, *map(Path, site)):
                searchable_by_others(path)
            self.prefix = [
                "setpriv",
                f"--reuid={THROWAWAY_UID}",
                f"--regid={THROWAWAY_UID}",
                "--clear-groups",
                "--",
                SYSTEM_PYTHON,
                "-m",
                "referee",
            ]
            self.python = SYSTEM_PYTHON
            self.env = {
                "PATH": "/usr/bin:/bin",
                "HOME": str(folder),
                "LANG": "C.UTF-8",
                "PYTHONPATH": os.pathsep.join([str(ROOT), *site]),
            }
            if os.environ.get("CI"):
                self.env["CI"] = os.environ["CI"]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.prefix, *args],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(params=MODES)
def runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    mode = str(request.param)
    if PROBLEM is not None:
        pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {PROBLEM}")
    if mode == "root" and os.geteuid() != 0:
        pytest.skip("the referee does not run as root here")
    if mode == "user" and os.geteuid() == 0 and not Path(SYSTEM_PYTHON).exists():
        pytest.fail(f"no {SYSTEM_PYTHON} for the unprivileged run")
    folder = Path(tempfile.mkdtemp(prefix="isolation-"))
    folder.chmod(0o755)  # the bots' working folder: as root, others must read it
    if mode == "user" and os.geteuid() == 0:
        os.chown(folder, THROWAWAY_UID, THROWAWAY_UID)
    try:
        yield Runner(mode, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def reports(folder: Path) -> list[dict[str, object]]:
    """The JSON lines the bots wrote to their stderr files below `folder`."""
    found = []
    for path in sorted(folder.rglob("*.stderr")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                found.append(json.loads(line))
    return found


@needs_bwrap
def test_a_sandboxed_bot_cannot_break_out(runner: Runner) -> None:
    venv = Path(sys.prefix)
    code = Path(referee.__file__).parent
    result = runner.run(
        "play",
        "--sandbox",
        "bwrap",
        "--rules",
        "standard",
        "--set",
        "max_pip=6",
        "--log-dir",
        str(runner.folder / "logs"),
        f"out={runner.python} {BOTS / 'break_out.py'} {venv} {code} {ROOT}",
        f"again={runner.python} {BOTS / 'break_out.py'}",
    )
    found = reports(runner.folder / "logs")
    assert len(found) == 2, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    report = found[0]
    assert report["cap_eff"] == "0000000000000000"
    assert report["cap_bnd"] == "0000000000000000" or runner.mode == "user"
    assert report["no_new_privs"] == "1"
    assert report["oom_score_adj"] == "1000"  # out of memory, bots go first
    if os.geteuid() == 0 and runner.mode == "root":
        assert BOT_UID_BASE <= int(str(report["uid"])) < BOT_UID_BASE + BOT_UIDS
    else:
        assert report["uid"] != 0
    broken = [key for key, value in report.items() if value is True]
    assert broken == [], report


@needs_bwrap
def test_no_process_finds_what_another_kept(runner: Runner) -> None:
    assert reports_of_stash_league(runner, sandbox="bwrap") == (0, True)


def test_the_stash_bots_find_each_other_without_a_sandbox(tmp_path: Path) -> None:
    # The control: the same league, the bots kept to one shared folder, no sandbox.
    shared = tmp_path / "shared"
    shared.mkdir()
    tmp_path.chmod(0o755)
    runner = Runner("root", tmp_path)
    found, wrote = reports_of_stash_league(runner, sandbox="none", folder=str(shared))
    assert wrote and found > 0


def reports_of_stash_league(runner: Runner, *, sandbox: str, folder: str = "") -> tuple[int, bool]:
    """Play a small duplicate league of stash bots, a fresh process for each game; the
    files of other processes they found, and whether every game's bots wrote some."""
    bots = "".join(
        f"""
[[bot]]
name = "stash{i}"
command = "{runner.python} {BOTS / "stash.py"} {folder}"
restart = "always"
sandbox = "{sandbox}"
"""
        for i in range(3)
    )
    league = runner.folder / "league.toml"
    league.write_text(
        f"""
[league]
name = "stash"
table = 3
deals = 3
duplicate = true
out = "out"

[rules]
preset = "standard"
max_pip = 6
rounds = "single"
{bots}"""
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(league, THROWAWAY_UID, THROWAWAY_UID)
    result = runner.run("league", str(league), "--jobs", "2", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    standings = (runner.folder / "out" / "standings.md").read_text()
    if sandbox == "bwrap" and os.geteuid() == 0 and runner.mode == "root":
        assert "as an unprivileged user of its own (uid 1900000000+" in standings
    elif sandbox == "bwrap":
        assert "inside a user namespace, with no capability" in standings
    found = reports(runner.folder / "out")
    assert len(found) >= 9 * 3 // 3, result.stdout + result.stderr
    return sum(int(str(r["found"])) for r in found), all(int(str(r["wrote"])) > 0 for r in found)


@needs_bwrap
def test_a_sandboxed_bot_cannot_read_the_signing_key_beside_it(runner: Runner) -> None:
    # The organiser's key (issue 27) sits in the bots' own folder, beside the league file
    # and the output folder: a bot that read it could sign results in the organiser's
    # name. tests/bots/peek.py tries every one of them on its second turn.
    made = runner.run("keygen", "organiser.key")
    assert made.returncode == 0, made.stdout + made.stderr
    paths = ["organiser.key", "league.toml", "out"]
    command = json.dumps([runner.python, str(BOTS / "peek.py"), *paths])
    bots = "".join(f'[[bot]]\nname = "p{i}"\ncommand = {command}\n' for i in (1, 2))
    league = runner.folder / "league.toml"
    league.write_text(
        '[league]\nname = "signed"\ntable = 2\ndeals = 1\nduplicate = false\nout = "out"\n'
        'sign = "organiser.key"\n[rules]\nmax_pip = 6\nrounds = "single"\n' + bots
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(league, THROWAWAY_UID, THROWAWAY_UID)
    result = runner.run("league", str(league), "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = {(str(r["path"]), r["got"]) for r in reports(runner.folder / "out")}
    assert seen == {(p, False) for p in paths}, seen
    # The league signed with it all the same.
    assert (runner.folder / "out" / "results.json.minisig").is_file()


@needs_bwrap
def test_as_root_a_bot_folder_others_cannot_read_is_refused_in_one_line(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root runs sandboxed bots as another user")
    if PROBLEM is not None:
        pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {PROBLEM}")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    shutil.copy(BOTS / "break_out.py", closed)
    shutil.copy(BOTS / "_common.py", closed)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee",
            "play",
            "--sandbox",
            "bwrap",
            "--log-dir",
            str(tmp_path / "logs"),
            f"a={sys.executable} break_out.py",
            f"b={sys.executable} break_out.py",
        ],
        cwd=closed,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert f"{closed} (mode 0700) is not readable by other users" in line
    assert f"chmod o+rx {closed}" in line


@needs_bwrap
def test_an_arenas_sandboxed_bots_cannot_read_its_ledger_or_file(runner: Runner) -> None:
    # The arena's ledger holds its deal key and every hand of the games in play; its
    # folder and file sit in the bots' own folder here. tests/bots/peek.py tries both.
    paths = ["arena.toml", "out"]
    command = json.dumps([runner.python, str(BOTS / "peek.py"), *paths])
    bots = "".join(f'[[bot]]\nname = "p{i}"\ncommand = {command}\n' for i in (1, 2))
    arena = runner.folder / "arena.toml"
    arena.write_text(
        '[arena]\nname = "sealed"\ntables = 2\nout = "out"\nsandbox = "bwrap"\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n' + bots
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(arena, THROWAWAY_UID, THROWAWAY_UID)
    proc = subprocess.Popen(
        [*runner.prefix, "arena", str(arena), "-j", "1", "-q"],
        cwd=runner.folder,
        env=runner.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if (runner.folder / "out" / "arena.db").is_file() and _arena_games(runner) >= 4:
                break
            time.sleep(0.2)
        stop = runner.run("arena", "stop", "out")
        assert stop.returncode == 0, stop.stdout + stop.stderr
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output
    seen = {(str(r["path"]), r["got"]) for r in reports(runner.folder / "out")}
    assert seen == {(p, False) for p in paths}, seen


@needs_bwrap
def test_an_events_sandboxed_bots_cannot_read_its_folder_or_file(runner: Runner) -> None:
    # An event's folder holds its deal key (event.db: every round's deals follow from it)
    # and every table's logs; its tables are leagues in folders below it. Here the event's
    # folder and file sit in the bots' own folder. tests/bots/peek.py tries both.
    paths = ["event.toml", "out"]
    command = json.dumps([runner.python, str(BOTS / "peek.py"), *paths])
    bots = "".join(f'[[bot]]\nname = "p{i}"\ncommand = {command}\n' for i in (1, 2))
    event = runner.folder / "event.toml"
    event.write_text(
        '[event]\nname = "sealed"\ntable = 2\nout = "out"\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n'
        + bots
        + '[[stage]]\nformat = "swiss"\nswiss_rounds = 1\n'
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(event, THROWAWAY_UID, THROWAWAY_UID)
    result = runner.run("event", str(event), "--sandbox", "bwrap", "-j", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = {(str(r["path"]), r["got"]) for r in reports(runner.folder / "out")}
    assert seen == {(p, False) for p in paths}, seen


def _arena_games(runner: Runner) -> int:
    """The arena games recorded so far (0 while its ledger is being made)."""
    with contextlib.closing(sqlite3.connect(runner.folder / "out" / "arena.db")) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM games WHERE stage = 'arena'").fetchone()[0])
        except sqlite3.Error:
            return 0


def test_a_sandboxed_search_bot_sees_the_engine_and_nothing_else_of_the_referee(
    runner: Runner,
) -> None:
    # Issue 29: a sandboxed Python bot may import referee.rules and referee.botkit (code,
    # no state of any game), so the search bot plays; the rest of the referee's package
    # stays out of sight, whoever runs the referee. tests/bots/peek.py looks.
    package = ROOT / "referee"
    looked = [package / "rules", package / "botkit", package / "league", package / "commands"]
    search = json.dumps(
        [runner.python, str(ROOT / "sample_bots" / "search_bot.py"), "--budget-ms", "20"]
    )
    peek = json.dumps([runner.python, str(BOTS / "peek.py"), *map(str, looked)])
    # The unprivileged run's system python cannot reach the venv's msgspec inside the
    # sandbox (only the referee's own interpreter is shown), so there a second peek bot
    # takes the search bot's seat: what is visible is checked both ways, the search bot
    # playing sandboxed as root here and in tests/test_sandbox_view.py.
    first = search if runner.mode == "root" or os.geteuid() != 0 else peek
    league = runner.folder / "league.toml"
    league.write_text(
        '[league]\nname = "engine"\ntable = 2\ndeals = 1\nduplicate = false\nout = "out"\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n'
        f'[[bot]]\nname = "first"\ncommand = {first}\n'
        f'[[bot]]\nname = "peek"\ncommand = {peek}\n'
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(league, THROWAWAY_UID, THROWAWAY_UID)
    result = runner.run("league", str(league), "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = {str(r["path"]): r["got"] for r in reports(runner.folder / "out")}
    assert seen == {
        str(package / "rules"): True,
        str(package / "botkit"): True,
        str(package / "league"): False,
        str(package / "commands"): False,
    }, seen
