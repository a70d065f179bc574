"""Bot processes: start one in its own process group, drain its stderr, end it for sure.

Ending goes `bye`, a short wait for a clean exit, SIGTERM to the whole group,
then the end of everything the bot started. Bots are started by the keeper
(`referee/bots/keeper.py`), one small process per referee process, started on first
use (`Keeper`): it forks a bot keeper for each bot, which ends the bot and every
descendant (through the bot's cgroup where there is one, see `referee.bots.cgroups`,
else as their subreaper) when the referee's end of its control socket closes, so
nothing survives a referee that is itself killed with SIGKILL. Should the bot
keeper be gone first, the referee ends the cgroup itself.

A bot gets a fixed minimal environment (`bot_environment`), never the referee's:
a league's tokens and the referee's own settings stay out of its reach.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import dataclasses
import json
import logging
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

import trio

from ..text import NAME_RULE, last_line, name_problem, quoted
from . import cgroups
from .connection import Connection
from .faults import FaultKind
from .keeper import descendants, stat_fields, tree
from .sandbox import (
    BOT_USERS,
    INTERPRETERS,
    SCRATCH,
    Hidden,
    SandboxError,
    as_root,
    bwrap_argv,
    new_scratch,
    seccomp_request,
)

log = logging.getLogger("referee.process")  # its name before the move: serve prints it

STDERR_CAP = 1 << 20  # bytes of a bot's stderr kept on disk per bot
CLEAN_EXIT_S = 2.0
TERM_GRACE_S = 1.0
FREEZE_S = 2.0  # for a bot's processes to be frozen (or stopped), else it is ended
STOP_PASSES = 50  # passes of SIGSTOP that find new processes, before one gives up
KEEPER_END_S = 6.0  # a bot keeper's own limit for killing and reaping everything, and some
KEEPER_START_S = 30.0  # for the keeper to fork a bot keeper, on a machine under load
KEEPER_SCRIPT = str(Path(__file__).with_name("keeper.py"))
REQUEST_MAX = 128 * 1024  # bytes of a start request: under a socket's default send buffer
LOCALE = "C.UTF-8"  # a UTF-8 locale every glibc and musl system has


DEFAULT_MEMORY_MB = 4096  # 24 GiB and two cores: a few bots at a time, each well inside
DEFAULT_FILES = 1024
DEFAULT_PROCESSES = 256  # processes and threads: a JVM or a thread pool fits
DEFAULT_SCRATCH_MB = 128  # each of three tmpfs in the sandbox: RAM, when filled


@dataclass(frozen=True)
class Limits:
    """Resource limits for one bot process, on by default; None means no limit.

    `memory_mb` is the memory of the bot's whole tree of processes (a memory cgroup
    where one can be made, else the sum the bot keeper checks every
    `keeper.MEMORY_S`, see `referee.bots.cgroups` and docs/sandbox.md) and also each
    process's address space (RLIMIT_AS), `files` its open descriptors
    (RLIMIT_NOFILE), `processes` its processes and threads (a cgroup's `pids.max`
    where that controller is delegated; RLIMIT_NPROC counted for its own user in the
    sandbox, or above what the referee's user runs already without it; root is not
    held by RLIMIT_NPROC), `scratch_mb` its scratch space (the size of each of its
    tmpfs in the sandbox, /scratch, /tmp and /dev/shm; the largest file it may
    write, RLIMIT_FSIZE, without)."""

    memory_mb: int | None = DEFAULT_MEMORY_MB
    cpu_s: int | None = None  # RLIMIT_CPU: SIGXCPU at the limit, SIGKILL a second later
    files: int | None = DEFAULT_FILES
    processes: int | None = DEFAULT_PROCESSES
    scratch_mb: int | None = DEFAULT_SCRATCH_MB

    @classmethod
    def given(
        cls,
        *,
        memory_mb: int | None = None,
        cpu_s: int | None = None,
        files: int | None = None,
        processes: int | None = None,
        scratch_mb: int | None = None,
    ) -> Limits:
        """Limits from options a person gave: None takes the default, 0 means no limit."""
        chosen = {
            "memory_mb": memory_mb,
            "cpu_s": cpu_s,
            "files": files,
            "processes": processes,
            "scratch_mb": scratch_mb,
        }
        defaults = cls()
        values = {
            key: (getattr(defaults, key) if value is None else value or None)
            for key, value in chosen.items()
        }
        return cls(**values)

    def for_keeper(self, sandboxed: bool) -> dict[str, int]:
        """The limits as the keeper sets them in the bot before it starts (a sandboxed
        bot's process limit is set inside its sandbox, see referee.bots.sandbox)."""
        out: dict[str, int] = {}
        if self.memory_mb is not None:
            out["as"] = self.memory_mb * 1024 * 1024
        if self.cpu_s is not None:
            out["cpu"] = self.cpu_s
        if self.files is not None:
            out["nofile"] = self.files
        if self.scratch_mb is not None:
            out["fsize"] = self.scratch_mb * 1024 * 1024
        if self.processes is not None and not sandboxed and os.geteuid() != 0:
            out["nproc_above"] = self.processes
        return out

    def describe(self) -> str:
        """The limits in words, for the standings and the site."""
        words = [
            f"memory {self.memory_mb} MB" if self.memory_mb else "memory unlimited",
            f"{self.processes} processes" if self.processes else "processes unlimited",
            f"{self.files} open files" if self.files else "open files unlimited",
            f"scratch {self.scratch_mb} MB" if self.scratch_mb else "scratch unlimited",
        ]
        if self.cpu_s:
            words.append(f"CPU {self.cpu_s} s")
        return ", ".join(words)


@dataclass(frozen=True)
class BotSpec:
    """How to start a bot: `NAME=command line`, optionally with a folder and environment."""

    name: str
    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    sandbox: str = "none"  # or "bwrap": see referee.bots.sandbox
    # Places of the referee's the sandbox must hide from this bot (logs, the league's files).
    hidden: tuple[Hidden, ...] = ()
    # False: `name` was taken from the program's file name (no NAME= given), and the
    # name the bot gives in its ready message replaces it in `referee play`.
    named: bool = True
    # A person's seat (the command `human`): the terminal it draws on and reads keys
    # from. Such a seat never runs in the sandbox, which would hide that terminal.
    terminal: str | None = None

    def __post_init__(self) -> None:
        if self.sandbox != "none" and web_port(self.argv) is not False:
            raise ValueError(
                f"{self.name}: a person's seat in the browser (`{HUMAN} {WEB}`) serves a page "
                f"on this machine and cannot run in the sandbox ({self.sandbox}); play it "
                "with --sandbox none, play's default"
            )
        if self.terminal is not None and self.sandbox != "none":
            raise ValueError(
                f"{self.name}: a person's seat (`{HUMAN}`) draws on your terminal and cannot "
                f"run in the sandbox ({self.sandbox}); play it with --sandbox none, play's "
                "default"
            )

    @property
    def command(self) -> str:
        """The command line as a person would type it."""
        return shlex.join(self.argv)


def parse_bot(text: str, index: int = 0, label: str | None = None) -> BotSpec:
    """`"NAME=cmd args"` or `"cmd args"` (named after the program) into a `BotSpec`.

    A NAME given must be a bot's name (`referee.text.name_problem`), else `ValueError`
    names it and the argument, as `label` (default `bot N`, N = `index` + 1); a name
    taken from the program's file name that is not one (too long, a control character
    in it) is `botN` instead.

    The command `human` (alone) seats a person: `person_argv`, `referee.human` on the
    terminal of the referee's standard input (`ValueError` in one line when that is
    not a terminal), named NAME or `human`, with `terminal` set (never sandboxed)."""
    label = label or f"bot {index + 1}"
    argument = text
    name, text = _split_name(text)
    if name and (problem := name_problem(name)) is not None:
        raise ValueError(
            f"{label}: the name {quoted(name)} (NAME= of the argument "
            f"{quoted(argument)}) {problem}; {NAME_RULE}"
        )
    argv = tuple(shlex.split(text))
    if not argv:
        raise ValueError(f"{label}: empty command line")
    if (port := web_port(argv)) is not False:  # a person, in the browser: `human --web`
        if port is None:
            raise ValueError(f"{label}: `{HUMAN} {WEB}` takes a port (1 to 65535) or none")
        return BotSpec(name=name or HUMAN, argv=argv, named=bool(name))
    if argv == (HUMAN,):
        terminal = _terminal(label)
        return BotSpec(
            name=name or HUMAN, argv=person_argv(terminal), named=bool(name), terminal=terminal
        )
    if name:
        return BotSpec(name=name, argv=argv)
    prog = Path(_script(argv)).stem
    name = prog if prog and name_problem(prog) is None else f"bot{index + 1}"
    return BotSpec(name=name, argv=argv, named=False)


def _split_name(text: str) -> tuple[str, str]:
    """A bot argument as its NAME (empty when none is given) and its command line."""
    head, sep, rest = text.partition("=")
    if sep and head and " " not in head and "/" not in head:
        return head, rest
    return "", text


HUMAN = "human"  # the command that seats a person at the referee's terminal (referee.human)


def person_argv(terminal: str) -> tuple[str, ...]:
    """How a person's seat is started: `referee.human` drawing on `terminal`, a bot
    process like any other to the referee (the protocol on its stdin and stdout)."""
    return (sys.executable, "-m", "referee.human", "--tty", terminal)


def is_person(text: str) -> bool:
    """Whether a bot argument of `referee play` (`NAME=command` or a command) seats a
    person: its command is `human`, or `human --web [PORT]`."""
    try:
        return is_person_argv(tuple(shlex.split(_split_name(text)[1])))
    except ValueError:
        return False


def is_person_argv(argv: Sequence[str]) -> bool:
    """Whether a command seats a person: `human` (at the terminal) or `human --web
    [PORT]` (in the browser)."""
    return tuple(argv) == (HUMAN,) or web_port(argv) is not False


WEB = "--web"  # `human --web [PORT]`: a person's seat in the browser (referee.human.web)
WEB_KEY_ENV = "REFEREE_SEAT_KEY"  # the seat's key, in its environment (never its argv)


def web_port(argv: Sequence[str]) -> int | Literal[False] | None:
    """For `human --web [PORT]`: the port asked for (0: any free one), None when what
    follows `--web` is not a port; False for every other command."""
    if len(argv) < 2 or argv[0] != HUMAN or argv[1] != WEB:
        return False
    if len(argv) == 2:
        return 0
    if len(argv) == 3 and argv[2].isdigit() and 1 <= int(argv[2]) <= 65535:
        return int(argv[2])
    return None


@dataclass(frozen=True)
class WebSeat:
    """Where a person's browser seat serves its page in this run, and its key."""

    port: int
    key: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?k={self.key}"


_WEB_SEATS: dict[str, WebSeat] = {}  # by the seat's name: the same page every game


def web_seat(name: str, argv: Sequence[str]) -> WebSeat:
    """The page of person `name`'s browser seat (`human --web [PORT]`) in this run: its
    port (a free one, chosen once, when none is given) and a key made once."""
    seat = _WEB_SEATS.get(name)
    if seat is None:
        port = web_port(argv) or _free_port()
        seat = _WEB_SEATS[name] = WebSeat(port, secrets.token_urlsafe(24))
    return seat


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def web_argv(name: str, seat: WebSeat) -> tuple[str, ...]:
    """How a browser seat is started: `referee.human.web` serving on its port."""
    return (sys.executable, "-m", "referee.human.web", "--port", str(seat.port), "--name", name)


def _terminal(label: str) -> str:
    """The path of the terminal the referee runs in (its standard input's), for a
    person's seat; `ValueError` in one line when standard input is not a terminal."""
    try:
        if os.isatty(0):
            return os.ttyname(0)
    except OSError:
        pass
    raise ValueError(
        f"{label}: `{HUMAN}` seats a person at this terminal, but the referee's standard "
        "input is not a terminal"
    )


def _script(argv: Sequence[str]) -> str:
    """What a bot given without NAME= is named after: the script an interpreter runs
    (the first argument that is a file, else the first that looks like one, with a
    suffix or a folder: `python bots/mine.py --budget-ms 20` is `mine`), else the last
    argument that is not an option (`java -cp build Bot` is `Bot`), else the program
    (`nosuchbot --fast` is `nosuchbot`, never its option)."""
    args = [arg for arg in argv[1:] if not arg.startswith("-")]
    for arg in args:
        if Path(arg).is_file():
            return arg
    for arg in args:
        if Path(arg).suffix or "/" in arg:
            return arg
    return args[-1] if args else argv[0]


# What a bot says last when a limit stops it: Python's, C's and C++'s, Node's, Java's.
_MEMORY_SIGNS = (
    b"MemoryError",
    b"bad_alloc",
    b"Cannot allocate memory",
    b"out of memory",
    b"JavaScript heap out of memory",
)
_PROCESS_SIGNS = (
    b"BlockingIOError: [Errno 11]",
    b"can't start new thread",
    b"fork: Resource temporarily unavailable",
    b"fork: retry",
    b"unable to create native thread",
    b"pthread_create failed",
)
_FILE_SIGNS = (b"Too many open files", b"EMFILE")
_DISK_SIGNS = (b"No space left on device", b"ENOSPC", b"File too large")


def _state(pid: int) -> str:
    """A process's state letter from /proc (T: stopped), "" once it is gone."""
    fields = stat_fields(pid)
    return fields[0].decode() if fields else ""


class BotProcess:
    """A running bot: its keeper's pid, its protocol connection and its stderr file."""

    def __init__(
        self,
        spec: BotSpec,
        pid: int,
        pipes: tuple[trio.lowlevel.FdStream, trio.lowlevel.FdStream, trio.lowlevel.FdStream],
        stderr_path: Path | None,
        control: trio.socket.SocketType,
        scratch: Path | None,
        groups: cgroups.BotCgroups | None = None,
        reports: bytes = b"",
        uid: int | None = None,
    ) -> None:
        self.spec = spec
        self._pid = pid
        stdin, stdout, self.stderr = pipes
        self.stderr_path = stderr_path
        self.control = control
        self.returncode: int | None = None  # the bot's own exit status, from its keeper
        self.start_error: str | None = None
        # The bot's own writable folder ($SCRATCH, $HOME, $TMPDIR) without the sandbox,
        # emptied between games (a sandboxed bot's is a tmpfs inside its sandbox).
        self.scratch = scratch
        self.uid = uid  # the sandboxed bot's own host user, when the referee is root
        self.groups = groups or cgroups.BotCgroups()  # its cgroups, if the machine allows
        self.cgroup = self.groups.unified  # its cgroup v2
        self.memory_held: int | None = None  # bytes held when its keeper ended it for memory
        self._control_buffer = b""
        self._stopping = False
        self._reading = False  # a task reads the control socket (`_read_reports`)
        self.stopped = trio.Event()
        # Set when the bot exits, or when its keeper is gone (and the bot with it).
        self.exited = trio.Event()
        self.keeper_gone = trio.Event()  # its control socket reached end of file
        self.stderr_done = trio.Event()  # set once the bot's stderr is closed and copied
        self.stderr_lost: str | None = None  # why its stderr file stopped being written
        self._take_reports(reports)
        self.connection = Connection(stdin, stdout, name=spec.name)
        self.connection.limit_hit = self.memory_now

    @property
    def pid(self) -> int:
        """The pid of the bot's keeper, which leads the bot's process group."""
        return self._pid

    async def freeze(self) -> bool:
        """Stop every process of the bot (its bot keeper excepted) while it waits for its
        next game: an idle process that played one seat rotation of a deal must not
        compute, and so cannot signal what it saw (by CPU timing, say) to a process of
        the same bot playing another rotation. True once all are stopped; False when
        that could not be made sure of (the caller ends the bot then).

        With a freezer cgroup (`cgroup.freeze`, or a v1 `freezer.state`) the kernel
        freezes the whole cgroup, a process forked meanwhile included, and this waits
        until it says all are frozen, at most FREEZE_S. Without one, each process gets
        SIGSTOP, pass after pass until none is left running (a fork in flight is caught
        by the next pass); a bot whose processes fork and exit faster than the passes
        find them is not frozen."""
        if self.keeper_gone.is_set():
            return False
        freezer = self.groups.freezer
        if freezer is None:
            return await self._stop_all()
        cgroups.freeze(freezer)
        pause = 0.0005
        with trio.move_on_after(FREEZE_S):
            while not cgroups.frozen(freezer):
                await trio.sleep(pause)
                pause = min(2 * pause, 0.02)
            return True
        return False

    def thaw(self) -> None:
        """Let the processes `freeze` stopped go on (before a game, or its end)."""
        if self.groups.freezer is not None:
            cgroups.thaw(self.groups.freezer)
        else:
            self._signal_all(signal.SIGCONT)

    async def _stop_all(self) -> bool:
        """SIGSTOP to every live process below the bot keeper, pass after pass, until a
        pass finds every one stopped and none new (a fork in flight is caught by the
        next pass; a stop lands once the process is next scheduled). False when passes
        still find new processes after STOP_PASSES of them (pids that hop faster than
        they are found), or not all are stopped within FREEZE_S."""
        done: set[int] = set()
        passes = 0
        with trio.move_on_after(FREEZE_S):
            while not self.keeper_gone.is_set():
                found = [pid for pid in tree(self._pid) if pid not in done]
                waiting = [pid for pid in done if _state(pid) not in ("T", "t", "Z", "X", "")]
                if not found and not waiting:
                    # A process of `done` may have forked and exited between the scan and
                    # the state check: gone, it passed, but its child runs. Every one is
                    # stopped or gone now, so nothing can fork any more: a scan that
                    # finds no new pid after the check is the last word.
                    if not [pid for pid in tree(self._pid) if pid not in done]:
                        return True
                    continue
                passes += 1 if found else 0
                if passes > STOP_PASSES:
                    return False
                for pid in found + waiting:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGSTOP)
                done.update(found)
                if not found:
                    await trio.sleep(0.001)  # for the stops to land
        return False

    def _signal_all(self, sig: int) -> None:
        """`sig` to every live process below the bot keeper."""
        if self.keeper_gone.is_set():
            return
        for pid in tree(self._pid):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)

    def scratch_folder(self) -> Path | None:
        """Where the referee reaches the bot's scratch folder: its own folder without
        the sandbox, the sandbox's tmpfs through /proc (as seen by a process inside,
        in a mount namespace other than the referee's) with it; None when gone."""
        if self.scratch is not None or self.spec.sandbox != "bwrap":
            return self.scratch
        try:
            own = os.readlink("/proc/self/ns/mnt")
        except OSError:
            return None
        for pid in reversed(descendants(self._pid)):
            try:
                if os.readlink(f"/proc/{pid}/ns/mnt") == own:
                    continue
            except OSError:
                continue
            folder = Path(f"/proc/{pid}/root{SCRATCH}")
            if folder.is_dir():
                return folder
        return None

    def kill_group(self, sig: int) -> None:
        """Send `sig` to every process of the bot's group, while its keeper lives (the
        group id is the keeper's pid, which may be given to another process after it)."""
        if self.keeper_gone.is_set():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._pid, sig)

    async def drain_stderr(self) -> None:
        """Copy the bot's stderr to its file, keeping at most `STDERR_CAP` bytes; a file
        that cannot be written (a full disk) is given up, never the bot."""
        stream = self.stderr
        kept = 0
        handle = None
        if self.stderr_path is not None:
            try:
                handle = self.stderr_path.open("wb")
            except OSError as exc:
                self._stderr_lost(None, exc)
        try:
            while True:
                try:
                    data = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not data:
                    return
                if handle is not None and kept < STDERR_CAP:
                    piece = data[: STDERR_CAP - kept]
                    try:
                        handle.write(piece)
                        kept += len(piece)
                        if kept >= STDERR_CAP:
                            handle.write(b"\n[referee: stderr cut at the size cap]\n")
                        handle.flush()
                    except OSError as exc:  # the disk is full, say: the bot plays on
                        self._stderr_lost(handle, exc)
                        handle = None
        finally:
            if handle is not None:
                with contextlib.suppress(OSError):  # the cap's note may not fit either
                    handle.close()
            self.stderr_done.set()

    def _stderr_lost(self, handle: IO[bytes] | None, exc: OSError) -> None:
        """The bot's stderr file cannot be written: it keeps what reached it, and the
        rest of the bot's stderr is read and dropped (`stderr_lost` says why)."""
        self.stderr_lost = exc.strerror or str(exc)
        log.warning(
            "bot %s: cannot write its stderr file %s (%s); the rest of its stderr is dropped",
            self.spec.name,
            self.stderr_path,
            self.stderr_lost,
        )
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()

    async def watch(self) -> None:
        """Read the keeper's reports until it closes: the bot's exit, or why it did not start."""
        await self._read_reports()

    async def _read_reports(self) -> None:
        self._reading = True
        try:
            while not self.keeper_gone.is_set():
                try:
                    data = await self.control.recv(4096)
                except (OSError, trio.ClosedResourceError):
                    data = b""  # stop() closed the socket: nothing more to learn
                if not data:
                    # The keeper is gone, and the bot with it (PR_SET_PDEATHSIG).
                    self.keeper_gone.set()
                    self.exited.set()
                    return
                self._take_reports(data)
        finally:
            self._reading = False

    def _take_reports(self, data: bytes) -> None:
        self._control_buffer += data
        while b"\n" in self._control_buffer:
            line, _, self._control_buffer = self._control_buffer.partition(b"\n")
            word, _, rest = line.decode("utf-8", "replace").partition(" ")
            if word == "exit":
                self.returncode = int(rest)
                self.exited.set()
            elif word == "memory" and rest.isdigit():
                self.memory_held = int(rest)
            elif word == "error":
                self.start_error = rest

    async def start_note(self, wait_s: float = 0.5) -> str:
        """What a person needs to see a failed start's cause: the command, the folder it
        ran in, and where its stderr is kept with the last line it holds (its stderr is
        waited for up to `wait_s`: a bot that could not open its script says why there)."""
        with trio.move_on_after(wait_s):
            await self.stderr_done.wait()
        spec = self.spec
        note = f"; ran {shlex.join(spec.argv)} in {spec.cwd or os.getcwd()}"
        path = self.stderr_path
        if path is not None and path.is_file() and path.stat().st_size:
            note += f"; stderr in {path}, last line: {last_line(path)}"
        else:
            note += "; it wrote nothing to stderr"
        return note

    async def exit_note(self, wait_s: float = 0.5) -> str:
        """Why the bot may have stopped answering: its exit, if it exits within `wait_s`."""
        with trio.move_on_after(wait_s):
            await self.exited.wait()
        if self.start_error:
            return f" ({self.start_error})"
        if self.returncode is not None:
            return f" ({describe_exit(self.returncode)})"
        return ""

    async def diagnose(self) -> tuple[FaultKind, str]:
        """After the bot's output ended: a crash, or a resource limit that stopped it,
        named with its value."""
        note = await self.exit_note()
        code = self.returncode
        limits = self.spec.limits
        if (memory := self.memory_hit()) is not None:
            return FaultKind.RESOURCE_LIMIT, f"{note}: {memory}"
        if (
            code is not None
            and limits.cpu_s is not None
            and code
            in (
                -signal.SIGXCPU,
                -signal.SIGKILL,
            )
        ):
            return FaultKind.RESOURCE_LIMIT, f"{note} at the CPU limit of {limits.cpu_s} s"
        if code == -signal.SIGXFSZ and limits.scratch_mb is not None:
            return (
                FaultKind.RESOURCE_LIMIT,
                f"{note} at the file size limit of {limits.scratch_mb} MB",
            )
        if code not in (None, 0):
            with trio.move_on_after(0.5):
                await self.stderr_done.wait()  # its last words may still be on their way
        limit = self.limit_hit()
        if limit is not None:
            return FaultKind.RESOURCE_LIMIT, f"{note}: {limit}"
        return FaultKind.CRASH, note

    def memory_hit(self) -> str | None:
        """Its memory limit, in words, when its processes together went over it: its bot
        keeper ended it for that, or the kernel killed one of them in its memory cgroup."""
        limits = self.spec.limits
        if limits.memory_mb is None:
            return None
        if self.memory_held is not None or cgroups.memory_limited(self.groups):
            return f"out of memory at the {limits.memory_mb} MB limit (all its processes together)"
        return None

    def memory_now(self) -> str | None:
        """`memory_hit` with the reports its bot keeper sent so far, read now (the bot
        keeper says `memory` before it ends the bot, so a write that found the bot gone
        finds the report there)."""
        with contextlib.suppress(OSError):
            while data := os.read(self.control.fileno(), 4096):  # nonblocking: trio's
                self._take_reports(data)
        return self.memory_hit()

    def limit_hit(self) -> str | None:
        """Which of its limits the bot ran into, in words, judged by its bot keeper's
        report, its cgroups' counters and what it said last; None when none shows."""
        limits = self.spec.limits
        if (memory := self.memory_hit()) is not None:
            return memory
        if limits.processes is not None and (
            (self.cgroup is not None and cgroups.processes_limited(self.cgroup))
            or self._said(_PROCESS_SIGNS)
        ):
            return f"out of processes at the limit of {limits.processes}"
        if limits.memory_mb is not None and self._said(_MEMORY_SIGNS):
            return f"out of memory at the {limits.memory_mb} MB limit"
        if limits.files is not None and self._said(_FILE_SIGNS):
            return f"out of file descriptors at the limit of {limits.files} open files"
        if limits.scratch_mb is not None and self._said(_DISK_SIGNS):
            return f"out of scratch space at the {limits.scratch_mb} MB limit"
        return None

    def _said(self, signs: tuple[bytes, ...]) -> bool:
        """Whether the last 8 KiB of the bot's stderr hold one of `signs`."""
        if self.stderr_path is None or not self.stderr_path.exists():
            return False
        with self.stderr_path.open("rb") as handle:
            handle.seek(max(0, self.stderr_path.stat().st_size - 8192))
            tail = handle.read()
        return any(sign in tail for sign in signs)

    async def wait(self) -> int | None:
        """Wait for the bot (not the keeper) to exit; its status."""
        await self.exited.wait()
        return self.returncode

    async def stop(self) -> int | None:
        """End the bot: wait for a clean exit, then SIGTERM its group, then end every
        process it started, wherever it went. Safe to call twice, even at once."""
        with trio.CancelScope(shield=True):
            if self._stopping:
                await self.stopped.wait()
                return self.returncode
            self._stopping = True
            try:
                with trio.move_on_after(CLEAN_EXIT_S):
                    await self.exited.wait()
                if not self.exited.is_set():
                    self.kill_group(signal.SIGTERM)  # the keeper ignores it
                    with trio.move_on_after(TERM_GRACE_S):
                        await self.exited.wait()
                await self._end_everything()
            finally:
                self.control.close()
                await self.connection.aclose()
                if self.scratch is not None:
                    shutil.rmtree(self.scratch, ignore_errors=True)
                if self.uid is not None and self.keeper_gone.is_set():
                    BOT_USERS.give_back(self.uid)  # everything it ran has ended
                BOT_KEEPERS.discard(self._pid)
                self.stopped.set()
        return self.returncode

    async def _end_everything(self) -> None:
        # The keeper ends the bot and every descendant when its socket reaches end of
        # file, and may still report the bot's exit on the way (so only our half closes).
        with contextlib.suppress(OSError):
            self.control.shutdown(socket.SHUT_WR)
        await self._keeper_end(KEEPER_END_S)
        # A keeper that is stuck leaves this to the referee: the group catches the bot's
        # plain children, the cgroup everything else. (The orphans of a keeper that was
        # killed, by its bot say, went to the keeper of all, which kills them.)
        self.kill_group(signal.SIGKILL)
        await self._keeper_end(TERM_GRACE_S)
        for path in self.groups.paths:
            if path.exists():
                await trio.to_thread.run_sync(cgroups.remove, path)

    async def _keeper_end(self, timeout_s: float) -> None:
        """Wait at most `timeout_s` for the keeper's end of the control socket to close,
        reading it here unless `watch` does."""
        with trio.move_on_after(timeout_s):
            while not self.keeper_gone.is_set():
                if self._reading:
                    with trio.move_on_after(0.05):
                        await self.keeper_gone.wait()
                else:
                    await self._read_reports()


async def start_bot(spec: BotSpec, stderr_path: Path | None = None) -> BotProcess:
    """Start `spec` through the keeper, in a new process group, with piped stdio, its own
    scratch folder, its own cgroup where the machine allows it, and `bot_environment`.

    Run `watch()` in a nursery to learn when the bot exits. A command that does
    not exist or cannot be executed raises `OSError` here.
    """
    if web_port(spec.argv) is not False:  # a person, in the browser
        seat = web_seat(spec.name, spec.argv)
        # The seat runs the referee's own code: it imports it as the referee does.
        imports = os.pathsep.join(p for p in sys.path if p)
        env = {**spec.env, WEB_KEY_ENV: seat.key, "PYTHONPATH": imports}
        spec = dataclasses.replace(spec, argv=web_argv(spec.name, seat), env=env)
    elif spec.argv == (HUMAN,):  # a person in a league (`referee league`): at this terminal
        try:
            terminal = spec.terminal or _terminal(spec.name)
        except ValueError as exc:
            raise FileNotFoundError(2, str(exc)) from None
        spec = dataclasses.replace(spec, argv=person_argv(terminal), terminal=terminal)
    if (problem := unstartable(spec)) is not None:
        raise FileNotFoundError(2, problem)
    sandboxed = spec.sandbox == "bwrap"
    scratch = None if sandboxed else new_scratch(spec.name)
    env = bot_environment(spec, SCRATCH if scratch is None else str(scratch))
    argv = list(spec.argv)
    groups = cgroups.BotCgroups()
    uid: int | None = None
    filtered: dict[str, object] = {}  # the sandbox's seccomp filter, for the bot keeper
    mine: list[int] = []  # the referee's ends of the bot's pipes
    ours, theirs = socket.socketpair()
    limits = spec.limits
    try:
        if sandboxed:
            try:
                uid = BOT_USERS.take() if as_root() else None
                argv = bwrap_argv(
                    spec.argv,
                    cwd=spec.cwd,
                    env=env,
                    hidden=spec.hidden,
                    uid=uid,
                    processes=limits.processes,
                    scratch_mb=limits.scratch_mb,
                )
                filtered = seccomp_request(argv)
            except SandboxError as exc:
                raise OSError(str(exc)) from None
        groups = cgroups.create_for(limits.memory_mb, limits.processes)
        events = groups.memory_events()
        request: dict[str, object] = {
            **filtered,
            "argv": argv,
            "env": env,
            # Absolute: the keeper's own folder is the referee's when it started.
            "cwd": os.path.join(os.getcwd(), spec.cwd or ""),
            "limits": limits.for_keeper(sandboxed),
            "cgroup": None if groups.unified is None else str(groups.unified),
            "cgroups_v1": [str(path) for path in groups.v1],
            # The bot's memory, all its processes together: the kernel holds it in its
            # memory cgroup, whose OOM kills the bot keeper watches; without one, the
            # bot keeper sums it (see keeper._Memory).
            "memory": None
            if limits.memory_mb is None
            else {"bytes": limits.memory_mb << 20, "events": events and str(events)},
        }
        stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
        stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
        stderr_r, stderr_w = os.pipe2(os.O_CLOEXEC)
        mine = [stdin_w, stdout_r, stderr_r]
        theirs_fds = [stdin_r, stdout_w, stderr_w, theirs.fileno()]
        try:
            await KEEPER.send(json.dumps(request).encode(), theirs_fds)
        finally:
            for fd in theirs_fds[:3]:
                os.close(fd)
            theirs.close()
        control = trio.socket.from_stdlib_socket(ours)
        pid, reports = await _keeper_pid(control)
    except BaseException:
        ours.close()
        theirs.close()
        for fd in mine:
            os.close(fd)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        for path in groups.paths:
            cgroups.remove(path)
        if uid is not None:
            BOT_USERS.give_back(uid)
        raise
    pipes = (
        trio.lowlevel.FdStream(stdin_w),
        trio.lowlevel.FdStream(stdout_r),
        trio.lowlevel.FdStream(stderr_r),
    )
    BOT_KEEPERS.add(pid)
    return BotProcess(spec, pid, pipes, stderr_path, control, scratch, groups, reports, uid)


async def _keeper_pid(control: trio.socket.SocketType) -> tuple[int, bytes]:
    """The bot keeper's first report, `keeper PID`, and what came after it; `OSError`
    with the keeper's words when it could not start the bot (a folder that is not
    there, no process left to fork)."""
    buffer = b""
    with trio.move_on_after(KEEPER_START_S):
        while b"\n" not in buffer:
            data = await control.recv(4096)
            if not data:
                break
            buffer += data
    line, _, rest = buffer.partition(b"\n")
    word, _, text = line.decode("utf-8", "replace").partition(" ")
    if word == "keeper" and text.isdigit():
        return int(text), rest
    if word == "error":
        raise OSError(text)
    raise OSError("the keeper did not start the bot")


PR_SET_CHILD_SUBREAPER = 36
BOT_KEEPERS: set[int] = set()  # the pids of this process's live bot keepers


def _become_subreaper() -> None:
    """Adopt what a keeper leaves behind: a bot run as the referee's own user may kill
    its bot keeper and the keeper, whose orphans then come here instead of to init."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


HEADROOM_FILES = 1 << 16
REFEREE_OOM_SCORE_ADJ = -500  # as root; a bot's is 1000 (keeper.OOM_SCORE_ADJ)


def _take_headroom() -> None:
    """Raise the referee's own soft limit of open files to its hard limit (at most
    `HEADROOM_FILES`): each bot's limits are its own (`Limits`), so what the referee
    needs for its pipes, logs and connections no bot can use up. As root, also make
    the referee the last the OOM killer would take."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = HEADROOM_FILES if hard == resource.RLIM_INFINITY else min(hard, HEADROOM_FILES)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if os.geteuid() == 0:
        # Out of memory, the kernel takes a bot (1000, at the lowest 0) before the
        # referee and its keepers.
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(REFEREE_OOM_SCORE_ADJ))


def _own_children() -> dict[int, tuple[str, int]]:
    """This process's children: each one's state and session."""
    me = os.getpid()
    found: dict[int, tuple[str, int]] = {}
    for entry in os.listdir("/proc"):
        fields = stat_fields(entry) if entry.isdigit() else None
        if fields and int(fields[1]) == me:
            found[int(entry)] = (fields[0].decode(), int(fields[3]))
    return found


def sweep_orphans(spare: set[int], rounds: int = 50) -> int:
    """Kill and reap every child of this process that it adopted as a subreaper: a
    child in another session than its own that is not in `spare` (the keeper, live bot
    keepers), with everything below it. How many there were."""
    session = os.getsid(0)
    ended = 0
    for _ in range(rounds):
        strays = [
            pid
            for pid, (state, sid) in _own_children().items()
            if sid != session and pid not in spare
        ]
        if not strays:
            break
        for pid in strays:
            for victim in (pid, *descendants(pid)):
                with contextlib.suppress(OSError):
                    os.kill(victim, signal.SIGKILL)
        for pid in strays:
            with contextlib.suppress(ChildProcessError, OSError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    ended += 1
        threading.Event().wait(0.01)  # no trio here: at exit, or in the keeper's lock
    return ended


class Keeper:
    """This referee process's keeper (`referee/bots/keeper.py --serve`): started on first use,
    and again when it is gone (a bot may kill it) or belongs to the process this one
    was forked from (a cluster worker)."""

    def __init__(self) -> None:
        self._socket: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._lock = threading.Lock()  # a trio loop in a thread (a cluster worker's) may ask
        atexit.register(self.at_exit)

    def _start(self) -> socket.socket:
        with self._lock:
            return self._start_locked()

    def _start_locked(self) -> socket.socket:
        if self._socket is not None and self._owner == os.getpid():
            assert self._process is not None
            if self._process.poll() is None:
                return self._socket
        gone = self._process is not None and self._owner == os.getpid()
        self.close()
        if gone:
            # Killed (by a bot of the referee's own user): what its bot keepers left.
            sweep_orphans(set(BOT_KEEPERS), rounds=5)
        _become_subreaper()
        _take_headroom()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # -I -S: the keeper reads no PYTHON* variable and no site-packages, so it
            # starts fast and needs nothing of the referee. A session of its own: a
            # terminal's Ctrl-C or a signal to the referee's group is not for it.
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", KEEPER_SCRIPT, "--serve", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                env={"LC_ALL": LOCALE},
                cwd="/",
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        self._socket, self._owner = ours, os.getpid()
        return ours

    async def send(self, request: bytes, fds: list[int]) -> None:
        """Ask the keeper to start a bot: `request` (JSON) and its stdin, stdout, stderr
        and control descriptors, which the caller may close once this returns."""
        if len(request) > REQUEST_MAX:
            raise OSError(f"the bot's command line and environment exceed {REQUEST_MAX} bytes")
        for attempt in range(2):
            sock = self._start()
            message = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
            pause = 0.001
            while True:
                try:
                    sock.sendmsg([request], message)
                    return
                except BlockingIOError:
                    # The queue holds ten requests; a burst of starts (a league's first
                    # games) waits for the keeper to fork. A short sleep, not
                    # wait_writable: several tasks may wait at once.
                    await trio.sleep(pause)
                    pause = min(pause * 2, 0.02)
                except OSError as exc:
                    if attempt:
                        raise OSError(f"the keeper is gone: {exc.strerror}") from None
                    break  # gone (killed, or forked away from): start another, once
            self.close()

    @property
    def pid(self) -> int | None:
        """The keeper's pid while it runs, else None."""
        if self._process is None or self._process.poll() is not None:
            return None
        return self._process.pid

    def close(self) -> None:
        """Let the keeper go: it exits, and each bot keeper ends with its control socket."""
        if self._socket is not None:
            self._socket.close()  # in a forked copy of the referee: its copy only
            self._socket = None
        if self._process is not None and self._owner == os.getpid():
            # It exits as soon as it reads the end of file: reap it.
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=1)
        self._process = None

    def at_exit(self) -> None:
        """At the referee's exit: let the keeper go, then end whatever was left to this
        process as a subreaper."""
        started = self._owner == os.getpid()
        self.close()
        if started:
            sweep_orphans(set())


KEEPER = Keeper()


def bot_environment(spec: BotSpec, home: str) -> dict[str, str]:
    """Exactly what a bot finds in its environment: `home` (its scratch folder) as HOME,
    TMPDIR and SCRATCH, the referee's PATH, a UTF-8 locale, unbuffered Python output,
    then the bot's own `env` (which may replace any of these)."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home,
        "TMPDIR": home,
        "SCRATCH": home,
        "LANG": LOCALE,
        "LC_ALL": LOCALE,
        "PYTHONUNBUFFERED": "1",
    }
    env.update(spec.env)
    return env


def env_name(name: str) -> bool:
    """Whether `name` may name an environment variable of a bot (letters, digits, _)."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def findable(spec: BotSpec) -> bool:
    """True when the program of `spec` exists and may be executed."""
    return unstartable(spec) is None


def unstartable(spec: BotSpec) -> str | None:
    """Why the program of `spec` cannot be started (missing, a folder, not executable),
    in words that name it; None when it can."""
    program = spec.argv[0]
    if "/" not in program:
        if shutil.which(program, path=spec.env.get("PATH", os.environ.get("PATH"))) is None:
            return f"{program!r} is not an executable program (looked in PATH)"
        return None
    path = Path(spec.cwd or ".") / program
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"{program!r}: no such file"
    except OSError as exc:  # a folder on the way that may not be read, say
        return f"{program!r}: {exc.strerror}"
    if stat.S_ISDIR(mode):
        return f"{program!r} is a folder, not a program"
    if not stat.S_ISREG(mode):
        return f"{program!r} is not a program file"
    if not os.access(path, os.X_OK):
        return f"{program!r} is not executable (chmod +x, or name its interpreter first)"
    return None


def missing_script(spec: BotSpec) -> str | None:
    """Why the script an interpreter is given cannot be there (`python bot.py` run in a
    folder without bot.py), in words naming it and the folder; None when it is there or
    the command is not of that form (an option first, `-m module`, a program alone, an
    absolute path)."""
    argv = spec.argv
    if len(argv) < 2 or not INTERPRETERS.fullmatch(Path(argv[0]).name):
        return None
    script = argv[1]
    if script.startswith(("-", "/")) or ("/" not in script and not Path(script).suffix):
        return None  # an option, an absolute path (perhaps on a cluster's workers only)
    folder = Path(spec.cwd or ".")
    if (folder / script).exists():
        return None
    return f"{script!r}: no such file in {folder.resolve()}"


def describe_exit(code: int | None) -> str:
    """A process's exit status in words."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def argv_of(command: str | Sequence[str]) -> tuple[str, ...]:
    """A command line split shell-style (no shell is run)."""
    return tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
