"""Arena benchmark, part 2 (run by `bench_arena.py`, or alone): the leaderboard's, the
ledger's and the site's cost at 10,000, 100,000 and 1,000,000 recorded games.

A ledger of N games is made in one bulk transaction (real rows: 60 versions of 30
authors, tables of 2 to 4, the record of a real game as its JSON), then measured at
that size, each figure min / median / max over `--reps` repetitions:

- **leaderboard**: `referee.arena.board.leaderboard` (what `arena status` and the site's
  index read), beside the **reference** measured in the same run on the same file: a
  pass over every game's seats and ranks, what a leaderboard computed from the games
  would have to read at the least;
- **record**: one more game recorded with everything it changes (`ArenaLedger.record`,
  synchronous=FULL: one fsync'd transaction), beside the reference of one empty
  fsync'd transaction on the same file;
- **site refresh**: one new game, then `build_arena_site` (index, the list page, the
  two entries' pages, the new game's replay: its unit is over), beside its reference,
  a build with nothing new (the index and the pages every build writes); the old
  games stand listed, their replays pruned (`keep_replays`);
- **sizes**: the ledger's bytes per game, and the site's files and bytes.

The refit (maximum-likelihood Plackett-Luce over every game) is not on any reader's
path: it runs in the background when the games grew by a tenth; its time is printed
at 10,000 and 100,000 games (about 110 s at 1,000,000, see `referee/arena/refit.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from referee.arena.board import leaderboard, make_refit
from referee.arena.config import ArenaConfig, parse_arena
from referee.arena.ledger import MU, SIGMA, ArenaLedger
from referee.arena.run import rate
from referee.arena.site import build_arena_site
from referee.league.records import Record

SIZES = (10_000, 100_000, 1_000_000)
VERSIONS = 60


def timed(fn: Callable[[], object], reps: int) -> tuple[float, float, float]:
    """min, median, max of `reps` calls, in ms."""
    took = []
    for _ in range(reps):
        began = time.perf_counter()
        fn()
        took.append((time.perf_counter() - began) * 1000)
    return min(took), statistics.median(took), max(took)


def fmt(t: tuple[float, float, float]) -> str:
    return f"{t[0]:8.2f} {t[1]:8.2f} {t[2]:8.2f}"


def record_json(idx: int, seats: list[str], ranks: list[int]) -> str:
    rec = {
        "idx": idx,
        "game_id": f"g{idx + 1:05d}",
        "unit": idx // 2,
        "deal": idx // 2,
        "rotation": idx % 2,
        "seed": str(2**127 + idx),
        "seats": seats,
        "scores": [7 * r for r in ranks],
        "ranks": ranks,
        "forfeited": [False] * len(seats),
        "faults": [],
        "latency_mean": [3.141] * len(seats),
        "latency_max": [9.265] * len(seats),
        "decisions": 41,
        "log_path": f"/arena/logs/g{idx + 1:05d}.jsonl.gz",
        "finished": "2026-12-02T05:00:00+00:00",
        "notices": [],
        "charged_ms": 123.456,
        "excused_ms": 0.0,
        "log_sha256": "sha256:" + "ab" * 32,
        "seq": 0,
    }
    return json.dumps(rec)


def make_ledger(folder: Path, games: int, rng: random.Random) -> ArenaLedger:
    """A ledger of `games` recorded arena games (bulk), its versions' totals to match."""
    led = ArenaLedger(folder / "arena.db", create=True)
    names = [f"bot{i}@1" for i in range(VERSIONS)]
    now = time.time()
    db = led.db
    db.execute("BEGIN")
    for i, name in enumerate(names):
        bot = json.dumps({"name": name, "command": ["true"], "cwd": "/"})
        db.execute(
            "INSERT INTO versions (name, entry, version, author, bot, status, added, changed, "
            "mu, sigma, games) VALUES (?, ?, 1, ?, ?, 'active', ?, ?, ?, ?, 0)",
            (name, f"bot{i}", f"author{i // 2}", bot, now, now, MU + i * 0.1, SIGMA / 4),
        )
    counts = dict.fromkeys(names, 0)
    rows, plays = [], []
    for idx in range(games):
        size = 2 + idx % 3
        seats = rng.sample(names, size)
        ranks = rng.sample(range(1, size + 1), size)
        for n in seats:
            counts[n] += 1
            plays.append((n, idx))
        rows.append(
            (
                idx,
                idx // 2,
                idx % 2,
                "arena",
                f"g{idx + 1:05d}",
                json.dumps(seats),
                json.dumps([7 * r for r in ranks]),
                json.dumps(ranks),
                json.dumps([False] * size),
                "2026-12-02T05:00:00+00:00",
                now,
                record_json(idx, seats, ranks),
                1,
                3,
            )
        )
        if len(rows) >= 50_000:
            db.executemany(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
            db.executemany("INSERT INTO plays VALUES (?, ?)", plays)
            rows, plays = [], []
    db.executemany("INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.executemany("INSERT INTO plays VALUES (?, ?)", plays)
    units = [(u, "arena", 2, "[]", 2, 2 * u, "done", now) for u in range((games + 1) // 2)]
    db.executemany("INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?)", units)
    for name, played in counts.items():
        db.execute("UPDATE versions SET games = ? WHERE name = ?", (played, name))
    led.set_meta("next_idx", str(games))
    db.execute("INSERT INTO counts VALUES ('arena', ?)", (games,))
    db.execute("COMMIT")
    return led


def arena_config(folder: Path) -> ArenaConfig:
    data = {"arena": {"name": "scale", "tables": [2, 3, 4], "keep_replays": 1000}}
    return parse_arena(data, folder / "arena.toml", out=folder)


def one_more(led: ArenaLedger, rng: random.Random) -> None:
    names = [v.name for v in led.versions(("active",))]
    unit = led.open_unit("arena", 2, rng.sample(names, 2), 1)
    ranks = [1, 2]
    idx = unit.first
    data = json.loads(record_json(idx, list(unit.seats), ranks))
    data["seed"] = int(data["seed"])
    led.record(unit, 0, Record(**data), rate, 20)


def measure(games: int, reps: int) -> tuple[str, str]:
    """The figures at `games` recorded games: the table's line and the site's."""
    folder = Path(tempfile.mkdtemp(prefix="arena-scale-"))
    try:
        rng = random.Random(games)
        began = time.perf_counter()
        led = make_ledger(folder, games, rng)
        made = time.perf_counter() - began
        arena = arena_config(folder)
        board = timed(lambda: leaderboard(led, 3.0), reps)
        scan = timed(
            lambda: led.db.execute("SELECT seats, ranks FROM games").fetchall(),
            max(3, reps // 3),
        )
        record = timed(lambda: one_more(led, rng), reps)

        def empty() -> None:
            led.db.execute("BEGIN IMMEDIATE")
            led.db.execute("INSERT OR REPLACE INTO meta VALUES ('bench', '1')")
            led.db.execute("COMMIT")

        commit = timed(empty, reps)
        table = f"{games:>9,} | {fmt(board)} | {fmt(scan)} | {fmt(record)} | {fmt(commit)}"
        build_arena_site(arena, led)  # the site as it stands: every old game listed

        def refresh() -> None:
            one_more(led, rng)
            build_arena_site(arena, led)

        again = timed(refresh, reps)
        idle = timed(lambda: build_arena_site(arena, led), reps)
        site = folder / "site"
        files = [p for p in site.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        ledger_bytes = sum(p.stat().st_size for p in folder.glob("arena.db*"))
        refit = ""
        if games <= 100_000:
            refit = f"; refit {timed(lambda: make_refit(led), 1)[0] / 1000:.1f} s"
        site_line = (
            f"{games:>9,} | refresh {fmt(again)} | reference: nothing new {fmt(idle)} | "
            f"site {len(files):>5} files {size / 1e6:6.1f} MB | ledger "
            f"{ledger_bytes / games:5.0f} B/game (made in {made:.1f} s){refit}"
        )
        led.close()
        return table, site_line
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=11, help="repetitions of each figure")
    parser.add_argument("--quick", action="store_true", help="10,000 and 100,000 games only")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.quick else SIZES
    print(
        f"arena at scale: {VERSIONS} versions, tables of 2-4; ms as min / median / max "
        f"of {args.reps}"
    )
    print(
        f"{'games':>9} | {'leaderboard':>26} | {'reference: all games':>26} | "
        f"{'record one game':>26} | {'reference: empty commit':>26}"
    )
    site_lines = []
    for games in sizes:
        table, site = measure(games, args.reps)
        print(table)
        site_lines.append(site)
    print(
        "site: one new game then a refresh, and a build with nothing new (ms, min / median / max)"
    )
    for line in site_lines:
        print(line)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
