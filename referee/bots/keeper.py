"""The keeper: one small process per referee process that starts every bot and ends
every process a bot made when the referee is done with it or goes away, even when
the referee is killed with SIGKILL.

    python -I -S keeper.py --serve FD

The referee runs this file as a script (no import of the referee, no PYTHONPATH:
it must start fast and rely on nothing) in a session of its own, once, with one end
of a SOCK_SEQPACKET socket pair as FD. Each message on FD asks for one bot: its
command line, exact environment, folder, limits and cgroup as JSON, and four
descriptors passed along (SCM_RIGHTS): the bot's stdin, stdout and stderr pipes and
one end of a control socket. For each, the keeper forks a bot keeper: a copy of
itself (copy-on-write, so it costs a few hundred kilobytes, not a Python interpreter)
in a new session that says `keeper PID` on the control socket, then forks and execs
the bot, which gets the pipes; the bot keeper lets go of its own copies so end of
file means the bot. It reports the bot's exit as `exit STATUS` (or `error MESSAGE`
when the command cannot start) and ends everything when the control socket reaches
end of file. The keeper itself exits when FD reaches end of file; bot keepers still
running go on until their own control sockets close.

Nothing the bot starts may outlive it, not even a grandchild that called `setsid`
and forked again to leave the process group. Two walls hold it in:

- With a cgroup (an empty cgroup v2 the referee made), the bot joins it before
  exec; its descendants are born in it and cannot leave it without root. Ending
  writes `cgroup.kill`, which kills them all at once, then removes the cgroup. The
  bot keeper stays outside, so it survives that kill.
- Always, the bot keeper is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process
  whose parent dies is adopted by it, not by init, so every descendant stays below
  it. Ending kills every descendant found in /proc and reaps them until it has no
  child left. Without a cgroup, this is the wall.

Before exec the bot joins a new, empty session keyring of its own (never the
referee's, which may hold its user's keys and would be shared by every bot), and a
sandboxed bot's request carries its seccomp filter, which the bot keeper hands to
bubblewrap as a memory file's descriptor.

A bot that kills its own bot keeper dies with it (`PR_SET_PDEATHSIG`); what it
started is adopted by the keeper, itself a child subreaper, which kills every child
it did not fork itself. So one bot's keeper is its own: a bot that kills it hurts
no other bot.

The request may also name cgroup v1 folders (a memory and a freezer cgroup, where
the cgroup v2 one cannot do that work, see `referee.bots.cgroups`): the bot joins
them too, and ending kills what is in them (a frozen v1 cgroup is thawed after
the SIGKILL, which it holds back until then) and removes them.

Memory is held for the bot's whole tree, not per process. With a memory cgroup the
kernel holds it, and the bot keeper reads the cgroup's count of OOM kills every
MEMORY_S; without one, the bot keeper itself sums the resident memory of every
process below it that often (and, over the limit, their proportional share, PSS,
so pages a fork shares count once), and ends them all when the sum is over the
limit at two checks in a row. Either way it says `memory BYTES` on the control
socket before the bot's `exit`, and ends every process of the bot at once.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import gc
import json
import os
import resource
import select
import signal
import socket
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
REAP_S = 1.0  # a bot keeper reaps the orphans it adopted at least this often
END_S = 5.0  # at most this long to kill and reap everything, then a bot keeper exits anyway
REQUEST_BYTES = 1 << 18  # the largest request read (the referee sends at most half)
FDS = 4  # stdin, stdout, stderr, control
OOM_SCORE_ADJ = 1000  # a bot's: out of memory, the kernel kills bots first
MEMORY_S = 0.05  # a bot keeper checks its bot's memory this often
CONFIRM_S = 0.01  # and again this soon after a sum over the limit, before it ends the bot
WATCH_TASKS = 16  # a bot of more processes and threads is checked less often
LIMITS = {
    "as": resource.RLIMIT_AS,
    "cpu": resource.RLIMIT_CPU,
    "nofile": resource.RLIMIT_NOFILE,
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
}


try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None)  # loaded once, before any fork
except OSError:
    _LIBC = None
# keyctl(2)'s number by machine (uname -m): x86_64's own table, and Linux's generic one.
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "loongarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        if _LIBC is not None:
            _LIBC.prctl(option, value, 0, 0, 0)


def new_session_keyring() -> bool:
    """Join a new, empty, anonymous session keyring (`keyctl session`): a bot must not
    share the referee's session keyring, which may hold its user's keys, nor the one
    the other bots inherit. True when it was made; where the kernel has no keyrings
    (or a container forbids them) there is nothing to share either."""
    number = SYS_KEYCTL.get(os.uname().machine)
    if _LIBC is None or number is None:
        return False
    try:
        return int(_LIBC.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)) >= 0
    except (OSError, AttributeError):
        return False


def _seccomp_fd(request: dict[str, object], command: list[str]) -> None:
    """Give bubblewrap the bot's seccomp filter: a memory file holding it, inherited
    across exec, its number put in the command where the request says."""
    program = request.get("seccomp")
    if not isinstance(program, str):
        return
    fd = os.memfd_create("seccomp", 0)  # no MFD_CLOEXEC: bubblewrap reads it
    os.write(fd, bytes.fromhex(program))
    os.lseek(fd, 0, os.SEEK_SET)
    command[int(request["seccomp_at"])] = str(fd)  # type: ignore[call-overload]


def _send(fd: int, text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, text.encode("utf-8", "replace") + b"\n")


def _write(path: str, text: str) -> bool:
    """Write `text` to the (cgroup) file `path`; False when it cannot be."""
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError:
        return False
    return True


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def cgroup_pids(path: str) -> list[int]:
    """The processes in the cgroup `path` itself (its cgroup.procs)."""
    return [int(word) for word in _read(os.path.join(path, "cgroup.procs")).split()]


def kill_cgroup(path: str) -> None:
    """SIGKILL every process of the cgroup `path` and of the cgroups below it: at once
    with cgroup v2's `cgroup.kill`; in a cgroup v1, each process listed, then a thaw
    (a process frozen by the v1 freezer dies only once thawed)."""
    if _write(os.path.join(path, "cgroup.kill"), "1"):
        return
    for folder, _, _ in os.walk(path):
        for pid in cgroup_pids(folder):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    thaw_cgroup(path)


def thaw_cgroup(path: str) -> None:
    """Let the processes of the freezer cgroup `path` (v2 or v1) run again."""
    if not _write(os.path.join(path, "cgroup.freeze"), "0"):
        _write(os.path.join(path, "freezer.state"), "THAWED")


def _populated(path: str) -> bool:
    events = _read(os.path.join(path, "cgroup.events"))
    if events:
        return "populated 1" in events
    return any(cgroup_pids(folder) for folder, _, _ in os.walk(path))  # a cgroup v1


def oom_kills(path: str) -> int | None:
    """How many processes the kernel's OOM killer ended in a memory cgroup, from the
    file `path` (v2 `memory.events`, v1 `memory.oom_control`); None where it does not
    count them (a v1 kernel before 4.13) or cannot be read."""
    for line in _read(path).splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return None


def end_cgroup(path: str, timeout_s: float = END_S) -> bool:
    """Kill everything in the cgroup `path`, wait until it is empty, and remove it (and
    any cgroup a bot made below it); True once it is gone."""
    kill_cgroup(path)
    deadline = time.monotonic() + timeout_s
    while _populated(path) and time.monotonic() < deadline:
        time.sleep(0.002)  # cgroup.kill lands in a millisecond or two
        if not os.path.exists(os.path.join(path, "cgroup.kill")):
            kill_cgroup(path)  # a v1 cgroup: what was forked meanwhile
    for folder, subfolders, _ in os.walk(path, topdown=False):
        for name in subfolders:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(folder, name))
    with contextlib.suppress(FileNotFoundError):
        try:
            os.rmdir(path)
        except OSError:
            return False
    return True


def stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session,
    ...), or None once the process is gone."""
    try:
        return _read_bytes(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _read_bytes(path: str) -> bytes:
    """A small file's bytes (up to 4 KiB), without Python's file objects: a bot keeper
    reads a few for each of its bot's processes several times a second."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def _children() -> dict[int, list[int]]:
    """Each live process's children, from /proc (zombies have ended: they are left out)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = stat_fields(entry)
        if fields and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(root: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """Live processes below `root`."""
    tree = _children() if children is None else children
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in tree.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def tree(root: int) -> dict[int, list[bytes]]:
    """Each live process below `root` with its `stat_fields`, read from the children
    lists of `root` and of the processes found (/proc/PID/task/TID/children): only
    the tree is read, not all of /proc (where there are no such lists, it is)."""
    if not _CHILD_LISTS:
        return {pid: fields for pid in descendants(root) if (fields := stat_fields(pid))}
    found: dict[int, list[bytes]] = {}
    todo = [(root, 0)]
    while todo:
        pid, threads = todo.pop()
        try:
            tids = [str(pid)] if threads == 1 else os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone
        for tid in tids:
            try:
                kids = _read_bytes(f"/proc/{pid}/task/{tid}/children").split()
            except OSError:
                continue
            for kid in map(int, kids):
                fields = stat_fields(kid)
                if fields is None or fields[0] == b"Z" or kid in found:
                    continue
                found[kid] = fields
                todo.append((kid, int(fields[17]) if len(fields) > 21 else 0))
    return found


_CHILD_LISTS = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class _Memory:
    """The bot keeper's watch on its bot's memory: the OOM kills of its memory cgroup,
    or (without one) what every process below the bot keeper holds, all together."""

    def __init__(self, limit: int, events: str | None) -> None:
        self.limit = limit  # bytes
        self.events = events  # the memory cgroup's file that counts OOM kills
        self.interval = MEMORY_S
        self.due = 0.0  # time.monotonic() of the next check
        self.over = False  # the last sum was over the limit

    def wait_s(self) -> float:
        """How long until the next check."""
        return max(0.0, self.due - time.monotonic())

    def check(self, root: int) -> int | None:
        """The bytes the bot held, when it is over its limit (in its cgroup: the kernel
        killed one of its processes at the limit); else None."""
        start = time.monotonic()
        if start < self.due:
            return None
        if self.events is not None:
            self.due = start + self.interval
            return self.limit if oom_kills(self.events) else None
        processes = tree(root)
        held = _resident(processes)
        if held > self.limit:
            held = _proportional(processes)
        # A check costs some 30 us a process or thread: a bot of more than WATCH_TASKS
        # is summed less often, so that its checks take at most about 1% of a CPU.
        tasks = sum(int(fields[17]) for fields in processes.values() if len(fields) > 17)
        self.interval = min(REAP_S, MEMORY_S * max(1.0, tasks / WATCH_TASKS))
        was_over, self.over = self.over, held > self.limit
        self.due = start + (CONFIRM_S if self.over and not was_over else self.interval)
        return held if self.over and was_over else None


def _resident(processes: dict[int, list[bytes]]) -> int:
    """Bytes of memory the processes have resident (a page several share, as after a
    fork, counts in each)."""
    return sum(int(fields[21]) * _PAGE for fields in processes.values() if len(fields) > 21)


def _proportional(processes: dict[int, list[bytes]]) -> int:
    """Bytes the processes hold, a page shared by n processes counted 1/n in each, and
    what they have in swap the same way (Pss and SwapPss of /proc/PID/smaps_rollup); a
    process whose smaps_rollup cannot be read counts its resident memory."""
    total = 0
    for pid, fields in processes.items():
        kib = [
            int(value.split()[0])
            for key, _, value in (
                line.partition(":") for line in _read(f"/proc/{pid}/smaps_rollup").splitlines()
            )
            if key in ("Pss", "SwapPss")
        ]
        total += sum(kib) * 1024 if kib else _resident({pid: fields})
    return total


def _reap_all() -> tuple[list[tuple[int, int]], bool]:
    """Reap every child that has ended: their (pid, wait status), and whether a child
    is left."""
    ended: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended, False
        if pid == 0:
            return ended, True
        ended.append((pid, status))


def user_tasks(uid: int) -> int:
    """How many processes and threads `uid` runs now, as RLIMIT_NPROC counts them."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
        except OSError:
            continue
        fields = stat_fields(entry)
        if fields is not None and len(fields) > 17:
            count += int(fields[17])
    return count


def _on_child(signum: int, frame: object) -> None:
    """Nothing: the signal's byte on the wake-up pipe is what wakes the loop."""


def _wake_on_child() -> int:
    """Make every child's end write to a new pipe; its read end, to poll. (A bot keeper
    keeps the handler it inherits: a write to a page shared with the keeper less.)"""
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    if signal.getsignal(signal.SIGCHLD) is not _on_child:
        signal.signal(signal.SIGCHLD, _on_child)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    return wake_r


def _poller(*fds: int) -> select.poll:
    """A poll object for reading `fds`: `[fd for fd, _ in poller.poll()]` are ready.

    poll, not select: select stops at descriptor 1023, and a referee serving a
    thousand TCP connections hands the keeper higher ones."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return poller


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.read(fd, 4096)


# ---------------------------------------------------------------- one bot


class _Bot:
    """The bot's pid and whether its exit was reported yet."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.reported = False

    def reap(self) -> bool:
        """Reap every child that has ended (the bot or an adopted orphan); report the
        bot's exit. False when the bot keeper has no child at all any more."""
        ended, left = _reap_all()
        for pid, status in ended:
            if pid == self.pid and not self.reported:
                _send(self.fd, f"exit {os.waitstatus_to_exitcode(status)}")
                self.reported = True
        return left


def bot_cgroups(request: dict[str, object]) -> list[str]:
    """The bot's cgroups the request names: its cgroup v2 first, then its v1 ones."""
    found = [request.get("cgroup"), *request.get("cgroups_v1", [])]  # type: ignore[misc]
    return [str(path) for path in found if path is not None]


def kill_everything(bot: _Bot, cgroups: list[str], deadline: float) -> bool:
    """Kill the bot and every process below the bot keeper and reap them all; False
    when something was still there at `deadline` (time.monotonic())."""
    for path in cgroups:
        kill_cgroup(path)
    me = os.getpid()
    # Each pass kills what it sees; a child forked meanwhile by a process killed in
    # this pass is adopted by the bot keeper and killed in the next one.
    while (left := bot.reap()) and time.monotonic() < deadline:
        for pid in descendants(me):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for path in cgroups:
            thaw_cgroup(path)  # a process frozen in a v1 cgroup dies only once thawed
        time.sleep(0.002)
    return not left


def end_everything(bot: _Bot, cgroups: list[str]) -> bool:
    """Kill the bot and every process below the bot keeper, reap them all, remove the
    cgroups; False when something was still there at the deadline."""
    deadline = time.monotonic() + END_S
    left = not kill_everything(bot, cgroups, deadline)
    for path in cgroups:
        left = not end_cgroup(path, max(0.1, deadline - time.monotonic())) or left
    return not left


def _exec_bot(fd: int, request: dict[str, object]) -> None:
    """In the bot keeper's forked child: join the cgroup, set the limits, become the bot."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # Python ignores SIGPIPE and SIGXFSZ, the keeper SIGINT and SIGTERM, and an ignored
    # signal stays ignored across exec: a bot gets them as any program started from a
    # shell would.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    command = [str(word) for word in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    new_session_keyring()
    # The first the kernel's OOM killer takes. The bot may lower it to 0, never below:
    # the referee, as root, runs at -500 (process._take_headroom), as a user at 0.
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as handle:
        handle.write(str(OOM_SCORE_ADJ))
    for cgroup in bot_cgroups(request):
        # Before exec, so that the bot's first instruction already runs inside. Should
        # the write fail, the bot keeper's sweep still ends everything.
        procs = os.path.join(cgroup, "cgroup.procs")
        with contextlib.suppress(OSError), open(procs, "w") as handle:
            handle.write("0")
    try:
        for name, value in request.get("limits", {}).items():  # type: ignore[attr-defined]
            if name == "nproc_above":
                # The referee's own user, without a sandbox: RLIMIT_NPROC counts all its
                # processes, so the bot may start `value` more than run now.
                name, value = "nproc", user_tasks(os.getuid()) + value
            which = LIMITS[name]
            # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
            hard = value + 1 if which == resource.RLIMIT_CPU else value
            _, ceiling = resource.getrlimit(which)
            if ceiling != resource.RLIM_INFINITY:  # only root may raise a hard limit
                value, hard = min(value, ceiling), min(hard, ceiling)
            resource.setrlimit(which, (value, hard))
        _seccomp_fd(request, command)
        os.execvpe(command[0], command, env)
    except (OSError, ValueError) as exc:
        _send(fd, f"error cannot start {command[0]}: {getattr(exc, 'strerror', None) or exc}")
        os._exit(127)


def keep(fd: int, request: dict[str, object]) -> int:
    """Be one bot's keeper: start it, report its exit on `fd`, and end everything below
    when `fd` reaches end of file. Stdin, stdout and stderr are the bot's pipes."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    cgroups = bot_cgroups(request)
    memory = request.get("memory")
    watch = None
    if isinstance(memory, dict):
        watch = _Memory(int(memory["bytes"]), memory.get("events"))
    pid = os.fork()
    if pid == 0:
        _exec_bot(fd, request)
    bot = _Bot(pid, fd)
    # The bot keeper: give the stdio pipes to the bot alone.
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)
    # The bot's end wakes the loop at once (its pidfd turns readable); orphans the bot
    # keeper adopted are reaped at least every REAP_S. No signal handler, no wake-up
    # pipe: fewer pages written that the keeper shares.
    poller = _poller(fd)
    # Before Linux 5.3 there is no pidfd: the bot's exit is reported within REAP_S.
    with contextlib.suppress(OSError, AttributeError):
        poller.register(os.pidfd_open(pid), select.POLLIN)
    bot.reap()
    while True:
        wait_s = REAP_S if watch is None else min(REAP_S, watch.wait_s())
        ready = [ready_fd for ready_fd, _ in poller.poll(wait_s * 1000)]
        for ready_fd in ready:
            if ready_fd != fd:
                poller.unregister(ready_fd)  # the bot has ended: its pidfd stays readable
        if watch is not None and (held := watch.check(os.getpid())) is not None:
            # Over its memory limit, all its processes together: the whole bot ends
            # (said first, so the referee reads it before the bot's exit).
            _send(fd, f"memory {held}")
            kill_everything(bot, cgroups, time.monotonic() + END_S)
            watch = None
        bot.reap()
        if fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                # The referee is done or gone: nothing the bot started may outlive it.
                return 0 if end_everything(bot, cgroups) else 1


def _become_keeper(
    server: socket.socket, wake_r: int, fds: list[int], request: dict[str, object]
) -> None:
    """In the keeper's forked child: take the bot's descriptors and keep it; never returns."""
    code = 1
    stdin, stdout, stderr, control = fds
    try:
        # Every page the bot keeper writes stops being shared with the keeper: no
        # collection walks the objects (the keeper froze them just before the fork).
        gc.disable()
        signal.set_wakeup_fd(-1)
        server.close()
        os.close(wake_r)
        os.setsid()  # a group of its own: the referee signals the bot's whole group
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
            os.close(fd)
        try:
            os.chdir(str(request["cwd"]))
        except OSError as exc:
            _send(control, f"error cannot start in {request['cwd']}: {exc.strerror}")
            os._exit(127)
        _send(control, f"keeper {os.getpid()}")
        code = keep(control, request)
    finally:
        os._exit(code)


# ---------------------------------------------------------------- the keeper


def _stray_children(keepers: set[int]) -> None:
    """Kill every child of the keeper that is not a bot keeper, and all below it: the
    orphans of a bot keeper that was killed, which this subreaper adopted."""
    tree = _children()
    for pid in tree.get(os.getpid(), []):
        if pid not in keepers:
            for victim in (pid, *descendants(pid, tree)):
                with contextlib.suppress(OSError):
                    os.kill(victim, signal.SIGKILL)


def _reap(keepers: set[int]) -> bool:
    """Reap every child that has ended; True when one may have left orphans behind (a
    bot keeper that did not end cleanly, or an adopted orphan)."""
    stray = False
    for pid, status in _reap_all()[0]:
        stray = stray or pid not in keepers or status != 0
        keepers.discard(pid)
    return stray


def _receive(server: socket.socket) -> tuple[bytes, list[int]] | None:
    """One request: its JSON and its descriptors; None at end of file."""
    space = socket.CMSG_SPACE(FDS * array.array("i").itemsize)
    data, ancillary, _, _ = server.recvmsg(REQUEST_BYTES, space, socket.MSG_CMSG_CLOEXEC)
    fds: list[int] = []
    for level, kind, blob in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            ints = array.array("i")
            ints.frombytes(blob[: len(blob) - len(blob) % ints.itemsize])
            fds += ints.tolist()
    if not data and not fds:
        return None
    return data, fds


def serve(fd: int) -> int:
    """Start a bot keeper for each request on `fd` until it reaches end of file."""
    server = socket.socket(fileno=fd)
    server.set_inheritable(False)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a group's SIGTERM is for the bots
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the referee's to handle
    wake_r = _wake_on_child()
    keepers: set[int] = set()
    poller = _poller(server.fileno(), wake_r)
    while True:
        ready = [ready_fd for ready_fd, _ in poller.poll()]
        if wake_r in ready:
            _drain(wake_r)
            if _reap(keepers):
                _stray_children(keepers)
        if server.fileno() not in ready:
            continue
        try:
            got = _receive(server)
        except OSError:
            got = None
        if got is None:
            return 0  # the referee is done or gone; each bot keeper watches its own socket
        payload, fds = got
        try:
            request = json.loads(payload) if len(fds) == FDS else None
        except ValueError:
            request = None
        if not isinstance(request, dict):
            if len(fds) == FDS:
                _send(fds[3], "error the keeper got a request it cannot read")
            for fd in fds:
                os.close(fd)
            continue
        # Parsed here and frozen, so the bot keeper shares the request with the keeper
        # and no collection in either touches what the other still uses.
        gc.freeze()
        try:
            pid = os.fork()
        except OSError as exc:
            _send(fds[3], f"error cannot start a bot keeper: {exc.strerror}")
            pid = -1
        if pid == 0:
            _become_keeper(server, wake_r, fds, request)
        if pid > 0:
            keepers.add(pid)
        for fd in fds:
            os.close(fd)


def main(argv: list[str]) -> int:
    """Run the keeper."""
    if len(argv) != 2 or argv[0] != "--serve" or not argv[1].isdigit():
        print("usage: keeper.py --serve FD", file=sys.stderr)
        return 2
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return serve(int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
