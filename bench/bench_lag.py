"""What the loop-lag monitor (referee/game/lag.py) costs: CPU per second of a trio loop
that does nothing else, idle and while a decision is waiting, and the referee's
CPU per decision in games of fast bots with and without the monitor.
Run: make bench (or python bench/bench_lag.py).
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

import referee.play.runner
from protocol.messages import TimeControl
from referee.bots.process import BotSpec
from referee.game.lag import LagMonitor
from referee.play.runner import run_game
from referee.rules import preset

HERE = Path(__file__).resolve().parent


async def loop_cpu(seconds: float, *, monitor: bool, watched: bool) -> tuple[float, int]:
    """CPU ms per second of a loop that sleeps, with the monitor running or not; its wakes."""
    lag = LagMonitor()
    async with trio.open_nursery() as nursery:
        if monitor:
            nursery.start_soon(lag.run)
        await trio.sleep(0.05)
        started = time.process_time()
        if watched:
            with lag.watching():
                await trio.sleep(seconds)
        else:
            await trio.sleep(seconds)
        cpu = time.process_time() - started
        nursery.cancel_scope.cancel()
    return cpu / seconds * 1000, lag.wakes


async def games(count: int, log_dir: Path) -> tuple[int, float]:
    """Decisions and referee CPU seconds for `count` two-seat double-12 games."""
    rules = preset("standard", players=2)
    spec = BotSpec("fast", (sys.executable, str(HERE / "fast_bot.py")))
    decisions = 0
    cpu = 0.0
    for seed in range(count):
        started = time.process_time()
        report = await run_game(
            [spec, spec],
            rules,
            seed,
            game_id=f"bench-{seed}",
            time=TimeControl(move_ms=5000, bank_ms=60000),
            log_path=log_dir / f"game-{seed}.jsonl",
        )
        cpu += time.process_time() - started
        decisions += report.result.decisions
    return decisions, cpu


def per_decision_us(count: int, *, monitor: bool) -> tuple[float, int]:
    """The referee's CPU µs per decision over `count` games, with the monitor or not."""
    real = referee.play.runner.lag.ensure_running
    if not monitor:
        referee.play.runner.lag.ensure_running = lambda: None  # type: ignore[assignment,return-value]
    try:
        with tempfile.TemporaryDirectory() as folder:
            decisions, cpu = trio.run(games, count, Path(folder))
    finally:
        referee.play.runner.lag.ensure_running = real
    return cpu / decisions * 1e6, decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="per loop measurement")
    parser.add_argument("--games", type=int, default=2, help="games per game measurement")
    parser.add_argument("--rounds", type=int, default=5, help="game measurements of each kind")
    args = parser.parse_args()
    python = sys.version.split()[0]
    print(f"{platform.system()} {platform.machine()}, {cpu_model()}, Python {python}")
    bare, _ = trio.run(lambda: loop_cpu(args.seconds, monitor=False, watched=False))
    idle, idle_wakes = trio.run(lambda: loop_cpu(args.seconds, monitor=True, watched=False))
    busy, wakes = trio.run(lambda: loop_cpu(args.seconds, monitor=True, watched=True))
    print(f"loop alone:            {bare:6.2f} ms CPU per second")
    print(f"monitor, nothing open: {idle:6.2f} ms CPU per second ({idle_wakes} wakes)")
    print(
        f"monitor, decision open: {busy:5.2f} ms CPU per second "
        f"({wakes / args.seconds:.0f} wakes/s, {(busy - bare) / (wakes / args.seconds) * 1000:.0f} "
        "µs CPU per wake)"
    )
    # Alternate, so that a change of load on the machine hits both alike, and keep the
    # least: other work on the machine only ever adds.
    without, with_ = [], []
    for _ in range(args.rounds):
        without.append(per_decision_us(args.games, monitor=False))
        with_.append(per_decision_us(args.games, monitor=True))
    off = min(us for us, _ in without)
    on = min(us for us, _ in with_)
    print(
        f"games of fast bots ({without[0][1]} decisions, least of {args.rounds}): referee CPU "
        f"per decision {off:.0f} µs without the monitor, {on:.0f} µs with it "
        f"({(on / off - 1) * 100:+.1f}%)"
    )


if __name__ == "__main__":
    main()
