"""Finding processes a test started, through /proc, so that none is left behind.

Every bot a test starts carries a unique token at the end of its command line, and
anything it forks carries the token too. The keepers (`referee/bots/keeper.py`, one per
referee process, and a fork of it for each bot) do not: `keepers_below` finds them by
ancestry. A process is counted only while it lives: a zombie (state Z) has ended
and only waits to be reaped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable, Iterable


def new_token() -> str:
    """A token no other process on the machine has in its command line."""
    return f"test-token-{uuid.uuid4().hex}"


def _stat(pid: str) -> tuple[str, int] | None:
    """(state, process group) of a process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return rest[0].decode(), int(rest[2])


def processes_with(token: str) -> list[int]:
    """Live processes whose command line holds `token` as one argument."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if token.encode() in args:
            stat = _stat(entry)
            if stat is not None and stat[0] != "Z":
                found.append(int(entry))
    return found


def keepers_below(pid: int) -> list[int]:
    """Live keeper processes below `pid` (the keeper of a referee and its bot keepers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _parent(entry)
            if stat is not None:
                children.setdefault(stat, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if any(arg.endswith(b"referee/bots/keeper.py") for arg in args):
                found.append(child)
    return found


def _parent(pid: str) -> int | None:
    """The parent of a live process, or None once it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return None if rest[0] == b"Z" else int(rest[1])


def alive(pids: Iterable[int]) -> list[int]:
    """Those of `pids` that still live (not zombies)."""
    return [pid for pid in pids if _parent(str(pid)) is not None]


def processes_in_groups(groups: Iterable[int]) -> list[int]:
    """Live processes that belong to one of the process groups `groups`."""
    wanted = set(groups)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _stat(entry)
        if stat is not None and stat[0] != "Z" and stat[1] in wanted:
            found.append(int(entry))
    return found


def wait_for_none(find: Callable[[], list[int]], timeout_s: float) -> list[int]:
    """Poll `find` until it finds nothing or `timeout_s` passes; what it finds last.

    Real processes end asynchronously (a SIGKILL takes a moment to land, a keeper
    notices its socket close), so a few seconds of polling /proc is the check.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        found = find()
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def kill_all(pids: Iterable[int]) -> None:
    """SIGKILL each of `pids` (leftovers of a failed test), ignoring those already gone."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def assert_none_left(token: str, groups: Iterable[int] = (), timeout_s: float = 5.0) -> None:
    """Fail (after killing them) if processes with `token` or in `groups` still live."""
    groups = list(groups)

    def find() -> list[int]:
        return sorted(set(processes_with(token)) | set(processes_in_groups(groups)))

    left = wait_for_none(find, timeout_s)
    kill_all(left)  # so that one failure does not leak into the next tests
    assert left == [], f"processes left running: {left}"
