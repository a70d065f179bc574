"""Engine speed: decisions per second and whole games per second, on one core.

Each configuration plays `--games` whole games (4 players, double-12, 13 rounds)
with seeds 0, 1, 2, ..., choosing uniformly among `legal_moves` with
`random.Random(seed)`, so every run plays exactly the same games. A decision is
one `legal_moves` call plus one `apply`. Time is this process's CPU time (one
core, single-threaded), which other load on the machine disturbs less than the
wall clock; the wall clock is printed too.

    python bench/bench_engine.py                  # every preset and variant
    python bench/bench_engine.py --games 10 --preset celko+teams
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from dataclasses import dataclass

from _machine import cpu_model

from referee.rules import PRESETS, VARIANTS, Rules, apply, legal_moves, new_game, preset

TARGET = 40_000  # decisions per second
DEFAULT_GAMES = 200


@dataclass
class Figures:
    name: str
    games: int
    decisions: int
    cpu: float
    wall: float

    @property
    def per_second(self) -> float:
        return self.decisions / self.cpu

    @property
    def games_per_second(self) -> float:
        return self.games / self.cpu


def rules_for(name: str) -> Rules:
    return preset(name, players=4, max_pip=12, rounds="descending")


def play(rules: Rules, seed: int) -> int:
    """One whole game of uniformly random legal moves; the number of decisions."""
    rng = random.Random(seed)
    state = new_game(rules, seed)
    decisions = 0
    while state.outcome is None:
        state = apply(state, rng.choice(legal_moves(state)))
        decisions += 1
    return decisions


def measure(name: str, games: int) -> Figures:
    rules = rules_for(name)
    play(rules, -1)  # warm up caches outside the timed seeds
    decisions = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for seed in range(games):
        decisions += play(rules, seed)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return Figures(name, games, decisions, cpu, wall)


def configurations() -> list[str]:
    return [*PRESETS, *(f"standard+{v}" for v in VARIANTS)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games",
        type=int,
        default=DEFAULT_GAMES,
        help=f"whole games per configuration, seeds 0..N-1 (default {DEFAULT_GAMES})",
    )
    parser.add_argument(
        "--preset",
        action="append",
        metavar="NAME",
        help="a preset, optionally +variants (repeatable; default: every preset and variant)",
    )
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    names: list[str] = args.preset or configurations()
    for name in names:
        try:
            rules_for(name)
        except ValueError as exc:
            parser.error(f"--preset {name}: {exc}")

    print(f"machine: {platform.platform()}; {cpu_model()}")
    print(f"python:  {platform.python_implementation()} {platform.python_version()}")
    print(f"games:   {args.games} per configuration, 4 players, double-12, 13 rounds, seeds 0..")
    print()
    header = f"{'configuration':34s} {'dec/game':>9s} {'decisions/s':>12s} {'games/s':>8s}"
    print(header + f" {'vs target':>9s}")
    print("-" * (len(header) + 10))
    results = []
    for name in names:
        fig = measure(name, args.games)
        results.append(fig)
        print(
            f"{name:34s} {fig.decisions / fig.games:9.0f} {fig.per_second:12,.0f} "
            f"{fig.games_per_second:8.1f} {fig.per_second / TARGET:8.2f}x",
            flush=True,
        )
    decisions = sum(f.decisions for f in results)
    cpu = sum(f.cpu for f in results)
    wall = sum(f.wall for f in results)
    slowest = min(results, key=lambda f: f.per_second)
    verdict = "meets" if slowest.per_second >= TARGET else "BELOW"
    print()
    print(
        f"summary: {decisions / cpu:,.0f} decisions/s overall, slowest {slowest.name} "
        f"{slowest.per_second:,.0f}; {verdict} the target of {TARGET:,} decisions/s "
        f"(CPU {cpu:.2f} s, wall {wall:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
