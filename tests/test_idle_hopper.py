"""A kept bot process computes nothing while it waits for its next game, even one
whose processes hop from pid to pid (issue 37, part 4).

`tests/bots/pid_hop.py` computes from each game's end to the next one's start in a
chain of processes: each link computes 0.2 ms of CPU, forks the next link and exits
at once, and every millisecond of CPU is reported on a pipe. In a league of four
bots (table 2, one deal, kept processes) its process plays the first game, waits
through the next two, and plays two more; at each game's start it reports the
chain's CPU since its last game ended. That idle CPU must stay below what a single
turn of it costs (its first turn of a game runs the chain for 50 units, 50 ms of
CPU): the bot was frozen but for the moments around its wait. Or, where it could
not be frozen for sure (no freezer cgroup, and SIGSTOP passes that keep finding new
pids), it was ended and a fresh process played on.

Before this, SIGSTOP passes over a scan of all /proc missed the short-lived links
(each gone by the time the scan read it) and called the bot stopped, or gave up
after fifty passes and kept it all the same: the chain computed through the games
it waited for. Run with the referee as root (a freezer cgroup: cgroup v2's
`cgroup.freeze` here), as a throwaway user (see test_isolation: SIGSTOP passes),
and as root with REFEREE_CGROUP=v1 (the v1 freezer).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from referee.bots.cgroups import SWITCH, _v1_parent
from tests.test_isolation import BOTS, Runner, needs_bwrap, reports
from tests.test_isolation import runner as runner
from tests.test_tree_memory import assert_no_v1_cgroup_left, v1_cgroups, write_league


def league_file(runner: Runner) -> str:
    bots = "".join(
        f"""
[[bot]]
name = "{name}"
command = "{runner.python} {BOTS / script}"
sandbox = "bwrap"
"""
        # File order makes the schedule (a, hop), (a, b), (a, c), (hop, b), (hop, c),
        # (b, c): hop's process waits for two games, then plays two in a row.
        for name, script in [
            ("a", "lowest.py"),
            ("hop", "pid_hop.py"),
            ("b", "lowest.py"),
            ("c", "lowest.py"),
        ]
    )
    return str(write_league(runner, "idle-hopper", bots))


def check(runner: Runner, freezer_cgroup: bool) -> None:
    before = v1_cgroups()
    result = runner.run("league", league_file(runner), "--jobs", "1", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert_no_v1_cgroup_left(before)
    out = runner.folder / "out"
    said = [r for r in reports(out) if "pid_hop" in r]
    assert len(said) == 3, said  # its three games' starts
    kept = [r for r in said if r["idle_units"] is not None]
    for report in kept:
        assert int(str(report["idle_units"])) < int(str(report["turn_units"])), said
    if freezer_cgroup:
        assert len(kept) == 2, said  # its freezer cgroup froze it: kept, never ended
    # Where it could not be frozen it was ended, and a fresh process played on.
    assert len(list(out.rglob("hop-*.stderr"))) == 3 - len(kept), said


@needs_bwrap
# Its subject is timing: how much the chain computes between a game's end and the
# freeze. Once, in a full run with three other workers busy (load 7), the SIGSTOP
# passes (the throwaway user's variant, no freezer cgroup) let it compute 164 units
# where one turn is 50: the referee waited for a core while the chain had one. Run by
# itself, the other tests' load is not in its figure (the passes also scan again after
# their state check now, see `BotProcess._stop_all`).
@pytest.mark.alone
def test_a_pid_hopping_bot_computes_nothing_while_it_waits_between_games(
    runner: Runner,
) -> None:
    check(runner, freezer_cgroup=runner.mode == "root" and os.geteuid() == 0)


@needs_bwrap
# Timing too, as the test above: in a full quiet run (the suite's own load, 9.7) the
# chain computed 78 units between a game's end and the v1 freeze, one turn being 50.
@pytest.mark.alone
def test_a_v1_freezer_cgroup_freezes_a_pid_hopping_bot_too() -> None:
    # A host without cgroup v2 (REFEREE_CGROUP=v1 makes this one such): the v1
    # freezer hierarchy holds the bot, as root.
    if os.geteuid() != 0:
        pytest.skip("only root may make v1 cgroups here")
    folder = Path(tempfile.mkdtemp(prefix="idle-hopper-"))
    folder.chmod(0o755)
    runner = Runner("root", folder)
    runner.env[SWITCH] = "v1"
    try:
        check(runner, freezer_cgroup=_v1_parent("freezer") is not None)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
