"""Standings as the ledger grows: `referee standings` on synthetic leagues of 10,000,
50,000 and 100,000 games, next to the full computation over every record.

The ledger is filled with synthetic games of a league of six bots at tables of four
(15 tables, four rotations of each deal): all but the last 200 games of each size in
bulk (`Ledger.record_many`, the same rows and running totals as recording them one
by one), the last 200 through `Ledger.record`, the path a league takes (its commit
synced to disk), in windows of 8 shuffled as games that finish out of order.
Run: python bench/bench_standings.py [--quick] [--sizes 10000,50000] [--skip-full] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path
from typing import Any

from _machine import cpu_model

from referee.league.ledger import Ledger, Record
from referee.league.standings import compute

BOTS = [f"bot{i}" for i in range(6)]
TABLES = list(combinations(BOTS, 4))
ROTATIONS = 4
LAST = 200  # games recorded one by one at the end of each size
WINDOW = 8  # of which each run of WINDOW games is recorded out of order
KINDS = ("timeout", "illegal", "crash", "protocol")
REFEREE = Path(sys.executable).with_name("referee")
PYCACHE = Path(tempfile.gettempdir()) / "bench-standings-pycache"


def synthetic(idx: int) -> Record:
    """Game `idx` of the schedule (deal, then rotation, then table), its outcome drawn
    from `idx`: points like a round's (ties included), now and then a fault or a
    forfeit, latencies in milliseconds."""
    rng = random.Random(idx)
    per_deal = len(TABLES) * ROTATIONS
    deal, rest = divmod(idx, per_deal)
    rotation, table = divmod(rest, len(TABLES))
    combo = TABLES[table]
    seats = list(combo[rotation:] + combo[:rotation])
    scores = [0 if rng.random() < 0.2 else rng.randint(1, 120) for _ in seats]
    ranks = [1 + sum(o < s for o in scores) for s in scores]
    faults = []
    if rng.random() < 0.02:
        faults.append({"seat": rng.randrange(4), "kind": rng.choice(KINDS), "detail": "x"})
    forfeited = [False] * 4
    if rng.random() < 0.005:
        forfeited[rng.randrange(4)] = True
    means = [round(rng.uniform(0.05, 3.0), 3) for _ in seats]
    return Record(
        idx=idx,
        game_id=f"g{idx + 1:06d}",
        unit=deal * len(TABLES) + table,
        deal=deal,
        rotation=rotation,
        seed=rng.getrandbits(128),
        seats=seats,
        scores=scores,
        ranks=ranks,
        forfeited=forfeited,
        faults=faults,
        latency_mean=list(means),
        latency_max=[round(m * rng.uniform(1.0, 20.0), 3) for m in means],
        decisions=rng.randint(80, 140),
        log_path=f"logs/g{idx + 1:06d}.jsonl.gz",
        finished="2026-12-01T00:00:00+00:00",
    )


def fill(ledger: Ledger, start: int, stop: int, chunk: int = 2000) -> float:
    """Games start .. stop-1 in bulk, in transactions of `chunk`; seconds taken."""
    began = time.perf_counter()
    for low in range(start, stop, chunk):
        ledger.record_many([synthetic(i) for i in range(low, min(stop, low + chunk))])
    return time.perf_counter() - began


def record_one_by_one(ledger: Ledger, start: int, stop: int) -> list[float]:
    """Games start .. stop-1 through `Ledger.record`, each window of WINDOW games in a
    shuffled order; milliseconds per game."""
    order = list(range(start, stop))
    rng = random.Random(start)
    for low in range(0, len(order), WINDOW):
        window = order[low : low + WINDOW]
        rng.shuffle(window)
        order[low : low + WINDOW] = window
    times = []
    for i in order:
        rec = synthetic(i)
        began = time.perf_counter()
        assert ledger.record(rec)
        times.append((time.perf_counter() - began) * 1000)
    return times


def run_command(args: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of a command, its output thrown away.

    On a loaded machine the wall time mostly measures the others' work; the CPU time
    is what the command itself costs."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # Compiled modules cached as an installed referee has them, outside the tree.
    env.update(COLUMNS="150", PYTHONPYCACHEPREFIX=str(PYCACHE))
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)  # warm-up
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)
        walls.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,100000", help="games, comma-separated")
    parser.add_argument("--quick", action="store_true", help="sizes 1000,5000,10000")
    parser.add_argument("--skip-full", action="store_true", help="no full computation")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command")
    parser.add_argument("--out", type=Path, help="build the ledger here (a new folder) and keep it")
    args = parser.parse_args()
    sizes = [1000, 5000, 10000] if args.quick else [int(x) for x in args.sizes.split(",")]
    if sorted(sizes) != sizes or sizes[0] <= LAST:
        parser.error(f"--sizes: increasing, each over {LAST}")
    print(f"machine: {cpu_model()}, {platform.machine()}, Python {platform.python_version()}")
    load = os.getloadavg()[0]
    print(f"load average at the start: {load:.2f}")
    floor, floor_cpu = run_command([sys.executable, "-c", "import referee.cli"], args.repeat)
    print(f"start-up floor (python -c 'import referee.cli'): {floor:.3f} s, CPU {floor_cpu:.3f} s")
    rows: list[tuple[Any, ...]] = []
    if args.out is not None and args.out.exists():
        parser.error(f"--out {args.out}: already there; give a new folder")
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        ledger = Ledger(out / "league.db")
        ledger.db.execute(
            "INSERT INTO meta VALUES ('name', 'bench'), ('bots', ?)", (json.dumps(BOTS),)
        )
        done = 0
        try:
            for size in sizes:
                bulk = fill(ledger, done, size - LAST)
                ones = record_one_by_one(ledger, size - LAST, size)
                done = size
                db_mb = sum(p.stat().st_size for p in out.glob("league.db*")) / 2**20
                table = run_command([str(REFEREE), "standings", str(out)], args.repeat)
                as_json = run_command([str(REFEREE), "standings", str(out), "--json"], args.repeat)
                reads = []
                for _ in range(args.repeat):
                    began = time.process_time()
                    kept = ledger.standings(BOTS)
                    reads.append(time.process_time() - began)
                full_s = float("nan")
                if not args.skip_full:
                    began = time.process_time()
                    full = compute(BOTS, ledger.records(), ledger.sandbox())
                    full_s = time.process_time() - began
                    if json.dumps(full.to_json()) != json.dumps(kept.to_json()):
                        sys.exit(f"{size} games: the kept standings differ from the full ones")
                rows.append(
                    (
                        size,
                        table,
                        as_json,
                        statistics.median(reads),
                        full_s,
                        statistics.median(ones),
                        max(ones),
                        bulk / (size - LAST - (rows[-1][0] if rows else 0)) * 1e6,
                        db_mb,
                    )
                )
                print(
                    f"{size:>7} games: referee standings {table[0]:.3f} s (CPU {table[1]:.3f}),"
                    f" --json {as_json[0]:.3f} s (CPU {as_json[1]:.3f}),"
                    f" read {statistics.median(reads) * 1000:.1f} ms CPU, full computation"
                    f" {full_s:.2f} s, record {statistics.median(ones):.2f} ms"
                    f" (worst {max(ones):.2f}), ledger {db_mb:.0f} MiB",
                    flush=True,
                )
        finally:
            ledger.close()
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print()
    print(
        "| games | `referee standings` wall / CPU s | `--json` wall / CPU s | totals read ms"
        " | full computation s | `record` ms median / worst | bulk µs/game | ledger MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| (start-up floor) | {floor:.3f} / {floor_cpu:.3f} | | | | | | |")
    for size, table, as_json, read, full_s, median, worst, bulk_us, db_mb in rows:
        print(
            f"| {size:,} | {table[0]:.3f} / {table[1]:.3f} | {as_json[0]:.3f} / {as_json[1]:.3f}"
            f" | {read * 1000:.1f} | {full_s:.2f} | {median:.2f} / {worst:.2f} | {bulk_us:.0f}"
            f" | {db_mb:.0f} |"
        )
    print("(reads and the full computation: CPU time in this process; record: wall time)")


if __name__ == "__main__":
    main()
