"""Time odds in a league file: a `time` table on a `[[bot]]` overrides `[time]` for that
bot, in the hello its processes get, on its game clock and in the log's header; the
same on a cluster's workers, which read the league file again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from referee.league.config import ConfigError, load_config
from referee.logs.gamelog import read_log
from tests._procs import assert_none_left, new_token
from tests.league.test_run import ENV, REFEREE, inline, sample, write_league

# Plays legal move 0 and writes on stderr the clocks its hello gave it.
CLOCK = (
    "import json, sys; sys.path.insert(0, sys.argv[1])\n"
    "from _common import serve\n"
    "def hello(m): print('hello ' + json.dumps(m['time']), file=sys.stderr, flush=True)\n"
    "serve('clock', on_hello=hello)\n"
)
CLOCKS = {"startup_ms": 15000, "move_ms": 3000, "bank_ms": 15000}


def hellos(stderr_dir: Path, name: str) -> list[dict[str, int]]:
    """The clocks each process of bot `name` was given in its hello."""
    found = []
    for path in sorted(stderr_dir.glob(f"{name}-*.stderr")):
        for line in path.read_text().splitlines():
            if line.startswith("hello "):
                found.append(json.loads(line.removeprefix("hello ")))
    return found


def league(tmp_path: Path, token: str) -> Path:
    odds = {"move_ms": 6000, "bank_ms": 40000}
    bots = [
        inline("slow", CLOCK, token, time=odds),
        inline("plain", CLOCK, token),
        sample("greedy", "greedy_bot.py", token),
    ]
    return write_league(tmp_path / "league", bots, table=2, deals=1, time_ms=CLOCKS)


@pytest.mark.parametrize("where", ["here", "cluster"])
def test_a_bot_gets_its_own_clocks_in_hello_game_and_log(tmp_path: Path, where: str) -> None:
    token = new_token()
    path = league(tmp_path, token)
    out = tmp_path / "out"
    extra = ["--cluster", "local:1"] if where == "cluster" else []
    args = [REFEREE, "league", str(path), "--out", str(out), "-q", "--sandbox", "none", *extra]
    done = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    own = {**CLOCKS, "move_ms": 6000, "bank_ms": 40000, "increment_ms": 0, "grace_ms": 50}
    league_clock = {**CLOCKS, "increment_ms": 0, "grace_ms": 50}
    assert hellos(out / "stderr", "slow") and all(h == own for h in hellos(out / "stderr", "slow"))
    assert hellos(out / "stderr", "plain") and all(
        h == league_clock for h in hellos(out / "stderr", "plain")
    )
    logs = sorted((out / "logs").glob("*.jsonl.gz"))
    assert len(logs) == 6  # three pairs of bots, one deal, two seat rotations
    for log in logs:
        header = read_log(log).header
        for bot in header.bots:
            if bot.name == "slow":
                assert bot.time is not None and (bot.time.move_ms, bot.time.bank_ms) == (
                    6000,
                    40000,
                )
            else:
                assert bot.time is None  # written only when it differs from the header's
        assert header.time.move_ms == 3000
    assert_none_left(token)


def test_bot_time_keys_are_checked_and_named(tmp_path: Path) -> None:
    token = "x"
    for odds, words in (
        ({"move": 3}, "bot[0].time.move: unknown key"),
        ({"move_ms": -1}, "bot[0].time.move_ms: -1 is too small"),
        ({"move_ms": "3"}, "bot[0].time.move_ms: expected a whole number"),
    ):
        bots = [inline("a", CLOCK, token, time=odds), inline("b", CLOCK, token)]
        path = write_league(tmp_path / "bad", bots, table=2)
        with pytest.raises(ConfigError) as caught:
            load_config(path, check_programs=False)
        assert str(caught.value).startswith(words), caught.value
    bots = [inline("a", CLOCK, token, time={"bank_ms": 1}), inline("b", CLOCK, token)]
    config = load_config(write_league(tmp_path / "ok", bots, table=2), check_programs=False)
    assert config.bot_time("a").bank_ms == 1 and config.bot_time("a").move_ms == 3000
    assert config.bot_time("b") == config.time
