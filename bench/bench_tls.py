"""What TLS costs `referee serve`: per login and per decision, beside plain TCP in
the same run, on loopback (127.0.0.1) only.

    .venv/bin/python bench/bench_tls.py [--repeats 5] [--logins 40] [--deals 3]

Two measures, each run `--repeats` times for plain TCP and for TLS (a self-signed
certificate, as `serve --tls self-signed` makes, pinned by the client), in turn,
so that the machine's load falls on both alike:

- **logins**: a `BotServer` of `--logins` tcp bots runs in this process; a client
  in a process of its own (this script with `--client`) logs each bot in once, one
  after the other, as the bridge does: connect, (TLS handshake and pin check,)
  `login`, read `hello`, send `ready`; the connections stay open to the end. The
  client's wall time per login (connect to `hello`), and this process's CPU per
  login (`time.process_time` over the run, divided by the logins).
- **decisions**: a league served by `serve_league` in this process, two tcp bots
  (`bench/fast_bot.py`, legal move 0) joined through `referee connect` in
  processes of their own, `--deals` deals of the standard rules (double-12, 13
  rounds). This process's CPU and wall time over the whole league divided by the
  decisions the ledger recorded: the referee's side of a served league, logs and
  ledger included; the bots' and the bridges' CPU is theirs.

The deal key is pinned: every league plays the same games. A warm-up run of each
comes first, not counted. Each line gives min, median and max over the repeats;
the last lines, the ratio of the TLS median to the plain one.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import trio
from _machine import cpu_model
from rich.console import Console

from referee.bots.tokens import new_token
from referee.league.config import parse_config
from referee.net.server import BotServer, serve_league
from referee.net.tls import ServerTls, client_context, pin_mismatch, self_signed
from referee.net.tlsstream import TlsStream

HOST = "127.0.0.1"  # loopback only, whatever else this machine has
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("plain", "tls")
TOKEN = new_token()  # every bot's, in these benchmarks
KEY = "00112233445566778899aabbccddeeff"


# ---------------------------------------------------------------- the login client


async def client(port: int, logins: int, pin: str, token: str) -> list[float]:
    """Log bots b0, b1, ... in one after the other with `token` (over TLS when `pin` is
    not "-"); each login's seconds from connect to `hello`."""
    context = client_context(pin=pin) if pin != "-" else None
    held: list[trio.abc.Stream] = []
    took: list[float] = []
    for i in range(logins):
        started = time.perf_counter()
        wire: trio.abc.Stream = await trio.open_tcp_stream(HOST, port)
        if context is not None:
            secured = TlsStream(wire, context, server_hostname=HOST)  # as the bridge does
            await secured.do_handshake()
            assert pin_mismatch(secured.getpeercert(binary_form=True), pin) is None
            wire = secured
        line = {"type": "login", "name": f"b{i}", "token": token, "protocol": 1}
        await wire.send_all(json.dumps(line).encode() + b"\n")
        data = b""
        while b"\n" not in data:
            chunk = await wire.receive_some(65536)
            assert chunk, "closed before hello"
            data += chunk
        assert json.loads(data.split(b"\n", 1)[0])["type"] == "hello"
        took.append(time.perf_counter() - started)
        await wire.send_all(json.dumps({"type": "ready", "name": f"b{i}"}).encode() + b"\n")
        held.append(wire)
    for wire in held:
        await wire.aclose()
    return took


# ---------------------------------------------------------------- the server's side


def login_league(folder: Path, bots: int) -> Any:
    data = {
        "league": {"name": "bench-tls-logins", "duplicate": False},
        "bot": [{"name": f"b{i}", "transport": "tcp", "token": TOKEN} for i in range(bots)],
    }
    return parse_config(data, folder / "logins.toml", check_programs=False)


async def logins_run(mode: str, tls: ServerTls, folder: Path, n: int) -> dict[str, float]:
    """One run of `n` logins: the client's median wall ms per login, this process's
    CPU ms per login."""
    server = BotServer(login_league(folder, n), tls=tls.context if mode == "tls" else None)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(server.serve, HOST, 0)
        port = listeners[0].socket.getsockname()[1]
        pin = tls.fingerprint if mode == "tls" else "-"
        command = [sys.executable, __file__, "--client", str(port), str(n), pin]
        cpu = time.process_time()
        # The token on stdin: a command line is for everyone to read.
        done = await trio.run_process(command, stdin=TOKEN.encode(), capture_stdout=True)
        cpu = time.process_time() - cpu
        nursery.cancel_scope.cancel()
    took: list[float] = json.loads(done.stdout)
    return {"wall": statistics.median(took) * 1000, "cpu": cpu / n * 1000}


def decision_league(folder: Path, deals: int) -> Any:
    data = {
        "league": {
            "name": "bench-tls-league",
            "table": 2,
            "deals": deals,
            "duplicate": False,
            "deal_key": KEY,  # the same games in every run
            "bot_seed_key": KEY,
        },
        "rules": {"preset": "standard"},
        "time": {"move_ms": 5000, "bank_ms": 60000},
        "bot": [{"name": n, "transport": "tcp", "token": TOKEN} for n in ("c", "d")],
    }
    return parse_config(data, folder / "league.toml", out=folder / "out", check_programs=False)


async def league_run(mode: str, tls: ServerTls, folder: Path, deals: int) -> dict[str, float]:
    """One served league: this process's CPU ms and wall ms per decision."""
    config = decision_league(folder, deals)
    token_file = folder / "bot.token"
    token_file.write_text(TOKEN)
    pin = ["--pin", tls.fingerprint] if mode == "tls" else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result: dict[str, Any] = {}

    async with trio.open_nursery() as nursery:

        async def league(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
            cpu, wall = time.process_time(), time.perf_counter()
            standings = await serve_league(
                config,
                jobs=1,
                console=Console(quiet=True),
                quiet=True,
                task_status=task_status,
                tls=tls if mode == "tls" else None,
            )
            result.update(cpu=time.process_time() - cpu, wall=time.perf_counter() - wall)
            result["games"] = standings.games

        host, port = await nursery.start(league)
        for name in ("c", "d"):
            command = [sys.executable, "-m", "referee.cli", "connect", f"{host}:{port}"]
            command += ["--name", name, "--token-file", str(token_file), *pin, "--"]
            command += [sys.executable, str(HERE / "fast_bot.py")]
            nursery.start_soon(
                partial(
                    trio.run_process,
                    command,
                    env=env,
                    capture_stdout=True,
                    capture_stderr=True,  # the bots' counts of turns
                    check=True,
                )
            )
    decisions = decisions_of(config.out)
    return {
        "cpu": result["cpu"] / decisions * 1000,
        "wall": result["wall"] / decisions * 1000,
        "decisions": float(decisions),
    }


def decisions_of(out: Path) -> int:
    from referee.league.ledger import Ledger

    ledger = Ledger(out / "league.db")
    try:
        return sum(r.decisions for r in ledger.records())
    finally:
        ledger.close()


# ---------------------------------------------------------------- the report


def spread(values: list[float]) -> str:
    return f"{min(values):9.3f} {statistics.median(values):9.3f} {max(values):9.3f}"


async def bench(args: argparse.Namespace) -> None:
    logins: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    served: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as folder:
        tls = self_signed(Path(folder) / "tls", HOST)
        for k in range(-1, args.repeats):  # -1: a warm-up of each, not counted
            for mode in MODES:
                run = Path(folder) / f"{mode}{k}"
                run.mkdir()
                login = await logins_run(mode, tls, run, args.logins)
                league = await league_run(mode, tls, run, args.deals if k >= 0 else 1)
                if k >= 0:
                    logins[mode].append(login)
                    served[mode].append(league)
    print(f"{'':34} {'min':>9} {'median':>9} {'max':>9}")
    for mode in MODES:
        print(f"{mode}:")
        print(f"  {'login, client wall ms':32} {spread([r['wall'] for r in logins[mode]])}")
        print(f"  {'login, server CPU ms':32} {spread([r['cpu'] for r in logins[mode]])}")
        print(f"  {'decision, server CPU ms':32} {spread([r['cpu'] for r in served[mode]])}")
        print(f"  {'decision, server wall ms':32} {spread([r['wall'] for r in served[mode]])}")
        counts = sorted({int(r["decisions"]) for r in served[mode]})
        print(f"  decisions a league: {', '.join(map(str, counts))}")
    print("TLS / plain, medians:")
    for label, runs, key in (
        ("login, client wall", logins, "wall"),
        ("login, server CPU", logins, "cpu"),
        ("decision, server CPU", served, "cpu"),
        ("decision, server wall", served, "wall"),
    ):
        tls_median = statistics.median(r[key] for r in runs["tls"])
        plain_median = statistics.median(r[key] for r in runs["plain"])
        print(f"  {label:32} {tls_median / plain_median:9.3f}")


def main() -> None:
    if sys.argv[1:2] == ["--client"]:
        port, logins, pin = sys.argv[2:5]
        token = sys.stdin.read().strip()
        print(json.dumps(trio.run(client, int(port), int(logins), pin, token)))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--logins", type=int, default=40, help="logins a run (default 40)")
    parser.add_argument("--deals", type=int, default=3, help="deals a league (default 3)")
    args = parser.parse_args()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; {ssl.OPENSSL_VERSION}")
    sys.stdout.flush()
    subprocess.run(["uptime"], check=False)
    print(
        f"{args.repeats} runs of each: {args.logins} logins, a league of {args.deals} deals "
        "(standard rules, 2 seats)"
    )
    trio.run(bench, args)
    sys.stdout.flush()
    subprocess.run(["uptime"], check=False)


if __name__ == "__main__":
    main()
