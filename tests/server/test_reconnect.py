"""A tcp bot whose connection drops mid-game logs in again and resumes it: the
bridge (`referee connect`, a real process, with its bot) keeps the bot, the server
sends what it missed, and the game ends with no fault; the bot sees every line of
the game exactly once, as in the same game played without a cut. A bot that does not
come back within `reconnect_ms` has the crash it had before the window existed.

The cut is made by a TCP proxy between the bridge and the server, in the test: it
drops a turn request on its way to the bot and closes both sides, as a dead line
would, while the bridge and its bot run on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import trio
from rich.console import Console

from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.net.server import serve_league

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
TOKEN = "N6Q8_O8NQ6iOOirKmFvJmf6eTgV-0owmNEdhRMplc2w"
KEY = "00112233445566778899aabbccddeeff"


def league(tmp: Path, reconnect_ms: int | None = None) -> Path:
    """a and b started here, c over tcp; one game of seven rounds on pinned deals."""
    server = f"[server]\nreconnect_ms = {reconnect_ms}\n" if reconnect_ms is not None else ""
    random_bot = json.dumps([PY, str(ROOT / "sample_bots" / "random_bot.py")])
    greedy_bot = json.dumps([PY, str(ROOT / "sample_bots" / "greedy_bot.py")])
    text = f"""
[league]
name = "cut"
table = 3
deals = 1
duplicate = false
seed = 3
out = "out"
deal_key = "{KEY}"
bot_seed_key = "{KEY}"
[rules]
max_pip = 6
[time]
move_ms = 3000
{server}
[[bot]]
name = "a"
command = {random_bot}
[[bot]]
name = "b"
command = {greedy_bot}
[[bot]]
name = "c"
transport = "tcp"
token_file = "c.token"
"""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "c.token").write_text(TOKEN + "\n")
    path = tmp / "league.toml"
    path.write_text(text)
    return path


class Proxy:
    """Forwards connections to the server; the first one is cut (both sides closed)
    in place of passing on the server's `cut_at`-th turn request, which is dropped."""

    def __init__(self, port: int, cut_at: int | None) -> None:
        self.port = port
        self.cut_at = cut_at
        self.turns = 0
        self.cut = trio.Event()
        self.connections = 0

    async def handle(self, client: trio.SocketStream) -> None:
        self.connections += 1
        server = await trio.open_tcp_stream("127.0.0.1", self.port)
        async with trio.open_nursery() as nursery:

            async def up() -> None:
                while data := await _read(client):
                    await server.send_all(data)
                nursery.cancel_scope.cancel()

            async def down() -> None:
                pending = b""
                while data := await _read(server):
                    pending += data
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if b'"type":"turn"' in line and not self.cut.is_set():
                            self.turns += 1
                            if self.turns == self.cut_at:
                                self.cut.set()  # the request is lost with the line
                                nursery.cancel_scope.cancel()
                                return
                        await client.send_all(line + b"\n")
                nursery.cancel_scope.cancel()

            nursery.start_soon(up)
            nursery.start_soon(down)
        with trio.CancelScope(shield=True):
            await client.aclose()
            await server.aclose()


async def _read(stream: trio.SocketStream) -> bytes:
    try:
        return bytes(await stream.receive_some(65536))
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return b""


async def play(
    tmp: Path, *, cut_at: int | None, kill_bridge: bool = False, reconnect_ms: int | None = None
) -> tuple[list[dict[str, Any]], bytes, Proxy]:
    """The league played with c's bridge behind a proxy: its faults, what c's bot
    received of the game (game_start to game_end), and the proxy."""
    config = load_config(league(tmp, reconnect_ms))
    seen = tmp / "seen.jsonl"
    async with trio.open_nursery() as nursery:
        served = await nursery.start(
            lambda task_status: serve_league(
                config, jobs=1, console=Console(quiet=True), quiet=True, task_status=task_status
            )
        )
        proxy = Proxy(served[1], cut_at)
        listeners = await nursery.start(partial(trio.serve_tcp, proxy.handle, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        bridge = await trio.lowlevel.open_process(
            [
                *(PY, "-m", "referee", "connect", f"127.0.0.1:{port}", "--name", "c"),
                *("--token-file", str(tmp / "c.token"), "--"),
                *(PY, str(ROOT / "tests" / "bots" / "transcript.py"), str(seen)),
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            if kill_bridge:
                await proxy.cut.wait()
                bridge.send_signal(signal.SIGKILL)  # its bot ends with its input
            with trio.fail_after(120):
                await bridge.wait()  # "the league is over" (or killed)
                while not (config.out / "standings.json").exists():
                    await trio.sleep(0.05)
        finally:
            if bridge.returncode is None:
                bridge.kill()
        nursery.cancel_scope.cancel()
    ledger = Ledger(config.out / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    assert len(records) == 1
    text = seen.read_bytes() if seen.exists() else b""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if b'"type":"game_start"' in line]
    ends = [i for i, line in enumerate(lines) if b'"type":"game_end"' in line]
    game = b"".join(lines[starts[0] : ends[0] + 1]) if starts and ends else b""
    return records[0].faults, game, proxy


async def test_a_connection_cut_mid_game_is_resumed_and_the_bot_sees_each_line_once(
    tmp_path: Path,
) -> None:
    faults, straight, proxy = await play(tmp_path / "straight", cut_at=None)
    assert faults == [] and proxy.connections == 1
    assert straight.count(b'"type":"turn"') > 8
    faults, resumed, proxy = await play(tmp_path / "cut", cut_at=5)
    assert proxy.cut.is_set() and proxy.connections == 2  # cut once, logged in again
    assert faults == []
    # The same game, and the bot had each of its lines once, the lost request too (the
    # receipt names each run's own league commitment and log digest).
    assert without_receipt(resumed) == without_receipt(straight)


def without_receipt(game: bytes) -> list[bytes]:
    *lines, end = game.splitlines()
    ending = json.loads(end)
    assert ending["type"] == "game_end" and ending.pop("receipt")
    return [*lines, json.dumps(ending).encode()]


async def test_a_bot_not_back_within_reconnect_ms_has_a_crash(tmp_path: Path) -> None:
    faults, _, proxy = await play(tmp_path, cut_at=5, kill_bridge=True, reconnect_ms=1000)
    assert proxy.cut.is_set()
    assert [(f["seat"], f["kind"]) for f in faults] == [(2, "crash")]
    assert "disconnected, and not back within 1000 ms" in faults[0]["detail"]
