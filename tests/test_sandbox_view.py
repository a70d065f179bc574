"""What a sandboxed bot sees of the host: its working folder (so `python bot.py` run
from the bot's folder plays), never a place of the referee's that lies inside it (the
league's output folder, the league file, `play`'s log folder), and no FIFO, socket or
device node, through which two bots that see one folder could talk.

Each hole is shown open first (without the check, or without the sandbox), then closed.
Where the machine cannot sandbox, these tests skip loudly, and fail under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from protocol.messages import TimeControl
from referee.bots import sandbox
from referee.bots.faults import FaultKind
from referee.bots.process import BotSpec
from referee.cli import main
from referee.play.runner import run_game
from referee.rules import preset
from tests._procs import assert_none_left, new_token

PY = sys.executable
REFEREE = str(Path(PY).parent / "referee")
BOTS = Path(__file__).parent / "bots"
SAMPLES = Path(__file__).parents[1] / "sample_bots"
PROBLEM = sandbox.check_bwrap()
if PROBLEM is not None and os.environ.get("CI"):
    pytest.fail(f"bubblewrap cannot sandbox on this CI machine: {PROBLEM}", pytrace=False)
pytestmark = pytest.mark.skipif(
    PROBLEM is not None, reason=f"SANDBOX TESTS SKIPPED: bubblewrap cannot sandbox here: {PROBLEM}"
)
TINY = ["--set", "max_pip=6", "--set", "rounds=single"]


def bot_folder(where: Path, *scripts: str) -> Path:
    """A bot's own folder: copies of `scripts` from tests/bots, with their helper."""
    where.mkdir(parents=True)
    for name in (*scripts, "_common.py"):
        shutil.copy(BOTS / name, where / name)
    return where


def stderr_lines(folder: Path, pattern: str = "*.stderr") -> list[dict[str, object]]:
    """The JSON lines the bots wrote to stderr."""
    return [
        json.loads(line)
        for path in sorted(folder.glob(pattern))
        for line in path.read_text().splitlines()
        if line.startswith("{")
    ]


# ---------------------------------------------------------------- a FIFO between two bots


async def test_two_sandboxed_bots_that_see_a_fifo_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = bot_folder(tmp_path / "bots", "fifo.py")
    os.mkfifo(folder / "pipe", 0o666)
    os.chmod(folder / "pipe", 0o666)  # bots of two users may both open it
    token = new_token()
    specs = [
        BotSpec(
            f"fifo-{role}", (PY, "fifo.py", role, "pipe", token), cwd=str(folder), sandbox="bwrap"
        )
        for role in "ab"
    ]

    async def game(out: Path) -> list[tuple[FaultKind, str]]:
        out.mkdir()
        report = await run_game(
            specs,
            preset("standard", players=2, max_pip=6, rounds="single"),
            5,
            game_id="fifo",
            time=TimeControl(move_ms=5000, bank_ms=20000),
            log_path=out / "game.jsonl",
            stderr_dir=out,
        )
        return [(f.kind, f.detail) for seat in report.result.faults for f in seat]

    # Without the check, the FIFO carries a's hand into b's sandbox.
    with monkeypatch.context() as patched:
        patched.setattr(sandbox, "special_files", lambda folder: [])
        assert await game(tmp_path / "open") == []
    said = stderr_lines(tmp_path / "open")
    sent = [line["sent"] for line in said if "sent" in line]
    got = [line["got"] for line in said if "got" in line]
    assert sent and got == sent, said

    # With it, neither bot starts: each seat's fault names the FIFO.
    faults = await game(tmp_path / "boxed")
    assert [kind for kind, _ in faults] == [FaultKind.STARTUP_FAILURE] * 2
    for _, detail in faults:
        assert f"{folder / 'pipe'} is a FIFO in {folder}" in detail, detail
    assert stderr_lines(tmp_path / "boxed") == []
    assert_none_left(token)


def test_play_and_league_refuse_a_fifo_or_socket_in_a_bot_folder_before_the_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = bot_folder(tmp_path / "bots", "fifo.py")
    os.mkfifo(folder / "pipe", 0o666)
    os.chmod(folder / "pipe", 0o666)  # bots of two users may both open it
    monkeypatch.chdir(folder)
    bots = [f"{role}={PY} fifo.py {role} pipe" for role in "ab"]
    logs = tmp_path / "logs"
    played = CliRunner().invoke(
        main, ["play", "--sandbox", "bwrap", "--log-dir", str(logs), *TINY, *bots]
    )
    assert played.exit_code == 2, played.output
    assert played.stderr.splitlines() == [
        f"referee: error: a: {folder / 'pipe'} is a FIFO in {folder}, a folder the bot sees: "
        "a read-only view does not close it, and bots that see it could talk through it; "
        "remove it"
    ]
    assert not any(logs.iterdir())  # no game was started

    # A league stops before its first game, like for a missing program; a socket too.
    (folder / "pipe").unlink()
    sandbox.forget_scans()  # as a new referee process would
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(folder / "sock"))
        league = tmp_path / "league.toml"
        league.write_text(
            '[league]\ntable = 2\nout = "out"\n'
            + "".join(
                f'[[bot]]\nname = "{role}"\ncommand = {json.dumps([PY, "fifo.py", role, "sock"])}\n'
                'cwd = "bots"\n'
                for role in "ab"
            )
        )
        ran = CliRunner().invoke(main, ["league", str(league)])
    assert ran.exit_code == 2, ran.output
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    assert lines[0].startswith(f"referee: error: bot[0] (a): {folder / 'sock'} is a socket in ")
    assert not (tmp_path / "out").exists()


def test_a_device_node_in_a_bot_folder_is_refused(tmp_path: Path) -> None:
    # A device node (here one like /dev/null, which needs CAP_MKNOD to make) is a door
    # out of a read-only view too.
    folder = bot_folder(tmp_path / "bots", "fifo.py")
    try:
        os.mknod(folder / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("DEVICE NODE TEST SKIPPED: no permission to make one here")
    with pytest.raises(sandbox.SandboxError) as caught:
        sandbox.check_visible((PY, str(folder / "fifo.py")), cwd=str(folder), path_env=None)
    assert str(caught.value).startswith(f"{folder / 'dev'} is a device node in {folder}, ")


# ---------------------------------------------------------------- the working folder


def test_a_bot_started_as_a_bare_script_from_its_folder_plays_in_the_sandbox(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    shutil.copy(SAMPLES / "random_bot.py", folder / "random_bot.py")
    token = new_token()
    bots = [f"{name}={PY} random_bot.py {token}" for name in ("r1", "r2")]
    logs = tmp_path / "logs"

    def play(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [REFEREE, "play", "--json", *TINY, *options, *bots],
            cwd=folder,  # the bots' working folder is the referee's
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = play("--sandbox", "bwrap", "--log-dir", str(logs))
    assert done.returncode == 0, done.stderr
    seats = json.loads(done.stdout)["seats"]
    assert [(s["status"], s["faults"]) for s in seats] == [("ok", [])] * 2
    # The log folder must not be the folder the bots see: `play` says so, and what to do.
    refused = play("--sandbox", "bwrap")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"referee: error: r1: the game log folder . is the bot's folder {folder}, so the "
        "sandbox cannot hide it from the bot: write the log outside the bots' folders "
        "(--log-dir or --log)"
    ]
    # play is the bot author's tool: without --sandbox it uses none, so the same log
    # folder is no problem (the bots could read the log, as any program of theirs can).
    assert play().returncode == 0
    assert_none_left(token)


def peek_league(folder: Path, token: str, out: str = "out", sign: bool = False) -> Path:
    """Two peek bots (tests/bots/peek.py) in the league's own folder, which holds the
    league file and the output folder (and with `sign` the organiser's signing key,
    made by `referee keygen`): one game."""
    bot_folder(folder, "peek.py")
    paths = ["out", "league.toml", *(["organiser.key"] if sign else []), token]
    bots = "".join(
        f'[[bot]]\nname = "{name}"\ncommand = {json.dumps([PY, "peek.py", *paths])}\n'
        for name in ("p1", "p2")
    )
    signed = ""
    if sign:
        made = subprocess.run(
            [REFEREE, "keygen", str(folder / "organiser.key")], capture_output=True, timeout=60
        )
        assert made.returncode == 0, made.stderr
        signed = 'sign = "organiser.key"\n'
    path = folder / "league.toml"
    path.write_text(
        f'[league]\nname = "peek"\ntable = 2\ndeals = 1\nduplicate = false\nout = "{out}"\n'
        + signed
        + '[rules]\nmax_pip = 6\nrounds = "single"\n[time]\nmove_ms = 3000\n'
        + bots
    )
    return path


def test_a_league_hides_its_output_folder_and_file_inside_a_bot_folder(tmp_path: Path) -> None:
    token = new_token()
    seen = {}
    for mode, extra in (("open", ["--sandbox", "none"]), ("default", [])):
        path = peek_league(tmp_path / mode, token, sign=True)
        done = subprocess.run(
            [REFEREE, "league", str(path), "-q", *extra],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        said = stderr_lines(tmp_path / mode / "out" / "stderr")
        seen[mode] = {(line["path"], line["got"]) for line in said if line["path"] != token}
        standings = json.loads((tmp_path / mode / "out" / "standings.json").read_text())
        assert all(b["faults"] == {} for b in standings["bots"]), standings
        sandboxed = "none" if mode == "open" else "bwrap"
        assert standings["sandbox"]["bots"] == {"p1": sandboxed, "p2": sandboxed}
    # Without the sandbox a bot reads the log of its game as it is written, the file,
    # and the key that signs the results (it runs as the organiser, who owns it).
    assert seen["open"] == {("out", True), ("league.toml", True), ("organiser.key", True)}
    # In a league's default sandbox it sees the folder, and none of them.
    assert seen["default"] == {("out", False), ("league.toml", False), ("organiser.key", False)}
    assert_none_left(token)


def test_a_league_whose_output_folder_is_a_bot_folder_is_refused(tmp_path: Path) -> None:
    path = peek_league(tmp_path / "l", new_token(), out=".")
    ran = CliRunner().invoke(main, ["league", str(path)])
    assert ran.exit_code == 2
    assert ran.stderr.splitlines() == [
        f"referee: error: bot[0] (p1): the league's output folder {tmp_path / 'l'} is the "
        f"bot's folder {tmp_path / 'l'}, so the sandbox cannot hide it from the bot: give "
        "the league an output folder outside every bot's folder (--out or league.out)"
    ]
    assert not (tmp_path / "l" / "league.db").exists()


def test_folders_are_walked_once_per_run(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "deep" / "er").mkdir(parents=True)
    os.mkfifo(folder / "deep" / "er" / "pipe")
    assert sandbox.special_files(folder) == [(str(folder / "deep" / "er" / "pipe"), "a FIFO")]
    # A folder inside one already walked is answered from that walk; the referee's own
    # installation (tens of thousands of files) is never walked.
    os.mkfifo(folder / "deep" / "later")
    assert sandbox.special_files(folder / "deep") == [
        (str(folder / "deep" / "er" / "pipe"), "a FIFO")
    ]
    assert sandbox.special_files(Path(sys.base_prefix)) == []
    assert str(Path(sys.base_prefix).resolve()) not in sandbox._scanned
    sandbox.forget_scans()
    assert len(sandbox.special_files(folder / "deep")) == 2


def test_the_scratch_folders_of_a_killed_referee_go_with_the_next_one() -> None:
    # A referee killed with SIGKILL (or a Dask worker ended by its nanny) cannot remove
    # its bots' scratch folders; the next referee of the same user does.
    code = (
        "import os, signal\n"
        "from referee.bots.sandbox import new_scratch\n"
        "print(new_scratch('bot').parent, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    left = Path(killed.stdout.strip())
    assert killed.returncode == -9 and left.is_dir() and any(left.iterdir())
    fresh = subprocess.run(
        [
            PY,
            "-c",
            "from referee.bots.sandbox import new_scratch; print(new_scratch('bot').parent)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert not left.exists()
    assert not Path(fresh.stdout.strip()).exists()  # removed at its own exit


def test_a_sandboxed_python_bot_sees_the_engine_and_botkit_and_nothing_else_of_the_referee(
    tmp_path: Path,
) -> None:
    """The search bot, copied to a folder of its own, imports `referee.botkit` and
    `referee.rules` inside the sandbox and plays; a peeking bot beside it reads the
    engine's code but nothing else of the referee's package (its leagues, commands,
    sandbox), as root and as the bot's own user alike."""
    import referee

    package = Path(referee.__file__).resolve().parent
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(SAMPLES / "search_bot.py", run / "search_bot.py")
    bot_folder(run / "peek", "peek.py")
    token = new_token()
    looked = [package / "rules", package / "botkit", package / "league", package / "commands"]
    bots = [
        f"search={PY} search_bot.py --budget-ms 20",
        f"peek={PY} peek/peek.py {' '.join(map(str, looked))} {token}",
    ]
    err = tmp_path / "err"
    done = subprocess.run(
        [
            REFEREE,
            "play",
            "--json",
            *TINY,
            "--sandbox",
            "bwrap",
            "--log-dir",
            str(tmp_path / "logs"),
            "--stderr-dir",
            str(err),
            *bots,
        ],
        cwd=run,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    seats = json.loads(done.stdout)["seats"]
    assert [(s["status"], s["faults"]) for s in seats] == [("ok", [])] * 2
    seen = {
        line["path"]: line["got"]
        for line in stderr_lines(err, "*peek*.stderr")
        if line["path"] != token
    }
    assert seen == {
        str(package / "rules"): True,
        str(package / "botkit"): True,
        str(package / "league"): False,
        str(package / "commands"): False,
    }
    assert_none_left(token)
