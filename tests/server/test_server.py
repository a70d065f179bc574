"""`referee serve` and `referee connect`: TCP bots in a league, logins, limits, junk.

Everything listens on 127.0.0.1 with port 0. A league played with two of its
four bots over TCP (through the bridge) must give exactly the games the same
league gives with all four on stdio: the random and greedy bots are seeded by
the game, and the bot seed key is pinned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from click.testing import CliRunner
from rich.console import Console

from protocol import messages as m
from protocol.messages import TimeControl
from referee.bots.session import ping
from referee.cli import main
from referee.league.config import LeagueConfig, load_config
from referee.league.ledger import Ledger
from referee.league.run import run_league
from referee.league.starts import CannotPlay
from referee.net.bridge import run_bridge
from referee.net.server import BotServer, serve_league
from tests.server._served import games as recorded_games

ROOT = Path(__file__).resolve().parents[2]
RANDOM = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
GREEDY = [sys.executable, str(ROOT / "sample_bots" / "greedy_bot.py")]
CRASH = [sys.executable, str(ROOT / "tests" / "bots" / "crash_midgame.py")]
TOKEN_C = "N6Q8_O8NQ6iOOirKmFvJmf6eTgV-0owmNEdhRMplc2w"
TOKEN_D = "mXBgcfiHErZa4iB_ocYjodDvD39B4jKdI9jWk24KlvY"
KEY = bytes.fromhex("00112233445566778899aabbccddeeff")
# A bot that never logs in is given up on 2 s after the server's start (120 s by default).
SOON = "[server]\nconnect_ms = 2000"


def write_league(
    tmp: Path,
    *,
    tcp: bool,
    extra: str = "",
    startup_ms: int = 10000,
    d_command: list[str] = GREEDY,
) -> LeagueConfig:
    """Four bots a, b (stdio) and c, d (tcp when `tcp`), short games."""
    (tmp / "d.token").write_text(TOKEN_D + "\n")
    os.environ["TEST_SERVER_TOKEN_C"] = TOKEN_C

    def stdio(name: str, argv: list[str]) -> str:
        return f"[[bot]]\nname = {json.dumps(name)}\ncommand = {json.dumps(argv)}\n"

    c = 'transport = "tcp"\ntoken_env = "TEST_SERVER_TOKEN_C"\n'
    d = 'transport = "tcp"\ntoken_file = "d.token"\n'
    text = f"""
[league]
name = "tcp-test"
table = 4
deals = 2
duplicate = false
seed = 7
out = "out"
[rules]
max_pip = 6
rounds = "single"
[time]
startup_ms = {startup_ms}
{extra}
{stdio("a", RANDOM)}
{stdio("b", GREEDY)}
{"[[bot]]" + chr(10) + 'name = "c"' + chr(10) + c if tcp else stdio("c", RANDOM)}
{"[[bot]]" + chr(10) + 'name = "d"' + chr(10) + d if tcp else stdio("d", d_command)}
"""
    path = tmp / "league.toml"
    path.write_text(text)
    return dataclasses.replace(load_config(path), bot_seed_key=KEY, deal_key=KEY)


def games(config: LeagueConfig) -> list[tuple[str, list[int], list[str]]]:
    return recorded_games(config.out)


def faults(config: LeagueConfig) -> list[dict[str, Any]]:
    ledger = Ledger(config.out / "league.db")
    try:
        return [f for r in ledger.records() for f in r.faults]
    finally:
        ledger.close()


async def serve_with(
    config: LeagueConfig,
    clients: Callable[[str, int, trio.Nursery], Awaitable[None]],
) -> None:
    """Run `config` under `serve_league`; `clients(host, port, nursery)` starts what
    connects. Whatever is still running in the nursery ends with the league."""
    async with trio.open_nursery() as nursery:

        async def league(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
            await serve_league(
                config, jobs=1, console=Console(quiet=True), quiet=True, task_status=task_status
            )
            nursery.cancel_scope.cancel()  # the clients end with the league

        host, port = await nursery.start(league)
        assert host == "127.0.0.1" and port > 0
        await clients(host, port, nursery)


def bridges(*argvs: tuple[str, str, list[str]]) -> Callable[[str, int, trio.Nursery], Any]:
    async def start(host: str, port: int, nursery: trio.Nursery) -> None:
        for name, token, argv in argvs:
            nursery.start_soon(lambda n=name, t=token, a=argv: run_bridge(host, port, n, t, a))

    return start


async def test_tcp_bots_through_the_bridge_play_the_same_games_as_stdio(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="referee")
    (tmp_path / "s").mkdir()
    (tmp_path / "t").mkdir()
    stdio = write_league(tmp_path / "s", tcp=False)
    await run_league(stdio, jobs=1, resume=False, console=Console(quiet=True), quiet=True)
    tcp = write_league(tmp_path / "t", tcp=True)
    await serve_with(tcp, bridges(("c", TOKEN_C, RANDOM), ("d", TOKEN_D, GREEDY)))
    expected = games(stdio)
    assert len(expected) == 2 and all(kinds == [] for _, _, kinds in expected)
    assert games(tcp) == expected
    assert_no_token(tmp_path, caplog, capsys)


def assert_no_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    captured = capsys.readouterr()
    for token in (TOKEN_C, TOKEN_D):
        assert token not in caplog.text
        assert token not in captured.out + captured.err
        for file in tmp_path.rglob("*"):
            if file.is_file() and not file.name.endswith(".token"):
                assert token.encode() not in file.read_bytes(), file


# ---------------------------------------------------------------- logins


async def read_bytes(stream: trio.SocketStream) -> bytes:
    """Every byte the server sends until it closes (bounded by the caller's deadline)."""
    data = b""
    while True:
        try:
            chunk = await stream.receive_some(65536)
        except trio.BrokenResourceError:
            break
        if not chunk:
            break
        data += chunk
    return data


async def read_all(stream: trio.SocketStream) -> list[dict[str, Any]]:
    """Every line the server sends until it closes, decoded."""
    return [json.loads(line) for line in (await read_bytes(stream)).splitlines()]


async def login(port: int, name: str, token: str) -> trio.SocketStream:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    line = {"type": "login", "name": name, "token": token, "protocol": 1}
    await stream.send_all(json.dumps(line).encode() + b"\n")
    return stream


async def first_line(stream: trio.SocketStream) -> dict[str, Any]:
    data = b""
    while b"\n" not in data:
        chunk = await stream.receive_some(65536)
        assert chunk, "closed"
        data += chunk
    return dict(json.loads(data.split(b"\n", 1)[0]))


@dataclasses.dataclass
class Listening:
    """A `BotServer` of the test league on 127.0.0.1, with no games running."""

    server: BotServer
    port: int
    logged_in: trio.Event  # set at the first good login
    nursery: trio.Nursery


@contextlib.asynccontextmanager
async def listening(tmp: Path, extra: str) -> AsyncIterator[Listening]:
    config = write_league(tmp, tcp=True, extra=extra)
    server = BotServer(config)
    logged_in = trio.Event()
    server.on_login = lambda name: logged_in.set()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(server.serve, "127.0.0.1", 0)
            yield Listening(server, listeners[0].socket.getsockname()[1], logged_in, nursery)
            nursery.cancel_scope.cancel()


async def test_logins_wrong_token_unknown_name_silence_and_duplicates(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="referee")
    async with listening(tmp_path, "[server]\nhandshake_ms = 300") as on:
        refusals = []
        for name, token in (("c", TOKEN_D), ("nobody", TOKEN_C), ("c", "")):
            async with await login(on.port, name, token) as stream:
                refusals.append(await read_bytes(stream))
            lines = [json.loads(line) for line in refusals[-1].splitlines()]
            assert lines[0]["type"] == "error" and lines[0]["code"] == "login"
            assert lines[-1]["type"] == "bye"
        assert refusals[0] == refusals[2]  # a wrong token and an empty one: c's refusal

        async with await trio.open_tcp_stream("127.0.0.1", on.port) as silent:
            lines = await read_all(silent)  # closed after handshake_ms
        assert lines[0]["code"] == "login" and "no login" in lines[0]["message"]

        first = await login(on.port, "c", TOKEN_C)
        assert (await first_line(first))["type"] == "hello"
        await first.send_all(b'{"type":"ready","name":"c"}\n')
        await on.logged_in.wait()
        second = await login(on.port, "c", TOKEN_C)
        # The server pings the first connection to see that it is still there.
        ping = await first_line(first)
        assert ping["type"] == "ping"
        await first.send_all(b'{"type":"pong","nonce":%d}\n' % ping["nonce"])
        async with second:
            # The same bytes as a wrong token gets: a stranger cannot tell the two apart.
            assert await read_bytes(second) == refusals[0]

        # Once the first connection is gone, the name may log in again.
        await first.aclose()
        async with await login(on.port, "c", TOKEN_C) as third:
            assert (await first_line(third))["type"] == "hello"
    # The organiser's log: a line for the first refusal from 127.0.0.1, the others
    # counted for a summary line, written when the server stops.
    assert "login from 127.0.0.1:" in caplog.text and "wrong token for 'c'" in caplog.text
    assert "3 failed logins from 127.0.0.1" in caplog.text
    assert "1 connection refused without a good login line" in caplog.text
    assert_no_token(tmp_path, caplog, capsys)


async def test_a_login_with_a_name_no_bot_can_have_is_refused_like_an_unknown_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # c's own token: what is refused is the name, said escaped (and a long one cut).
    # Five: a sixth failure from this address would be backed off, unchecked.
    caplog.set_level(logging.WARNING, logger="referee")
    async with listening(tmp_path, "") as on:
        said = []
        for name in ("c\x00", "c\x1b]0;title\x07", "\u202ec", "c" * 300, " c"):
            async with await login(on.port, name, TOKEN_C) as stream:
                lines = await read_all(stream)
            assert [line["type"] for line in lines] == ["error", "bye"], lines
            assert lines[0]["code"] == "login"
            said.append(lines[0]["message"])
    refused = ": unknown name, wrong token, or already connected"
    assert said[:3] == [
        f"login refused for 'c\\x00'{refused}",
        f"login refused for 'c\\x1b]0;title\\x07'{refused}",
        f"login refused for '\\u202ec'{refused}",
    ]
    assert said[3].endswith(f"…' (300 characters){refused}") and len(said[3]) < 250
    assert on.server.refused == 5 and not on.logged_in.is_set()
    # The first refusal is said, escaped; the others in one summary line.
    assert caplog.text.count("refused: unknown name 'c\\x00'") == 1
    assert "4 failed logins from 127.0.0.1" in caplog.text
    assert not any(c in caplog.text for c in "\x00\x1b\x07\u202e")


async def test_a_bot_waiting_longer_than_idle_ms_is_sent_bye_idle(tmp_path: Path) -> None:
    async with listening(tmp_path, "[server]\nidle_ms = 300") as on:
        async with await login(on.port, "c", TOKEN_C) as stream:
            await stream.send_all(b'{"type":"ready","name":"c"}\n')
            start = trio.current_time()
            lines = await read_all(stream)
            waited = trio.current_time() - start
        assert [x["type"] for x in lines] == ["hello", "bye"]
        assert lines[1]["reason"] == "idle"
        assert waited >= 0.3
        assert on.server.slots["c"].connected is None
        while on.server.open_connections:  # the server's side closes right after
            await trio.sleep(0.01)


async def test_a_bot_that_goes_while_waiting_for_a_game_is_forgotten_at_once(
    tmp_path: Path,
) -> None:
    # Killed between games, a bot must not be taken for the next one (an arena would
    # seat it, wait out its ping and record a forfeit): its end is noticed while it
    # waits. One that stays, and even says something unasked, is still taken and
    # answers the ping before its game: the watch reads nothing away from it.
    async with listening(tmp_path, "") as on:
        leaving = await login(on.port, "c", TOKEN_C)
        assert (await first_line(leaving))["type"] == "hello"
        await leaving.send_all(b'{"type":"ready","name":"c"}\n')
        await on.logged_in.wait()
        while not on.server.ready("c"):
            await trio.sleep(0.01)
        await leaving.aclose()
        while on.server.ready("c") or on.server.slots["c"].connected is not None:
            await trio.sleep(0.01)
        staying = await login(on.port, "d", TOKEN_D)
        assert (await first_line(staying))["type"] == "hello"
        await staying.send_all(b'{"type":"ready","name":"d"}\n')
        while not on.server.ready("d"):
            await trio.sleep(0.01)
        await staying.send_all(b'{"type":"pong","nonce":0}\n')  # unasked
        await trio.sleep(0.05)
        assert on.server.ready("d")
        taken = await on.server.take_all(["d"], 1.0)
        session = taken["d"]
        assert not isinstance(session, str)

        async def answer() -> None:
            data = b""
            while b"ping" not in data:
                data += await staying.receive_some(65536)
            nonce = json.loads(data.split(b"\n")[-2])["nonce"]
            await staying.send_all(json.dumps({"type": "pong", "nonce": nonce}).encode() + b"\n")

        on.nursery.start_soon(answer)
        await ping(session.connection, 5, 2.0)
        await staying.aclose()


async def test_a_missing_tcp_bot_is_a_startup_failure(tmp_path: Path) -> None:
    # A game takes its TCP seats first, at once: c's bridge has the startup clock to
    # log in and start its bot, and the stdio bots to start in the sandbox (the league
    # default), with both cores busy; each game waits that long for d.
    # The organiser plays on regardless (--keep-going): d's two games are recorded.
    config = dataclasses.replace(
        write_league(tmp_path, tcp=True, startup_ms=2000, extra=SOON), start_failures=0
    )
    with trio.fail_after(60):
        await serve_with(config, bridges(("c", TOKEN_C, RANDOM)))
    kinds = [(f["kind"], f["detail"]) for f in faults(config)]
    assert len(kinds) == 2
    assert all(k == "startup_failure" and "not connected" in d for k, d in kinds)


async def test_a_bridge_started_after_the_startup_clock_is_waited_for(tmp_path: Path) -> None:
    # A person starts `referee connect` by hand, well after the league's startup_ms:
    # a bot that has never logged in is waited for until server.connect_ms (120 s by
    # default) from the server's start, so its games are played, with no fault.
    config = write_league(tmp_path, tcp=True, startup_ms=3000)

    async def late(host: str, port: int, nursery: trio.Nursery) -> None:
        await trio.sleep(4.5)  # the startup clock is over
        await bridges(("c", TOKEN_C, RANDOM), ("d", TOKEN_D, GREEDY))(host, port, nursery)

    with trio.fail_after(90):
        await serve_with(config, late)
    assert len(games(config)) == 2 and faults(config) == []


async def test_a_tcp_bot_that_never_logs_in_stops_the_league_with_nothing_recorded(
    tmp_path: Path,
) -> None:
    # By default d failing to log in to each of its first two games (all it has) is a
    # league that cannot be played: it stops, naming d, and records neither game.
    config = write_league(tmp_path, tcp=True, startup_ms=2000, extra=SOON)
    with (
        trio.fail_after(60),
        pytest.RaisesGroup(
            pytest.RaisesExc(CannotPlay, match=r"^d failed to start in each of its first 2 games"),
            flatten_subgroups=True,
        ),
    ):
        await serve_with(config, bridges(("c", TOKEN_C, RANDOM)))
    assert faults(config) == []
    assert list((config.out / "logs").iterdir()) == []


async def test_a_disconnect_mid_game_is_a_crash_and_the_bridge_reconnects(tmp_path: Path) -> None:
    config = write_league(tmp_path, tcp=True)
    with trio.fail_after(60):
        await serve_with(config, bridges(("c", TOKEN_C, RANDOM), ("d", TOKEN_D, CRASH)))
    found = faults(config)
    # d crashes in each of its two games: the second one came through a reconnection.
    assert [f["kind"] for f in found] == ["crash", "crash"]
    assert all("disconnected" in f["detail"] for f in found)


# ---------------------------------------------------------------- junk


IDLE = 500


async def test_junk_connections_change_nothing(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "t").mkdir()
    stdio = write_league(tmp_path / "s", tcp=False)
    await run_league(stdio, jobs=1, resume=False, console=Console(quiet=True), quiet=True)
    tcp = write_league(
        tmp_path / "t",
        tcp=True,
        # Room for all of them: the referee then holds over a thousand sockets, and the
        # stdio bots start after the junk is in (their keepers get descriptors above 1023).
        extra=f"[server]\nmax_handshakes = {IDLE + 50}\nmax_handshakes_per_address = {IDLE + 50}"
        "\nhandshake_ms = 3000",
    )
    held: list[trio.SocketStream] = []
    sent_before_close: list[int] = []

    async def junk(host: str, port: int, nursery: trio.Nursery) -> None:
        # The junk comes first: the games wait for the tcp bots, which come last.
        async def random_bytes() -> None:
            async with await trio.open_tcp_stream(host, port) as stream:
                await stream.send_all(os.urandom(4096))
                await read_all(stream)

        async def drip() -> None:
            async with await trio.open_tcp_stream(host, port) as stream:
                try:
                    for _ in range(60):  # at most a minute: the handshake clock ends it first
                        await stream.send_all(b"{")
                        await trio.sleep(1)
                except trio.BrokenResourceError:
                    pass

        async def huge_line() -> None:
            chunk = b"x" * (1 << 20)
            sent = 0
            async with await trio.open_tcp_stream(host, port) as stream:
                try:
                    for _ in range(100):  # 100 MB, no newline
                        await stream.send_all(chunk)
                        sent += len(chunk)
                except (trio.BrokenResourceError, OSError):
                    pass
            sent_before_close.append(sent)

        for _ in range(IDLE):
            held.append(await trio.open_tcp_stream(host, port))
        nursery.start_soon(random_bytes)
        nursery.start_soon(drip)
        nursery.start_soon(huge_line)
        await bridges(("c", TOKEN_C, RANDOM), ("d", TOKEN_D, GREEDY))(host, port, nursery)

    with trio.fail_after(90):
        await serve_with(tcp, junk)
    for stream in held:
        await stream.aclose()
    assert games(tcp) == games(stdio)
    assert faults(tcp) == []
    # The server stopped reading the huge line long before its end.
    assert sent_before_close and sent_before_close[0] < 100 << 20


# ---------------------------------------------------------------- command line


def test_config_needs_one_token_source_and_never_shows_it(tmp_path: Path) -> None:
    from referee.league.config import ConfigError

    base = (
        "[league]\nduplicate = false\n"  # a duplicate league with a tcp bot is refused
        '[[bot]]\nname = "a"\ncommand = "true"\n[[bot]]\nname = "c"\ntransport = "tcp"\n'
    )
    path = tmp_path / "l.toml"
    secret = "sekrit-Zx81mQ0bLr4uVt7hKd2wPa9e"  # 30 characters: 180 bits
    for extra, words in (
        ("", "exactly one"),
        (f'token = "{secret}"\ntoken_env = "Y"\n', "exactly one"),
        ('token_env = "TEST_SERVER_NO_SUCH_VAR"\n', "not set"),
        ('token_file = "missing"\n', "cannot read"),
        (f'token = "{secret}"\ncommand = "x"\n', "not used"),
        ('token = "sekrit-123"\n', "bits"),
    ):
        path.write_text(base + extra)
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert words in str(info.value)
        assert "sekrit" not in str(info.value)
    path.write_text(base + f'token = "{secret}"\n')
    config = load_config(path)
    assert config.bots[1].tcp and "sekrit" not in repr(config.bots[1])


def test_connect_reports_a_bad_address_and_a_missing_token_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["connect", "nowhere", "--name", "c", "--token-file", "x"])
    assert result.exit_code == 2 and "HOST:PORT" in result.output
    result = CliRunner().invoke(
        main,
        ["connect", "127.0.0.1:1", "--name", "c", "--token-file", str(tmp_path / "none"), "true"],
    )
    assert result.exit_code == 2 and "cannot read" in result.output
    (tmp_path / "c.token").write_text(TOKEN_C)
    token = str(tmp_path / "c.token")
    args = ["connect", "127.0.0.1:1", "--name", "c", "--token-file", token]
    result = CliRunner().invoke(main, [*args, "--", "no-such-bot-program", "--fast"])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "no-such-bot-program: no such program" in result.output


def test_connect_to_a_port_nobody_listens_on_names_the_reason(tmp_path: Path) -> None:
    # A port that was free a moment ago: nothing listens on it, so the kernel refuses.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "c.token").write_text(TOKEN_C)
    referee = str(Path(sys.executable).parent / "referee")
    args = [referee, "connect", f"127.0.0.1:{port}", "--name", "c"]
    args += ["--token-file", str(tmp_path / "c.token"), "--no-reconnect", "--", *RANDOM]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    # Never connected: a wrong address or no server, not a dropped line (exit 2, not 1).
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"referee connect: cannot connect to 127.0.0.1:{port}: Connection refused\n"
    )


async def test_the_bridge_stops_when_its_bot_cannot_start(tmp_path: Path) -> None:
    # The program passed the command line's check, then went away before the login.
    async with listening(tmp_path, "") as on:
        outcome = await run_bridge(
            "127.0.0.1", on.port, "c", TOKEN_C, [str(tmp_path / "gone")], retry_delay_s=0.01
        )
    assert outcome.kind == "failed" and "cannot start" in outcome.detail, outcome


@dataclasses.dataclass
class Served:
    """A `referee serve` process: where it listens, then how it ended."""

    host: str
    port: int
    returncode: int | None = None
    stderr: str = ""


@contextlib.contextmanager
def serve_until_interrupted(config: LeagueConfig, *options: str) -> Iterator[Served]:
    """`referee serve` of `config` with `options`, in a process of its own, until the
    block ends: then Ctrl-C (SIGINT), and its status and stderr."""
    referee = str(Path(sys.executable).parent / "referee")
    serve = subprocess.Popen(
        [referee, "serve", str(config.path), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        assert first.startswith("listening on "), first
        host, port = first.split()[-1].rsplit(":", 1)
        served = Served(host, int(port))
        yield served
        serve.send_signal(signal.SIGINT)
        _, served.stderr = serve.communicate(timeout=30)
        served.returncode = serve.returncode
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.communicate()


def test_serve_interrupted_prints_the_command_that_resumes_it(tmp_path: Path) -> None:
    # Nobody connects: the first game waits for its tcp seats until Ctrl-C.
    config = write_league(tmp_path, tcp=True, startup_ms=60_000)
    options = ["--port", "0", "-j", "1", "--host", "127.0.0.1", "-q"]
    with serve_until_interrupted(config, *options) as served:
        assert served.host == "127.0.0.1"
    err = served.stderr
    assert served.returncode == 130, err
    printed = err.rstrip().rsplit("Resume with: ", 1)[1]
    assert shlex.split(printed) == [
        *("referee", "serve", str(config.path), "--out", str(config.out), "--resume"),
        *("--host", "127.0.0.1", "--port", "0", "--jobs", "1", "--quiet"),
    ]


def test_serve_and_connect_from_the_command_line(tmp_path: Path) -> None:
    config = write_league(tmp_path, tcp=True)
    (tmp_path / "c.token").write_text(TOKEN_C)
    referee = [sys.executable, "-m", "referee.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    serve = subprocess.Popen(
        [*referee, "serve", str(config.path), "--port", "0", "--report-every", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    bridges: list[subprocess.Popen[str]] = []
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        assert first.startswith("listening on 127.0.0.1:"), first
        address = first.split()[-1]
        assert serve.stdout.readline() == (
            "tcp bots c, d: each has 120 s from now to log in (server.connect_ms); after "
            "that, one away between games is waited for its startup_ms\n"
        )
        for name, token_file, argv in (
            ("c", tmp_path / "c.token", RANDOM),
            ("d", tmp_path / "d.token", GREEDY),
        ):
            options = ["--name", name, "--token-file", str(token_file)]
            bridges.append(
                subprocess.Popen(
                    [*referee, "connect", address, *options, "--", *argv],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=env,
                    text=True,
                )
            )
        out, err = serve.communicate(timeout=60)
        said = [b.communicate(timeout=30)[0] for b in bridges]
    finally:
        for proc in (serve, *bridges):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert serve.returncode == 0, err
    assert all(b.returncode == 0 for b in bridges), said
    assert "standings written" in out
    # Not a terminal: a line per game and, as asked, the standings after each.
    lines = out.splitlines()
    for n in (1, 2):
        assert any(line.startswith(f"Finished game {n} of 2 (") for line in lines), out
        assert f"tcp-test: after {n} games" in [line.strip() for line in lines]  # centred
    for text in (out, err, *said):
        assert TOKEN_C not in text and TOKEN_D not in text
    assert len(games(config)) == 2 and faults(config) == []


async def test_a_tcp_bot_gets_its_own_clocks_in_its_hello(tmp_path: Path) -> None:
    async with listening(tmp_path, "") as on:
        odds = TimeControl(startup_ms=on.server.config.time.startup_ms, move_ms=4321)
        bots = tuple(
            dataclasses.replace(b, time=odds) if b.name == "c" else b for b in on.server.config.bots
        )
        on.server.config = dataclasses.replace(on.server.config, bots=bots)
        for name, token, move_ms in (("c", TOKEN_C, 4321), ("d", TOKEN_D, None)):
            async with await login(on.port, name, token) as stream:
                hello = await first_line(stream)
            assert hello["type"] == "hello"
            assert hello["time"]["move_ms"] == (move_ms or on.server.config.time.move_ms)


async def test_a_tcp_bots_hello_states_the_servers_line_limit(tmp_path: Path) -> None:
    # spec/PROTOCOL.md: hello's max_line is the limit the referee holds the bot to; a
    # tcp bot is held to [server] max_line.
    async with (
        listening(tmp_path, "[server]\nmax_line = 65536\n") as on,
        await login(on.port, "c", TOKEN_C) as stream,
    ):
        hello = await first_line(stream)
    assert hello["type"] == "hello"
    assert hello["max_line"] == 65536


async def login_resuming(
    port: int, name: str, token: str, game: str, received: int
) -> trio.SocketStream:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    resume = {"game": game, "received": received}
    line = {"type": "login", "name": name, "token": token, "protocol": 1, "resume": resume}
    await stream.send_all(json.dumps(line).encode() + b"\n")
    return stream


async def test_a_resume_reaches_only_its_own_bots_game_and_a_wrong_token_learns_nothing(
    tmp_path: Path,
) -> None:
    # c plays game g7 (its session holds the game's handler); a hostile peer tries to
    # take the seat with a resume: a wrong token, c's token under d's name, c's token for
    # another game. Only c's own token naming g7 reaches the game.
    async with listening(tmp_path, "") as on:
        first = await login(on.port, "c", TOKEN_C)
        assert (await first_line(first))["type"] == "hello"
        await first.send_all(b'{"type":"ready","name":"c"}\n')
        await on.logged_in.wait()
        session = on.server.slots["c"].connected
        assert session is not None
        calls: list[int] = []

        async def handler(conn: Any, received: int) -> int | None:
            calls.append(received)
            conn.send(m.Resumed(game="g7", received=3))
            conn.kick()
            return 3

        session.hold("g7", handler)
        async with await login(on.port, "c", TOKEN_D) as plain:
            wrong = await read_bytes(plain)
        async with await login_resuming(on.port, "c", TOKEN_D, "g7", 0) as stream:
            assert await read_bytes(stream) == wrong  # the same bytes, resume or not
        async with await login_resuming(on.port, "d", TOKEN_C, "g7", 0) as stream:
            said = [json.loads(line) for line in (await read_bytes(stream)).splitlines()]
            assert said[0]["code"] == "login"  # c's token is not d's
        async with await login_resuming(on.port, "c", TOKEN_C, "g8", 0) as stream:
            said = [json.loads(line) for line in (await read_bytes(stream)).splitlines()]
            assert said[0]["code"] == "resume" and said[-1] == {
                "type": "bye",
                "reason": "resume refused",
            }
        assert calls == [] and session.connection.name == "c"  # untouched so far
        back = await login_resuming(on.port, "c", TOKEN_C, "g7", 12)
        assert await first_line(back) == {"type": "resumed", "game": "g7", "received": 3}
        assert calls == [12]
        assert on.server.slots["c"].connected is session  # the same seat, on a new line
        await back.aclose()
        await first.aclose()
