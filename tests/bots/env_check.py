"""Checks its environment before `ready`, and its scratch folder at each game start.

Every argument but the last (the test's token) is NAME or NAME=VALUE. The bot
expects exactly the variables every bot gets (PATH, HOME, TMPDIR, SCRATCH, LANG,
LC_ALL, PYTHONUNBUFFERED) and the names given, no other; NAME=VALUE also checks
the value. HOME, TMPDIR and SCRATCH must be one writable folder. It writes
`env NAME NAME...` (sorted) to stderr; on any difference it writes `env wrong: ...`
and exits with status 3 instead of answering `hello`.

At each `game_start` it writes `scratch [FILES]` (what its folder holds: nothing,
if it is emptied between games) and leaves a file there. Then it plays legal move 0.
"""

import json
import os
import sys

from _common import Msg, serve

FIXED = {"PATH", "HOME", "TMPDIR", "SCRATCH", "LANG", "LC_ALL", "PYTHONUNBUFFERED"}

wanted = {w.partition("=")[0]: w.partition("=")[2] if "=" in w else None for w in sys.argv[1:-1]}
names = FIXED | set(wanted)
problems = []
if set(os.environ) != names:
    extra = sorted(set(os.environ) - names)
    missing = sorted(names - set(os.environ))
    problems.append(f"extra {extra}, missing {missing}")
problems += [
    f"{name}={os.environ.get(name)!r}, expected {value!r}"
    for name, value in wanted.items()
    if value is not None and os.environ.get(name) != value
]
home = os.environ.get("HOME", "")
if not (home == os.environ.get("TMPDIR") == os.environ.get("SCRATCH")):
    problems.append("HOME, TMPDIR and SCRATCH differ")
if not (os.path.isdir(home) and os.access(home, os.W_OK)):
    problems.append(f"HOME {home!r} is not a writable folder")
print(f"env {' '.join(sorted(os.environ))}", file=sys.stderr, flush=True)
if problems:
    print(f"env wrong: {'; '.join(problems)}", file=sys.stderr, flush=True)
    sys.exit(3)

games = 0


def on_game_start(message: Msg) -> None:
    global games
    games += 1
    print(f"scratch {json.dumps(sorted(os.listdir(home)))}", file=sys.stderr, flush=True)
    with open(os.path.join(home, f"left-by-game-{games}"), "w") as handle:
        handle.write("a note for the next game\n")


serve("env_check", on_game_start=on_game_start)
