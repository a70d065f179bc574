"""How many worlds the search's early stop saves, and what it costs in choices.

    .venv/bin/python bench/bench_search_stop.py                 # 3 and 4 seats, 16 and 64 worlds
    .venv/bin/python bench/bench_search_stop.py --seats 2 --decisions 200

The search (`referee.botkit.search`) stops before its world budget once its choice
is settled: no other candidate can beat the chosen one by `INDIFFERENT` points at
the 99.5% Student t quantile, after at least `MIN_WORLDS` worlds. This benchmark
runs the same decisions twice at a fixed world count (`max_worlds`, no clock): with
the early stop, and with it switched off (`_settled` always false), which is the
reference measured in the same run. It prints the worlds played, the share of
decisions stopped early, and how often the two choose the same move. World counts
do not depend on the machine's load, so the figures are exact for given seeds;
the time per world (given for scale) does.

Decisions: seeded games of the standard rules (double-12, one round), random
moves, every third decision with more than one distinct legal move, searched from
the mover's own knowledge (what its seat has seen), with seeds 30,000 and up.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import cpu_model

from referee.botkit import search as s
from referee.botkit.knowledge import Knowledge
from referee.rules import Move, apply, legal_moves, new_game, preset


def decisions(seats: int, count: int) -> Iterator[tuple[Knowledge, list[Move], int]]:
    """`count` decisions: the mover's knowledge, its legal moves, and a seed."""
    made = 0
    seed = 30_000
    while True:
        rules = preset("standard", players=seats, rounds="single")
        state = new_game(rules, seed)
        rng = random.Random(seed)
        known = [Knowledge.at_start(state, p) for p in range(seats)]
        step = 0
        while state.outcome is None:
            legal = legal_moves(state)
            step += 1
            if step % 3 == 0 and len(set(legal)) > 1:
                yield known[state.to_move], legal, seed * 1000 + step
                made += 1
                if made >= count:
                    return
            move = rng.choice(legal)
            after = apply(state, move)
            if after.round_index != state.round_index:
                break
            for k in known:
                k.record(state, move, after)
            state = after
        seed += 1


def run(seats: int, worlds: int, count: int) -> dict[str, float]:
    settled = s._settled
    used: dict[bool, list[int]] = {True: [], False: []}
    chosen: dict[bool, list[Move]] = {True: [], False: []}
    spent = {True: 0.0, False: 0.0}
    n = 0
    for known, legal, seed in decisions(seats, count):  # searched before the game goes on
        n += 1
        for stop in (True, False):
            s._settled = settled if stop else (lambda rows, paired: False)  # type: ignore[assignment]
            started = time.process_time()
            found = s.search(known, legal, random.Random(seed), deadline=float("inf"),
                             max_worlds=worlds)  # fmt: skip
            spent[stop] += time.process_time() - started
            used[stop].append(found.worlds)
            chosen[stop].append(found.move)
    s._settled = settled
    searched = [i for i in range(n) if used[False][i] > 0]
    early = sum(1 for i in searched if used[True][i] < used[False][i])
    same = sum(1 for i in range(n) if chosen[True][i] == chosen[False][i])
    return {
        "decisions": n,
        "searched": len(searched),
        "worlds_stop": sum(used[True]),
        "worlds_full": sum(used[False]),
        "median_stop": statistics.median(used[True][i] for i in searched),
        "early": early,
        "same": same,
        "ms_per_world": 1000
        * (spent[True] + spent[False])
        / max(1, sum(used[True]) + sum(used[False])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--worlds", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--decisions", type=int, default=120)
    args = parser.parse_args()
    print(f"# {platform.python_implementation()} {platform.python_version()}, {cpu_model()}")
    print(f"# MIN_WORLDS {s.MIN_WORLDS}, INDIFFERENT {s.INDIFFERENT} points")
    print("| seats | at most | decisions searched | worlds with stop / without | "
          "median worlds with stop | stopped early | same move | ms a world |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for seats in args.seats:
        for worlds in args.worlds:
            r = run(seats, worlds, args.decisions)
            share = r["worlds_stop"] / r["worlds_full"]
            print(
                f"| {seats} | {worlds} | {r['searched']} | {r['worlds_stop']:.0f} / "
                f"{r['worlds_full']:.0f} ({share:.0%}) | {r['median_stop']:.0f} | "
                f"{r['early']} ({r['early'] / r['searched']:.0%}) | "
                f"{r['same']} of {r['decisions']} | {r['ms_per_world']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
