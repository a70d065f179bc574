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


def kill_cgroup(path: str) -> None:
    """SIGKILL every process of the cgroup `path` and of the cgroups below it."""
    with contextlib.suppress(OSError), open(os.path.join(path, "cgroup.kill"), "w") as handle:
        handle.write("1")


def _populated(path: str) -> bool:
    try:
        with open(os.path.join(path, "cgroup.events")) as handle:
            return "populated 1" in handle.read()
    except OSError:
        return False


def end_cgroup(path: str, timeout_s: float = END_S) -> bool:
    """Kill everything in the cgroup `path`, wait until it is empty, and remove it (and
    any cgroup a bot made below it); True once it is gone."""
    kill_cgroup(path)
    deadline = time.monotonic() + timeout_s
    while _populated(path) and time.monotonic() < deadline:
        time.sleep(0.002)  # cgroup.kill lands in a millisecond or two
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
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


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


def end_everything(bot: _Bot, cgroup: str | None) -> bool:
    """Kill the bot and every process below the bot keeper, reap them all, remove the
    cgroup; False when something was still there at the deadline."""
    if cgroup is not None:
        kill_cgroup(cgroup)
    deadline = time.monotonic() + END_S
    me = os.getpid()
    # Each pass kills what it sees; a child forked meanwhile by a process killed in
    # this pass is adopted by the bot keeper and killed in the next one.
    while (left := bot.reap()) and time.monotonic() < deadline:
        for pid in descendants(me):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)
    if cgroup is not None:
        left = not end_cgroup(cgroup, max(0.1, deadline - time.monotonic())) or left
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
    cgroup = request.get("cgroup")
    if cgroup is not None:
        # Before exec, so that the bot's first instruction already runs inside. Should
        # the write fail, the bot keeper's sweep still ends everything.
        procs = os.path.join(str(cgroup), "cgroup.procs")
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
    cgroup = request.get("cgroup")
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
        ready = [ready_fd for ready_fd, _ in poller.poll(REAP_S * 1000)]
        for ready_fd in ready:
            if ready_fd != fd:
                poller.unregister(ready_fd)  # the bot has ended: its pidfd stays readable
        bot.reap()
        if fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                # The referee is done or gone: nothing the bot started may outlive it.
                return 0 if end_everything(bot, None if cgroup is None else str(cgroup)) else 1


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
