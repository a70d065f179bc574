"""`referee serve --cluster`: games with a TCP seat are played on the coordinator,
which holds the connections; the others go to the cluster's workers. The games
are exactly those of the same league with every bot on stdio, played in one process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trio
from rich.console import Console

from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.run import run_league

ROOT = Path(__file__).resolve().parents[2]
RANDOM = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
GREEDY = [sys.executable, str(ROOT / "sample_bots" / "greedy_bot.py")]
TOKEN = "dJWrhNxcYPy6zgiSFXgMneB5NpBAtSIgpH8Zz065-zE"
KEY_HEX = "00112233445566778899aabbccddeeff"
REFEREE = str(Path(sys.executable).parent / "referee")


def league_file(folder: Path, *, tcp: bool) -> Path:
    """Bots a, b, e on stdio and c over TCP (or on stdio), tables of two: three of
    the six tables have no TCP seat."""
    folder.mkdir()
    (folder / "c.token").write_text(TOKEN + "\n")

    def stdio(name: str, argv: list[str]) -> str:
        return f"[[bot]]\nname = {json.dumps(name)}\ncommand = {json.dumps(argv)}\n"

    c = '[[bot]]\nname = "c"\ntransport = "tcp"\ntoken_file = "c.token"\n'
    text = f"""
[league]
name = "serve-cluster"
table = 2
deals = 1
duplicate = false
seed = 11
out = "out"
bot_seed_key = "{KEY_HEX}"
deal_key = "{KEY_HEX}"
[rules]
max_pip = 6
rounds = "single"
{stdio("a", RANDOM)}
{stdio("b", GREEDY)}
{c if tcp else stdio("c", RANDOM)}
{stdio("e", RANDOM)}
"""
    path = folder / "league.toml"
    path.write_text(text)
    return path


def played(out: Path) -> tuple[list[tuple[str, list[str], list[int]]], dict[int, str]]:
    ledger = Ledger(out / "league.db")
    try:
        games = [(r.game_id, r.seats, r.scores) for r in ledger.records()]
        return games, ledger.placements()
    finally:
        ledger.close()


def test_tcp_seats_are_played_on_the_coordinator_and_the_rest_on_the_cluster(
    tmp_path: Path,
) -> None:
    stdio = load_config(league_file(tmp_path / "s", tcp=False))
    trio.run(lambda: run_league(stdio, jobs=1, resume=False, console=Console(quiet=True)))
    expected, none = played(stdio.out)
    assert len(expected) == 6 and none == {}

    path = league_file(tmp_path / "t", tcp=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    serve = subprocess.Popen(
        [REFEREE, "serve", str(path), "--port", "0", "-q", "--cluster", "local:1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    bridge: subprocess.Popen[str] | None = None
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        assert first.startswith("listening on 127.0.0.1:"), first + serve.stderr.read()
        options = ["--name", "c", "--token-file", str(path.parent / "c.token")]
        bridge = subprocess.Popen(
            [REFEREE, "connect", first.split()[-1], *options, "--", *RANDOM],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )
        out, err = serve.communicate(timeout=120)
        said = bridge.communicate(timeout=30)[0]
    finally:
        for proc in (serve, bridge):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert serve.returncode == 0, err
    assert bridge.returncode == 0, said
    assert TOKEN not in out + err + said
    games, placements = played(path.parent / "out")
    assert games == expected
    # Exactly the games without c went to the cluster, all to its one worker.
    remote = {i for i, (_, seats, _) in enumerate(games) if "c" not in seats}
    assert set(placements) == remote and len(remote) == 3
    assert len(set(placements.values())) == 1
    assert next(iter(placements.values())).startswith("tcp://127.0.0.1:")
