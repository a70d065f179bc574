"""League throughput and harness timeouts, with fast bots over real pipes.

1. A 4-bot league (tables of four, every deal in all four rotations) of at least
   200 games, run twice: with bot processes reused between games (pinged before
   each reuse) and with `restart = "always"` (a fresh process per bot per game).
   Prints games per second for both.
2. 32 games at once (`jobs = 32`) with a 100 ms move limit and no bank, with
   fast bots: every timeout is one the harness caused (the bots answer in
   microseconds). Prints the number of timeouts (target: zero), the worst
   decision latency the referee measured, and how many games really ran at once.

The bot is bench/fast_bot.py: it plays legal move 0 and answers `ping` (the
pool pings a process before it reuses it). Games are double-12 with one round
by default (`--rounds single`) so that 200 games take seconds; `--rounds
descending` plays the full 13 rounds.

    python bench/bench_league.py
    python bench/bench_league.py --deals 100 --rounds descending --concurrent-games 96
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _machine import cpu_model

HERE = Path(__file__).resolve()


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass
class Probe:
    """Games in progress at once, and the time spent updating the progress line."""

    running: int = 0
    most: int = 0
    samples: list[int] = field(default_factory=list)  # games in progress at each start
    update_s: float = 0.0
    update_worst_s: float = 0.0


@dataclass
class Figures:
    label: str
    games: int
    decisions: int
    wall: float
    cpu: float
    processes: int
    timeouts: int
    faults: int
    worst_latency_ms: float
    probe: Probe


def league_config(
    out: Path, *, deals: int, rounds: str, restart: str, move_ms: int, bank_ms: int
) -> Any:
    from referee.league.config import parse_config

    out.mkdir(parents=True, exist_ok=True)
    data = {
        "league": {"name": f"bench-{restart}", "table": 4, "deals": deals, "seed": 2026},
        "rules": {"preset": "standard", "rounds": rounds},
        "time": {"startup_ms": 120_000, "move_ms": move_ms, "bank_ms": bank_ms},
        "bot": [
            {
                "name": f"fast{i}",
                "command": [sys.executable, str(HERE.parent / "fast_bot.py")],
                "cwd": str(HERE.parent),  # not the output folder: sandboxed by default
                "restart": restart,
            }
            for i in range(1, 5)
        ],
    }
    return parse_config(data, out / "league.toml", out=out)


def run_one(label: str, config: Any, jobs: int) -> Figures:
    """Run a league in this process under trio; its figures."""
    import io

    import trio
    from rich.console import Console

    import referee.league.run as run_mod
    from referee.league.ledger import Ledger
    from referee.league.progress import Display

    probe = Probe()
    play = run_mod.play_scheduled
    finished = Display.finished  # the progress update of each recorded game

    async def counted_play(*args: Any, **kwargs: Any) -> Any:
        probe.running += 1
        probe.most = max(probe.most, probe.running)
        probe.samples.append(probe.running)
        try:
            return await play(*args, **kwargs)
        finally:
            probe.running -= 1

    def timed_update(self: Any, record: Any) -> None:
        started = time.perf_counter()
        try:
            finished(self, record)
        finally:
            spent = time.perf_counter() - started
            probe.update_s += spent
            probe.update_worst_s = max(probe.update_worst_s, spent)

    async def go() -> Any:
        console = Console(file=io.StringIO())
        return await run_mod.run_league(
            config, jobs=jobs, resume=False, console=console, quiet=True
        )

    run_mod.play_scheduled = counted_play
    Display.finished = timed_update  # type: ignore[method-assign]
    try:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        trio.run(go)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    finally:
        run_mod.play_scheduled = play
        Display.finished = finished  # type: ignore[method-assign]
    ledger = Ledger(config.out / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    faults = [f for r in records for f in r.faults]
    worst = max((x for r in records for x in r.latency_max if x is not None), default=0.0)
    return Figures(
        label=label,
        games=len(records),
        decisions=sum(r.decisions for r in records),
        wall=wall,
        cpu=cpu,
        processes=len(list((config.out / "stderr").glob("*.stderr"))),
        timeouts=sum(1 for f in faults if f["kind"] == "timeout"),
        faults=len(faults),
        worst_latency_ms=worst,
        probe=probe,
    )


def update_cost(games: int, root: Path) -> float:
    """Seconds one progress update takes (all records read, standings recomputed) once
    the ledger holds `games` 4-player games: the event loop does nothing else meanwhile."""
    import random

    from referee.league.ledger import Ledger, Record
    from referee.league.standings import compute

    names = [f"fast{i}" for i in range(1, 5)]
    rng = random.Random(games)
    ledger = Ledger(root / f"update-{games}.db")
    ledger.db.execute("PRAGMA synchronous=OFF")  # filling is not what is measured
    try:
        for i in range(games):
            seats = names[i % 4 :] + names[: i % 4]
            scores = [rng.randrange(60) for _ in seats]
            ranks = [1 + sum(1 for y in scores if y < x) for x in scores]
            ledger.record(
                Record(
                    idx=i,
                    game_id=f"g{i + 1:05d}",
                    unit=i // 4,
                    deal=i // 4,
                    rotation=i % 4,
                    seed=i,
                    seats=seats,
                    scores=scores,
                    ranks=ranks,
                    forfeited=[False] * 4,
                    faults=[],
                    latency_mean=[0.2] * 4,
                    latency_max=[1.0] * 4,
                    decisions=100,
                    log_path="-",
                    finished="-",
                )
            )
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            compute(names, ledger.records())
            best = min(best, time.perf_counter() - started)
        return best
    finally:
        ledger.close()


def show(f: Figures) -> None:
    print(
        f"{f.label:<28s} {f.games:6d} {f.games / f.wall:9.1f} {f.decisions / f.wall:11,.0f} "
        f"{f.wall:8.1f} {f.cpu:8.1f} {f.processes:6d} {f.faults:7d} {f.worst_latency_ms:9.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=50, help="league deals (x4 rotations)")
    parser.add_argument("--rounds", default="single", help="rules.rounds (default single)")
    parser.add_argument("--jobs", type=int, default=cores(), help="league games at once")
    parser.add_argument("--concurrent", type=int, default=32, help="games at once, part 2")
    parser.add_argument("--concurrent-games", type=int, default=64, help="games, part 2")
    parser.add_argument("--move-ms", type=int, default=100, help="move limit, part 2")
    parser.add_argument("--skip-league", action="store_true")
    parser.add_argument("--skip-concurrent", action="store_true")
    parser.add_argument(
        "--update-sizes",
        default="200,1000,5000",
        help="ledger sizes at which to time one progress update (empty: skip)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parents[1]))

    print(f"machine: {platform.platform()}; {cpu_model()}; {cores()} cores")
    print(f"python:  {platform.python_implementation()} {platform.python_version()}")
    print("bots:    4 x bench/fast_bot.py (legal move 0, answers ping)")
    print(f"rules:   standard, double-12, 4 players, rounds = {args.rounds!r}")
    print()
    header = (
        f"{'run':<28s} {'games':>6s} {'games/s':>9s} {'decisions/s':>11s} "
        f"{'wall s':>8s} {'cpu s':>8s} {'procs':>6s} {'faults':>7s} {'worst ms':>9s}"
    )
    results: list[Figures] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def config(name: str, **kwargs: Any) -> Any:
            return league_config(root / name, rounds=args.rounds, **kwargs)

        runs: list[tuple[str, Callable[[], Any], int]] = []
        if not args.skip_league:
            clocks = {"move_ms": 5000, "bank_ms": 60_000}
            runs += [
                (
                    f"reuse, jobs={args.jobs}",
                    lambda: config("reuse", deals=args.deals, restart="never", **clocks),
                    args.jobs,
                ),
                (
                    f'restart="always", jobs={args.jobs}',
                    lambda: config("always", deals=args.deals, restart="always", **clocks),
                    args.jobs,
                ),
            ]
        if not args.skip_concurrent:
            deals = max(1, -(-args.concurrent_games // 4))
            runs.append(
                (
                    f"{args.move_ms} ms moves, jobs={args.concurrent}",
                    lambda: config(
                        "concurrent", deals=deals, restart="never", move_ms=args.move_ms, bank_ms=0
                    ),
                    args.concurrent,
                )
            )
        print(header)
        print("-" * len(header))
        for label, make, jobs in runs:
            figures = run_one(label, make(), jobs)
            results.append(figures)
            show(figures)
        sizes = [int(x) for x in args.update_sizes.split(",") if x.strip()]
        costs = [(n, update_cost(n, root)) for n in sizes]
    print()
    if not args.skip_league:
        reuse, always = results[0], results[1]
        print(
            f"process reuse: {reuse.games / reuse.wall:.1f} games/s; "
            f'restart = "always": {always.games / always.wall:.1f} games/s '
            f"({reuse.wall and (always.wall / reuse.wall):.2f}x the wall time)"
        )
        for f in (reuse, always):
            print(
                f"  {f.label}: progress updates (one per recorded game) took "
                f"{f.probe.update_s:.2f} s in all, worst {f.probe.update_worst_s * 1000:.1f} ms"
            )
    if not args.skip_concurrent:
        c = results[-1]
        busy = sorted(c.probe.samples)
        median = busy[len(busy) // 2] if busy else 0
        print(
            f"{args.concurrent} games at once, move_ms = {args.move_ms}, bank_ms = 0, "
            f"grace_ms = 50: {c.timeouts} timeouts caused by the harness (target 0) "
            f"in {c.games} games, {c.decisions:,} decisions; "
            f"worst decision latency {c.worst_latency_ms:.1f} ms"
        )
        print(
            f"  games in progress: at most {c.probe.most}, median {median} when a game started; "
            f"{c.processes} bot processes started; progress updates took "
            f"{c.probe.update_s:.2f} s, worst {c.probe.update_worst_s * 1000:.1f} ms"
        )
    if costs:
        print(
            "one progress update (every record read, standings recomputed) blocks the event "
            "loop for: " + ", ".join(f"{s * 1000:.0f} ms at {n} games" for n, s in costs)
        )


if __name__ == "__main__":
    main()
