"""One cgroup v2 per bot process, where the machine lets the referee make them.

A bot's descendants are born in its cgroup and cannot leave it (moving a process
out takes write access above it, which a bot running as another user than root
does not have), so `cgroup.kill` ends a grandchild that called `setsid` and forked
again just as surely as the bot. The bot's keeper (`referee/bots/keeper.py`) moves the
bot in before exec and kills and removes the cgroup at the end; the referee removes
it itself when the bot keeper is gone (a bot may kill its own keeper).

The cgroups are made below the referee's own cgroup (from /proc/self/cgroup, under
the cgroup2 mount found in /proc/self/mountinfo), named `referee-PID-N` after the
process that made them. Where that folder is not writable (an unprivileged user
outside a delegated cgroup, a container with a read-only /sys/fs/cgroup) or the
kernel has no `cgroup.kill` (before Linux 5.14), `create` returns None and the
bot keeper's subreaper sweep is the only wall. `REFEREE_CGROUP=off` in the
referee's environment chooses that path on purpose (the tests exercise both).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from pathlib import Path

from .keeper import end_cgroup

SWITCH = "REFEREE_CGROUP"  # "off": no cgroups, the keeper's subreaper sweep alone
_NAME = re.compile(r"referee-(\d+)-\d+")
_counter = itertools.count(1)
_base: Path | None = None
_looked = False


def enabled() -> bool:
    """Whether bots get a cgroup of their own here."""
    return os.environ.get(SWITCH, "").lower() != "off" and _parent() is not None


def create() -> Path | None:
    """A new empty cgroup for one bot process, or None where cgroups cannot be used."""
    if os.environ.get(SWITCH, "").lower() == "off":
        return None
    parent = _parent()
    if parent is None:
        return None
    path = parent / f"referee-{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def limit_processes(path: Path, processes: int) -> bool:
    """Cap the processes and threads of the cgroup `path` (`pids.max`), where the pids
    controller is delegated to it; True when it was."""
    try:
        (path / "pids.max").write_text(str(processes))
    except OSError:
        return False
    return True


def processes_limited(path: Path) -> bool:
    """Whether a fork in the cgroup `path` was refused at its `pids.max`."""
    try:
        events = (path / "pids.events").read_text().split()
    except OSError:
        return False
    return len(events) >= 2 and events[0] == "max" and events[1] != "0"


def remove(path: Path) -> bool:
    """Kill every process left in the cgroup `path` and remove it; True once it is gone."""
    return end_cgroup(str(path))


def _parent() -> Path | None:
    global _base, _looked
    if not _looked:
        _looked = True
        _base = _find_parent()
        if _base is not None:
            _remove_stale(_base)
    return _base


def _find_parent() -> Path | None:
    """The referee's own cgroup v2 folder, if it may make cgroups there and move
    processes into them, and the kernel has `cgroup.kill`."""
    try:
        own = next(
            line[3:].strip()
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if line.startswith("0::")
        )
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except (OSError, StopIteration):
        return None
    for line in mounts:
        fields = line.split()
        if " - cgroup2 " not in line or len(fields) < 5:
            continue
        root, point = fields[3], fields[4]
        relative = own[len(root) :] if own.startswith(root) and root != "/" else own
        folder = Path(point) / relative.lstrip("/")
        if not (os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)):
            return None
        probe = folder / f"referee-{os.getpid()}-0"
        try:
            probe.mkdir()
        except FileExistsError:
            pass
        except OSError:
            return None
        killable = (probe / "cgroup.kill").exists()
        with contextlib.suppress(OSError):
            probe.rmdir()
        return folder if killable else None
    return None


def _remove_stale(parent: Path) -> None:
    """Remove the empty cgroups of referees that are gone (killed before cleaning up)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _NAME.fullmatch(entry.name)
            if match is None or _alive(int(match[1])):
                continue
            with contextlib.suppress(OSError):
                entry.rmdir()  # fails, as it should, while a process is still in it


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
