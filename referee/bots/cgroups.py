"""The cgroups of each bot process, where the machine lets the referee make them.

One cgroup v2 per bot process: a bot's descendants are born in its cgroup and
cannot leave it (moving a process out takes write access above it, which a bot
running as another user than root does not have), so `cgroup.kill` ends a
grandchild that called `setsid` and forked again just as surely as the bot. The
bot's keeper (`referee/bots/keeper.py`) moves the bot in before exec and kills and
removes the cgroup at the end; the referee removes it itself when the bot keeper is
gone (a bot may kill its own keeper).

Two more jobs need a controller, which a cgroup v2 may lack (on a hybrid layout
its hierarchy often has none): holding the memory of the bot's whole tree, and
freezing the whole bot while it waits for its next game. Each is done by the
cgroup v2 where it can be (`memory.max` where the memory controller is delegated
to it; `cgroup.freeze`, in every cgroup v2 since Linux 5.2), else by a cgroup of
the v1 hierarchy of that controller (`memory.limit_in_bytes`, and
`memory.memsw.limit_in_bytes` where swap is accounted, so swap does not add to it;
`freezer.state`), else not by a cgroup: the bot keeper sums the bot's memory
itself, and freezing stops each process with SIGSTOP (`BotProcess.freeze`).

Every cgroup is made below the referee's own cgroup in its hierarchy (from
/proc/self/cgroup, under the mount found in /proc/self/mountinfo), named
`referee-PID-N` after the process that made them (the same name in each
hierarchy); those of referees that are gone are removed the first time one is
made. Where that folder is not writable (an unprivileged user outside a
delegated cgroup, a container with a read-only /sys/fs/cgroup) or the kernel has
no `cgroup.kill` (before Linux 5.14), there is no cgroup v2, and the bot
keeper's subreaper sweep is the only wall. `REFEREE_CGROUP=off` in the referee's
environment chooses no cgroup at all on purpose, `REFEREE_CGROUP=v1` the v1
hierarchies alone, as on a host without cgroup v2 (the tests exercise each).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .keeper import end_cgroup, oom_kills, thaw_cgroup

SWITCH = "REFEREE_CGROUP"  # "off": no cgroups, the keeper's subreaper sweep alone
_NAME = re.compile(r"referee-(\d+)-\d+")
_counter = itertools.count(1)
_base: Path | None = None
_looked = False
_v1: dict[str, Path | None] = {}  # each v1 controller's parent folder, once looked for


@dataclass(frozen=True)
class BotCgroups:
    """The cgroups of one bot process (none, where the machine allows none)."""

    unified: Path | None = None  # its cgroup v2: cgroup.kill, pids.max
    memory: Path | None = None  # what holds its memory: `unified` or a v1 memory cgroup
    freezer: Path | None = None  # what freezes it: `unified` or a v1 freezer cgroup
    v1: tuple[Path, ...] = ()  # its cgroups v1 (memory, freezer), joined with `unified`

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every cgroup it joins, the cgroup v2 first."""
        return (*([self.unified] if self.unified is not None else []), *self.v1)

    def memory_events(self) -> Path | None:
        """The file of its memory cgroup that counts OOM kills (None: no memory cgroup)."""
        if self.memory is None:
            return None
        if self.memory == self.unified:
            return self.memory / "memory.events"
        return self.memory / "memory.oom_control"


def _switch() -> str:
    return os.environ.get(SWITCH, "").lower()


def enabled() -> bool:
    """Whether bots get a cgroup v2 of their own here."""
    return _switch() not in ("off", "v1") and _parent() is not None


def create() -> Path | None:
    """A new empty cgroup v2 for one bot process, or None where it cannot be made."""
    if _switch() in ("off", "v1"):
        return None
    return _make(_parent(), _new_name())


def create_for(memory_mb: int | None, processes: int | None) -> BotCgroups:
    """The cgroups of a new bot process, its limits set: a cgroup v2 (`create`) with
    `pids.max` (where the pids controller is delegated), `memory.max` (where the memory
    controller is) and `cgroup.freeze`; a v1 memory or freezer cgroup for what the
    cgroup v2 cannot do, where one can be made. No cgroup at all with REFEREE_CGROUP=off."""
    switch = _switch()
    if switch == "off":
        return BotCgroups()
    name = _new_name()
    unified = None if switch == "v1" else _make(_parent(), name)
    if unified is not None and processes is not None:
        limit_processes(unified, processes)
    v1: list[Path] = []
    memory = None
    if memory_mb is not None:
        limit = memory_mb << 20
        if unified is not None and _limit_memory_v2(unified, limit):
            memory = unified
        elif (made := _make(_v1_parent("memory"), name)) is not None:
            if _limit_memory_v1(made, limit):
                memory = made
                v1.append(made)
            else:
                remove(made)
    freezer = None
    if unified is not None and (unified / "cgroup.freeze").exists():
        freezer = unified
    elif (made := _make(_v1_parent("freezer"), name)) is not None:
        if (made / "freezer.state").exists():
            freezer = made
            v1.append(made)
        else:
            remove(made)
    return BotCgroups(unified, memory, freezer, tuple(v1))


def _new_name() -> str:
    return f"referee-{os.getpid()}-{next(_counter)}"


def _make(parent: Path | None, name: str) -> Path | None:
    if parent is None:
        return None
    path = parent / name
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def _limit_memory_v2(path: Path, limit: int) -> bool:
    """Hold the cgroup v2 `path` to `limit` bytes, swap included (`memory.swap.max` 0),
    and have the kernel kill all of it at once when out of memory (`memory.oom.group`);
    False where there is no memory controller."""
    try:
        (path / "memory.max").write_text(str(limit))
    except OSError:
        return False
    with contextlib.suppress(OSError):
        (path / "memory.swap.max").write_text("0")
    with contextlib.suppress(OSError):
        (path / "memory.oom.group").write_text("1")
    return True


def _limit_memory_v1(path: Path, limit: int) -> bool:
    """Hold the v1 memory cgroup `path` to `limit` bytes, swap included where the kernel
    accounts it (`memory.memsw.limit_in_bytes`, at least the memory limit)."""
    try:
        (path / "memory.limit_in_bytes").write_text(str(limit))
    except OSError:
        return False
    with contextlib.suppress(OSError):
        (path / "memory.memsw.limit_in_bytes").write_text(str(limit))
    return True


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


def memory_limited(groups: BotCgroups) -> bool:
    """Whether the kernel killed a process of the bot's memory cgroup at its limit (its
    OOM kill count; where the kernel does not count them, a v1 cgroup's `failcnt`)."""
    events = groups.memory_events()
    if events is None or groups.memory is None:
        return False
    kills = oom_kills(str(events))
    if kills is not None:
        return kills > 0
    try:
        return int((groups.memory / "memory.failcnt").read_text()) > 0
    except (OSError, ValueError):
        return False


def freeze(path: Path) -> None:
    """Start freezing every process of the freezer cgroup `path` (v2 or v1)."""
    try:
        (path / "cgroup.freeze").write_text("1")
    except OSError:
        with contextlib.suppress(OSError):
            (path / "freezer.state").write_text("FROZEN")


def frozen(path: Path) -> bool:
    """Whether every process of the freezer cgroup `path` is frozen now (a v1 cgroup
    still FREEZING is asked again)."""
    try:
        return "frozen 1" in (path / "cgroup.events").read_text().splitlines()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        if (path / "freezer.state").read_text().strip() == "FROZEN":
            return True
        (path / "freezer.state").write_text("FROZEN")
    except OSError:
        pass
    return False


def thaw(path: Path) -> None:
    """Let every process of the freezer cgroup `path` run again."""
    thaw_cgroup(str(path))


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


def _own_cgroups() -> dict[str, str]:
    """The referee's own cgroup in each hierarchy: "" for cgroup v2, the controller's
    name for each v1 one (from /proc/self/cgroup)."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path.strip()
    return found


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """Each cgroup mount: its root, its mount point, its type and its super options."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields, _, tail = line.partition(" - ")
            before, after = fields.split(), tail.split()
            if len(before) < 5 or len(after) < 3 or after[0] not in ("cgroup", "cgroup2"):
                continue
            found.append((before[3], before[4], after[0], set(after[2].split(","))))
    return found


def _folder(root: str, point: str, own: str) -> Path:
    relative = own[len(root) :] if own.startswith(root) and root != "/" else own
    return Path(point) / relative.lstrip("/")


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _find_parent() -> Path | None:
    """The referee's own cgroup v2 folder, if it may make cgroups there and move
    processes into them, and the kernel has `cgroup.kill`."""
    own = _own_cgroups().get("")
    if own is None:
        return None
    for root, point, kind, _ in _mounts():
        if kind != "cgroup2":
            continue
        folder = _folder(root, point, own)
        if not _writable(folder):
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


def _v1_parent(controller: str) -> Path | None:
    """The referee's own cgroup folder in the v1 hierarchy of `controller`, if it may
    make cgroups there (as root, say); looked for once (stale cgroups removed then)."""
    if controller not in _v1:
        _v1[controller] = None
        own = _own_cgroups().get(controller)
        for root, point, kind, options in _mounts():
            if kind == "cgroup" and controller in options and own is not None:
                folder = _folder(root, point, own)
                if _writable(folder):
                    _v1[controller] = folder
                    _remove_stale(folder)
                break
    return _v1[controller]


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
