"""A served league under a flood of strangers' connections, all from 127.0.0.1.

Five hundred strangers keep a connection open for the whole league (when the
server closes one, its owner opens another: 0.3 s later when told `busy`, at once
when the handshake clock cut it), and a slowloris trickles a login line one
byte at a time, again and again. The TCP bots come last, from the same address,
through the bridge; bot d crashes in each game, so its bridge logs in again in the
middle of the league. With the server's default limits the league must give
exactly the games, and so the standings, of a quiet run, without a `startup_failure`.
"""

from __future__ import annotations

import json
import resource
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
from rich.console import Console

from referee.league.run import run_league

from .test_server import (
    CRASH,
    RANDOM,
    TOKEN_C,
    TOKEN_D,
    bridges,
    faults,
    games,
    read_all,
    serve_with,
    write_league,
)

STRANGERS = 500
# The strangers' connections live up to handshake_ms (5000 by default) at a time: before
# the lobby, the slots they held were not free again before the bots' startup clock ran out.
STARTUP_MS = 4000


@dataclass
class Flood:
    """What the strangers saw."""

    all_in: trio.Event  # every stranger has had a first connection
    started: int = 0  # strangers that have had a first connection
    opened: int = 0
    busy: int = 0  # pushed out of the lobby by newer connections
    cut: int = 0  # closed by the handshake clock (or for a bad first line)
    refused: int = 0  # no connection at all (the league is over: nobody listens)


@pytest.fixture
def many_files() -> Iterator[None]:
    """The soft limit on open files raised to the hard one: the strangers' sockets and
    the server's are all in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def stranger(host: str, port: int, flood: Flood, trickle: bytes = b"") -> None:
    """Hold a connection to the server for as long as this task runs (see the module)."""
    first = True
    while True:
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError:
            flood.refused += 1
            await trio.sleep(0.1)
            continue
        async with stream:
            flood.opened += 1
            if first:
                first = False
                flood.started += 1
                if flood.started == STRANGERS + 1:  # the slowloris too
                    flood.all_in.set()
            async with trio.open_nursery() as nursery:
                if trickle:
                    nursery.start_soon(drip, stream, trickle)
                lines = await read_all(stream)
                nursery.cancel_scope.cancel()
        if lines and lines[0].get("code") == "busy":
            flood.busy += 1
            await trio.sleep(0.3)
        else:
            flood.cut += 1


async def drip(stream: trio.SocketStream, data: bytes) -> None:
    """Send `data` one byte every 100 ms, until the server closes the connection."""
    for byte in data:
        try:
            await stream.send_all(bytes([byte]))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        await trio.sleep(0.1)


def standings(out: Path) -> Any:
    """standings.json without the bots' reply times and decision time (`clocks`), which
    no two runs share, without the record of how each bot ran and connected (c and d
    are stdio bots in the quiet run, which serves nobody), and without the commitment,
    which names each run's own terms and time."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not k.startswith("latency")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    written = json.loads((out / "standings.json").read_text())
    written.pop("sandbox")
    written.pop("transport", None)
    written.pop("commitment")
    written.pop("clocks")
    return strip(written)


# The bots' 4 s startup clock, shorter than the strangers' 5 s handshake clock, is what
# the test is about (the lobby lets them in first), so other tests' load must not eat it.
@pytest.mark.alone
async def test_strangers_holding_connections_change_no_game(
    tmp_path: Path, many_files: None
) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "t").mkdir()
    quiet = write_league(tmp_path / "s", tcp=False, startup_ms=STARTUP_MS, d_command=CRASH)
    await run_league(quiet, jobs=1, resume=False, console=Console(quiet=True), quiet=True)
    served = write_league(tmp_path / "t", tcp=True, startup_ms=STARTUP_MS)
    flood = Flood(all_in=trio.Event())
    login = json.dumps({"type": "login", "name": "c", "token": "not-the-token", "protocol": 1})

    async def clients(host: str, port: int, nursery: trio.Nursery) -> None:
        for _ in range(STRANGERS):
            nursery.start_soon(stranger, host, port, flood)
        nursery.start_soon(stranger, host, port, flood, login.encode())
        await flood.all_in.wait()  # the bots come last
        await bridges(("c", TOKEN_C, RANDOM), ("d", TOKEN_D, CRASH))(host, port, nursery)

    with trio.fail_after(120):
        await serve_with(served, clients)
    assert [f["kind"] for f in faults(served)] == ["crash", "crash"]  # d, in both games
    assert games(served) == games(quiet)
    assert standings(served.out) == standings(quiet.out)
    # The strangers were there all along: most of them pushed out again and again.
    assert flood.opened > STRANGERS and flood.busy > STRANGERS // 2
