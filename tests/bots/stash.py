"""Keeps what it was dealt wherever it can write, and looks for what others kept.

On the first turn of each game it writes its request (its hand among it) to a file
named `.stash-PID-N` in every folder it may write: its working and script folders,
HOME and TMPDIR, /tmp, /var/tmp, /dev/shm, /scratch, its interpreter's installation,
and every folder two levels below /. Before that it reads every `.stash-*` file
of another process it finds in those folders. At each game's end it writes one JSON
line to stderr: `{"found": N, "wrote": M}`, N the files of other processes it read,
M the folders it wrote to. It plays legal move 0.

    python stash.py [FOLDER]

With FOLDER (a test's control run, without a sandbox) it keeps to that folder alone.
"""

from __future__ import annotations

import json
import os
import sys

from _common import Msg, move, serve

MINE = f".stash-{os.getpid()}-"
written = 0
turns = 0


def places() -> list[str]:
    if len(sys.argv) > 1:
        return [sys.argv[1]]
    found = [
        os.getcwd(),
        os.path.dirname(os.path.abspath(__file__)),
        os.environ.get("HOME", ""),
        os.environ.get("TMPDIR", ""),
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/scratch",
        sys.prefix,
    ]
    for top in ("/", *(os.path.join("/", name) for name in sorted(os.listdir("/")))):
        if top.startswith(("/proc", "/sys")) or not os.path.isdir(top):
            continue
        found.append(top)
        try:
            found += [os.path.join(top, name) for name in sorted(os.listdir(top))]
        except OSError:
            continue
    unique: list[str] = []
    for path in found:
        if path and os.path.isdir(path) and path not in unique:
            unique.append(path)
    return unique


def look(folders: list[str]) -> int:
    count = 0
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(".stash-") and not name.startswith(MINE):
                try:
                    with open(os.path.join(folder, name), "rb") as handle:
                        count += bool(handle.read(1))
                except OSError:
                    continue
    return count


def keep(turn: Msg) -> Msg:
    global written, turns
    turns += 1
    if turns == 1:
        folders = places()
        found = look(folders)
        written = 0
        for folder in folders:
            try:
                with open(os.path.join(folder, f"{MINE}{turns}"), "w") as handle:
                    handle.write(json.dumps(turn))
                written += 1
            except OSError:
                continue
        sys.stderr.write(json.dumps({"found": found, "wrote": written}) + "\n")
        sys.stderr.flush()
    return move(turn, 0)


def game_start(message: Msg) -> None:
    global turns
    turns = 0


serve("stash", keep, on_game_start=game_start)
