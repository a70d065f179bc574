"""Keeps its hand in the kernel's keyrings and looks for what other processes kept there.

On the first turn of each game it first looks: every key listed in /proc/keys and in
its session, user and user-session keyrings, and the keys linked in those, whose
description starts with `mt-hand-` (another process's hand) or `mt-referee-` (a key
of the referee's own user, planted by a test) and that it can read. Then it stores
its request (its hand among it) as a `user` key in each of the three keyrings, with
every permission for everyone, so that any other uid that finds it may read it. At
that turn it writes one JSON line to stderr: `{"found": N, "stored": M,
"referee": R, "errors": [...]}`: N keys of other processes read, M keys stored,
R keys of the referee's user read. It plays legal move 0.

    python keyring.py

The kernel's keyring calls through ctypes, the standard library only.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

from _common import Msg, move, serve

CALLS = {"x86_64": (248, 250), "aarch64": (217, 219), "riscv64": (217, 219)}  # add_key, keyctl
ADD_KEY, KEYCTL = CALLS[os.uname().machine]
SESSION, USER, USER_SESSION = -3, -4, -5  # KEY_SPEC_*
KEYCTL_SETPERM, KEYCTL_READ = 5, 11
EVERYONE = 0x3F3F3F3F  # possessor, user, group and other: every permission
MINE = f"mt-hand-{os.urandom(8).hex()}-"  # not the pid: each sandbox has its own pids
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
errors: list[str] = []
state = {"turns": 0, "found": 0, "stored": 0, "referee": 0}


def _fail(what: str) -> None:
    errors.append(f"{what}: {os.strerror(ctypes.get_errno())}")


def read_key(serial: int) -> bytes | None:
    """The payload of key `serial`, or of keyring `serial` its links; None if refused."""
    buffer = ctypes.create_string_buffer(65536)
    size = libc.syscall(KEYCTL, KEYCTL_READ, ctypes.c_int(serial), buffer, len(buffer))
    if size < 0:
        return None
    return buffer.raw[: min(size, len(buffer))]


def describe(serial: int) -> str | None:
    """The description of key `serial` (KEYCTL_DESCRIBE: "type;uid;gid;perm;desc")."""
    buffer = ctypes.create_string_buffer(4096)
    size = libc.syscall(KEYCTL, 6, ctypes.c_int(serial), buffer, len(buffer))
    if size < 0:
        return None
    return buffer.value.decode("utf-8", "replace").rsplit(";", 1)[-1]


def candidates() -> set[int]:
    """Serials of every key this process may know of: /proc/keys and the links of its
    session, user and user-session keyrings."""
    found: set[int] = set()
    try:
        with open("/proc/keys") as handle:
            for line in handle:
                found.add(int(line.split()[0], 16))
    except (OSError, ValueError):
        pass
    for ring in (SESSION, USER, USER_SESSION):
        links = read_key(ring)
        if links:
            count = len(links) // 4
            found.update(
                int.from_bytes(links[i * 4 : i * 4 + 4], sys.byteorder) for i in range(count)
            )
    return found


def look() -> None:
    for serial in candidates():
        name = describe(serial) or ""
        if name.startswith(MINE) or not name.startswith(("mt-hand-", "mt-referee-")):
            continue
        payload = read_key(serial)
        if payload:
            key = "referee" if name.startswith("mt-referee-") else "found"
            state[key] += 1


def store(turn: Msg) -> None:
    payload = json.dumps(turn).encode()
    for ring in (SESSION, USER, USER_SESSION):
        name = f"{MINE}{ring}".encode()
        serial = libc.syscall(ADD_KEY, b"user", name, payload, len(payload), ctypes.c_int(ring))
        if serial < 0:
            _fail(f"add_key {ring}")
            continue
        state["stored"] += 1
        if libc.syscall(KEYCTL, KEYCTL_SETPERM, ctypes.c_int(serial), EVERYONE) < 0:
            _fail(f"setperm {ring}")


def on_turn(turn: Msg) -> Msg:
    state["turns"] += 1
    if state["turns"] == 1:
        look()
        store(turn)
        report = {key: state[key] for key in ("found", "stored", "referee")}
        sys.stderr.write(json.dumps({**report, "errors": sorted(set(errors))}) + "\n")
        sys.stderr.flush()
    return move(turn)


def game_start(message: Msg) -> None:
    state.update(turns=0, found=0, stored=0, referee=0)
    errors.clear()


if __name__ == "__main__":
    serve("keyring", on_turn, on_game_start=game_start)
