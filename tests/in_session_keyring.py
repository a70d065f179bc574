"""Runs a command inside a new session keyring that holds a key of its user's, as a
login shell with pam_keyinit, `keyctl session` or a container runtime leaves a
referee: the key's description is `mt-referee-secret`, its payload SECRET.

    python in_session_keyring.py SECRET COMMAND...

The kernel's keyring calls through ctypes, the standard library only.
"""

from __future__ import annotations

import ctypes
import os
import sys

CALLS = {"x86_64": (248, 250), "aarch64": (217, 219), "riscv64": (217, 219)}  # add_key, keyctl
KEYCTL_JOIN_SESSION_KEYRING = 1
SESSION = -3


def main(argv: list[str]) -> int:
    secret, command = argv[0].encode(), argv[1:]
    add_key, keyctl = CALLS[os.uname().machine]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(keyctl, KEYCTL_JOIN_SESSION_KEYRING, b"mt-referee-session") < 0:
        print(f"join: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 2
    name = b"mt-referee-secret"
    if libc.syscall(add_key, b"user", name, secret, len(secret), ctypes.c_int(SESSION)) < 0:
        print(f"add_key: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 2
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
