"""What watching costs a league: the referee's CPU per decision with `--live` and 20
spectators, beside `--live` with none and a league without `--live`, in one run.

    .venv/bin/python bench/bench_live.py [--repeats 9] [--spectators 20] [--deals 4]
        [--mode public|after-deal] [--identity]

Each run is a league played in this process (`run_league`, as `referee league`
runs it: logs, ledger, standings), with `live = "public"` (the costlier mode: each
game's spectator view is built move by move and sent as it changes; `--mode
after-deal` for the league's default, each game sent whole once it is over) for two
seats of the shell bot `sample_bots/minimal.sh` (legal move 0, no JSON parser: next to no
CPU of its own), `--deals` deals of the standard rules (double-12, 13 rounds), one
game at a time. The spectators are threads of another process (this script with
`--spectate`): each follows the list of games (`/events`) and every game in play
(`/game/ID/events`) from its start to its end, reading every byte, and asks for
gzip as every browser does (`--identity`: plain streams). This process's
CPU (`time.process_time`: the games, the logs and the live server, which runs in
the same trio loop) over the league, divided by the decisions the ledger recorded.

The deal key is pinned: every league plays the same games. The three kinds run in
turn, `--repeats` times, after a warm-up of each that is not counted; each line gives
min, median and max, the last ones the ratios of the medians.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import trio
from _machine import cpu_model
from rich.console import Console

from referee.league.config import parse_config
from referee.league.ledger import Ledger
from referee.league.run import run_league
from referee.live.feed import LiveFeed
from referee.live.server import serve

HOST = "127.0.0.1"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KEY = "00112233445566778899aabbccddeeff"
KINDS = ("no --live", "--live, 0 watching", "--live, N watching")
FOLLOWED = ("playing", "pending")  # a game is followed from its start (public), or
# from when it is listed (after-deal, where every game not yet shown is "pending")


# ---------------------------------------------------------------- the spectators


def request(port: int, path: str, gzip: bool) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection(HOST, port, timeout=300)
    conn.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzip else {})
    return conn.getresponse()


def follow(port: int, path: str, seen: list[int], gzip: bool) -> None:
    """Read the event stream at `path` to its end, counting its bytes in `seen` (as
    sent: gzip-encoded when asked for, as a browser asks)."""
    response = request(port, path, gzip)
    inflate = zlib.decompressobj(31)
    while chunk := response.read1(65536):
        seen[0] += len(chunk)
        if gzip:
            inflate.decompress(chunk)  # a browser reads what it was sent
    response.close()


def lines(response: http.client.HTTPResponse, seen: list[int]) -> Iterator[bytes]:
    """The lines of an event stream, gzip-decoded when it came so."""
    if response.getheader("Content-Encoding") != "gzip":
        while line := response.readline():
            seen[0] += len(line)
            yield line
        return
    inflate, rest = zlib.decompressobj(31), b""
    while chunk := response.read1(65536):
        seen[0] += len(chunk)
        *whole, rest = (rest + inflate.decompress(chunk)).split(b"\n")
        for line in whole:
            yield line + b"\n"


def spectator(port: int, seen: list[int], gzip: bool) -> None:
    """One spectator: the list, and each game's stream once the game is in play."""
    followed: set[str] = set()
    threads = []
    response = request(port, "/events", gzip)
    for line in lines(response, seen):
        if not line.startswith(b"data: "):
            continue
        listing = json.loads(line[6:])
        for game in listing["games"]:
            if game["status"] in FOLLOWED and game["game"] not in followed:
                followed.add(game["game"])
                t = threading.Thread(
                    target=follow, args=(port, f"/game/{game['game']}/events", seen, gzip)
                )
                t.start()
                threads.append(t)
        if listing["over"]:
            break
    response.close()
    for t in threads:
        t.join()


def spectate(port: int, count: int, gzip: bool) -> None:
    """`count` spectators, once the server answers; prints the bytes they read."""
    deadline = time.monotonic() + 60
    while True:
        try:
            http.client.HTTPConnection(HOST, port, timeout=5).request("GET", "/games")
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    seen = [0]
    threads = [threading.Thread(target=spectator, args=(port, seen, gzip)) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(seen[0])


# ---------------------------------------------------------------- one league


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


async def league_run(
    kind: str,
    folder: Path,
    deals: int,
    watchers: int,
    mode: str = "public",
    gzip: bool = True,
) -> dict[str, float]:
    data = {
        "league": {
            "name": "live-bench",
            "format": "round-robin",
            "table": 2,
            "deals": deals,
            "duplicate": False,
            "deal_key": KEY,  # the same games in every run
            "live": mode,
        },
        "rules": {"preset": "standard"},
        "time": {"move_ms": 5000},
        "bot": [{"name": n, "command": f"sh {ROOT / 'sample_bots' / 'minimal.sh'}"} for n in "ab"],
    }
    config = parse_config(data, folder / "league.toml", out=folder / "out", check_programs=False)
    console = Console(quiet=True)
    feed = LiveFeed(mode, duplicate=False) if kind != KINDS[0] else None
    port = free_port()
    spectators = None
    if kind == KINDS[2]:
        spectators = subprocess.Popen(
            [sys.executable, __file__, "--spectate", str(port), str(watchers)]
            + ([] if gzip else ["--identity"]),
            stdout=subprocess.PIPE,
            text=True,
        )
    async with trio.open_nursery() as nursery:
        if feed is not None:
            await nursery.start(serve, feed, HOST, port, None)
            if spectators is not None:  # every spectator on the list before the first game
                while feed.streams < watchers:
                    await trio.sleep(0.005)
        cpu, wall = time.process_time(), time.perf_counter()
        await run_league(config, jobs=1, resume=False, console=console, quiet=True, live=feed)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if feed is not None:
            feed.finish()
            with trio.move_on_after(5):
                while feed.streams:
                    await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    read = 0.0
    if spectators is not None:
        out, _ = spectators.communicate(timeout=60)
        read = float(out.strip() or 0)
    ledger = Ledger(config.out / "league.db")
    try:
        decisions = sum(r.decisions for r in ledger.records())
    finally:
        ledger.close()
    return {"cpu": cpu / decisions * 1e6, "wall": wall / decisions * 1e6, "read": read,
            "decisions": float(decisions)}  # fmt: skip


def spread(values: list[float]) -> str:
    return f"{min(values):9.1f} {statistics.median(values):9.1f} {max(values):9.1f}"


async def bench(args: argparse.Namespace) -> None:
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="bench-live-") as folder:
        for k in range(-1, args.repeats):  # -1: a warm-up of each, not counted
            for kind in KINDS:
                run = Path(folder) / f"{KINDS.index(kind)}-{k}"
                run.mkdir()
                result = await league_run(
                    kind, run, args.deals, args.spectators, args.mode, not args.identity
                )
                if k >= 0:
                    runs[kind].append(result)
    print(
        f"league.live = {args.mode!r}; spectators ask for {'identity' if args.identity else 'gzip'}"
    )
    print(
        f"machine: {cpu_model()}; load at the end {Path('/proc/loadavg').read_text().split()[:3]}"
    )
    decisions = sorted({int(r["decisions"]) for rs in runs.values() for r in rs})
    print(f"{args.repeats} runs of each, {decisions} decisions a league, {args.spectators} "
          "spectators in the last kind")  # fmt: skip
    print(f"{'':40} {'min':>9} {'median':>9} {'max':>9}")
    for kind in KINDS:
        label = kind.replace("N", str(args.spectators))
        print(f"{label}:")
        print(f"  {'referee CPU µs a decision':38} {spread([r['cpu'] for r in runs[kind]])}")
        print(f"  {'wall µs a decision':38} {spread([r['wall'] for r in runs[kind]])}")
        if kind == KINDS[2]:
            mb = [r["read"] / 1e6 for r in runs[kind]]
            print(f"  {'MB the spectators read, all told':38} {spread(mb)}")
    med = {k: statistics.median(r["cpu"] for r in runs[k]) for k in KINDS}
    print(f"CPU a decision, --live with none / no --live: {med[KINDS[1]] / med[KINDS[0]]:.3f}")
    print(
        f"CPU a decision, {args.spectators} watching / none watching: "
        f"{med[KINDS[2]] / med[KINDS[1]]:.3f}"
    )
    # Each repeat's two leagues ran one after the other: their ratio leaves out what
    # drifts between repeats (the VM's speed from minute to minute).
    paired = [w["cpu"] / n["cpu"] for w, n in zip(runs[KINDS[2]], runs[KINDS[1]], strict=True)]
    print(
        f"  the same, repeat by repeat (min / median / max): {min(paired):.3f} / "
        f"{statistics.median(paired):.3f} / {max(paired):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--spectators", type=int, default=20)
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument(
        "--mode",
        choices=("public", "after-deal"),
        default="public",
        help="league.live: public (each game move by move, the costlier) or after-deal "
        "(each game whole once its deal is over, the default of a league)",
    )
    parser.add_argument(
        "--identity",
        action="store_true",
        help="spectators do not ask for gzip (every browser does): the streams are sent plain",
    )
    parser.add_argument("--spectate", nargs=2, type=int, metavar=("PORT", "COUNT"))
    args = parser.parse_args()
    if args.spectate:
        port, count = args.spectate
        spectate(port, count, not args.identity)
        return
    trio.run(bench, args)


if __name__ == "__main__":
    main()
