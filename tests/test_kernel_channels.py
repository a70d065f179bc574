"""Channels between bots that no file permission closes, tried by real hostile bots in
the bubblewrap sandbox, with the referee run as root and as a throwaway unprivileged
user (the `runner` fixture of tests/test_isolation.py; issue 37).

- **Keyrings.** `keyring.py` keeps its hand in its session, user and user-session
  keyrings, readable by everyone, and looks for other processes' hands and the
  referee user's keys in every keyring and in /proc/keys. In a duplicate league that
  starts a fresh process for every game (so a bot uid is handed out again, lowest
  first, to the next rotation of the same deal) it can neither store nor find any,
  with the referee inside a session keyring of its own holding a key and not.
- **Folders beside a bot's.** Two compiled bots side by side in one parent folder,
  each with a `secret.txt` anyone may read: each sees its own and not the other's.
- **A symlinked folder.** A bot whose script is named through a symlinked folder
  starts and plays.

`break_out.py` (tests/test_isolation.py) also tries to make a user namespace of its
own and to keep a key.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_isolation import BOTS, THROWAWAY_UID, Runner, needs_bwrap, reports, runner

__all__ = ["runner"]  # the fixture, used by name

SESSION_WRAPPER = Path(__file__).with_name("in_session_keyring.py")
SECRET = "the-referee-users-own-key"


def in_session_keyring(runner: Runner) -> list[str]:
    """The runner's referee command, started inside a session keyring holding a key."""
    *before, python, dash_m, module = runner.prefix
    return [*before, python, str(SESSION_WRAPPER), SECRET, python, dash_m, module]


def own(runner: Runner, *paths: Path) -> None:
    """Give `paths` to the throwaway user, when the runner is that user."""
    if runner.mode == "user" and os.geteuid() == 0:
        for path in paths:
            os.chown(path, THROWAWAY_UID, THROWAWAY_UID)


@needs_bwrap
@pytest.mark.parametrize("session", ["session keyring", "no session keyring"])
def test_no_bot_keeps_or_finds_a_hand_in_a_keyring(runner: Runner, session: str) -> None:
    bots = "".join(
        f'[[bot]]\nname = "k{i}"\ncommand = "{runner.python} {BOTS / "keyring.py"}"\n'
        'restart = "always"\nsandbox = "bwrap"\n'
        for i in range(2)
    )
    league = runner.folder / "league.toml"
    league.write_text(
        '[league]\nname = "keys"\ntable = 2\ndeals = 3\nduplicate = true\nout = "out"\n'
        '[rules]\npreset = "standard"\nmax_pip = 6\nrounds = "single"\n' + bots
    )
    own(runner, league)
    if session == "session keyring":
        runner.prefix = in_session_keyring(runner)
    result = runner.run("league", str(league), "--jobs", "2", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    found = reports(runner.folder / "out")
    assert len(found) == 12, result.stdout + result.stderr  # 6 games, a process a seat
    assert [(r["found"], r["referee"], r["stored"]) for r in found] == [(0, 0, 0)] * 12, found
    # It tried every keyring, and the kernel said it has none.
    for report in found:
        assert len(report["errors"]) == 3, report
        assert all("Function not implemented" in error for error in report["errors"]), report


def compiled_bot(folder: Path, python: str, *paths: str) -> str:
    """A compiled bot in `folder` (its own folder, with `secret.txt`): a C program that
    runs tests/bots/peek.py, copied beside it, with `paths`; its command line."""
    folder.mkdir(parents=True)
    for name in ("peek.py", "_common.py"):
        shutil.copy(BOTS / name, folder / name)
    (folder / "secret.txt").write_text(f"the secret of {folder.name}\n")
    source = folder / "bot.c"
    source.write_text(
        "#include <unistd.h>\n"
        "int main(int argc, char **argv) {\n"
        f'    char *args[16] = {{"{python}", "peek.py"}};\n'
        "    for (int i = 1; i < argc && i < 14; i++) args[i + 1] = argv[i];\n"
        f'    execv("{python}", args);\n'
        "    return 127;\n"
        "}\n"
    )
    subprocess.run(["cc", "-O", "-o", str(folder / "bot"), str(source)], check=True)
    for path in (folder, *folder.iterdir()):
        path.chmod(0o755 if path.is_dir() or path.name == "bot" else 0o644)
    return json.dumps(["./bot", *paths])


@needs_bwrap
def test_a_compiled_bot_sees_its_own_folder_and_not_the_one_beside_it(runner: Runner) -> None:
    # Issue 37: a program's folder's parent was shown (meant for a venv's bin/python),
    # so a bot run as ./bot read the secret of every bot beside it.
    if shutil.which("cc") is None:
        pytest.fail("no C compiler (cc) for the compiled bots")
    bots = runner.folder / "bots"
    bots.mkdir()
    bots.chmod(0o755)
    entries = ""
    for me, other in (("a", "b"), ("b", "a")):
        command = compiled_bot(
            bots / me, "/usr/bin/python3", f"../{other}/secret.txt", "secret.txt"
        )
        entries += (
            f'[[bot]]\nname = "{me}"\ncommand = {command}\ncwd = "bots/{me}"\nsandbox = "bwrap"\n'
        )
    league = runner.folder / "league.toml"
    league.write_text(
        '[league]\nname = "siblings"\ntable = 2\ndeals = 1\nduplicate = false\nout = "out"\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n' + entries
    )
    own(runner, league)
    result = runner.run("league", str(league), "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = sorted((str(r["path"]), bool(r["got"])) for r in reports(runner.folder / "out"))
    # Each sees its own secret, never the other's.
    assert seen == [
        ("../a/secret.txt", False),
        ("../b/secret.txt", False),
        ("secret.txt", True),
        ("secret.txt", True),
    ], seen


@needs_bwrap
def test_a_bot_named_through_a_symlinked_folder_starts(runner: Runner) -> None:
    # Issue 37: only the resolved folder was shown, so `python link/bot.py` with `link`
    # a symlink outside the bot's working folder could not open its script.
    real = runner.folder / "real"
    real.mkdir()
    for name in ("peek.py", "_common.py"):
        shutil.copy(BOTS / name, real / name)
    (real / "secret.txt").write_text("mine\n")
    link = runner.folder / "link"
    link.symlink_to(real, target_is_directory=True)
    work = runner.folder / "work"
    work.mkdir()
    for path in (real, work):
        path.chmod(0o755)
    own(runner, real, work, *real.iterdir())
    command = json.dumps([runner.python, str(link / "peek.py"), str(link / "secret.txt")])
    league = runner.folder / "league.toml"
    league.write_text(
        '[league]\nname = "linked"\ntable = 2\ndeals = 1\nduplicate = false\nout = "out"\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n'
        + "".join(
            f'[[bot]]\nname = "l{i}"\ncommand = {command}\ncwd = "work"\nsandbox = "bwrap"\n'
            for i in (1, 2)
        )
    )
    own(runner, league)
    result = runner.run("league", str(league), "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = [(str(r["path"]), r["got"]) for r in reports(runner.folder / "out")]
    assert seen == [(str(link / "secret.txt"), True)] * 2, seen
