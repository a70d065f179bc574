"""Takes as much of one resource as its limits let it, at its first turn, says on
stderr how far it got as one JSON line, then plays legal move 0 (or, with `crash`,
raises what it hit).

    python hog.py WHAT [crash]

WHAT is one of:
  processes  forks children that sleep, until a fork fails (a fork bomb kept alive)
  disk       fills $SCRATCH, /tmp, /dev/shm and /dev with files (where it may write),
             one of them unlinked and kept open, and reports the bytes written
  files      opens /dev/null until no descriptor is left
  memory     allocates 16 MiB blocks until an allocation fails
  none       nothing: an ordinary bot
"""

from __future__ import annotations

import json
import os
import sys
import time

from _common import Msg, move, serve

what = sys.argv[1]
crash = "crash" in sys.argv[2:]
done = False
kept: list[object] = []


def processes() -> dict[str, object]:
    count = 0
    while count < 100_000:
        try:
            pid = os.fork()
        except OSError as exc:
            return {"processes": count, "error": exc.strerror}
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        count += 1
    return {"processes": count, "error": None}


def disk() -> dict[str, object]:
    written = 0
    block = b"x" * (1 << 20)
    error = None
    for folder in (os.environ.get("SCRATCH", "/tmp"), "/tmp", "/dev/shm", "/dev"):
        if not os.access(folder, os.W_OK):
            continue
        hidden = open(os.path.join(folder, "unlinked"), "wb")  # noqa: SIM115
        os.unlink(os.path.join(folder, "unlinked"))
        kept.append(hidden)
        try:
            for _ in range(100_000):
                hidden.write(block)
                hidden.flush()
                written += len(block)
        except OSError as exc:
            error = exc.strerror
        for n in range(100_000):
            try:
                with open(os.path.join(folder, f"fill-{n}"), "wb") as handle:
                    handle.write(block)
                written += len(block)
            except OSError as exc:
                error = exc.strerror
                break
    return {"bytes": written, "error": error}


def files() -> dict[str, object]:
    count = 0
    while count < 10_000_000:
        try:
            kept.append(open(os.devnull, "rb"))  # noqa: SIM115
        except OSError as exc:
            return {"files": count, "error": exc.strerror}
        count += 1
    return {"files": count, "error": None}


def memory() -> dict[str, object]:
    total = 0
    try:
        while total < 1 << 40:
            kept.append(bytearray(16 << 20))
            total += 16 << 20
    except MemoryError:
        kept.clear()
        return {"bytes": total, "error": "MemoryError"}
    return {"bytes": total, "error": None}


def on_turn(turn: Msg) -> Msg:
    global done
    if not done and what != "none":
        done = True
        found = {"processes": processes, "disk": disk, "files": files, "memory": memory}[what]()
        if what == "files":
            kept.clear()  # descriptors back, to go on talking
        sys.stderr.write(json.dumps({"hog": what, **found}) + "\n")
        sys.stderr.flush()
        if crash:  # hit it again, uncaught: the traceback a real bot would leave
            if what == "processes":
                os.fork()
            elif what == "disk":
                with open(os.path.join(os.environ.get("SCRATCH", "/tmp"), "more"), "wb") as f:
                    f.write(b"x" * (1 << 20))
            elif what == "files":
                kept.extend(open(os.devnull, "rb") for _ in range(10_000_000))  # noqa: SIM115
            else:
                kept.append(bytearray(1 << 40))
    return move(turn, 0)


serve("hog", on_turn)
