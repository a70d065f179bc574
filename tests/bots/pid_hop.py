"""Plays legal move 0, and computes from the end of each game until the start of the
next in a chain of processes that hop from pid to pid: each link forks the next one
at once, computes a unit (UNIT_S of its own CPU time), writes a byte to a pipe the
bot reads, and exits. A link forks before it does anything else, so stopping it
never stops the chain, and freezing the bot by finding each process and sending it
SIGSTOP runs after it.

The bot counts the bytes, the chain's units of CPU time. On its first turn of each
game it runs the chain until it has computed TURN_UNITS (a turn of this bot costs
that much CPU), and at each `game_start` it says on stderr, as one JSON line, how
many units the chain computed since this process received its last `game_end`:
`{"pid_hop": GAMES, "idle_units": N, "turn_units": TURN_UNITS}` (N is null in its
first game). A bot frozen while idle computes only in the moments before it is
frozen and after it is thawed. The chain stops at each `game_start`, and after
MAX_UNITS in any case.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import signal
import sys
import time

from _common import messages, move, ready, send

UNIT_S = 0.001
SLICE_S = 0.0002  # what one link computes before it hands on
TURN_UNITS = 50
MAX_UNITS = 3000
PR_SET_CHILD_SUBREAPER = 36
stop = mmap.mmap(-1, 1)  # shared with every link: 1 stops the chain


def link(write: int) -> None:
    """The chain: compute a slice, fork the next link, exit at once; a unit said for
    each UNIT_S computed, MAX_UNITS at most."""
    done = 0.0  # the CPU time the chain computed and has not said yet
    for _ in range(MAX_UNITS * round(UNIT_S / SLICE_S)):
        if stop[0]:
            break
        start = time.process_time()
        while time.process_time() - start < SLICE_S:
            pass
        done += time.process_time() - start
        if done >= UNIT_S:
            os.write(write, b"u")
            done -= UNIT_S
        try:
            if os.fork() > 0:
                break  # the next link computes on
        except OSError:
            pass  # no process to hop to now: compute on here
    os._exit(0)


def reap(signum: int, frame: object) -> None:
    """Reap the links: each exits at once, and its orphaned child comes to the bot."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


# The orphaned links come to the bot, which reaps them as they end (without it they
# would wait for the bot keeper's next sweep, and their pids run out).
ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
signal.signal(signal.SIGCHLD, reap)
units_r, units_w = os.pipe()
os.set_blocking(units_r, False)
units = 0


def start_chain() -> None:
    stop[0] = 0
    if os.fork() == 0:
        os.close(units_r)
        link(units_w)


def drain() -> None:
    """Count the units the chain reported so far."""
    global units
    while True:
        try:
            data = os.read(units_r, 65536)
        except BlockingIOError:
            return
        units += len(data)


def run_chain_for(count: int) -> None:
    """Run the chain until it has reported `count` more units."""
    global units
    drain()
    goal = units + count
    start_chain()
    os.set_blocking(units_r, True)
    try:
        while units < goal:
            units += len(os.read(units_r, goal - units))
    finally:
        os.set_blocking(units_r, False)
        stop[0] = 1


games = 0
ended_at: int | None = None  # the units counted at this process's last game_end
first_turn = False
for message in messages():
    kind = message.get("type")
    if kind == "hello":
        ready("pid_hop")
    elif kind == "ping":
        send({"type": "pong", "nonce": message["nonce"]})
    elif kind == "game_start":
        stop[0] = 1
        drain()
        games += 1
        first_turn = True
        idle = None if ended_at is None else units - ended_at
        report = {"pid_hop": games, "idle_units": idle, "turn_units": TURN_UNITS}
        sys.stderr.write(json.dumps(report) + "\n")
        sys.stderr.flush()
    elif kind == "turn":
        if first_turn:
            first_turn = False
            run_chain_for(TURN_UNITS)
        send(move(message))
    elif kind == "game_end":
        drain()
        ended_at = units
        start_chain()
    elif kind == "bye":
        break
