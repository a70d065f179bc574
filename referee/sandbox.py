"""Sandboxing bots with bubblewrap: no network, nothing shared, nothing of the referee.

With `sandbox = "bwrap"` a bot runs in new PID, network, IPC, UTS, user and
cgroup namespaces (`--unshare-all`): no network at all, no way to see or signal
another bot, no shared memory with it. It sees the system (`/usr`, `/etc`)
read-only, its own folder read-only (its working folder, that of its program,
and of the script an interpreter runs), the interpreter it was started with
read-only, a private writable scratch folder (`$SCRATCH`, emptied after each
game) and an empty `/tmp`; the referee's folders, logs and the other bots'
folders are not there at all. The sandbox dies with its bot keeper
(`--die-with-parent`), and when the bot's main process ends the PID namespace
ends, so no grandchild outlives it.

Two holes a read-only view leaves are closed here. A place of the referee's
that lies inside a folder the bot sees (the league's output folder, the league
file, a token file, `referee play`'s log folder: a `Hidden`) is covered, a
folder by an empty read-only tmpfs and a file by /dev/null; one that holds the
bot's folder cannot be covered and the bot is refused. And a FIFO, socket or
device node in a folder the bot sees is a channel no read-only mount closes
(two bots that see it talk through it), so such a bot is refused too; the
folders are scanned once per referee process (`check_visible`).

`auto` (the default of `league` and `serve`) means bwrap where `check_bwrap()`
passes, and none, said aloud, where it does not (`resolve_auto`).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .text import file_stem

SANDBOXES = ("none", "bwrap")  # what a bot runs in
CHOICES = ("auto", *SANDBOXES)  # what a user may ask for; auto: bwrap where it works
SCRATCH = "/scratch"


class SandboxError(Exception):
    """Sandboxing cannot work here; the message says why and how to fix it."""


@dataclass(frozen=True)
class Hidden:
    """A place of the referee's that no sandboxed bot may see, and what a person must
    change when the sandbox cannot hide it (it holds a folder the bot sees)."""

    path: str
    what: str  # "the league's output folder"
    fix: str  # "give the league an output folder outside the bots' folders"


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


_SYSTEM = tuple(Path("/") / name for name in ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64"))


def _under(path: Path | str, root: Path | str) -> bool:
    """`path` is `root` or lies below it (both absolute, symlinks already resolved)."""
    path, root = str(path), str(root).rstrip("/")
    return path == root or path.startswith(root + "/")


def _system(path: Path) -> bool:
    return any(_under(path, root) for root in _SYSTEM)


def visible_folders(
    argv: Sequence[str], cwd: str | None, path_env: str | None, extra_ro: Sequence[str] = ()
) -> list[Path]:
    """The host folders a sandboxed bot sees besides the system's, each read-only, parents
    first: its interpreter's installation, its program's and script's folders and its
    working folder."""
    return [path for path, _ in _visible(argv, cwd, path_env, extra_ro)]


def _visible(
    argv: Sequence[str], cwd: str | None, path_env: str | None, extra_ro: Sequence[str]
) -> list[tuple[Path, str]]:
    """`visible_folders`, each with its real path (symlinks resolved)."""
    folder = Path(cwd or ".").resolve()
    if folder == Path("/"):
        raise SandboxError(
            "the bot's working folder is /: the sandbox would show it the whole machine; "
            "give the bot a folder of its own"
        )
    found = [root for root in _program_roots(argv, cwd, path_env) if root.exists()]
    found += [Path(extra) for extra in extra_ro]
    # The folders of the program and of the script an interpreter runs (the first two
    # words of its command). Later arguments are not followed: a path to the game log
    # must not show the log's folder.
    for word in argv[:2]:
        candidate = Path(word) if Path(word).is_absolute() else folder / word
        if "/" in word and candidate.is_file():
            found.append(candidate.resolve().parent)
    found.append(folder)  # `python bot.py` run from the bot's folder needs it
    unique: dict[Path, str] = {}
    for path in found:
        real = os.path.realpath(path)
        if path not in unique and not _system(Path(real)):
            unique[path] = real
    return sorted(unique.items(), key=lambda item: len(item[0].parts))


@functools.cache
def _trusted() -> frozenset[str]:
    """The referee's own installation: whoever could plant a FIFO there could replace
    the referee itself, so it is not scanned (it holds tens of thousands of files)."""
    import protocol

    places = (sys.prefix, sys.base_prefix, Path(protocol.__file__).parent, Path(__file__).parent)
    return frozenset(str(Path(place).resolve()) for place in places)


_scanned: dict[str, tuple[tuple[str, str], ...]] = {}  # real folder -> (file, kind) found
_scan_lock = threading.Lock()


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device node"


def _walk(root: str, trusted: frozenset[str]) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    stack = [root]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue  # what the referee cannot read, the bot (the same user) cannot either
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.path not in trusted:
                            stack.append(entry.path)
                    elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                        found.append((entry.path, _kind(entry.stat(follow_symlinks=False).st_mode)))
                except OSError:
                    continue
    return tuple(found)


def special_files(folder: Path | str) -> list[tuple[str, str]]:
    """FIFOs, sockets and device nodes below `folder`, as (path, kind); the referee's
    own installation is skipped. Each folder is walked once per process (a folder
    inside one already walked is not walked again): see `forget_scans`."""
    real = os.path.realpath(folder)
    trusted = _trusted()
    if any(_under(real, place) for place in trusted):
        return []
    with _scan_lock:
        for root, found in _scanned.items():
            if _under(real, root):
                return [item for item in found if _under(item[0], real)]
        found = _walk(real, trusted)
        _scanned[real] = found
        return list(found)


def forget_scans() -> None:
    """Walk folders afresh from now on (a long-lived cluster worker, at each league)."""
    with _scan_lock:
        _scanned.clear()


_scratch_root: Path | None = None


def _sweep_scratch_roots() -> None:
    """Remove the scratch roots of this user's referee processes that are gone: one
    killed (SIGKILL, a Dask worker ended by its nanny) could not remove its own."""
    for old in Path(tempfile.gettempdir()).glob("referee-scratch-*-*"):
        pid = old.name.split("-")[2]
        try:
            if not pid.isdigit() or old.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue  # alive (another user's pid), or already gone


def new_scratch(name: str) -> Path:
    """A fresh writable folder for one bot (its HOME, TMPDIR and SCRATCH), inside this
    process's scratch root, which every sandbox hides and which goes when the process
    exits."""
    global _scratch_root
    with _scan_lock:
        if _scratch_root is None or not _scratch_root.is_dir():
            _sweep_scratch_roots()
            _scratch_root = Path(tempfile.mkdtemp(prefix=f"referee-scratch-{os.getpid()}-"))
            atexit.register(shutil.rmtree, _scratch_root, True)
        root = _scratch_root
    return Path(tempfile.mkdtemp(prefix=f"bot-{file_stem(name)}-", dir=root))


def _plan(
    argv: Sequence[str],
    cwd: str | None,
    path_env: str | None,
    extra_ro: Sequence[str],
    hidden: Sequence[Hidden],
) -> tuple[list[Path], list[str]]:
    """The folders to show and the bubblewrap options that cover the hidden places in
    them; `SandboxError` when a place cannot be covered or a folder holds a FIFO,
    socket or device node."""
    shown = _visible(argv, cwd, path_env, extra_ro)
    places = list(hidden)
    if _scratch_root is not None:
        places.append(
            Hidden(str(_scratch_root), "the bots' scratch folders", "give the bot its own folder")
        )
    cover: list[str] = []
    covered: list[str] = []
    for place in places:
        real = os.path.realpath(place.path)
        if not os.path.exists(real):
            continue  # nothing there to see (a folder the referee makes later is inside one)
        for bind, bind_real in shown:
            if _under(bind_real, real):
                relation = "is" if bind_real == real else "holds"
                raise SandboxError(
                    f"{place.what} {place.path} {relation} the bot's folder {bind}, so the "
                    f"sandbox cannot hide it from the bot: {place.fix}"
                )
            if _under(real, bind_real):
                # Mounted over after every bind, so nothing later shows through.
                dest = str(bind / os.path.relpath(real, bind_real))
                if dest not in cover:
                    if os.path.isdir(real):
                        cover += ["--tmpfs", dest, "--remount-ro", dest]
                    else:
                        cover += ["--ro-bind", "/dev/null", dest]
                covered.append(real)
    for bind, bind_real in shown:
        for path, kind in special_files(bind_real):
            if not any(_under(path, place) for place in covered):
                raise SandboxError(
                    f"{path} is {kind} in {bind}, a folder the bot sees: a read-only view "
                    "does not close it, and bots that see it could talk through it; remove it"
                )
    return [bind for bind, _ in shown], cover


def check_visible(
    argv: Sequence[str], *, cwd: str | None, path_env: str | None, hidden: Sequence[Hidden] = ()
) -> None:
    """Before a bot is started in the sandbox: `SandboxError` (one line, naming the file)
    when a folder it would see holds a FIFO, socket or device node, or a place of
    `hidden` that the sandbox cannot cover."""
    _plan(argv, cwd, path_env, (), hidden)


def bwrap_argv(
    argv: Sequence[str],
    *,
    cwd: str | None,
    scratch: Path,
    env: dict[str, str],
    extra_ro: Sequence[str] = (),
    hidden: Sequence[Hidden] = (),
) -> list[str]:
    """The command line that runs `argv` inside a bubblewrap sandbox (see `check_visible`
    for the `SandboxError` it raises besides a missing bubblewrap).

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
    binds, cover = _plan(argv, cwd, env.get("PATH"), extra_ro, hidden)
    # An empty /tmp first: every later bind (the interpreter, the bot's folder) may live
    # under /tmp and must show through it.
    args = [bwrap, "--unshare-all", "--die-with-parent", *_system_binds(), "--tmpfs", "/tmp"]
    for path in binds:
        args += ["--ro-bind", str(path), str(path)]
    args += cover
    args += [
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


@functools.cache
def bwrap_problem() -> str | None:
    """`check_bwrap()`, asked once per process."""
    return check_bwrap()


def resolve(choice: str) -> tuple[str, str | None]:
    """What `choice` (one of `CHOICES`) runs bots in here, "none" or "bwrap", and why
    not bwrap when `auto` found that bubblewrap does not work."""
    if choice != "auto":
        return choice, None
    problem = bwrap_problem()
    return ("none", problem) if problem else ("bwrap", None)
