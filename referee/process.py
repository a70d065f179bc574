"""Bot processes: start one in its own process group, drain its stderr, end it for sure.

Ending goes `bye`, a short wait for a clean exit, SIGTERM to the whole group,
then SIGKILL. Each bot also gets a parent-death signal, so a referee killed
outright does not leave it running.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from .connection import Connection

log = logging.getLogger(__name__)

STDERR_CAP = 1 << 20  # bytes of a bot's stderr kept on disk per bot
CLEAN_EXIT_S = 2.0
TERM_GRACE_S = 1.0


@dataclass(frozen=True)
class BotSpec:
    """How to start a bot: `NAME=command line`, optionally with a folder and environment."""

    name: str
    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

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


def _set_parent_death_signal() -> None:  # pragma: no cover - runs in the child
    # Linux: the bot gets SIGKILL when the referee dies, even by SIGKILL.
    try:
        libc = ctypes.CDLL(None)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


class BotProcess:
    """A running bot: its process, its protocol connection and its stderr file."""

    def __init__(self, spec: BotSpec, process: trio.Process, stderr_path: Path | None) -> None:
        self.spec = spec
        self.process = process
        self.stderr_path = stderr_path
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

    async def stop(self) -> int | None:
        """End the bot: wait for a clean exit, then SIGTERM, then SIGKILL its whole group."""
        with trio.CancelScope(shield=True):
            with trio.move_on_after(CLEAN_EXIT_S):
                await self.process.wait()
            if self.process.returncode is None:
                self.kill_group(signal.SIGTERM)
                with trio.move_on_after(TERM_GRACE_S):
                    await self.process.wait()
            # The group may hold grandchildren even after the bot itself exited.
            self.kill_group(signal.SIGKILL)
            if self.process.returncode is None:
                await self.process.wait()
            await self.connection.aclose()
        return self.process.returncode


async def start_bot(spec: BotSpec, stderr_path: Path | None = None) -> BotProcess:
    """Start `spec` as a child in its own process group with piped stdio."""
    env = dict(os.environ)
    env.update(spec.env)
    env.setdefault("PYTHONUNBUFFERED", "1")
    process = await trio.lowlevel.open_process(
        list(spec.argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=spec.cwd,
        env=env,
        start_new_session=True,
        preexec_fn=_set_parent_death_signal,
    )
    return BotProcess(spec, process, stderr_path)


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
