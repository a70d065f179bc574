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

A tcp finalist plays over the final's own listener (`referee arena final --port`): the
final admits it, waits for its first login, and plays as `referee serve` does (a seat
whose bot is not there within the startup time is forfeited). A separation that rests
on forfeits is never reported as a result: a pair with a finalist that forfeited a
game of the final is not separated by it, the final stops once every other pair is
settled, and its verdict, page and exit status say so.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import asdict, dataclass, replace
from dataclasses import field as dataclass_field
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
    complete: bool  # every adjacent pair separated, and no game forfeited
    summary: str
    # The finalists that forfeited games of the final: name -> (games, first reason).
    forfeits: dict[str, tuple[int, str]] = dataclass_field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "standings": self.standings,
            "pairs": [asdict(p) for p in self.pairs],
            "rounds": self.rounds,
            "games": self.games,
            "complete": self.complete,
            "summary": self.summary,
            "forfeits": {n: {"games": k, "first": why} for n, (k, why) in self.forfeits.items()},
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
    server: Any = None,
    wait_s: float = 60.0,
) -> FinalResult:
    """Play (or resume) the final among the top `top` versions; its result, also kept in
    the ledger and written to OUT/final.json. `server` (a `BotServer` listening) seats
    the tcp finalists; the final waits up to `wait_s` for each one's first login."""
    if ledger.meta("frozen") is None:
        raise ArenaError(
            "freeze the arena first (`referee arena freeze DIR`): a final is played once "
            "entries are closed"
        )
    field = choose_field(ledger, arena, top)
    remote = [v for v in map(ledger.version, field) if v is not None and v.tcp]
    if remote and server is None:
        raise ArenaError(
            f"{', '.join(v.name for v in remote)}: a tcp finalist plays over the network: give "
            "`referee arena final` --port (and --host, --tls as for `referee arena`) and "
            "have it connect there"
        )
    size = min(arena.sizes[0], len(field))
    tables = list(itertools.combinations(field, size))
    key = ledger.secret("deal_key")
    seed_key = ledger.secret("bot_seed_key")
    # The final's own lines are its rounds: not one line a game.
    run = ArenaRun(arena, ledger, console, jobs, True, server, None, auto)

    def say(line: str) -> None:
        if not quiet:
            console.print(shown(line), markup=False, highlight=False, soft_wrap=True)

    say(f"final among {', '.join(field)}: tables of {size}, {len(tables)} a round")
    if remote:
        names = [v.name for v in remote]
        for v in remote:
            server.admit(v.name, bytes.fromhex(v.bot["token_sha256"]))
        say(f"waiting up to {wait_s:g} s for the tcp finalists to connect: {', '.join(names)}")
        logged = await server.first_nonces(names, wait_s)
        absent = [n for n, nonce in logged.items() if nonce is None]
        server.given_up(absent)
        if absent:
            say(
                f"not connected: {', '.join(absent)}; each of its seats waits the startup "
                "time, then is forfeited (and the final gives no result for its pairs)"
            )
    separation = Separation(min_units=min_units)
    pairs: list[PairResult] = []
    forfeits: dict[str, tuple[int, str]] = {}
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
                if not await _play(run, procs, waiting, key, seed_key, budget):
                    break  # a game would pass the budget (a resumed final, a smaller one)
                rounds += 1
                for u in mine:
                    separation.add(pair_units(_unit_games(ledger, u)))
                order = [r["name"] for r in standings_of(ledger, field, field)]
                forfeits = ledger.forfeits("final")
                pairs = [
                    replace(p, separated=False) if {p.ahead, p.behind} & forfeits.keys() else p
                    for p in separation.look(order)
                ]
                say(
                    f"round {rounds}: "
                    + "; ".join(
                        f"{p.ahead} > {p.behind} {p.mean:.3f} [{p.low:.3f}, {p.high:.3f}]"
                        + (" separated" if p.separated else "")
                        + (" (forfeits)" if {p.ahead, p.behind} & forfeits.keys() else "")
                        for p in pairs
                    )
                )
                if all(p.separated for p in pairs):
                    complete = True
                    break
                if forfeits and all(
                    p.separated or {p.ahead, p.behind} & forfeits.keys() for p in pairs
                ):
                    break  # what is left to separate rests on forfeits
        finally:
            with trio.CancelScope(shield=True):
                for pool in run.pools.values():
                    await pool.close()
            procs.cancel_scope.cancel()
    standings = standings_of(ledger, field, field)
    forfeits = ledger.forfeits("final")
    for row in standings:
        row["forfeits"] = forfeits.get(row["name"], (0, ""))[0]
    games = ledger.count("final")
    apart = [f"{p.ahead} / {p.behind}" for p in pairs if not p.separated]
    if forfeits:
        complete = False
        seated = {row["name"]: row["games"] for row in standings}
        said = "; ".join(
            f"{n} forfeited {k} of its {seated.get(n, k)} games (first: {why})"
            for n, (k, why) in forfeits.items()
        )
        summary = (
            f"no result: {said}; a separation that rests on forfeits is not a result "
            f"(not separated: {', '.join(apart) if apart else 'none'}; {rounds} rounds, "
            f"{games} games)"
        )
    elif complete:
        summary = f"every adjacent pair separated at 95% after {rounds} rounds ({games} games)"
    else:
        summary = (
            f"the budget of {budget} games ran out after {rounds} rounds ({games} games); "
            f"not separated: {', '.join(apart) if apart else 'none'}"
        )
    result = FinalResult(field, standings, pairs, rounds, games, complete, summary, forfeits)
    data = result.to_json()
    data["made"] = time.time()
    ledger.set_meta("final", json.dumps(data))
    _write_json(arena.out / FINAL_FILE, data)
    return result


def ledger_state(ledger: ArenaLedger, unit: Unit) -> str:
    row = ledger.db.execute("SELECT state FROM units WHERE id = ?", (unit.id,)).fetchone()
    return str(row[0])


async def _play(
    run: ArenaRun,
    procs: trio.Nursery,
    units: list[Unit],
    key: bytes,
    seed_key: bytes,
    budget: int,
) -> bool:
    """Play `units`, `run.jobs` at a time, but never a game that would take the final
    past `budget` games: a unit whose games left do not fit is not started (it stays
    open). True when every unit was played."""
    limit = trio.Semaphore(run.jobs)
    ledger = run.ledger
    reserved = ledger.count("final")
    started = []
    for unit in units:
        left = unit.games - len(ledger.recorded_rotations(unit.id))
        if reserved + left > budget:
            break
        reserved += left
        started.append(unit)

    async def one(unit: Unit) -> None:
        async with limit:
            await run.play_unit(procs, unit, key, seed_key)

    async with trio.open_nursery() as nursery:
        for unit in started:
            nursery.start_soon(one, unit)
    return len(started) == len(units)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from ..site.model import write_atomic

    write_atomic(path, json.dumps(data, indent=2) + "\n")
