"""No bot can take a league down by exhausting a resource: a fork bomb, a disk filler
(with an unlinked open file), a descriptor hog and a memory hog, each a real bot
process, play a league with two ordinary bots. Every game is recorded, the games
without a hog have no fault, each hog ran into its own limit (its stderr says how
far it got), and a hog that dies of it gets a `resource_limit` fault naming the
limit. Run sandboxed as root and as a throwaway user (see test_isolation), and
the fork bomb without the sandbox too where the referee is not root (root is not
held by RLIMIT_NPROC: docs/sandbox.md says so).
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from tests.test_isolation import BOTS, Runner, needs_bwrap, reports
from tests.test_isolation import runner as runner

LIMITS = "max_processes = 40\nscratch_mb = 8\nmax_files = 64\nmemory_mb = 512\n"


def league_file(runner: Runner, hogs: list[str], sandbox: str) -> str:
    plain = [f"plain{i}" for i in range(2)]
    bots = "".join(
        f"""
[[bot]]
name = "{name}"
command = "{runner.python} {BOTS / "hog.py"} {" ".join(args)}"
sandbox = "{sandbox}"
{LIMITS}"""
        for name, args in [(f"hog-{h.replace(' ', '-')}", h.split()) for h in hogs]
    )
    bots += "".join(
        f"""
[[bot]]
name = "{name}"
command = "{runner.python} {BOTS / "hog.py"} none"
sandbox = "{sandbox}"
"""
        for name in plain
    )
    path = runner.folder / "league.toml"
    path.write_text(
        f"""
[league]
name = "hogs"
table = 2
deals = 1
duplicate = false
out = "out"

[rules]
preset = "standard"
max_pip = 6
rounds = "single"

[time]
move_ms = 5000
bank_ms = 30000
{bots}"""
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(path, os.stat(runner.folder).st_uid, os.stat(runner.folder).st_uid)
    return str(path)


Games = list[tuple[list[str], list[dict[str, object]]]]


def play(runner: Runner, hogs: list[str], sandbox: str) -> Games:
    result = runner.run("league", league_file(runner, hogs, sandbox), "--jobs", "2", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    db = sqlite3.connect(runner.folder / "out" / "league.db")
    try:
        rows = db.execute("SELECT seats, faults FROM games ORDER BY idx").fetchall()
    finally:
        db.close()
    n = len(hogs) + 2
    assert len(rows) == n * (n - 1) // 2  # every game of the round robin recorded
    return [(json.loads(seats), json.loads(faults)) for seats, faults in rows]


def check(games: Games, runner: Runner, hogs: list[str]) -> None:
    for seats, faults in games:
        if not any(name.startswith("hog-") for name in seats):
            assert faults == [], (seats, faults)
    said = {r["hog"]: r for r in reports(runner.folder / "out") if "hog" in r}
    for hog in hogs:
        what = hog.split()[0]
        assert said[what]["error"] is not None, said  # stopped by its limit, not the test
        if "crash" in hog:
            name = f"hog-{hog.replace(' ', '-')}"
            details = [
                str(f["detail"])
                for seats, faults in games
                if name in seats
                for f in faults
                if f["kind"] == "resource_limit" and seats[int(str(f["seat"]))] == name
            ]
            assert details, games
    if "processes" in said:
        assert int(str(said["processes"]["processes"])) <= 40
    if "disk" in said:  # its three tmpfs of 8 MiB, and nothing else
        assert int(str(said["disk"]["bytes"])) <= 3 * 8 << 20


@needs_bwrap
def test_hogs_in_the_sandbox_take_nothing_from_the_league(runner: Runner) -> None:
    hogs = ["processes", "disk", "files crash", "memory crash"]
    check(play(runner, hogs, "bwrap"), runner, hogs)


def test_a_fork_bomb_without_the_sandbox_is_held_for_a_user(runner: Runner) -> None:
    if runner.mode == "root":
        pytest.skip("root is not held by RLIMIT_NPROC; the sandboxed run covers root")
    hogs = ["processes"]
    check(play(runner, hogs, "none"), runner, hogs)
