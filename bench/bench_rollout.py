"""A searcher's rollouts: the engine against the rollout model, decisions per second.

    python bench/bench_rollout.py [--preset standard] [--players 4] [--positions 1500]
                                  [--repeat 7] [--policy random]

The loop a searching bot runs for every world and candidate: take a position, copy
it, and play it to the round's end. The positions are `--positions` decisions of
seeded games (every 7th decision of games 0, 1, 2, ... with uniformly random moves,
double-12, 13 rounds). The engine plays each with `legal_moves` and
`apply(..., check=False)` (a copy is free: its states are immutable), as
`referee.botkit.search` does; the model (`referee.botkit.rollout`) with
`Rollout.copy`, `legal` and `apply`, from models made once before the timing (a
searcher makes one per world and copies it per candidate; what making one costs is
printed apart). Both choose with the same cheap generator (`--policy random`: a
linear congruential step per decision, seeded by the repetition; `first`: legal
move 0), so they play exactly the same games; the decision counts are checked
equal. A decision is one legal-move listing and one move applied.

Each repetition times the engine, then the model, alternating, by this process's
CPU time (one core); the wall clock and the machine's load average are printed too.
The summary gives min, median and max of each, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from _machine import cpu_model

from referee.botkit.rollout import Rollout
from referee.rules import Rules, State, apply, legal_moves, new_game, preset

STEP = 7  # every STEP-th decision of the seeded games is a position
MULT, INC, MOD = 1103515245, 12345, 0x7FFFFFFF  # the shared generator's step


def positions(rules: Rules, count: int) -> list[State]:
    """`count` decisions of seeded random games, every STEP-th one."""
    found: list[State] = []
    seed = 0
    while len(found) < count:
        rng = random.Random(seed)
        state = new_game(rules, seed)
        decision = 0
        while state.outcome is None and len(found) < count:
            if decision % STEP == 0:
                found.append(state)
            state = apply(state, rng.choice(legal_moves(state)))
            decision += 1
        seed += 1
    return found


def engine_loop(starts: list[State], x: int, first: bool) -> int:
    """Play every position to its round's end with the engine; the decisions."""
    decisions = 0
    for start in starts:
        state = start
        index = state.round_index
        while state.round_index == index and state.outcome is None:
            moves = legal_moves(state)
            if first:
                move = moves[0]
            else:
                x = (x * MULT + INC) & MOD
                move = moves[x % len(moves)]
            state = apply(state, move, check=False)
            decisions += 1
    return decisions


def model_loop(models: list[Rollout], x: int, first: bool) -> int:
    """The same with the model: copy each, play it to the round's end; the decisions."""
    decisions = 0
    for model in models:
        world = model.copy()
        while not world.over:
            moves = world.legal()
            if first:
                move = moves[0]
            else:
                x = (x * MULT + INC) & MOD
                move = moves[x % len(moves)]
            world.apply(move)
            decisions += 1
    return decisions


def _load() -> str:
    path = Path("/proc/loadavg")
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _spread(values: list[float]) -> str:
    return (
        f"min {min(values):>9,.0f}  median {statistics.median(values):>9,.0f}  "
        f"max {max(values):>9,.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="standard", help="preset, optionally +variants")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--positions", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=7, help="repetitions (default 7)")
    parser.add_argument("--policy", choices=("random", "first"), default="random")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.repeat < 1:
        parser.error("--positions and --repeat must be at least 1")
    try:
        rules = preset(args.preset, players=args.players)
    except ValueError as exc:
        parser.error(f"--preset {args.preset}: {exc}")
    first = args.policy == "first"

    print(f"machine: {platform.platform()}; {cpu_model()}")
    print(f"python:  {platform.python_implementation()} {platform.python_version()}")
    print(f"load:    {_load()} (/proc/loadavg, at the start)")
    print(
        f"rules:   {args.preset}, {args.players} players, double-{rules.max_pip}; "
        f"{args.positions} positions, policy {args.policy}, {args.repeat} repetitions"
    )
    starts = positions(rules, args.positions)
    cpu0 = time.process_time()
    models = [Rollout.from_state(s) for s in starts]
    making = (time.process_time() - cpu0) / len(starts)
    print(f"making a model from a state: {making * 1e6:.0f} us (once per world)")
    engine_loop(starts, 1, first)  # warm both up outside the timing
    model_loop(models, 1, first)
    print()
    print(f"{'rep':>3s} {'decisions':>9s} {'engine/s':>10s} {'model/s':>10s} {'ratio':>6s}  wall s")
    engine_rates: list[float] = []
    model_rates: list[float] = []
    for rep in range(args.repeat):
        x = 1 + rep
        cpu0, wall0 = time.process_time(), time.perf_counter()
        done = engine_loop(starts, x, first)
        engine_cpu, engine_wall = time.process_time() - cpu0, time.perf_counter() - wall0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        same = model_loop(models, x, first)
        model_cpu, model_wall = time.process_time() - cpu0, time.perf_counter() - wall0
        if same != done:
            print(f"error: the engine made {done} decisions and the model {same}", file=sys.stderr)
            return 1
        engine_rates.append(done / engine_cpu)
        model_rates.append(done / model_cpu)
        print(
            f"{rep + 1:3d} {done:9d} {engine_rates[-1]:10,.0f} {model_rates[-1]:10,.0f} "
            f"{model_rates[-1] / engine_rates[-1]:5.2f}x  {engine_wall:.2f} + {model_wall:.2f}",
            flush=True,
        )
    ratios = [m / e for m, e in zip(model_rates, engine_rates, strict=True)]
    print()
    print(f"engine decisions/s: {_spread(engine_rates)}")
    print(f"model decisions/s:  {_spread(model_rates)}")
    ratio = statistics.median(model_rates) / statistics.median(engine_rates)
    print(
        f"ratio of medians:   {ratio:.2f}x"
        f" (per repetition: min {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x, "
        f"max {max(ratios):.2f}x); same games: yes"
    )
    print(f"load at the end:    {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
