"""Bot processes: start one in its own process group, drain its stderr, end it for sure.

Ending goes `bye`, a short wait for a clean exit, SIGTERM to the whole group,
then SIGKILL. Each bot runs under `referee.keeper`, which kills the whole group
when the referee's end of a socket closes, so nothing survives a referee that
is itself killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from .connection import Connection
from .faults import FaultKind
from .sandbox import Hidden, SandboxError, bwrap_argv, new_scratch

log = logging.getLogger(__name__)

STDERR_CAP = 1 << 20  # bytes of a bot's stderr kept on disk per bot
CLEAN_EXIT_S = 2.0
TERM_GRACE_S = 1.0


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
    ) -> None:
        self.spec = spec
        self.process = process
        self.stderr_path = stderr_path
        self.control = control
        self.returncode: int | None = None  # the bot's own exit status, from the keeper
        self.start_error: str | None = None
        self.scratch: Path | None = None  # the sandbox's writable folder, if sandboxed
        self._control_buffer = b""
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
                return  # stop() closed the socket: nothing more to learn
            if not data:
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
        """End the bot: wait for a clean exit, then SIGTERM, then SIGKILL its whole group."""
        with trio.CancelScope(shield=True):
            with trio.move_on_after(CLEAN_EXIT_S):
                await self.exited.wait()
            if self.returncode is None:
                self.kill_group(signal.SIGTERM)
                with trio.move_on_after(TERM_GRACE_S):
                    await self.exited.wait()
            # The group may hold grandchildren even after the bot itself exited; the
            # keeper is in it too and goes with them.
            self.kill_group(signal.SIGKILL)
            await self.process.wait()
            self.control.close()
            await self.connection.aclose()
            if self.scratch is not None:
                shutil.rmtree(self.scratch, ignore_errors=True)
        return self.returncode


async def start_bot(spec: BotSpec, stderr_path: Path | None = None) -> BotProcess:
    """Start `spec` under a keeper, in a new process group, with piped stdio.

    Run `watch()` in a nursery to learn when the bot exits. A command that does
    not exist or cannot be executed raises `OSError` here.
    """
    if not findable(spec):
        where = "" if "/" in spec.argv[0] else " (looked in PATH)"
        raise FileNotFoundError(2, f"{spec.argv[0]} is not an executable program{where}")
    env = dict(os.environ)
    env.update(spec.env)
    env.setdefault("PYTHONUNBUFFERED", "1")
    argv = list(spec.argv)
    scratch: Path | None = None
    if spec.sandbox == "bwrap":
        scratch = new_scratch(spec.name)
        try:
            argv = bwrap_argv(spec.argv, cwd=spec.cwd, scratch=scratch, env=env, hidden=spec.hidden)
        except SandboxError as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise OSError(str(exc)) from None
    ours, theirs = socket.socketpair()
    try:
        process = await trio.lowlevel.open_process(
            [
                sys.executable,
                "-m",
                "referee.keeper",
                str(theirs.fileno()),
                *spec.limits.keeper_args(),
                "--",
                *argv,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=spec.cwd,
            env={**env, "PYTHONPATH": _keeper_path(env)},
            start_new_session=True,
            pass_fds=(theirs.fileno(),),
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    bot = BotProcess(spec, process, stderr_path, trio.socket.from_stdlib_socket(ours))
    bot.scratch = scratch
    return bot


def findable(spec: BotSpec) -> bool:
    """True when the program of `spec` exists and may be executed."""
    program = spec.argv[0]
    if "/" in program:
        path = Path(spec.cwd or ".") / program
        return path.is_file() and os.access(path, os.X_OK)
    return shutil.which(program, path=spec.env.get("PATH", os.environ.get("PATH"))) is not None


def _keeper_path(env: dict[str, str]) -> str:
    # The keeper must import even when the referee runs from a source tree.
    here = str(Path(__file__).resolve().parent.parent)
    rest = env.get("PYTHONPATH", "")
    return here + (os.pathsep + rest if rest else "")


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
