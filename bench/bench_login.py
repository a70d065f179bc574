"""How fast one address can have tokens checked by `referee serve`: a brute-force
login client against the server, on loopback (127.0.0.1) only.

    .venv/bin/python bench/bench_login.py [--seconds 6] [--repeats 5] [--connections 8]

The server (`referee.net.server.BotServer`, one tcp bot) runs in this process; the
client runs in a process of its own (this script with `--client`), with
`--connections` connections at once (8, the lobby's share of one address), each
sending a `login` with a fresh random token, reading the answer to the end, and
starting again, for `--seconds` (and at most `--limit` logins). Three servers,
each fresh, one repeat of each in turn:

- `guarded`: as `serve` runs: back-off after 5 failures, 2 s before a refusal;
- `no back-off`: the same with the back-off turned off (`LoginGuard(backoff=False)`),
  the reference: what the guard takes away;
- `no back-off, no delay`: nor the 2 s wait (`refusal_delay_s=0`): the server's
  own speed at refusing, what a guesser would get with neither.

For each: wrong-login answers a second (tokens checked and found wrong: the
guesses that count), every answer a second (with the logins refused unchecked and
the connections pushed out of the lobby) and the organiser's log lines, as min,
median and max over the repeats.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import trio
from _machine import cpu_model

from referee.bots.tokens import new_token
from referee.league.config import parse_config
from referee.net.logins import LoginGuard
from referee.net.server import BotServer

HOST = "127.0.0.1"  # loopback only, whatever else this machine has
SERVERS = ("guarded", "no back-off", "no back-off, no delay")


# ---------------------------------------------------------------- the client


def kind(answer: bytes) -> str:
    """What the server's answer was: checked (a wrong token), unchecked (backed off),
    pushed (out of the lobby), or other."""
    try:
        first = json.loads(answer.split(b"\n", 1)[0])
    except ValueError:
        return "other"
    if first.get("code") == "login":
        return "checked"
    if first.get("code") == "busy":
        return "unchecked" if "too many failed logins" in first.get("message", "") else "pushed"
    return "other"


async def client(port: int, seconds: float, limit: int, connections: int) -> dict[str, Any]:
    """Guess at bot c's token from `connections` connections at once until `seconds`
    have passed or `limit` logins were sent; the answers by kind, and the time taken."""
    counts: Counter[str] = Counter()
    started = trio.current_time()
    deadline = started + seconds
    sent = 0

    async def guesser() -> None:
        nonlocal sent
        while trio.current_time() < deadline and sent < limit:
            sent += 1
            line = {"type": "login", "name": "c", "token": secrets.token_urlsafe(32)}
            try:
                stream = await trio.open_tcp_stream(HOST, port)
            except OSError:
                counts["no connection"] += 1
                continue
            answer = b""
            async with stream:
                try:
                    await stream.send_all(json.dumps({**line, "protocol": 1}).encode() + b"\n")
                    while chunk := await stream.receive_some(65536):
                        answer += chunk
                except (trio.BrokenResourceError, OSError):
                    pass
            counts[kind(answer)] += 1

    async with trio.open_nursery() as nursery:
        for _ in range(connections):
            nursery.start_soon(guesser)
    return {"counts": dict(counts), "seconds": trio.current_time() - started}


# ---------------------------------------------------------------- the server


class Lines(logging.Handler):
    """Counts the organiser's log lines about logins."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def league(folder: Path) -> Any:
    data = {
        "league": {"name": "bench-login", "duplicate": False},
        "bot": [
            {"name": "c", "transport": "tcp", "token": new_token()},
            {"name": "x", "command": "true"},
        ],
    }
    return parse_config(data, folder / "league.toml", check_programs=False)


async def one_run(
    which: str, folder: Path, args: argparse.Namespace, lines: Lines
) -> dict[str, Any]:
    guard = LoginGuard(backoff=which == "guarded")
    delay = {"no back-off, no delay": 0.0}.get(which)
    server = BotServer(
        league(folder), guard=guard, **({} if delay is None else {"refusal_delay_s": delay})
    )
    before = lines.count
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(server.serve, HOST, 0)
        port = listeners[0].socket.getsockname()[1]
        command = [sys.executable, __file__, "--client", str(port), str(args.seconds)]
        command += [str(args.limit), str(args.connections)]
        done = await trio.run_process(command, capture_stdout=True)
        nursery.cancel_scope.cancel()
    result: dict[str, Any] = json.loads(done.stdout)
    result["lines"] = lines.count - before  # the final summary is written as serve stops
    return result


def spread(values: list[float]) -> str:
    return f"{min(values):8.2f} {statistics.median(values):8.2f} {max(values):8.2f}"


async def bench(args: argparse.Namespace) -> None:
    lines = Lines()
    log = logging.getLogger("referee.logins")
    log.addHandler(lines)
    log.propagate = False  # counted, not printed
    logging.getLogger("referee.server").setLevel(logging.ERROR)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in SERVERS}
    with tempfile.TemporaryDirectory(prefix="bench-login-") as folder:
        for _ in range(args.repeats):
            for name in SERVERS:  # in turn, so that the machine's load falls on all alike
                runs[name].append(await one_run(name, Path(folder), args, lines))
    print(f"{'':24} {'min':>8} {'median':>8} {'max':>8}")
    for name in SERVERS:
        got = runs[name]
        checked = [r["counts"].get("checked", 0) / r["seconds"] for r in got]
        answers = [sum(r["counts"].values()) / r["seconds"] for r in got]
        print(f"{name}:")
        print(f"  {'wrong-login answers/s':22} {spread(checked)}")
        print(f"  {'all answers/s':22} {spread(answers)}")
        print(f"  {'log lines':22} {spread([float(r['lines']) for r in got])}")
        totals: Counter[str] = Counter()
        for r in got:
            totals.update(r["counts"])
        print(f"  answers in all: {dict(sorted(totals.items()))}")


def main() -> None:
    if sys.argv[1:2] == ["--client"]:
        port, seconds, limit, connections = sys.argv[2:6]
        result = trio.run(client, int(port), float(seconds), int(limit), int(connections))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="per run (default 6)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each server (default 5)")
    parser.add_argument("--connections", type=int, default=8, help="at once (default 8)")
    parser.add_argument("--limit", type=int, default=50_000, help="logins per run at most")
    args = parser.parse_args()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores")
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{args.repeats} runs of {args.seconds:g} s each, {args.connections} connections at once")
    trio.run(bench, args)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.stdout.flush()
    subprocess.run(["uptime"], check=False)


if __name__ == "__main__":
    main()
