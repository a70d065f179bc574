"""Sandboxing bots with bubblewrap: no network, nothing shared, nothing of the referee.

With `sandbox = "bwrap"` a bot runs in new PID, network, IPC, UTS, user and
cgroup namespaces (`--unshare-all`): no network at all, no way to see or signal
another bot, no shared memory with it. It sees the system (`/usr`, `/etc`)
read-only, its own folder read-only (that of its program, and of the script
an interpreter runs), the interpreter it was started with read-only, a
private writable scratch folder (`$SCRATCH`, emptied after each game) and an
empty `/tmp`; the referee's folders, logs and the other bots' folders are not
there at all. The sandbox dies with the keeper
(`--die-with-parent`), and when the bot's main process ends the PID namespace
ends, so no grandchild outlives it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

SANDBOXES = ("none", "bwrap")
SCRATCH = "/scratch"


class SandboxError(Exception):
    """Sandboxing cannot work here; the message says why and how to fix it."""


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return [*args, "--ro-bind", "/etc", "/etc"]


def _program_roots(argv: Sequence[str], cwd: str | None, path_env: str | None) -> list[Path]:
    """Folders the bot's program needs that the system binds do not cover."""
    program = argv[0]
    if "/" in program:
        found = Path(cwd or ".") / program
    else:
        which = shutil.which(program, path=path_env)
        found = Path(which) if which else Path(program)
    roots: list[Path] = []
    real = found.resolve() if found.exists() else found
    for candidate in (found.absolute(), real):
        if candidate.is_absolute() and not str(candidate).startswith(("/usr/", "/bin/")):
            # A venv's or pyenv's python: its whole installation, read-only.
            roots.append(candidate.parent.parent)
    if Path(real).name.startswith("python"):
        # A Python bot may import the protocol helper from this referee's installation.
        import protocol

        roots += [Path(sys.prefix), Path(sys.base_prefix), Path(protocol.__file__).parent]
    unique: list[Path] = []
    for root in roots:
        if root not in unique and str(root) not in ("/", "/usr"):
            unique.append(root)
    return unique


def bwrap_argv(
    argv: Sequence[str],
    *,
    cwd: str | None,
    scratch: Path,
    env: dict[str, str],
    extra_ro: Sequence[str] = (),
) -> list[str]:
    """The command line that runs `argv` inside a bubblewrap sandbox.

    bwrap passes its own environment on to the bot: run it with `env`, the bot's
    exact environment (HOME, TMPDIR and SCRATCH are `SCRATCH`, where `scratch` is
    bound), plus PWD, which bwrap always sets. It is not repeated on the command
    line, which every process of the machine may read."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "sandbox bwrap: bubblewrap is not installed (Debian: apt-get install bubblewrap)"
        )
    folder = str(Path(cwd or ".").resolve())
    # An empty /tmp first: every later bind (the interpreter, the bot's folder) may live
    # under /tmp and must show through it.
    args = [bwrap, "--unshare-all", "--die-with-parent", *_system_binds(), "--tmpfs", "/tmp"]
    # The bot's own folder: that of the program and of the script an interpreter runs
    # (the first two words of its command), read-only. Later arguments are not followed: a
    # path to the game log must not bind the log's folder. The working folder itself is
    # an empty directory, so whatever else lives there stays out of sight.
    own: list[str] = []
    for word in argv[:2]:
        candidate = Path(word) if Path(word).is_absolute() else Path(folder) / word
        if "/" in word and candidate.is_file():
            parent = str(candidate.resolve().parent)
            if parent not in own and not parent.startswith(("/usr/", "/etc/")):
                own.append(parent)
    for root in _program_roots(argv, cwd, env.get("PATH")):
        if root.exists():
            args += ["--ro-bind", str(root), str(root)]
    for extra in extra_ro:
        args += ["--ro-bind", extra, extra]
    for path in own:
        args += ["--ro-bind", path, path]
    args += [
        "--dir",
        folder,
        "--bind",
        str(scratch),
        SCRATCH,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--chdir",
        folder,
        "--",
        *argv,
    ]
    return args


def check_bwrap() -> str | None:
    """None when bubblewrap runs a sandbox here; otherwise why not, and how to fix it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        done = subprocess.run(
            [bwrap, "--unshare-all", "--die-with-parent", *_system_binds(), "--", "/bin/true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip()
        return (
            f"the kernel refused a namespace ({why}); allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return None


def empty_scratch(scratch: Path) -> None:
    """Remove everything a bot left in its scratch folder."""
    if scratch.is_dir():
        for entry in scratch.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
