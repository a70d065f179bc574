"""`referee serve` with several TCP seats per game and several games at once.

A game takes all its TCP seats together or none, so no two games can each hold
one bot the other waits for: the league always finishes, with exactly the games
it gives with `--jobs 1` (the bots are seeded by the game and the bot seed key is
pinned, so which bot process plays which game changes nothing).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from rich.console import Console

from referee.bots.connection import Connection
from referee.bots.session import TcpSession
from referee.league.config import LeagueConfig, load_config
from referee.league.judge import Judge
from referee.league.ledger import Ledger
from referee.league.pool import BotPool
from referee.logs.gamelog import read_log
from referee.net.bridge import run_bridge
from referee.net.server import BotServer, serve_league

ROOT = Path(__file__).resolve().parents[2]
RANDOM = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
GREEDY = [sys.executable, str(ROOT / "sample_bots" / "greedy_bot.py")]
KEY = bytes.fromhex("8899aabbccddeeff0011223344556677")
TOKEN = "ylYeLoy5tTVUPkHzs17ke5hZ_EGrlWezagdyphs_P7A"  # each bot's: this, a dash, its name


def league(folder: Path, tcp: list[str], stdio: list[str]) -> LeagueConfig:
    """Tables of three: every game seats every bot, each deal under its three rotations."""
    folder.mkdir()
    text = """
[league]
name = "tcp-jobs"
table = 3
deals = 2
duplicate = true
accept_tcp_duplicate_risk = true  # the bridges' bots are the test's own
seed = 5
out = "out"
[rules]
max_pip = 6
rounds = "single"
"""
    for name in stdio:
        text += f"[[bot]]\nname = {name!r}\ncommand = {json.dumps(RANDOM)}\n"
    for name in tcp:
        text += f'[[bot]]\nname = {name!r}\ntransport = "tcp"\ntoken = "{TOKEN}-{name}"\n'
    (folder / "league.toml").write_text(text)
    config = load_config(folder / "league.toml")
    return dataclasses.replace(config, bot_seed_key=KEY, deal_key=KEY * 2)


def games(config: LeagueConfig) -> list[tuple[str, list[str], list[int], list[str]]]:
    ledger = Ledger(config.out / "league.db")
    try:
        return sorted(
            (r.game_id, r.seats, list(r.scores), [f["kind"] for f in r.faults])
            for r in ledger.records()
        )
    finally:
        ledger.close()


async def serve(config: LeagueConfig, tcp: list[str], jobs: int) -> None:
    """The league under `serve_league` with `jobs` games at once, its TCP bots
    joining through the bridge (random and greedy bots in turn)."""
    async with trio.open_nursery() as nursery:

        async def run(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
            await serve_league(
                config, jobs=jobs, console=Console(quiet=True), quiet=True, task_status=task_status
            )
            nursery.cancel_scope.cancel()

        host, port = await nursery.start(run)
        for i, name in enumerate(tcp):
            argv = (RANDOM, GREEDY)[i % 2]
            nursery.start_soon(run_bridge, host, port, name, f"{TOKEN}-{name}", argv)


@pytest.mark.parametrize(
    ("tcp", "stdio", "jobs"),
    [
        (["c", "d"], ["a"], [2, 3, 4]),  # two TCP seats in every game
        (["c", "d", "e"], [], [2, 3, 4]),  # three TCP seats in every game, nothing else
    ],
)
async def test_games_with_several_tcp_seats_finish_whatever_the_jobs(
    tmp_path: Path, tcp: list[str], stdio: list[str], jobs: list[int]
) -> None:
    one = league(tmp_path / "jobs1", tcp, stdio)
    with trio.fail_after(60):
        await serve(one, tcp, 1)
    expected = games(one)
    assert len(expected) == 6 and all(kinds == [] for *_, kinds in expected)
    for n in jobs:
        config = league(tmp_path / f"jobs{n}", tcp, stdio)
        with trio.fail_after(60):  # a deadlock never ends: the clock turns it into a failure
            await serve(config, tcp, n)
        assert games(config) == expected, f"--jobs {n}"


# ---------------------------------------------------------------- in process, fake clock


def online(server: BotServer, name: str, *, answers: bool = True) -> trio.abc.Stream:
    """A logged-in session of `name` waiting for a game; the bot's end of its stream
    (a bot that `answers` pings is served by `pong_all`)."""
    ours, theirs = trio.testing.memory_stream_pair()
    session = TcpSession(name, Connection(ours, ours, name=name), "test")
    server.slots[name].connected = session
    server.park(session)
    return theirs


async def pong_all(stream: trio.abc.Stream) -> None:
    """Answer every ping on `stream`."""
    while data := await stream.receive_some():
        for line in data.splitlines():
            message = json.loads(line)
            if message["type"] == "ping":
                await stream.send_all(b'{"type":"pong","nonce":%d}\n' % message["nonce"])


async def test_a_game_takes_its_tcp_bots_together_or_waits(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = league(tmp_path / "l", ["c", "d", "e"], [])
    server = BotServer(config)
    for name in ("c", "d"):
        online(server, name)
    first = await server.take_all(["c", "d"], 5.0)
    assert all(isinstance(first[n], TcpSession) for n in ("c", "d"))

    got: list[dict[str, TcpSession | str]] = []

    async def second() -> None:
        got.append(await server.take_all(["d", "c"], 5.0))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(second)
        await trio.sleep(30)  # both bots busy: waited for without a clock
        assert got == []
        c = first["c"]
        assert isinstance(c, TcpSession)
        server.park(c)  # c alone is not taken: the game would hold it while d plays
        await trio.sleep(30)
        assert got == [] and server.slots["c"].idle == [c]
        d = first["d"]
        assert isinstance(d, TcpSession)
        server.park(d)
    assert got == [{"d": d, "c": c}]
    assert server.slots["c"].idle == server.slots["d"].idle == []

    # A bot that has never logged in is missing once `connect_ms` (120 s by default)
    # from the server's start have passed: time for a person to start a bridge.
    server.park(c)
    assert trio.current_time() - server.started == pytest.approx(60.0)
    missing = await server.take_all(["c", "e"], 5.0)
    assert trio.current_time() - server.started == pytest.approx(120.0)
    assert missing == {
        "c": c,
        "e": "not connected within 120000 ms of the server's start (server.connect_ms)",
    }
    # One that has logged in before is missing after its startup clock, the others
    # taken then.
    server.nonces["e"] = ""
    server.park(c)
    start = trio.current_time()
    missing = await server.take_all(["c", "e"], 5.0)
    assert trio.current_time() - start == pytest.approx(5.0)
    assert missing == {"c": c, "e": "not connected within 5000 ms"}


async def test_a_session_that_fails_its_ping_does_not_hold_the_others(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = league(tmp_path / "l", ["c", "d", "e"], [])
    server = BotServer(config)
    async with trio.open_nursery() as nursery:
        pool = BotPool(config, nursery, tmp_path)
        pool.server = server
        nursery.start_soon(pong_all, online(server, "c"))
        deaf = online(server, "d")  # logged in, then never answers
        got: list[list[tuple[TcpSession | None, str]]] = []
        start = trio.current_time()
        took: list[float] = []

        async def game() -> None:
            got.append(await pool.acquire_tcp([config.bots[0], config.bots[1]]))
            took.append(trio.current_time() - start)

        nursery.start_soon(game)
        await trio.sleep(2.5)  # the ping's 2 s are over: d is ended, c is given back
        assert got == [] and server.slots["d"].connected is None
        assert [s.name for s in server.slots["c"].idle] == ["c"]
        # Another game may take c meanwhile: this one holds nothing.
        other = await server.take_all(["c"], 1.0)
        c = other["c"]
        assert isinstance(c, TcpSession)
        server.park(c)
        await trio.sleep(60)
        assert len(got) == 1
        (c_seat, c_why), (d_seat, d_why) = got[0]
        assert c_seat is c and c_why == ""
        # d had startup_ms (10 s by default) from its failed ping to come back.
        assert d_seat is None and "did not answer a ping" in d_why
        assert took == [pytest.approx(2 + 10)]
        await deaf.aclose()
        nursery.cancel_scope.cancel()


async def test_a_match_with_a_tcp_bot_under_serve(tmp_path: Path) -> None:
    """format = "match" with NEW over TCP (bridged greedy, with time odds) against BASE
    and a field started here: every unit's two games are played and judged."""
    folder = tmp_path / "match"
    folder.mkdir()
    text = f"""
[league]
name = "tcp-match"
format = "match"
out = "out"
[match]
new = "c"
base = "a"
max_games = 4
[rules]
max_pip = 6
rounds = "single"
[[bot]]
name = "c"
transport = "tcp"
token = "{TOKEN}-c"
time = {{ move_ms = 2500 }}
[[bot]]
name = "a"
command = {json.dumps(RANDOM)}
[[bot]]
name = "f"
command = {json.dumps(RANDOM)}
"""
    (folder / "league.toml").write_text(text)
    config = dataclasses.replace(
        load_config(folder / "league.toml"), bot_seed_key=KEY, deal_key=KEY * 2
    )
    judge = Judge(config)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:

            async def run(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
                standings = await serve_league(
                    config,
                    console=Console(quiet=True),
                    quiet=True,
                    task_status=task_status,
                    judge=judge,
                )
                assert standings.match is not None and standings.match["units"] == 2
                nursery.cancel_scope.cancel()

            host, port = await nursery.start(run)
            nursery.start_soon(run_bridge, host, port, "c", f"{TOKEN}-c", GREEDY)
    assert judge.counted == 2 and judge.summary().games == 4
    played = games(config)
    assert [seats for _, seats, _, _ in played] == [
        ["c", "f"],  # unit 1: NEW in seat 0, then BASE there
        ["a", "f"],
        ["f", "c"],  # unit 2: the tested seat moved
        ["f", "a"],
    ]
    for path in sorted((config.out / "logs").glob("*.jsonl.gz")):
        for bot in read_log(path).header.bots:
            assert (bot.time.move_ms if bot.time else None) == (2500 if bot.name == "c" else None)
