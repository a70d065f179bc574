"""Leaves a daemon the classic way, then plays legal move 0 and exits on bye.

It forks; the child calls `setsid` (a new session: out of the bot's process group)
and forks again, then exits, so the grandchild is nobody's child but whoever
adopts orphans. The grandchild puts its stdio on /dev/null and sleeps forever
with the bot's command line (the test's token is its last word). The bot waits
until the grandchild runs, then writes `grandchild PID cgroup PATH` (its own
cgroup v2) to stderr.

With `--marks DIR LABEL`, the grandchild leaves a file named by its pid in DIR that
holds LABEL; and before anything else the bot makes sure that no grandchild of an
earlier bot with the same LABEL still runs. If one does, it writes `survivor PID`
to stderr and exits with status 3 (a startup failure): a league that starts a bot
again after a forfeit shows at once whether the forfeit left something behind.

MODE (the first argument) adds one misbehaviour:
  play         none
  forfeit:N    answers the first turn of its Nth game (from 1) with an illegal index
  kill-keeper  kills its keeper (its parent) with SIGKILL at its first turn
  kill-keepers kills its keeper's parent (the referee's keeper) with SIGKILL at its
               first turn, then plays on
"""

import os
import signal
import sys
import time

from _common import Msg, move, serve

mode = sys.argv[1]
marks, label = None, ""
if "--marks" in sys.argv:
    marks, label = sys.argv[sys.argv.index("--marks") + 1 : sys.argv.index("--marks") + 3]


def running(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


if marks is not None:
    for mark in os.listdir(marks):
        with open(os.path.join(marks, mark)) as f:
            if f.read() == label and running(mark):
                print(f"survivor {mark}", file=sys.stderr, flush=True)
                sys.exit(3)

ready_r, ready_w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if marks is not None:
            with open(os.path.join(marks, str(os.getpid())), "w") as f:
                f.write(label)
        os.write(ready_w, f"{os.getpid()}\n".encode())
        while True:
            time.sleep(3600)
    os._exit(0)
os.close(ready_w)
grandchild = os.read(ready_r, 64).decode().strip()
os.wait()  # the child, which exited at once
with open("/proc/self/cgroup") as f:
    cgroup = next((line[3:].strip() for line in f if line.startswith("0::")), "-")
print(f"grandchild {grandchild} cgroup {cgroup}", file=sys.stderr, flush=True)

games = 0
first_turn = True


def on_game_start(message: Msg) -> None:
    global games, first_turn
    games += 1
    first_turn = True


def on_turn(turn: Msg) -> Msg:
    global first_turn
    if mode == "kill-keeper":
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(10)  # PR_SET_PDEATHSIG ends the bot with its keeper
    if mode in ("kill-keepers", "kill-both") and first_turn and games == 1:
        with open(f"/proc/{os.getppid()}/stat", "rb") as f:
            os.kill(int(f.read().rsplit(b")", 1)[1].split()[1]), signal.SIGKILL)
        if mode == "kill-both":
            os.kill(os.getppid(), signal.SIGKILL)
    illegal = mode == f"forfeit:{games}" and first_turn
    first_turn = False
    return move(turn, len(turn["legal"])) if illegal else move(turn)


serve("double_fork", on_turn, on_game_start=on_game_start)
