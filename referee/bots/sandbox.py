"""Sandboxing bots with bubblewrap: no network, nothing shared, nothing of the referee.

With `sandbox = "bwrap"` a bot runs in new PID, network, IPC, UTS, user and
cgroup namespaces (`--unshare-all`): no network at all, no way to see or signal
another bot, no shared memory with it, and under a seccomp filter
(`referee.bots.seccomp`: no kernel keyring, no user namespace of its own). It
sees the system (`/usr`, `/etc`) read-only, its own folder read-only (its working
folder, that of its program, never the folder above it, and of the script an
interpreter runs, also at the path its command names when a symlinked folder lies
on the way), the interpreter it was started with and its installation read-only,
a private writable scratch folder (`$SCRATCH`, emptied by the referee between
games), an empty `/tmp` and `/dev/shm`, each a size-limited tmpfs of its own that
ends with it; the referee's folders, logs and the other bots'
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

Who the bot is. Run by an unprivileged user, bubblewrap makes a user namespace
and the bot is that user, with no capability outside it. Run by root, a user
namespace would map the bot to host root, whose files stay readable and writable
by owner permission: so bubblewrap, as root, makes every namespace but the
user's, mounts the bot's view, and the bot is then started through `setpriv` as
an unprivileged host user of its own (`BotUsers`: a uid no account uses, one per
bot process, held by a lock file while it runs), with no capability, an empty
bounding set, no supplementary group and `no_new_privs`. The folders it sees
must then be readable by others (`o+rx`); one that is not is refused in one
line. Nothing is writable to it but its own size-limited tmpfs (`--size`, see
`Limits.scratch_mb`), which end with the sandbox: the sandbox's root and /dev are
remounted read-only, so nothing a process wrote outlives it for a later process
to read, and it cannot fill more memory than its limits allow.

Its process limit (RLIMIT_NPROC) is set inside the sandbox by `prlimit`, once
the bot is the user it counts: a uid of its own as root, the user namespace's
count otherwise.

`auto` (the default of `league` and `serve`) means bwrap where `check_bwrap()`
passes, and none, said aloud, where it does not (`resolve_auto`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..text import file_stem
from . import seccomp

SANDBOXES = ("none", "bwrap")  # what a bot runs in
CHOICES = ("auto", *SANDBOXES)  # what a user may ask for; auto: bwrap where it works
SCRATCH = "/scratch"
SECCOMP_FD = "@SECCOMP_FD@"  # in a bwrap_argv: the bot keeper's descriptor of the filter
BOT_UID_BASE = 1_900_000_000  # as root, sandboxed bots run as uids from here on
BOT_UIDS = 1 << 16  # how many: far more than bots run at once on one machine


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
    for candidate in (Path(os.path.abspath(found)), real):
        if candidate.is_absolute() and not _system(candidate):
            if _installed_interpreter(candidate):
                # A venv's or pyenv's python, nvm's node: its whole installation.
                roots.append(candidate.parent.parent)
            else:
                # Any other program (a compiled bot, `./run.sh`): its own folder only,
                # never the folder above it, which holds every bot beside it.
                roots.append(candidate.parent)
    if Path(real).name.startswith("python"):
        # A Python bot may import the protocol helper from this referee's installation,
        # and the engine and the bots' forward model (`referee.rules`, `referee.botkit`:
        # code only, no state of any game); nothing else of the referee's package.
        import protocol

        here = Path(__file__).resolve().parents[1]
        roots += [Path(sys.prefix), Path(sys.base_prefix), Path(protocol.__file__).parent]
        roots += [here / "__init__.py", here / "rules", here / "botkit"]
    unique: list[Path] = []
    for root in roots:
        if root not in unique and str(root) not in ("/", "/usr"):
            unique.append(root)
    return unique


_SYSTEM = tuple(Path("/") / name for name in ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64"))
# Programs whose first argument, when it is not an option, is the bot's script.
INTERPRETERS = re.compile(
    r"(python|pypy|node|nodejs|sh|bash|dash|zsh|ksh|ruby|perl|php|lua|Rscript|julia)[0-9.]*"
)
# Interpreters and runtimes that live in an installation of their own (PREFIX/bin/NAME,
# with PREFIX/lib beside): a venv, pyenv, nvm, a JDK, rbenv.
_RUNTIMES = re.compile(r"(python|pypy|node|nodejs|java|ruby|perl|php|lua|julia|Rscript)[0-9.]*")


def _installed_interpreter(program: Path) -> bool:
    """Whether `program` is an interpreter in the `bin` folder of its own installation,
    which it needs whole (its standard library beside it)."""
    prefix = program.parent.parent
    return (
        _RUNTIMES.fullmatch(program.name) is not None
        and program.parent.name == "bin"
        and ((prefix / "pyvenv.cfg").is_file() or (prefix / "lib").is_dir())
    )


def _under(path: Path | str, root: Path | str) -> bool:
    """`path` is `root` or lies below it (both absolute, symlinks already resolved)."""
    path, root = str(path), str(root).rstrip("/")
    return path == root or path.startswith(root + "/")


def _system(path: Path) -> bool:
    return any(_under(path, root) for root in _SYSTEM)


def as_root() -> bool:
    """Whether the referee runs as root, so a sandboxed bot must be given another user."""
    return os.geteuid() == 0


class BotUsers:
    """The unprivileged host users that sandboxed bots run as when the referee is root:
    one uid per bot process, none of them an account, each held by an exclusive lock on
    a file named by it (so two referees on one machine never share one) until the bot
    has ended. Sharing no uid, bots cannot touch each other's files or processes, and a
    process limit (RLIMIT_NPROC) counts one bot's processes alone."""

    def __init__(self) -> None:
        self._held: dict[int, int] = {}  # uid -> the locked file's descriptor
        self._lock = threading.Lock()

    @staticmethod
    def _folder() -> Path:
        for base in (Path("/run"), Path(tempfile.gettempdir())):
            folder = base / "referee-bot-users"
            with contextlib.suppress(OSError):
                folder.mkdir(mode=0o700, exist_ok=True)
                info = folder.stat()
                if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700:
                    return folder
        raise SandboxError("no folder for the sandboxed bots' user locks (/run, the temp folder)")

    def take(self) -> int:
        """A uid no other bot holds, held until `give_back`."""
        folder = self._folder()
        with self._lock:
            # The lowest free one: the lock files are reused, as many as bots ever ran
            # at once (never removed: a file unlinked while another referee opens it
            # would let two referees hold the same uid).
            for step in range(BOT_UIDS):
                uid = BOT_UID_BASE + step
                if uid in self._held:
                    continue
                fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self._held[uid] = fd
                return uid
        raise SandboxError(f"all {BOT_UIDS} sandbox users are in use")

    def give_back(self, uid: int) -> None:
        """Let another bot have `uid` (its bot has ended, with everything it started)."""
        with self._lock:
            fd = self._held.pop(uid, None)
        if fd is not None:
            os.close(fd)


BOT_USERS = BotUsers()


def _readable_by_others(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


def user_line(sandbox: str) -> str:
    """Who a bot started here with `sandbox` runs as, for the standings and the site."""
    if sandbox == "bwrap" and as_root():
        return (
            "an unprivileged user of its own (uid "
            f"{BOT_UID_BASE}+, one per bot process; the referee runs as root)"
        )
    name = _user_name(os.geteuid())
    if sandbox == "bwrap":
        return f"the referee's user {name}, inside a user namespace, with no capability"
    return f"the referee's user {name}" + (" (ROOT: it could do anything)" if as_root() else "")


def _user_name(uid: int) -> str:
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


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
    # The folders of the program and, for an interpreter, of the script it runs (the
    # second word). Other arguments are not followed: a path to the game log, or to
    # another bot's file, must not show its folder.
    words = argv[:2] if argv and INTERPRETERS.fullmatch(Path(argv[0]).name) else argv[:1]
    for word in words:
        candidate = Path(word) if Path(word).is_absolute() else folder / word
        if "/" in word and candidate.is_file():
            # Its folder as named (a symlinked folder on the way: the bot opens the
            # script by that name) and as it really is (what the script's own imports
            # resolve to): the same files, read-only, at both places.
            found += [Path(os.path.abspath(candidate)).parent, candidate.resolve().parent]
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

    places = (
        sys.prefix,
        sys.base_prefix,
        Path(protocol.__file__).parent,
        Path(__file__).parents[1],
    )
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
    *,
    readable: bool = False,
) -> tuple[list[Path], list[str]]:
    """The folders to show and the bubblewrap options that cover the hidden places in
    them; `SandboxError` when a place cannot be covered, a folder holds a FIFO, socket
    or device node, or (with `readable`, for a bot run as another user) a folder it
    needs is not readable by others."""
    shown = _visible(argv, cwd, path_env, extra_ro)
    if readable:
        for bind, bind_real in shown:
            if not _readable_by_others(Path(bind_real)):
                mode = stat.S_IMODE(os.stat(bind_real).st_mode) if os.path.exists(bind) else 0
                raise SandboxError(
                    f"{bind} (mode {mode:04o}) is not readable by other users, and a "
                    "sandboxed bot runs as an unprivileged user of its own when the referee "
                    f"runs as root: chmod o+rx {bind}, or run the referee as a user"
                )
    places = list(hidden)
    if _scratch_root is not None:
        places.append(
            Hidden(str(_scratch_root), "the bots' scratch folders", "give the bot its own folder")
        )
    # A place inside another is hidden by the other's cover already, and a cover of its
    # own would need a mount point inside that read-only cover, which bubblewrap cannot
    # make (the stderr folder inside the log folder, the league file inside its output
    # folder): only the outermost places are covered.
    reals = [os.path.realpath(place.path) for place in places]
    places = [
        place
        for i, place in enumerate(places)
        if not any(
            j != i
            and os.path.exists(other)
            and _under(reals[i], other)
            and (reals[i] != other or j < i)
            for j, other in enumerate(reals)
        )
    ]
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
    when a folder it would see holds a FIFO, socket or device node, a place of `hidden`
    that the sandbox cannot cover, or (as root) a folder other users may not read."""
    _plan(argv, cwd, path_env, (), hidden, readable=as_root())


def bwrap_argv(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: dict[str, str],
    extra_ro: Sequence[str] = (),
    hidden: Sequence[Hidden] = (),
    uid: int | None = None,
    processes: int | None = None,
    scratch_mb: int | None = None,
) -> list[str]:
    """The command line that runs `argv` inside a bubblewrap sandbox (see `check_visible`
    for the `SandboxError` it raises besides a missing bubblewrap).

    With `uid` (the referee is root: see `BotUsers`), bubblewrap runs as root without
    a user namespace and the bot is started as `uid` through `setpriv`, with no
    capability and `no_new_privs`. `processes` caps the bot's processes and threads
    (RLIMIT_NPROC, set by `prlimit` inside); `scratch_mb` the size of each of its
    three writable places, `SCRATCH`, `/tmp` and `/dev/shm` (tmpfs, gone with the
    sandbox).

    bwrap passes its own environment on to the bot: run it with `env`, the bot's
    exact environment (HOME, TMPDIR and SCRATCH are `SCRATCH`), plus PWD, which bwrap
    always sets. It is not repeated on the command line, which every process of the
    machine may read."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "sandbox bwrap: bubblewrap is not installed (Debian: apt-get install bubblewrap)"
        )
    folder = str(Path(cwd or ".").resolve())
    binds, cover = _plan(argv, cwd, env.get("PATH"), extra_ro, hidden, readable=uid is not None)
    size = [] if scratch_mb is None else ["--size", str(scratch_mb * 1024 * 1024)]
    if uid is None:
        args = [bwrap, "--unshare-all", "--die-with-parent"]
    else:
        # Root's bubblewrap: no user namespace (it would map the bot to host root).
        args = [bwrap, *_ROOT_UNSHARE, "--die-with-parent"]
    # An empty /tmp first: every later bind (the interpreter, the bot's folder) may live
    # under /tmp and must show through it.
    args += [*_system_binds(), *size, "--perms", "1777", "--tmpfs", "/tmp"]
    made: set[str] = set()
    for path in binds:
        if uid is not None:
            # The folders on the way are the sandbox's own, traversable by the bot's user
            # (bubblewrap would copy the host's modes: /root is 0700).
            for parent in reversed(path.parents):
                text = str(parent)
                if text in made or parent == Path("/") or _covered(parent, binds, path):
                    continue
                made.add(text)
                args += ["--perms", "0755", "--dir", text]
        args += ["--ro-bind", str(path), str(path)]
    args += cover
    args += [*size, "--perms", "1777", "--tmpfs", SCRATCH]
    # The sandbox's own root (the folders bubblewrap made on the way to each bind)
    # and /dev read-only too: their tmpfs have no size limit. /dev/shm (POSIX shared
    # memory, semaphores) is a third small tmpfs.
    args += ["--proc", "/proc", "--dev", "/dev", *size, "--perms", "1777", "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", folder]
    # No keyrings, no user namespace of its own (`referee.bots.seccomp`); the bot keeper
    # puts the filter's descriptor in place of SECCOMP_FD (`seccomp_request`).
    args += ["--seccomp", SECCOMP_FD, "--"]
    return args + _wrapper(uid, processes) + list(argv)


def seccomp_request(argv: Sequence[str]) -> dict[str, object]:
    """What the bot keeper needs to hand the seccomp filter to `argv` (a `bwrap_argv`)."""
    program = seccomp.bot_filter()
    if program is None:
        raise SandboxError(seccomp.problem() or "no seccomp filter")
    return {"seccomp": program.hex(), "seccomp_at": list(argv).index(SECCOMP_FD)}


# Every namespace bubblewrap knows but the user's, for root's bubblewrap.
_ROOT_UNSHARE = (
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
)


def _covered(folder: Path, binds: Sequence[Path], bound: Path) -> bool:
    """Whether `folder` exists in the sandbox already: /tmp, a system folder, or in a
    bind made before `bound`."""
    if folder == Path("/tmp") or _system(folder):
        return True
    return any(_under(folder, other) for other in binds[: binds.index(bound)])


def _wrapper(uid: int | None, processes: int | None) -> list[str]:
    """What runs between bubblewrap and the bot: `setpriv` to the bot's own user (as
    root), `prlimit` for its process limit."""
    words: list[str] = []
    if uid is not None:
        setpriv = shutil.which("setpriv") or "setpriv"
        words += [
            setpriv,
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    if processes is not None:
        prlimit = shutil.which("prlimit") or "prlimit"
        words += [prlimit, f"--nproc={processes}:{processes}", "--"]
    return words


def check_bwrap() -> str | None:
    """None when bubblewrap runs a sandbox here, as the bots will be run (as root: as an
    unprivileged user through setpriv, with a process limit through prlimit); otherwise
    why not, and how to fix it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    if (problem := seccomp.problem()) is not None:
        return problem
    needed = ("setpriv", "prlimit") if as_root() else ("prlimit",)
    for tool in needed:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install util-linux)"
    if as_root():
        unshare = [*_ROOT_UNSHARE, "--die-with-parent"]
        wrapper = _wrapper(BOT_UID_BASE + BOT_UIDS - 1, 64)
    else:
        unshare, wrapper = ["--unshare-all", "--die-with-parent"], _wrapper(None, 64)
    program = seccomp.bot_filter()
    assert program is not None  # seccomp.problem() said so
    fd = os.memfd_create("seccomp", 0)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        filtered = ["--seccomp", str(fd), "--", *wrapper, "/bin/true"]
        done = subprocess.run(
            [bwrap, *unshare, *_system_binds(), "--proc", "/proc", *filtered],
            capture_output=True,
            timeout=10,
            pass_fds=(fd,),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not run: {exc}"
    finally:
        os.close(fd)
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip()
        if as_root():
            return f"bubblewrap, run as root, could not start a bot as another user ({why})"
        return (
            f"the kernel refused a namespace ({why}); allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return None


def empty_scratch(scratch: Path) -> None:
    """Remove everything a bot left in its scratch folder. A folder seen through the
    bot's own mount namespace (`/proc/PID/root/...`) goes with its process: one that
    ends meanwhile leaves nothing to remove."""
    try:
        entries = list(scratch.iterdir()) if scratch.is_dir() else []
    except FileNotFoundError:
        return
    for entry in entries:
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
