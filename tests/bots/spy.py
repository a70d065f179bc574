"""Tries every channel to pass its hand to a partner at the same table, and to peek
at what the referee keeps: a file in /tmp and in its own folder, a UNIX socket, a
TCP port on 127.0.0.1, POSIX shared memory, a signal to the partner's pid, the
game log, and another bot's folder. It plays legal move 0 throughout and reports,
one JSON line per channel on stderr, whether anything came through.

    python spy.py TOKEN ROLE PORT PEER_PORT LOG_PATH OTHER_FOLDER
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
from multiprocessing import shared_memory
from pathlib import Path

from _common import move, serve

token, role, port, peer_port, log_path, other = sys.argv[1:7]
peer = "b" if role == "a" else "a"
here = Path(__file__).resolve().parent
found: dict[str, bool] = {}
secret = f"{role}:{os.getpid()}".encode()


def report(channel: str, ok: bool) -> None:
    if not found.get(channel):
        found[channel] = ok
        sys.stderr.write(json.dumps({"channel": channel, "got": ok}) + "\n")
        sys.stderr.flush()


def attempt(channel: str, action) -> None:  # type: ignore[no-untyped-def]
    try:
        report(channel, bool(action()))
    except Exception:
        report(channel, False)


def publish() -> None:
    for path in (Path("/tmp") / f"spy-{token}-{role}", here / f"spy-{token}-{role}"):
        with contextlib.suppress(OSError):
            path.write_bytes(secret)
    with contextlib.suppress(OSError):
        unix = socket.socket(socket.AF_UNIX)
        unix.bind(f"/tmp/spy-{token}-{role}.sock")
        unix.listen()
        threading.Thread(target=lambda: unix.accept()[0].sendall(secret), daemon=True).start()
    with contextlib.suppress(OSError):
        tcp = socket.create_server(("127.0.0.1", int(port)))
        threading.Thread(target=lambda: tcp.accept()[0].sendall(secret), daemon=True).start()
    with contextlib.suppress(OSError):
        memory = shared_memory.SharedMemory(name=f"spy-{token}-{role}", create=True, size=64)
        memory.buf[: len(secret)] = secret
        globals()["_keep"] = memory


def peek() -> None:
    attempt("tmp file", lambda: (Path("/tmp") / f"spy-{token}-{peer}").read_bytes())
    attempt("own folder file", lambda: (here / f"spy-{token}-{peer}").read_bytes())

    def unix() -> bytes:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(1)
        s.connect(f"/tmp/spy-{token}-{peer}.sock")
        return s.recv(64)

    attempt("unix socket", unix)
    attempt("tcp", lambda: socket.create_connection(("127.0.0.1", int(peer_port)), 1).recv(64))

    def shm() -> bytes:
        memory = shared_memory.SharedMemory(name=f"spy-{token}-{peer}")
        return bytes(memory.buf[:4])

    attempt("shared memory", shm)

    def signal_peer() -> bool:
        pid = int((Path("/tmp") / f"spy-{token}-{peer}").read_bytes().split(b":")[1])
        os.kill(pid, 0)
        return True

    attempt("signal", signal_peer)
    attempt("game log", lambda: Path(log_path).read_bytes())
    attempt("other folder", lambda: os.listdir(other))


turns = 0


def on_turn(turn):  # type: ignore[no-untyped-def]
    global turns
    turns += 1
    if turns == 1:
        publish()
    elif turns in (3, 6):
        peek()
    return move(turn)


serve(f"spy-{role}", on_turn)
