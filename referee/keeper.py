"""The keeper: a tiny parent for one bot that ends the bot's whole process group
when the referee goes away, even when the referee is killed with SIGKILL.

    python -m referee.keeper FD [--as BYTES] [--cpu SECONDS] [--nofile N] -- CMD [ARGS...]

The referee starts the keeper in a new session (so keeper, bot and any
grandchildren share one process group) with one end of a socket pair as FD.
The keeper forks and execs the bot, which keeps the referee's stdin, stdout and
stderr pipes; the keeper lets go of its own copies so end of file means the bot.
It reports the bot's exit on FD as `exit STATUS` (or `error MESSAGE` when the
command cannot start). When FD reaches end of file (the referee closed it, or
died), the keeper sends SIGKILL to the whole group, itself included. No import
from the rest of the referee: it must start fast and rely on nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import sys

PR_SET_PDEATHSIG = 1


def _pdeathsig_kill() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _send(fd: int, text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, text.encode("utf-8", "replace") + b"\n")


def main(argv: list[str]) -> int:
    """Run the keeper; returns only if it could not start the bot."""
    if "--" not in argv or len(argv) < 3:
        print("usage: python -m referee.keeper FD [LIMITS] -- CMD [ARGS...]", file=sys.stderr)
        return 2
    split = argv.index("--")
    fd = int(argv[0])
    options, command = argv[1:split], argv[split + 1 :]
    limits = {
        "--as": resource.RLIMIT_AS,
        "--cpu": resource.RLIMIT_CPU,
        "--nofile": resource.RLIMIT_NOFILE,
    }
    chosen = [(limits[options[i]], int(options[i + 1])) for i in range(0, len(options), 2)]
    os.set_inheritable(fd, False)
    pid = os.fork()
    if pid == 0:  # the bot
        _pdeathsig_kill()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            for which, value in chosen:
                # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
                hard = value + 1 if which == resource.RLIMIT_CPU else value
                resource.setrlimit(which, (value, hard))
            os.execvp(command[0], command)
        except OSError as exc:
            _send(fd, f"error cannot start {command[0]}: {exc.strerror}")
            os._exit(127)
    # The keeper: give the stdio pipes to the bot alone.
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the group's SIGTERM is for the bot
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the referee's to handle
    try:
        child = os.pidfd_open(pid)  # readable when the bot exits
    except (AttributeError, OSError):
        child = -1
    reported = False
    while True:
        if not reported:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == pid:
                _send(fd, f"exit {os.waitstatus_to_exitcode(status)}")
                reported = True
        # poll, not select: select stops at descriptor 1023, and a referee serving
        # a thousand TCP connections hands the keeper a higher one.
        poller = select.poll()
        for watched in [fd] if reported or child < 0 else [fd, child]:
            poller.register(watched, select.POLLIN)
        ready = [ready_fd for ready_fd, _ in poller.poll(None if reported or child >= 0 else 50)]
        if fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                # The referee is gone or done: nothing of this group may outlive it.
                os.killpg(os.getpgrp(), signal.SIGKILL)
                return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
