"""Referee overhead: games between four minimal bots over real pipes.

Prints decisions per second, the referee's own CPU time per decision, and the
wall time per decision, next to the raw round trip of one line through a pipe
to an echo process measured in the same run. Target: a decision costs at most
2x that raw round trip. Run: make bench (or python bench/bench_match.py).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import trio
from _machine import cpu_model

from protocol.messages import TimeControl
from referee.process import BotSpec, start_bot
from referee.rules import preset
from referee.runner import run_game

HERE = Path(__file__).resolve().parent


async def raw_round_trip(lines: int, size: int) -> float:
    """Seconds per line through a pipe to an echo process and back."""
    bot = await start_bot(BotSpec("echo", (sys.executable, str(HERE / "echo_line.py"))))
    payload = b"x" * (size - 1) + b"\n"
    conn = bot.connection
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.writer)
        nursery.start_soon(bot.watch)
        for _ in range(50):  # warm up
            conn.send_raw(payload)
            await conn.flush()
            await conn.receive_line()
        started = time.perf_counter()
        for _ in range(lines):
            conn.send_raw(payload)
            await conn.flush()
            await conn.receive_line()
        elapsed = time.perf_counter() - started
        conn.close_output()
        await bot.stop()
        nursery.cancel_scope.cancel()
    return elapsed / lines


async def games(count: int, log_dir: Path) -> tuple[int, float, float]:
    """Decisions, wall seconds and referee CPU seconds for `count` games."""
    rules = preset("standard", players=4)
    spec = BotSpec("fast", (sys.executable, str(HERE / "fast_bot.py")))
    time_control = TimeControl(move_ms=5000, bank_ms=60000)
    decisions = 0
    wall = cpu = 0.0
    for seed in range(count):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        report = await run_game(
            [spec] * 4,
            rules,
            seed,
            game_id=f"bench-{seed}",
            time=time_control,
            log_path=log_dir / f"bench-{seed}.jsonl",
        )
        wall += time.perf_counter() - wall0
        cpu += time.process_time() - cpu0
        decisions += report.result.decisions
    return decisions, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--lines", type=int, default=5000)
    args = parser.parse_args()
    print(f"machine: {cpu_model()}, {platform.machine()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        # The turn request of a 4-player game is about 1.5 KB.
        rtt = trio.run(raw_round_trip, args.lines, 1500)
        decisions, wall, cpu = trio.run(games, args.games, Path(tmp))
    per_wall = wall / decisions
    per_cpu = cpu / decisions
    print(f"raw pipe round trip (1.5 KB line, echo process): {rtt * 1e6:8.1f} us")
    print(f"games: {args.games}, decisions: {decisions}, {decisions / wall:,.0f} decisions/s")
    print(f"wall time per decision:                           {per_wall * 1e6:8.1f} us")
    print(f"referee CPU per decision:                         {per_cpu * 1e6:8.1f} us")
    print(f"wall per decision / raw round trip: {per_wall / rtt:.2f}x (target <= 2x)")
    print(f"referee CPU per decision / raw round trip: {per_cpu / rtt:.2f}x")


if __name__ == "__main__":
    main()
