"""Tries to break out of its sandbox the ways a bot run as root could, writes one JSON
line to stderr with what it found, then plays legal move 0.

    python break_out.py PLACE...

It reports its host-visible identity (uid, effective capabilities, no_new_privs,
its OOM score adjustment and whether it could lower it),
whether it could read /etc/shadow, open /proc/sys/kernel/core_pattern for writing,
remount /usr and its own folder read-write (with mount(8) and with the mount system
call itself), make a user namespace of its own (where it would have every
capability), keep a key in its session keyring, and create a file in its own
folder, /usr, /etc and each PLACE (the referee's virtual environment and its code,
say), a place that lies in one of its own tmpfs (/tmp, /scratch, /dev/shm) not
counting. Every file it made is removed
again. Meant for a sandbox: without one, /tmp is the host's.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

from _common import serve

MS_REMOUNT = 32
MS_BIND = 4096
CLONE_NEWUSER = 0x10000000
SIGCHLD = 17


def status(key: str) -> str:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return line.split()[1]
    return ""


def own_devices() -> set[int]:
    """The file systems that are the sandbox's own writable places (its tmpfs)."""
    found = set()
    for place in ("/tmp", "/scratch", "/dev/shm"):
        try:
            found.add(os.stat(place).st_dev)
        except OSError:
            continue
    return found


def can_write(folder: str) -> bool:
    """Whether a file could be made in `folder`, outside the sandbox's own tmpfs (a
    folder the sandbox made on the way to a bind inside its /tmp is the bot's own)."""
    try:
        if os.stat(folder).st_dev in OWN:
            return False
    except OSError:
        return False
    path = os.path.join(folder, f".break-out-{os.getpid()}")
    try:
        with open(path, "w") as handle:
            handle.write("x")
    except OSError:
        return False
    os.unlink(path)
    return True


def can_read(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return bool(handle.read(1))
    except OSError:
        return False


def can_open_for_writing(path: str) -> bool:
    try:
        with open(path, "r+b"):
            return True
    except OSError:
        return False


def lowered(path: str) -> bool:
    """Whether the OOM killer's preference for this process could be set below 0, the
    lowest a process without privilege may have (the referee's, or above it)."""
    try:
        with open(path, "w") as handle:
            handle.write("-1")
    except OSError:
        return False
    with open(path) as handle:
        return handle.read().strip() == "-1"


def remounted(folder: str) -> bool:
    """Whether `folder` could be made writable again, by mount(8) or the system call."""
    done = subprocess.run(
        ["mount", "-o", "remount,bind,rw", folder], capture_output=True, check=False
    )
    libc = ctypes.CDLL(None, use_errno=True)
    flags = MS_REMOUNT | MS_BIND
    called = libc.mount(None, folder.encode(), None, flags, None) == 0
    return done.returncode == 0 or called or can_write(folder)


def new_user_namespace() -> bool:
    """Whether a user namespace of its own could be made, where it would hold every
    capability: unshare(2) in a child, clone(2) with CLONE_NEWUSER, and unshare(1)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc.unshare(CLONE_NEWUSER) == 0 else 1)
    unshared = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    cloned = False
    if os.uname().machine == "x86_64":  # clone(flags, stack 0: a fork) by its number
        libc.syscall.restype = ctypes.c_long
        child = libc.syscall(56, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
        if child == 0:
            os._exit(0)
        if child > 0:
            os.waitpid(child, 0)
            cloned = True
    done = subprocess.run(["unshare", "--user", "true"], capture_output=True, check=False)
    return unshared or cloned or done.returncode == 0


def kept_a_key() -> bool:
    """Whether a key could be stored in the session keyring (add_key(2))."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 248, "aarch64": 217, "riscv64": 217}.get(os.uname().machine)
    if number is None:
        return False
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(number, b"user", b"break-out", b"x", 1, ctypes.c_int(-3)) >= 0


OWN = own_devices()
here = os.path.dirname(os.path.abspath(__file__))
report = {
    "uid": os.getuid(),
    "euid": os.geteuid(),
    "cap_eff": status("CapEff"),
    "cap_bnd": status("CapBnd"),
    "no_new_privs": status("NoNewPrivs"),
    "oom_score_adj": open("/proc/self/oom_score_adj").read().strip(),  # noqa: SIM115
    "lower oom_score_adj": can_open_for_writing("/proc/self/oom_score_adj")
    and lowered("/proc/self/oom_score_adj"),
    "read /etc/shadow": can_read("/etc/shadow"),
    "write core_pattern": can_open_for_writing("/proc/sys/kernel/core_pattern"),
    "remount /usr": remounted("/usr"),
    "remount own folder": remounted(here),
    "write own folder": can_write(here),
    "write /usr": can_write("/usr"),
    "write /etc": can_write("/etc"),
    "new user namespace": new_user_namespace(),
    "keep a key": kept_a_key(),
}
for place in sys.argv[1:]:
    report[f"write {place}"] = can_write(place)
sys.stderr.write(json.dumps(report) + "\n")
sys.stderr.flush()
serve("break-out")
