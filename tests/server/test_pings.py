"""Pings between games over TCP, with a real bot process that connects by itself.

Before each game the referee pings every TCP bot the game takes; a bot that does
not answer within the ping's clock is treated as a dead connection: it is closed,
and the bot may log in again (it has the startup clock) to play that game.
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio
from rich.console import Console

from referee.bots.session import PING_S
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.net.server import serve_league
from tests._procs import new_token, processes_with

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "tests" / "bots" / "tcp_ping.py"
RANDOM = ROOT / "sample_bots" / "random_bot.py"
SHOWN = {"hello", "ping", "pong", "unanswered", "game_start", "game_end", "closed", "bye"}


async def test_each_game_is_preceded_by_a_ping_and_a_silent_bot_is_cut_off(
    tmp_path: Path,
) -> None:
    token = new_token()  # the bot's login token, and its mark in the process table
    (tmp_path / "league.toml").write_text(
        f"""
[league]
name = "pings"
table = 2
deals = 3
duplicate = false
seed = 3
out = "out"
[rules]
max_pip = 6
rounds = "single"
[[bot]]
name = "a"
command = ["{sys.executable}", "{RANDOM}"]
[[bot]]
name = "t"
transport = "tcp"
token = "{token}"
"""
    )
    config = load_config(tmp_path / "league.toml")
    record = tmp_path / "record.txt"
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:

            async def league(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
                await serve_league(
                    config, console=Console(quiet=True), quiet=True, task_status=task_status
                )

            host, port = await nursery.start(league)
            # The bot leaves its third ping, the one before game 3, unanswered.
            argv = [sys.executable, str(BOT), host, str(port), "t", token, "3", str(record)]
            await trio.run_process(argv)  # it exits after bye (done), once the league is over
    seen = [line.split() for line in record.read_text().splitlines()]
    seen = [line for line in seen if line[1] in SHOWN]
    game = ["game_start", "game_end"]
    assert [line[:2] for line in seen] == [
        ["1", what]
        for what in ["hello", "ping", "pong", *game, "ping", "pong", *game, "ping", "unanswered"]
    ] + [["1", "closed"]] + [["2", what] for what in ["hello", "ping", "pong", *game, "bye"]]
    # Given up on after the ping's clock (less the ping's way to the bot), and no game
    # was given to it meanwhile: game 3 came once it had logged in again, no fault anywhere.
    when = {what: float(at) for _, what, at in seen}
    assert PING_S - 0.5 < when["closed"] - when["unanswered"] < PING_S + 20
    ledger = Ledger(config.out / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    assert len(records) == 3 and all(r.faults == [] for r in records)
    assert processes_with(token) == []
