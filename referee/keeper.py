"""The keeper: a tiny parent for one bot that ends every process the bot made when
the referee is done with it or goes away, even when the referee is killed with SIGKILL.

    python -I -S keeper.py FD [--as BYTES] [--cpu SECONDS] [--nofile N]
                              [--cgroup PATH] -- CMD [ARGS...]

The referee runs this file as a script (no import of the referee, no PYTHONPATH:
it must start fast and rely on nothing) in a new session, with the bot's exact
environment and one end of a socket pair as FD. The keeper forks and execs the
bot, which keeps the referee's stdin, stdout and stderr pipes; the keeper lets go
of its own copies so end of file means the bot. It reports the bot's exit on FD
as `exit STATUS` (or `error MESSAGE` when the command cannot start).

Nothing the bot starts may outlive it, not even a grandchild that called
`setsid` and forked again to leave the process group. Two walls hold it in:

- With `--cgroup PATH` (an empty cgroup v2 the referee made), the bot joins the
  cgroup before exec; its descendants are born in it and cannot leave it without
  root. Ending writes `cgroup.kill`, which kills them all at once, then removes
  the cgroup. The keeper stays outside, so it survives that kill.
- Always, the keeper is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process
  whose parent dies is adopted by the keeper, not by init, so every descendant
  stays below it. Ending kills every descendant found in /proc and reaps them
  until the keeper has no child left. Without a cgroup, this is the wall.

Ending happens when FD reaches end of file: the referee shut its end down, or died.
The bot's exit is reported as soon as it happens; orphans adopted during the game
are reaped as they exit, so none lingers as a zombie.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
END_S = 5.0  # at most this long to kill and reap everything, then the keeper exits anyway


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(option, value, 0, 0, 0)


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


def descendants(root: int) -> list[int]:
    """Live processes below `root`, from /proc (zombies have ended: they are left out)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


class _Bot:
    """The bot's pid and whether its exit was reported yet."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.reported = False

    def reap(self) -> bool:
        """Reap every child that has ended (the bot or an adopted orphan); report the
        bot's exit. False when the keeper has no child at all any more."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.pid and not self.reported:
                _send(self.fd, f"exit {os.waitstatus_to_exitcode(status)}")
                self.reported = True


def end_everything(bot: _Bot, cgroup: str | None) -> None:
    """Kill the bot and every process below the keeper, reap them all, remove the cgroup."""
    if cgroup is not None:
        kill_cgroup(cgroup)
    deadline = time.monotonic() + END_S
    me = os.getpid()
    # Each pass kills what it sees; a child forked meanwhile by a process killed in
    # this pass is adopted by the keeper and killed in the next one.
    while bot.reap() and time.monotonic() < deadline:
        for pid in descendants(me):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)
    if cgroup is not None:
        end_cgroup(cgroup, max(0.1, deadline - time.monotonic()))


def _start_bot(
    fd: int, command: list[str], limits: list[tuple[int, int]], cgroup: str | None
) -> None:
    """In the forked child: join the cgroup, set the limits, become the bot."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across
    # exec: a bot gets them as any program started from a shell would.
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    if cgroup is not None:
        # Before exec, so that the bot's first instruction already runs inside. Should
        # the write fail, the keeper's sweep below still ends everything.
        with contextlib.suppress(OSError), open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write("0")
    try:
        for which, value in limits:
            # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
            hard = value + 1 if which == resource.RLIMIT_CPU else value
            resource.setrlimit(which, (value, hard))
        os.execvpe(command[0], command, os.environ)
    except OSError as exc:
        _send(fd, f"error cannot start {command[0]}: {exc.strerror}")
        os._exit(127)


def main(argv: list[str]) -> int:
    """Run the keeper; returns only if it could not start the bot."""
    if "--" not in argv or len(argv) < 3:
        print("usage: keeper.py FD [LIMITS] [--cgroup PATH] -- CMD [ARGS...]", file=sys.stderr)
        return 2
    split = argv.index("--")
    fd = int(argv[0])
    options, command = argv[1:split], argv[split + 1 :]
    names = {
        "--as": resource.RLIMIT_AS,
        "--cpu": resource.RLIMIT_CPU,
        "--nofile": resource.RLIMIT_NOFILE,
    }
    pairs = [(options[i], options[i + 1]) for i in range(0, len(options), 2)]
    limits = [(names[key], int(value)) for key, value in pairs if key in names]
    cgroup = next((value for key, value in pairs if key == "--cgroup"), None)
    os.set_inheritable(fd, False)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # Every child's end (the bot's, or an adopted orphan's) wakes the loop below.
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        _start_bot(fd, command, limits, cgroup)
    bot = _Bot(pid, fd)
    # The keeper: give the stdio pipes to the bot alone.
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the group's SIGTERM is for the bot
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the referee's to handle
    bot.reap()
    while True:
        # poll, not select: select stops at descriptor 1023, and a referee serving
        # a thousand TCP connections hands the keeper a higher one.
        poller = select.poll()
        for watched in (fd, wake_r):
            poller.register(watched, select.POLLIN)
        ready = [ready_fd for ready_fd, _ in poller.poll()]
        if wake_r in ready:
            with contextlib.suppress(OSError):
                os.read(wake_r, 4096)
            bot.reap()
        if fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                # The referee is done or gone: nothing the bot started may outlive it.
                end_everything(bot, cgroup)
                return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
