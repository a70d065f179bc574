"""What the bubblewrap sandbox costs: bot start-up time and per-decision latency,
with and without it, side by side. Target: under 20 ms added at start-up and no
measurable cost per decision. Run: python bench/bench_sandbox.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio
from _machine import cpu_model

from protocol import messages as m
from referee.bots.process import BotSpec, start_bot
from referee.bots.sandbox import check_bwrap
from referee.bots.session import goodbye, handshake
from referee.game.match import Decision, Recorder
from referee.game.wire import rules_info
from referee.play.runner import run_game
from referee.rules import State, preset

HERE = Path(__file__).resolve().parent
BOT = (sys.executable, str(HERE / "fast_bot.py"))


async def startup_ms(sandbox: str, count: int) -> list[float]:
    """Milliseconds from starting a bot to its `ready`, `count` times."""
    rules = preset("standard")
    hello = m.Hello(referee="bench", players=4, rules=rules_info(rules), time=m.TimeControl())
    out = []
    for _ in range(count):
        began = time.perf_counter()
        bot = await start_bot(BotSpec("fast", BOT, cwd=str(HERE), sandbox=sandbox))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.connection.writer)
            nursery.start_soon(bot.watch)
            await handshake(bot.connection, hello, 10)
            out.append((time.perf_counter() - began) * 1000)
            await goodbye(bot.connection)
            await bot.stop()
            nursery.cancel_scope.cancel()
    return out


class _Latencies(Recorder):
    def __init__(self) -> None:
        self.values: list[float] = []

    def decision(self, record: Decision, state: State) -> None:
        if record.latency_ms is not None:
            self.values.append(record.latency_ms)


async def decision_ms(sandbox: str, games: int, folder: Path) -> list[float]:
    """Per-decision latencies over `games` games between four fast bots."""
    latencies = _Latencies()
    for seed in range(games):
        await run_game(
            [BotSpec("fast", BOT, cwd=str(HERE), sandbox=sandbox)] * 4,
            preset("standard"),
            seed,
            game_id=f"b{seed}",
            time=m.TimeControl(move_ms=5000, bank_ms=60000),
            log_path=folder / f"{sandbox}-{seed}.jsonl",
            recorder=latencies,
            bot_seed_key=b"bench",
        )
    return latencies.values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--games", type=int, default=2)
    args = parser.parse_args()
    problem = check_bwrap()
    if problem is not None:
        sys.exit(f"bench_sandbox: bubblewrap cannot sandbox here: {problem}")
    print(f"machine: {cpu_model()}; Python {sys.version.split()[0]}")
    print(f"{'':28s} {'none':>10s} {'bwrap':>10s} {'added':>10s}")
    # Interleaved, a start of each in turn, so the machine's load falls on both alike.
    starts: dict[str, list[float]] = {"none": [], "bwrap": []}
    for _ in range(args.starts):
        for sandbox in starts:
            starts[sandbox] += trio.run(startup_ms, sandbox, 1)
    for label, fn in (("min", min), ("median", statistics.median), ("max", max)):
        a, b = fn(starts["none"]), fn(starts["bwrap"])
        print(f"{'start-up to ready, ' + label + ' ms':28s} {a:10.1f} {b:10.1f} {b - a:10.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        lat = {s: trio.run(decision_ms, s, args.games, Path(tmp)) for s in ("none", "bwrap")}
    for label, fn in (
        ("decision latency, mean ms", statistics.fmean),
        ("decision latency, median ms", statistics.median),
    ):
        a, b = fn(lat["none"]), fn(lat["bwrap"])
        print(f"{label:28s} {a:10.3f} {b:10.3f} {b - a:10.3f}")
    print(f"decisions measured: {len(lat['none'])} and {len(lat['bwrap'])}")
    print("target: under 20 ms added at start-up, no measurable cost per decision")


if __name__ == "__main__":
    main()
