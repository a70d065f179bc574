"""The lobby of `referee serve`: connections that have not logged in yet.

Room for `max_handshakes` of them, `max_handshakes_per_address` from one
address; a newcomer always gets in and the oldest is pushed out (`busy`). First
the `Lobby` alone, then over real sockets on 127.0.0.1: who is pushed out, what
it is told, the handshake clock against a peer that trickles its login line, and
the bridge, which tries again after `busy`.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.league.config import ConfigError, load_config
from referee.net.bridge import run_bridge
from referee.net.server import Lobby, address_key

from .test_server import TOKEN_C, first_line, listening, login, read_all


def test_the_oldest_connection_of_a_full_share_is_pushed_out_not_the_newcomer() -> None:
    lobby = Lobby(size=4, per_address=2)
    a1 = lobby.enter("a:1", "a", 10)
    b1 = lobby.enter("b:1", "b", 10)
    a2 = lobby.enter("a:2", "a", 10)
    a3 = lobby.enter("a:3", "a", 10)  # a's share is full: its oldest goes, b's stays
    assert a1.pushed_out and "2 newer connections from a are waiting" in a1.pushed_out
    assert a1.scope.cancel_called
    assert not (b1.pushed_out or a2.pushed_out or a3.pushed_out)
    assert list(lobby.waiting) == [b1, a2, a3]
    assert list(lobby.by_address) == ["a", "b"] and list(lobby.by_address["a"]) == [a2, a3]


def test_a_full_lobby_pushes_out_its_oldest_connection_whatever_its_address() -> None:
    lobby = Lobby(size=3, per_address=2)
    places = [lobby.enter(f"{x}:1", x, 10) for x in "abc"]
    d = lobby.enter("d:1", "d", 10)
    assert [bool(p.pushed_out) for p in [*places, d]] == [True, False, False, False]
    assert "3 newer connections are waiting" in places[0].pushed_out
    assert lobby.pushed_out == 1 and len(lobby.waiting) == 3 and "a" not in lobby.by_address
    # A connection that logged in (or went away) leaves room: nobody is pushed out.
    lobby.leave(places[1])
    lobby.leave(places[1])  # twice: no harm
    e = lobby.enter("e:1", "e", 10)
    assert not any(p.pushed_out for p in (places[2], d, e)) and lobby.pushed_out == 1


def test_one_connection_per_address_keeps_the_newest() -> None:
    lobby = Lobby(size=10, per_address=1)
    old = lobby.enter("a:1", "a", 10)
    new = lobby.enter("a:2", "a", 10)
    assert old.pushed_out == "server busy: a newer connection from a is waiting to log in"
    assert not new.pushed_out and list(lobby.by_address["a"]) == [new]


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("::ffff:10.1.2.3", "10.1.2.3"),  # an IPv4 peer on a dual-stack socket
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:1:2:3", "2001:db8:1:2::/64"),  # same /64: one share
        ("fe80::1%eth0", "fe80::/64"),
        ("?", "?"),
    ],
)
def test_address_key(host: str, key: str) -> None:
    assert address_key(host) == key


def test_max_connections_names_what_replaced_it(tmp_path: Path) -> None:
    path = tmp_path / "l.toml"
    bots = '[[bot]]\nname = "a"\ncommand = "true"\n[[bot]]\nname = "b"\ncommand = "true"\n'
    path.write_text("[server]\nmax_connections = 64\n" + bots)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith("server.max_connections: replaced by")
    assert "max_handshakes" in message and "max_handshakes_per_address" in message
    path.write_text("[server]\nmax_handshakes = 0\n" + bots)
    with pytest.raises(ConfigError, match=r"server\.max_handshakes: 0 is too small"):
        load_config(path)
    path.write_text("[server]\nmax_handshakes = 5\nmax_handshakes_per_address = 2\n" + bots)
    limits = load_config(path).server
    assert (limits.max_handshakes, limits.max_handshakes_per_address) == (5, 2)


# ---------------------------------------------------------------- over sockets


def kinds(lines: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(x["type"], x.get("code") or x.get("reason") or "") for x in lines]


async def test_strangers_holding_the_lobby_are_pushed_out_and_the_bot_logs_in(
    tmp_path: Path,
) -> None:
    limits = "[server]\nmax_handshakes = 3\nmax_handshakes_per_address = 2"
    async with listening(tmp_path, limits) as on:
        held = [await trio.open_tcp_stream("127.0.0.1", on.port) for _ in range(2)]
        while len(on.server.lobby.waiting) < 2:
            await trio.sleep(0.01)

        # Everything comes from 127.0.0.1, like the strangers: the newcomer still gets in.
        bot = await login(on.port, "c", TOKEN_C)
        assert (await first_line(bot))["type"] == "hello"
        lines = await read_all(held[0])  # the oldest stranger: told why, and closed
        assert kinds(lines) == [("error", "busy"), ("bye", "busy")]
        assert "2 newer connections from 127.0.0.1 are waiting" in lines[0]["message"]
        # The bot left the lobby at its login: the other stranger still waits there.
        assert [p.peer for p in on.server.lobby.waiting] == [
            f"127.0.0.1:{held[1].socket.getsockname()[1]}"
        ]
        await bot.send_all(b'{"type":"ready","name":"c"}\n')
        await on.logged_in.wait()

        # Logged-in bots are not in the lobby: strangers never push them out.
        more = [await trio.open_tcp_stream("127.0.0.1", on.port) for _ in range(5)]
        while on.server.lobby.pushed_out < 1 + 4:  # held[0] first; then held[1] and 3 more
            await trio.sleep(0.01)
        assert len(on.server.lobby.waiting) == 2
        assert on.server.slots["c"].connected is not None
        assert on.server.slots["c"].connected.connection.finished is False
        for stream in (*held, *more, bot):
            await stream.aclose()


async def test_the_handshake_clock_runs_from_the_accept_to_the_end_of_login(
    tmp_path: Path,
) -> None:
    line = json.dumps({"type": "login", "name": "c", "token": TOKEN_C, "protocol": 1}).encode()
    async with listening(tmp_path, "[server]\nhandshake_ms = 600") as on:
        # Before connecting: the server may accept before this task runs again.
        start = trio.current_time()
        slow = await trio.open_tcp_stream("127.0.0.1", on.port)
        sent = 0

        async def trickle() -> None:  # one byte every 20 ms: the line would take 2 s
            nonlocal sent
            for byte in line:
                await slow.send_all(bytes([byte]))
                sent += 1
                await trio.sleep(0.02)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(trickle)
            lines = await read_all(slow)
            cut = trio.current_time() - start
            nursery.cancel_scope.cancel()
        await slow.aclose()
    assert 5 < sent < len(line)
    assert kinds(lines) == [("error", "login"), ("bye", "login refused")]
    assert lines[0]["message"] == "no login within 600 ms"
    assert 0.6 <= cut < 3.0
    assert not on.logged_in.is_set()


async def test_the_bridge_tries_again_after_busy(tmp_path: Path) -> None:
    # A server that says busy twice, then refuses the login: the bridge gives up only then,
    # and never starts its bot for a connection that did not get `hello`.
    answers = [
        {"type": "error", "code": "busy", "message": "server busy", "request": None},
        {"type": "error", "code": "busy", "message": "server busy", "request": None},
        {"type": "error", "code": "login", "message": "wrong token", "request": None},
    ]
    logins: list[bytes] = []

    async def server(stream: trio.SocketStream) -> None:
        async with stream:
            logins.append(await stream.receive_some(65536))
            answer = answers[min(len(logins), len(answers)) - 1]
            await stream.send_all(json.dumps(answer).encode() + b"\n")

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, server, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        with trio.fail_after(20):
            outcome = await run_bridge(
                "127.0.0.1",
                port,
                "c",
                TOKEN_C,
                [str(tmp_path / "never-started")],
                retry_delay_s=0.05,
            )
        nursery.cancel_scope.cancel()
    assert (outcome.kind, outcome.detail) == ("refused", "wrong token")
    assert len(logins) == 3 and all(b'"type":"login"' in x for x in logins)


async def test_a_login_line_is_short_so_strangers_cannot_fill_memory(tmp_path: Path) -> None:
    # A stranger's first line is held until its newline: it is cut at 4 KiB, not at
    # max_line (1 MiB); a logged-in bot has max_line again.
    async with listening(tmp_path, "[server]\nhandshake_ms = 5000") as on:
        async with await trio.open_tcp_stream("127.0.0.1", on.port) as stream:
            await stream.send_all(b'{"type":"login","name":"' + b"x" * 5000)
            lines = await read_all(stream)
        assert kinds(lines)[0] == ("error", "login")
        assert "first line longer than 4096 bytes" in lines[0]["message"]
        async with await login(on.port, "c", TOKEN_C) as bot:
            assert (await first_line(bot))["type"] == "hello"
            await bot.send_all(b'{"type":"ready","name":"c","author":"' + b"y" * 8000 + b'"}\n')
            await on.logged_in.wait()
            assert on.server.slots["c"].connected is not None
