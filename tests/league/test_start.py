"""A league game starts its bots together, not one after another.

With `restart = "always"` every game starts fresh processes; each bot here, before
it answers `hello`, marks a shared folder and waits (at most WAIT_S) until the
marks of all of the game's bots are there. Started one after another (each greeted
before the next is started), the first would wait alone; started together, each
sees the others at once, and says so on stderr.
"""

from __future__ import annotations

from pathlib import Path

import trio

from tests._procs import new_token
from tests.league.test_run import inline, no_process_left, pinned, run, write_league

WAIT_S = 20  # far above the start-up of three bots on a busy machine
# argv: tests/bots, the marks folder, the number of bots to wait for.
TOGETHER = (
    "import os, sys, time; sys.path.insert(0, sys.argv[1])\n"
    "marks, count = sys.argv[2], int(sys.argv[3])\n"
    "open(os.path.join(marks, os.urandom(8).hex()), 'w').close()\n"
    f"deadline = time.monotonic() + {WAIT_S}\n"
    "while len(os.listdir(marks)) < count and time.monotonic() < deadline:\n"
    "    time.sleep(0.01)\n"
    "seen = len(os.listdir(marks))\n"
    "print('together' if seen >= count else f'alone {seen}', file=sys.stderr, flush=True)\n"
    "from _common import serve; serve('together')\n"
)


async def test_a_game_starts_its_bots_at_once(tmp_path: Path) -> None:
    token = new_token()
    marks = tmp_path / "marks"
    marks.mkdir()
    names = ["a", "b", "c"]
    # No sandbox: the bots share the host folder `marks`.
    bots = [
        inline(n, TOGETHER, token, str(marks), "3", restart="always", sandbox="none") for n in names
    ]
    path = write_league(tmp_path / "league", bots, table=3, deals=1, duplicate=False)
    config = pinned(path, tmp_path / "out")
    with no_process_left(token), trio.fail_after(120):
        standings = await run(config, jobs=1)
    assert standings.games == 1
    said = sorted((config.out / "stderr").glob("*.stderr"))
    # Numbered in seat order, as when they were started one by one.
    assert [p.name for p in said] == ["a-1.stderr", "b-2.stderr", "c-3.stderr"]
    assert [p.read_text().split("\n")[0] for p in said] == ["together"] * 3
    assert all(b.faults == {} for b in standings.bots)
