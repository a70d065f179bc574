"""A bot that leaves a daemon the classic way (fork, setsid, fork) leaves nothing behind.

`tests/bots/double_fork.py` starts a grandchild that is in no process group of
the bot's and no child of it, and that carries the test's token. Whatever ends
the game (its normal end, a forfeit, a bot that kills its own keeper, Ctrl-C, or
SIGKILL of the referee) and whichever command runs it (`play`, `league`,
`serve`, a cluster worker), no process with the token may remain.

Two mechanisms are tested: a cgroup v2 per bot (`cgroup`, where this machine
lets the referee make them) and the keepers as child subreapers alone
(`subreaper`, forced with REFEREE_CGROUP=off). A bot that kills its own bot keeper
leaves its grandchild to the referee's keeper, a subreaper too, which kills it.
Small games keep it fast; one run covers several events where it stays readable.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import trio

from protocol.messages import TimeControl
from referee.bots import cgroups
from referee.bots.process import KEEPER, BotSpec
from referee.league.ledger import Ledger
from referee.play.runner import run_game
from referee.rules import preset
from tests._procs import assert_none_left, kill_all, new_token, processes_with
from tests.league.test_run import (
    ENV,
    GATE,
    REFEREE,
    Bot,
    bot,
    first,
    pinned,
    poll,
    run,
    write_league,
)
from tests.server.test_server import serve_with

PY = sys.executable
BOTS = Path(__file__).parent / "bots"
DOUBLE_FORK = str(BOTS / "double_fork.py")
CGROUPS = cgroups.enabled()
needs_cgroups = pytest.mark.skipif(
    not CGROUPS, reason="CGROUP TESTS SKIPPED: this machine lets the referee make no cgroup v2"
)
MODES = [pytest.param("cgroup", marks=needs_cgroups), "subreaper"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How bots are held: the referee (here, or in a subprocess through ENV) reads it."""
    if request.param == "subreaper":
        monkeypatch.setenv(cgroups.SWITCH, "off")
    return str(request.param)


def referee_env(mode: str) -> dict[str, str]:
    return {**ENV, cgroups.SWITCH: "off" if mode == "subreaper" else "on"}


def our_cgroups() -> set[str]:
    """The cgroups referees made below ours (none are left once their bots are gone)."""
    parent = cgroups._parent()
    return {p.name for p in parent.glob("referee-*")} if parent is not None else set()


def assert_no_cgroup_left(before: set[str], timeout_s: float = 15.0) -> None:
    """No cgroup made since `before` outlives the referee that made it.

    Tests may run in parallel, so other referees, alive, have cgroups of their own:
    those of this process (the referee of in-process tests) and of referees that are
    gone (their pid is in the name) must go, which their keepers do within moments."""

    def stale() -> set[str]:
        def gone(pid: int) -> bool:
            return pid == os.getpid() or not cgroups._alive(pid)

        return {name for name in our_cgroups() - before if gone(int(name.split("-")[1]))}

    deadline = time.monotonic() + timeout_s
    while stale() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stale() == set()


def begin(tmp_path: Path) -> tuple[str, set[str], Path]:
    """A new token, the cgroups there are before the test, an empty folder for marks."""
    marks = tmp_path / "marks"
    marks.mkdir()
    return new_token(), our_cgroups(), marks


def grandchildren(*stderr_files: Path) -> list[str]:
    """The cgroup of each grandchild the bots reported (`-`: none of the referee's)."""
    found = []
    for path in stderr_files:
        for line in path.read_text().splitlines():
            if line.startswith("grandchild "):
                found.append(line.split()[3])
    return found


def assert_held(cgroup_paths: list[str], mode: str, count: int) -> None:
    """`count` grandchildren were made, each in a bot's cgroup exactly in cgroup mode."""
    assert len(cgroup_paths) == count, cgroup_paths
    in_ours = [Path(p).name.startswith("referee-") for p in cgroup_paths]
    assert in_ours == [mode == "cgroup"] * count, cgroup_paths


def fault_kinds(out: Path) -> list[list[str]]:
    """The kinds of fault of each recorded game, sorted."""
    ledger = Ledger(out / "league.db")
    try:
        return sorted([f["kind"] for f in r.faults] for r in ledger.records())
    finally:
        ledger.close()


def double_fork(name: str, misbehaviour: str, token: str, marks: Path | None = None) -> Bot:
    """The double-fork bot in a league; with `marks`, its grandchildren leave marks there,
    labelled by `name`, and each new process checks that earlier ones left nothing."""
    extra = ["--marks", str(marks), name] if marks is not None else []
    # Without the sandbox, whose PID namespace would end the grandchild by itself: these
    # tests are about the keeper and the cgroup. (It also leaves its marks on the host.)
    return bot(name, [PY, DOUBLE_FORK, misbehaviour, *extra], token, sandbox="none")


# ---------------------------------------------------------------- play


async def test_play_leaves_nothing_after_an_end_a_forfeit_and_a_killed_keeper(
    tmp_path: Path, mode: str
) -> None:
    token = new_token()
    before = our_cgroups()
    misbehaviours = ["play", "forfeit:1", "kill-keeper"]
    specs = [BotSpec(name=f"df-{m}", argv=(PY, DOUBLE_FORK, m, token)) for m in misbehaviours]
    rules = preset("standard", max_pip=6, rounds="single", players=len(specs))
    time = TimeControl(startup_ms=10000, move_ms=3000, bank_ms=10000)
    with trio.fail_after(60):
        report = await run_game(
            specs,
            rules,
            5,
            game_id="g",
            time=time,
            log_path=tmp_path / "g.jsonl",
            stderr_dir=tmp_path,
        )
    assert_none_left(token)
    faults = [[f.kind.value for f in seat] for seat in report.result.faults]
    assert faults == [[], ["illegal"], ["crash"]][: len(specs)]
    assert_held(grandchildren(*tmp_path.glob("*.stderr")), mode, len(specs))
    assert_no_cgroup_left(before)


async def test_a_bot_that_kills_the_referees_keeper_stops_nothing(
    tmp_path: Path, mode: str
) -> None:
    """The keeper that forks every bot keeper is killed mid-game: the bot keepers go on,
    the game ends as usual and leaves nothing, and the next game's bots start (the
    referee starts another keeper)."""
    token = new_token()
    before = our_cgroups()
    player = BotSpec(name="player", argv=(PY, DOUBLE_FORK, "play", token))
    killer = BotSpec(name="killer", argv=(PY, DOUBLE_FORK, "kill-keepers", token))
    rules = preset("standard", max_pip=6, rounds="single", players=2)
    time = TimeControl(startup_ms=10000, move_ms=3000, bank_ms=10000)
    keepers = []
    for game, specs in (("g1", [killer, player]), ("g2", [player, player])):
        (tmp_path / game).mkdir()
        with trio.fail_after(60):
            report = await run_game(
                specs,
                rules,
                5,
                game_id=game,
                time=time,
                log_path=tmp_path / f"{game}.jsonl",
                stderr_dir=tmp_path / game,
            )
        assert_none_left(token)
        assert [[f.kind.value for f in seat] for seat in report.result.faults] == [[], []]
        assert_held(grandchildren(*(tmp_path / game).glob("*.stderr")), mode, 2)
        keepers.append(KEEPER.pid)
    assert keepers[0] is None  # the killer did kill it: the second game started another
    assert keepers[1] is not None
    assert_no_cgroup_left(before)


# ---------------------------------------------------------------- league and serve


@pytest.mark.parametrize("command", ["league", "serve"])
async def test_a_league_leaves_nothing_after_ends_and_a_forfeit(
    tmp_path: Path, mode: str, command: str
) -> None:
    """Three games; each process of `forfeiter` forfeits its second game, so its
    first process ends after a forfeit (which the second checks when it starts) and
    its second after the league's end."""
    token, before, marks = begin(tmp_path)
    bots = [
        double_fork("forfeiter", "forfeit:2", token, marks),
        double_fork("player", "play", token),
        first("first", token),
    ]
    config = pinned(write_league(tmp_path, bots, deals=3, duplicate=False), tmp_path / "out")
    with trio.fail_after(120):
        if command == "league":
            await run(config, 1)
        else:
            await serve_with(config, lambda host, port, nursery: trio.sleep(0))
    assert_none_left(token)
    assert fault_kinds(config.out) == [[], [], ["illegal"]]
    stderr = config.out / "stderr"
    assert len(list(stderr.glob("forfeiter-*.stderr"))) == 2
    assert_held(grandchildren(*stderr.glob("*.stderr")), mode, 3)
    assert_no_cgroup_left(before)


# ---------------------------------------------------------------- Ctrl-C and SIGKILL


def start(command: str, path: Path, tmp_path: Path, mode: str) -> subprocess.Popen[bytes]:
    """`referee league|serve` (or league on a local cluster) in a session of its own,
    so that Ctrl-C can go to its whole process group as a terminal sends it."""
    args = {
        "league": ["league", str(path), "--jobs", "1"],
        "serve": ["serve", str(path), "--jobs", "1"],
        "cluster": ["league", str(path), "--jobs", "1", "--cluster", "local:1"],
    }[command]
    with (tmp_path / "out.txt").open("wb") as out, (tmp_path / "err.txt").open("wb") as err:
        return subprocess.Popen(
            [REFEREE, *args, "--out", str(tmp_path / "out"), "-q"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=referee_env(mode),
            cwd=tmp_path,
            start_new_session=True,
        )


def clean_up(process: subprocess.Popen[bytes], token: str) -> None:
    """After a failed test: end the referee's whole group and the test's processes."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    kill_all(processes_with(token))


@pytest.mark.parametrize(
    ("command", "sig", "how"),
    [
        ("league", signal.SIGKILL, "cgroup"),
        ("league", signal.SIGKILL, "subreaper"),
        ("league", signal.SIGINT, "cgroup"),
        ("serve", signal.SIGKILL, "cgroup"),
        ("serve", signal.SIGINT, "subreaper"),
        ("cluster", signal.SIGINT, "subreaper"),
    ],
)
def test_ctrl_c_or_sigkill_mid_game_leaves_nothing(
    tmp_path: Path, command: str, sig: signal.Signals, how: str
) -> None:
    if how == "cgroup" and not CGROUPS:
        pytest.skip("CGROUP TESTS SKIPPED: this machine lets the referee make no cgroup v2")
    token, before, marks = begin(tmp_path)
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    bots = [
        double_fork("df", "play", token, marks),
        double_fork("df2", "play", token, marks),
        # Waits at its first turn for a file that never comes: the game is on for good.
        bot(
            "gate",
            [PY, "-c", GATE, str(BOTS), str(tmp_path / "no"), str(blocked)],
            token,
            sandbox="none",  # it marks the host folder `blocked` when it waits
        ),
    ]
    path = write_league(tmp_path / "league", bots, deals=1, duplicate=False)
    process = start(command, path, tmp_path, how)
    try:
        # 3 bots and the 2 grandchildren are up, and the gate bot is at its turn.
        def playing() -> bool:
            up = len(list(marks.iterdir())) >= 2 and any(blocked.iterdir())
            return up or process.poll() is not None

        poll(playing, 60, "the game's processes")
        assert process.poll() is None, (tmp_path / "err.txt").read_text()
        assert len(processes_with(token)) == 5
        if sig == signal.SIGINT:
            os.killpg(process.pid, signal.SIGINT)
            returncode = process.wait(timeout=60)
            # The referee ends every bot before it exits: nothing to wait for.
            left = processes_with(token)
            assert returncode == 130, (tmp_path / "err.txt").read_text()
            assert left == []
        else:
            process.kill()
            process.wait(timeout=10)
            # Only the keepers (or, on a cluster, the workers' keepers) end the bots now.
            assert_none_left(token, timeout_s=15)
    finally:
        clean_up(process, token)
    assert_no_cgroup_left(before)


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])


def test_a_cluster_worker_killed_mid_game_or_ending_leaves_nothing(tmp_path: Path) -> None:
    """A cluster worker (the referee of its bots) gets SIGKILL mid-game; its nanny starts
    another, which plays the league to its end, a forfeit included. Each new process of
    a bot checks that the grandchildren of the earlier ones are gone."""
    token, before, marks = begin(tmp_path)
    bots = [
        double_fork("forfeiter", "forfeit:2", token, marks),
        double_fork("player", "play", token, marks),
        bot("slow", [PY, str(BOTS / "slow.py"), "0.05"], token),
    ]
    path = write_league(tmp_path / "league", bots, deals=3, duplicate=False)
    how = "cgroup" if CGROUPS else "subreaper"
    process = start("cluster", path, tmp_path, how)
    try:
        poll(lambda: len(list(marks.iterdir())) >= 2 or process.poll() is not None, 60, "play")
        # A grandchild's parent is its bot's keeper (the subreaper that adopted it), a
        # fork of the worker's keeper, whose parent is the worker.
        grandchild = int(next(marks.iterdir()).name)
        worker = parent(parent(parent(grandchild)))
        assert "multiprocessing" in Path(f"/proc/{worker}/cmdline").read_text()
        os.kill(worker, signal.SIGKILL)
        assert process.wait(timeout=120) == 0, (tmp_path / "err.txt").read_text()
        assert_none_left(token, timeout_s=10)
    finally:
        clean_up(process, token)
    assert fault_kinds(tmp_path / "out") == [[], [], ["illegal"]]
    # Two grandchildren of the killed worker's game, then three of the games played.
    assert len(list(marks.iterdir())) == 5
    assert_no_cgroup_left(before)


# ---------------------------------------------------------------- cgroups left behind


@needs_cgroups
def test_the_empty_cgroups_of_a_referee_that_is_gone_are_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gone = subprocess.Popen([PY, "-c", "pass"])
    gone.wait()  # its pid is free now: a referee killed before it removed its cgroups
    parent = cgroups._parent()
    assert parent is not None
    stale = parent / f"referee-{gone.pid}-1"
    ours = parent / f"referee-{os.getpid()}-999999"
    stale.mkdir()
    ours.mkdir()
    try:
        monkeypatch.setattr(cgroups, "_looked", False)  # as in a referee that starts now
        fresh = cgroups.create()
        assert fresh is not None and fresh.is_dir()
        assert not stale.exists()
        assert ours.is_dir()  # this referee is alive: its cgroups are its own business
        assert cgroups.remove(fresh) and not fresh.exists()
    finally:
        for path in (stale, ours):
            with contextlib.suppress(FileNotFoundError):
                path.rmdir()


@pytest.mark.parametrize("who", ["root", "user"])
def test_a_bot_that_kills_both_keepers_leaves_nothing_without_cgroups(
    tmp_path: Path, who: str
) -> None:
    """Without cgroups, a bot run as the referee's own user kills the referee's keeper and
    then its own bot keeper: its daemon is adopted by the referee itself (a subreaper),
    which ends it by the time it exits. The referee runs as the suite's user, and (as
    root) as a throwaway unprivileged user too (see test_isolation)."""
    from tests.test_isolation import Runner

    if who == "root" and os.geteuid() != 0:
        pytest.skip("the referee does not run as root here")
    folder = Path(tempfile.mkdtemp(prefix="double-fork-"))
    folder.chmod(0o755)
    runner = Runner(who, folder)
    if who == "user" and os.geteuid() == 0:
        from tests.test_isolation import THROWAWAY_UID

        os.chown(folder, THROWAWAY_UID, THROWAWAY_UID)
    token = new_token()
    try:
        runner.env[cgroups.SWITCH] = "off"
        result = runner.run(
            "play",
            "--sandbox",
            "none",
            "--set",
            "max_pip=6",
            "--log-dir",
            str(folder / "logs"),
            f"killer={runner.python} {DOUBLE_FORK} kill-both {token}",
            f"player={runner.python} {DOUBLE_FORK} play {token}",
            timeout=120,
        )
        said = "".join(p.read_text() for p in (folder / "logs").glob("*.stderr"))
        assert "grandchild" in said, result.stdout + result.stderr
        assert_none_left(token)
    finally:
        kill_all(processes_with(token))
        shutil.rmtree(folder, ignore_errors=True)
