"""A bot's memory limit holds for all its processes together (issue 37, part 2).

`tests/bots/tree_hog.py` forks five children that each take and touch 60 MB, well
under the 150 MB a process may address (RLIMIT_AS), so 300 MB together; it plays a
league game against `tests/bots/memory_hog.py`, an honest bot that touches 80 MB in
one process, under the same `memory_mb = 150`. The hog gets a `resource_limit` fault
naming memory; the honest bot has no fault and wins. Held three ways, all sandboxed:

- the referee as root: a memory cgroup (on a hybrid host like CI's the v1 one, its
  cgroup v2 having no memory controller; `memory.max` where it has one), which
  the hog never gets past: it never holds all five children;
- the referee as a throwaway unprivileged user (see test_isolation), which may make
  no cgroup: the bot keeper sums the bot's memory and ends it (the five children
  may all take their share between two of its checks: docs/sandbox.md);
- the referee as root with REFEREE_CGROUP=off: the same fallback.

No v1 cgroup is left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import pytest

from referee.bots import cgroups
from referee.bots.cgroups import SWITCH
from tests.test_isolation import BOTS, THROWAWAY_UID, Runner, needs_bwrap, reports
from tests.test_isolation import runner as runner

MEMORY_MB = 150


def memory_cgroups() -> bool:
    """Whether a referee run here as this test's user gives its bots memory cgroups."""
    parent = cgroups._parent()
    if parent is not None and "memory" in (parent / "cgroup.subtree_control").read_text():
        return True
    return cgroups._v1_parent("memory") is not None


def v1_cgroups() -> set[Path]:
    """The v1 memory and freezer cgroups referees made below ours."""
    parents = [cgroups._v1_parent(controller) for controller in ("memory", "freezer")]
    return {entry for parent in parents if parent for entry in parent.glob("referee-*")}


def assert_no_v1_cgroup_left(before: set[Path], timeout_s: float = 15.0) -> None:
    """No v1 cgroup made since `before` outlives the referee that made it (others, of
    referees alive in parallel tests, may; those of a referee killed by another test
    go within moments: its bot keepers remove them)."""

    def stale() -> set[Path]:
        return {p for p in v1_cgroups() - before if not cgroups._alive(int(p.name.split("-")[1]))}

    deadline = time.monotonic() + timeout_s
    while stale() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stale() == set()


def write_league(runner: Runner, name: str, bots: str) -> Path:
    """A league file for `runner` of one deal at 2-seat tables, double-6, with clocks a
    loaded machine keeps to, and the `[[bot]]` tables `bots`; the throwaway user's own
    when it runs the referee."""
    league = runner.folder / "league.toml"
    league.write_text(
        f"""
[league]
name = "{name}"
table = 2
deals = 1
duplicate = false
out = "out"

[rules]
preset = "standard"
max_pip = 6

[time]
move_ms = 10000
bank_ms = 60000
{bots}"""
    )
    if runner.mode == "user" and os.geteuid() == 0:
        os.chown(league, THROWAWAY_UID, THROWAWAY_UID)
    return league


def play(runner: Runner) -> tuple[list[str], list[dict[str, object]], list[int]]:
    """The league's one game: its seats, faults and ranks."""
    bots = "".join(
        f"""
[[bot]]
name = "{name}"
command = "{runner.python} {BOTS / script} {args}"
sandbox = "bwrap"
memory_mb = {MEMORY_MB}
"""
        for name, script, args in [
            ("hog", "tree_hog.py", "5 60"),
            ("honest", "memory_hog.py", "80"),
        ]
    )
    league = write_league(runner, "tree-memory", bots)
    result = runner.run("league", str(league), "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    db = sqlite3.connect(runner.folder / "out" / "league.db")
    try:
        [(seats, faults, ranks)] = db.execute("SELECT seats, faults, ranks FROM games").fetchall()
    finally:
        db.close()
    return json.loads(seats), json.loads(faults), json.loads(ranks)


def check(runner: Runner, cgroup: bool) -> None:
    before = v1_cgroups()
    seats, faults, ranks = play(runner)
    assert_no_v1_cgroup_left(before)
    hog, honest = seats.index("hog"), seats.index("honest")
    assert [f["seat"] for f in faults] == [hog], faults  # the honest bot has none
    [fault] = faults
    assert fault["kind"] == "resource_limit", fault
    assert f"out of memory at the {MEMORY_MB} MB limit" in str(fault["detail"]), fault
    assert ranks[honest] == 1, ranks
    if cgroup:  # the kernel held it: the hog never had all five children at once
        held = [r for r in reports(runner.folder / "out") if "tree_hog" in r]
        assert all(int(str(r["tree_hog"])) < 5 for r in held), held
    # (Without a cgroup, five children may take their share between two checks.)


@needs_bwrap
def test_a_bot_over_its_memory_in_many_processes_is_ended_not_its_honest_neighbour(
    runner: Runner,
) -> None:
    check(runner, cgroup=runner.mode == "root" and os.geteuid() == 0 and memory_cgroups())


@needs_bwrap
def test_without_cgroups_the_bot_keeper_holds_the_memory_of_the_whole_bot() -> None:
    if os.geteuid() != 0:
        pytest.skip("the unprivileged run of the test above covers this without root")
    folder = Path(tempfile.mkdtemp(prefix="tree-memory-"))
    folder.chmod(0o755)
    runner = Runner("root", folder)
    runner.env[SWITCH] = "off"
    try:
        check(runner, cgroup=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
