"""Bot processes: start one in its own process group, drain its stderr, end it for sure.

Ending goes `bye`, a short wait for a clean exit, SIGTERM to the whole group,
then the end of everything the bot started. Each bot runs under
`referee/keeper.py`, which ends the bot and every descendant (through the bot's
cgroup where there is one, see `referee.cgroups`, else as their subreaper) when
the referee's end of a socket closes, so nothing survives a referee that is
itself killed with SIGKILL. Should the keeper be gone first, the referee ends
the cgroup and the process group itself.

A bot gets a fixed minimal environment (`bot_environment`), never the referee's:
a league's tokens and the referee's own settings stay out of its reach.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from . import cgroups
from .connection import Connection
from .faults import FaultKind
from .sandbox import SCRATCH, Hidden, SandboxError, bwrap_argv, new_scratch

log = logging.getLogger(__name__)

STDERR_CAP = 1 << 20  # bytes of a bot's stderr kept on disk per bot
CLEAN_EXIT_S = 2.0
TERM_GRACE_S = 1.0
KEEPER_END_S = 6.0  # the keeper's own limit for killing and reaping everything, and some
KEEPER = str(Path(__file__).with_name("keeper.py"))
LOCALE = "C.UTF-8"  # a UTF-8 locale every glibc and musl system has


@dataclass(frozen=True)
class Limits:
    """Resource limits for one bot process (Linux rlimits); None means no limit."""

    memory_mb: int | None = None  # RLIMIT_AS
    cpu_s: int | None = None  # RLIMIT_CPU: SIGXCPU at the limit, SIGKILL a second later
    files: int | None = None  # RLIMIT_NOFILE

    def keeper_args(self) -> list[str]:
        """The keeper's options that set these limits in the bot before it starts."""
        out: list[str] = []
        if self.memory_mb is not None:
            out += ["--as", str(self.memory_mb * 1024 * 1024)]
        if self.cpu_s is not None:
            out += ["--cpu", str(self.cpu_s)]
        if self.files is not None:
            out += ["--nofile", str(self.files)]
        return out


@dataclass(frozen=True)
class BotSpec:
    """How to start a bot: `NAME=command line`, optionally with a folder and environment."""

    name: str
    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    sandbox: str = "none"  # or "bwrap": see referee.sandbox
    # Places of the referee's the sandbox must hide from this bot (logs, the league's files).
    hidden: tuple[Hidden, ...] = ()

    @property
    def command(self) -> str:
        """The command line as a person would type it."""
        return shlex.join(self.argv)


def parse_bot(text: str, index: int = 0) -> BotSpec:
    """`"NAME=cmd args"` or `"cmd args"` (named after the program) into a `BotSpec`."""
    name = ""
    head, sep, rest = text.partition("=")
    if sep and head and " " not in head and "/" not in head:
        name, text = head, rest
    argv = tuple(shlex.split(text))
    if not argv:
        raise ValueError(f"bot {index + 1}: empty command line")
    if not name:
        prog = Path(argv[-1] if len(argv) > 1 else argv[0]).stem
        name = prog or f"bot{index + 1}"
    return BotSpec(name=name, argv=argv)


class BotProcess:
    """A running bot: its process, its protocol connection and its stderr file."""

    def __init__(
        self,
        spec: BotSpec,
        process: trio.Process,
        stderr_path: Path | None,
        control: trio.socket.SocketType,
        scratch: Path,
        cgroup: Path | None = None,
    ) -> None:
        self.spec = spec
        self.process = process
        self.stderr_path = stderr_path
        self.control = control
        self.returncode: int | None = None  # the bot's own exit status, from the keeper
        self.start_error: str | None = None
        # The bot's own writable folder ($SCRATCH, $HOME, $TMPDIR), emptied between games.
        self.scratch = scratch
        self.cgroup = cgroup  # the bot's cgroup, if the machine allows them
        self._control_buffer = b""
        self._stopping = False
        self.stopped = trio.Event()
        # Set when the bot exits, or when its keeper is gone (and the bot with it).
        self.exited = trio.Event()
        self.stderr_done = trio.Event()  # set once the bot's stderr is closed and copied
        assert process.stdin is not None and process.stdout is not None
        self.connection = Connection(process.stdin, process.stdout, name=spec.name)

    @property
    def pid(self) -> int:
        """The bot's process id (also its process group id)."""
        return self.process.pid

    def kill_group(self, sig: int) -> None:
        """Send `sig` to every process of the bot's group."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def drain_stderr(self) -> None:
        """Copy the bot's stderr to its file, keeping at most `STDERR_CAP` bytes."""
        stream = self.process.stderr
        assert stream is not None
        kept = 0
        handle = self.stderr_path.open("wb") if self.stderr_path else None
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
                    handle.write(piece)
                    handle.flush()
                    kept += len(piece)
                    if kept >= STDERR_CAP:
                        handle.write(b"\n[referee: stderr cut at the size cap]\n")
        finally:
            if handle is not None:
                handle.close()
            self.stderr_done.set()

    async def watch(self) -> None:
        """Read the keeper's reports until it closes: the bot's exit, or why it did not start."""
        while self.returncode is None:
            try:
                data = await self.control.recv(4096)
            except (OSError, trio.ClosedResourceError):
                data = b""  # stop() closed the socket: nothing more to learn
            if not data:
                # The keeper is gone, and the bot with it (PR_SET_PDEATHSIG).
                self.exited.set()
                return
            self._control_buffer += data
            while b"\n" in self._control_buffer:
                line, _, self._control_buffer = self._control_buffer.partition(b"\n")
                word, _, rest = line.decode("utf-8", "replace").partition(" ")
                if word == "exit":
                    self.returncode = int(rest)
                    self.exited.set()
                elif word == "error":
                    self.start_error = rest

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
        """After the bot's output ended: a crash, or a resource limit that killed it."""
        note = await self.exit_note()
        code = self.returncode
        limits = self.spec.limits
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
        if code not in (None, 0) and limits.memory_mb is not None:
            with trio.move_on_after(0.5):
                await self.stderr_done.wait()  # its last words may still be on their way
        if code not in (None, 0) and limits.memory_mb is not None and self._out_of_memory():
            return (
                FaultKind.RESOURCE_LIMIT,
                f"{note}: out of memory at the {limits.memory_mb} MB limit",
            )
        return FaultKind.CRASH, note

    def _out_of_memory(self) -> bool:
        # A failed allocation shows only in what the bot said last: Python's MemoryError,
        # C++'s std::bad_alloc, malloc's ENOMEM, Node's heap message.
        if self.stderr_path is None or not self.stderr_path.exists():
            return False
        with self.stderr_path.open("rb") as handle:
            handle.seek(max(0, self.stderr_path.stat().st_size - 8192))
            tail = handle.read()
        return any(
            sign in tail
            for sign in (
                b"MemoryError",
                b"bad_alloc",
                b"Cannot allocate memory",
                b"out of memory",
                b"JavaScript heap out of memory",
            )
        )

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
                shutil.rmtree(self.scratch, ignore_errors=True)
                self.stopped.set()
        return self.returncode

    async def _end_everything(self) -> None:
        # The keeper ends the bot and every descendant when its socket reaches end of
        # file, and may still report the bot's exit on the way (so only our half closes).
        with contextlib.suppress(OSError):
            self.control.shutdown(socket.SHUT_WR)
        with trio.move_on_after(KEEPER_END_S):
            await self.process.wait()
        # A keeper that is stuck, or was killed by its bot, leaves this to the referee: the
        # group catches the bot's plain children, the cgroup everything else.
        self.kill_group(signal.SIGKILL)
        await self.process.wait()
        if self.cgroup is not None and self.cgroup.exists():
            await trio.to_thread.run_sync(cgroups.remove, self.cgroup)


async def start_bot(spec: BotSpec, stderr_path: Path | None = None) -> BotProcess:
    """Start `spec` under a keeper, in a new process group, with piped stdio, its own
    scratch folder, its own cgroup where the machine allows it, and `bot_environment`.

    Run `watch()` in a nursery to learn when the bot exits. A command that does
    not exist or cannot be executed raises `OSError` here.
    """
    if (problem := unstartable(spec)) is not None:
        raise FileNotFoundError(2, problem)
    scratch = new_scratch(spec.name)
    sandboxed = spec.sandbox == "bwrap"
    env = bot_environment(spec, SCRATCH if sandboxed else str(scratch))
    argv = list(spec.argv)
    cgroup: Path | None = None
    ours, theirs = socket.socketpair()
    try:
        if sandboxed:
            try:
                argv = bwrap_argv(
                    spec.argv, cwd=spec.cwd, scratch=scratch, env=env, hidden=spec.hidden
                )
            except SandboxError as exc:
                raise OSError(str(exc)) from None
        cgroup = cgroups.create()
        joins = ["--cgroup", str(cgroup)] if cgroup is not None else []
        process = await trio.lowlevel.open_process(
            # -I -S: the keeper reads no PYTHON* variable and no site-packages, so the
            # bot's environment is the keeper's own and nothing of the referee is needed.
            [
                sys.executable,
                "-I",
                "-S",
                KEEPER,
                str(theirs.fileno()),
                *spec.limits.keeper_args(),
                *joins,
                "--",
                *argv,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=spec.cwd,
            env=env,
            start_new_session=True,
            pass_fds=(theirs.fileno(),),
        )
    except BaseException:
        ours.close()
        shutil.rmtree(scratch, ignore_errors=True)
        if cgroup is not None:
            cgroups.remove(cgroup)
        raise
    finally:
        theirs.close()
    control = trio.socket.from_stdlib_socket(ours)
    return BotProcess(spec, process, stderr_path, control, scratch, cgroup)


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
