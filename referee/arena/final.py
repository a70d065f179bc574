"""The final: once entries are closed, the top N versions play a duplicate round-robin
on fresh deals until every adjacent pair of its ranking is separated, or its game
budget runs out. Its standings are the competition's result.

Each round plays every table of the round-robin (every `size`-combination of the
finalists, `size` the arena's first table size, or N if smaller) on a deal of its own,
under every rotation of the seats (process bots; a table with a tcp seat plays one
game). After each round the finalists are ranked by their mean game score in the
final, and every adjacent pair is tested on its paired duplicate units (`separation`:
the paired results of the two bots on the same deals, as `referee match` pairs its
units), at a 95% family-wise level spent over the looks. The final stops at the
first look that separates every adjacent pair, or when the next round would pass the
budget, and says which pairs it could not separate. A stopped final resumes where it
was: its field is kept, and its recorded games count.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import trio
from rich.console import Console

from ..stats.score import game_score
from ..text import shown
from .board import leaderboard
from .config import ArenaConfig
from .ledger import ArenaError, ArenaLedger, Unit
from .run import ArenaRun
from .separation import PairResult, Separation, pair_units

FINAL_FILE = "final.json"


@dataclass(frozen=True)
class FinalResult:
    """The final's standings and what it could say of each adjacent pair."""

    field: list[str]
    standings: list[dict[str, Any]]  # name, score (mean game score), games
    pairs: list[PairResult]
    rounds: int
    games: int
    complete: bool  # every adjacent pair separated
    summary: str

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "standings": self.standings,
            "pairs": [asdict(p) for p in self.pairs],
            "rounds": self.rounds,
            "games": self.games,
            "complete": self.complete,
            "summary": self.summary,
        }


def choose_field(ledger: ArenaLedger, arena: ArenaConfig, top: int) -> list[str]:
    """The finalists: kept from the final's first run, else the top `top` active
    versions of the leaderboard (one per entry, as the leaderboard has)."""
    kept = ledger.meta("final_field")
    if kept is not None:
        field: list[str] = json.loads(kept)
        if len(field) != top:
            raise ArenaError(
                f"--top {top}: this arena's final was started with {len(field)} finalists "
                f"({', '.join(field)}); resume it with --top {len(field)}"
            )
        return field
    board = [
        r
        for r in leaderboard(ledger, arena.arena.provisional_sigma)
        if r.version.status == "active"
    ]
    if len(board) < 2:
        raise ArenaError(f"a final needs at least 2 active versions; the arena has {len(board)}")
    if top > len(board):
        raise ArenaError(f"--top {top}: the arena has only {len(board)} active versions")
    field = [r.version.name for r in board[:top]]
    ledger.set_meta("final_field", json.dumps(field))
    return field


def _unit_games(ledger: ArenaLedger, unit: Unit) -> list[list[tuple[str, int]]]:
    return [
        list(zip(g.seats, g.ranks, strict=True)) for g in ledger.games(stage="final", unit=unit.id)
    ]


def standings_of(ledger: ArenaLedger, field: list[str], order: list[str]) -> list[dict[str, Any]]:
    """The finalists by mean game score in the final (ties by their arena order)."""
    scores = {n: 0.0 for n in field}
    games = {n: 0 for n in field}
    for g in ledger.games(stage="final"):
        for s, name in enumerate(g.seats):
            if name in scores:
                scores[name] += game_score(g.ranks, s)
                games[name] += 1
    names = sorted(
        field, key=lambda n: (-(scores[n] / games[n] if games[n] else 0.0), order.index(n))
    )
    return [
        {"name": n, "score": scores[n] / games[n] if games[n] else 0.0, "games": games[n]}
        for n in names
    ]


async def run_final(
    arena: ArenaConfig,
    ledger: ArenaLedger,
    *,
    top: int,
    budget: int,
    jobs: int,
    console: Console,
    quiet: bool = False,
    auto: str | None = None,
    min_units: int = 6,
) -> FinalResult:
    """Play (or resume) the final among the top `top` versions; its result, also kept in
    the ledger and written to OUT/final.json."""
    if ledger.meta("frozen") is None:
        raise ArenaError(
            "freeze the arena first (`referee arena freeze DIR`): a final is played once "
            "entries are closed"
        )
    field = choose_field(ledger, arena, top)
    size = min(arena.sizes[0], len(field))
    tables = list(itertools.combinations(field, size))
    key = ledger.secret("deal_key")
    seed_key = ledger.secret("bot_seed_key")
    # The final's own lines are its rounds: not one line a game.
    run = ArenaRun(arena, ledger, console, jobs, True, None, None, auto)

    def say(line: str) -> None:
        if not quiet:
            console.print(shown(line), markup=False, highlight=False, soft_wrap=True)

    say(f"final among {', '.join(field)}: tables of {size}, {len(tables)} a round")
    separation = Separation(min_units=min_units)
    pairs: list[PairResult] = []
    rounds = 0
    per_round = sum(size if arena.arena.duplicate else 1 for _ in tables)
    complete = False
    async with trio.open_nursery() as procs:
        try:
            while True:
                units = ledger.units(stage="final")
                mine = units[rounds * len(tables) : (rounds + 1) * len(tables)]
                played = ledger.count("final")
                if not mine and played + per_round > budget:
                    break
                for combo in tables[len(mine) :]:
                    tcp = any(v is not None and v.tcp for v in map(ledger.version, combo))
                    count = size if arena.arena.duplicate and not tcp else 1
                    mine.append(ledger.open_unit("final", size, list(combo), count))
                waiting = [u for u in mine if ledger_state(ledger, u) == "open"]
                await _play(run, procs, waiting, key, seed_key)
                rounds += 1
                for u in mine:
                    separation.add(pair_units(_unit_games(ledger, u)))
                order = [r["name"] for r in standings_of(ledger, field, field)]
                pairs = separation.look(order)
                say(
                    f"round {rounds}: "
                    + "; ".join(
                        f"{p.ahead} > {p.behind} {p.mean:.3f} [{p.low:.3f}, {p.high:.3f}]"
                        + (" separated" if p.separated else "")
                        for p in pairs
                    )
                )
                if all(p.separated for p in pairs):
                    complete = True
                    break
        finally:
            with trio.CancelScope(shield=True):
                for pool in run.pools.values():
                    await pool.close()
            procs.cancel_scope.cancel()
    standings = standings_of(ledger, field, field)
    games = ledger.count("final")
    apart = [f"{p.ahead} / {p.behind}" for p in pairs if not p.separated]
    if complete:
        summary = f"every adjacent pair separated at 95% after {rounds} rounds ({games} games)"
    else:
        summary = (
            f"the budget of {budget} games ran out after {rounds} rounds ({games} games); "
            f"not separated: {', '.join(apart) if apart else 'none'}"
        )
    result = FinalResult(field, standings, pairs, rounds, games, complete, summary)
    data = result.to_json()
    data["made"] = time.time()
    ledger.set_meta("final", json.dumps(data))
    _write_json(arena.out / FINAL_FILE, data)
    return result


def ledger_state(ledger: ArenaLedger, unit: Unit) -> str:
    row = ledger.db.execute("SELECT state FROM units WHERE id = ?", (unit.id,)).fetchone()
    return str(row[0])


async def _play(
    run: ArenaRun, procs: trio.Nursery, units: list[Unit], key: bytes, seed_key: bytes
) -> None:
    """Play `units`, `run.jobs` at a time."""
    limit = trio.Semaphore(run.jobs)

    async def one(unit: Unit) -> None:
        async with limit:
            await run.play_unit(procs, unit, key, seed_key)

    async with trio.open_nursery() as nursery:
        for unit in units:
            nursery.start_soon(one, unit)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from ..site.model import write_atomic

    write_atomic(path, json.dumps(data, indent=2) + "\n")
