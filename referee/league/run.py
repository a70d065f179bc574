"""Running a league: workers take games from the schedule, bots come from the pool,
each finished game is recorded at once and shown (see `progress`), the standings are
printed every N games when asked and written at the end.

Up to `jobs` games run at once in one trio process, each with its own clocks.
A game cut short (Ctrl-C, a crash of the referee) is never recorded, so
`--resume` plays exactly the games the ledger does not hold.

A match (format = "match") has no fixed end: its games are made as they are
needed, each recorded game goes to its `Judge`, and the run stops at the
first unit that crosses a bound of the test, abandoning the games in play.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio
from rich.console import Console

from .. import lag
from ..gamelog import log_suffix
from ..outputs import ready_folder
from ..stats import Verdict
from .config import LeagueConfig
from .game import play_scheduled
from .judge import Judge, Lines, final_lines, json_result
from .ledger import Ledger, Record
from .output import head_table, natural_width, print_table, write_files
from .pool import BotPool, TcpBots
from .progress import Display
from .schedule import Scheduled, games, schedule
from .standings import Standings, compute

if TYPE_CHECKING:  # Dask is imported only with --cluster
    from .cluster import Cluster
    from .remote import Done

log = logging.getLogger(__name__)


async def run_league(
    config: LeagueConfig,
    *,
    jobs: int,
    resume: bool,
    console: Console,
    quiet: bool = False,
    report_every: int = 0,
    on_record: Callable[[Record], None] | None = None,
    server: TcpBots | None = None,
    cluster: Cluster | None = None,
    judge: Judge | None = None,
    files: bool = True,
) -> Standings:
    """Play every game the ledger does not hold yet, then return the standings.

    TCP bots come from `server` (see `referee.server.serve_league`). With a
    `cluster`, games without a TCP seat run on its workers (see `cluster`) and
    `jobs` is the number of games with a TCP seat played here at once. A match
    is judged by `judge` (a silent one if none is given): it is fed the ledger
    first, and the run ends as soon as it decides; its standings count only the
    units the test counted, and carry its summary. The standings files are written
    in the output folder unless `files` is false (a folder removed at the end)."""
    if config.match is not None and judge is None:
        judge = Judge(config)
    lag.ensure_running()  # the games' clocks leave out this loop's own stalls
    blob = None
    if cluster is not None:
        from .remote import league_blob

        blob = league_blob(config)
        # Which bots sit together does not depend on the deal key, which is not read yet.
        remote_games = [g for g in _seatings(config, bytes(32)) if not _has_tcp(config, g)]
        await trio.to_thread.run_sync(cluster.check, config, blob, remote_games)
    out = config.out
    logs = out / "logs"
    stderr_dir = out / "stderr"
    ready_folder(logs, "the logs folder")  # OutputError: a file where it should be, say
    ready_folder(stderr_dir, "the stderr folder")
    ledger = Ledger(out / "league.db")
    try:
        ledger.claim(config.fingerprint(), resume)
        ledger.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('name', ?), ('bots', ?)",
            (config.name, json.dumps([b.name for b in config.bots])),
        )
        modes = {b.name: "tcp" if b.tcp else b.spec.sandbox for b in config.bots}
        ledger.note_sandbox(modes, config.sandbox_note)
        key = ledger.bot_seed_key(config.bot_seed_key)
        deal_key = ledger.deal_key(config.deal_key)
        done = ledger.done()
        if judge is not None:
            await trio.to_thread.run_sync(judge.replay, ledger.records())
        total = _total(config)

        # Here or on the cluster: a side that gets no game must not look for one in a
        # match's schedule, which has no end.
        sides = {cluster is None or _has_tcp(config, g) for g in _seatings(config, deal_key)}

        def todo(here: bool) -> Iterator[Scheduled]:
            """The games not recorded yet, in schedule order, made as they are taken: those
            played here (`here`) or on the cluster."""
            if judge is not None and judge.verdict is not None:
                return iter(())  # a resumed match already decided
            if here not in sides:
                return iter(())
            return (
                g
                for g in games(config, deal_key)
                if g.index not in done and (cluster is None or _has_tcp(config, g) == here)
            )

        local = todo(True)
        remote = todo(False) if cluster is not None else iter(())
        names = [b.name for b in config.bots]
        display = Display(console, config.name, total or 0, len(done), quiet or judge is not None)
        display.counters.recorded.update(done)
        send, receive = trio.open_memory_channel[Scheduled](0)
        stop = trio.CancelScope()  # a match's test has decided
        with display:
            shown = partial(_update, display, ledger, names, report_every)

            async def update(record: Record) -> None:
                await shown(record)
                if judge is not None and await judge.add(record):
                    stop.cancel()  # the games in play are abandoned, never counted

            async with trio.open_nursery() as procs:
                pool = BotPool(config, procs, stderr_dir, server)
                try:
                    with stop:
                        async with trio.open_nursery() as workers:
                            if cluster is not None and blob is not None:
                                deliver = partial(
                                    _deliver, logs, stderr_dir, ledger, update, on_record
                                )

                                def notice(text: str) -> None:
                                    if quiet:
                                        log.warning("%s", text)
                                    else:
                                        display.notice(text)

                                workers.start_soon(
                                    cluster.play, blob, remote, key, config, deliver, notice
                                )
                            for _ in range(jobs):
                                workers.start_soon(
                                    _worker,
                                    config,
                                    receive.clone(),
                                    pool,
                                    logs,
                                    key,
                                    ledger,
                                    update,
                                    on_record,
                                )
                            receive.close()
                            async with send:  # the games, in schedule order, as taken
                                for game in local:
                                    await send.send(game)
                finally:
                    await pool.close()
                    if server is not None:
                        await server.close()
                    procs.cancel_scope.cancel()
        records = ledger.records()
        if judge is not None:  # the standings of the units the test counted
            records = [r for r in records if r.unit < judge.counted]
        standings = compute(names, records, ledger.sandbox())
        if judge is not None and config.match is not None:
            match = config.match
            standings.match = {"new": match.new, "base": match.base}
            standings.match.update(json_result(judge.summary()))
        if files:
            write_files(standings, out, f"{config.name}: standings")
        return standings
    finally:
        ledger.close()


def _seatings(config: LeagueConfig, deal_key: bytes) -> list[Scheduled]:
    """Games with every seating of the league: all of them, or a match's first 2 * table
    (its seatings repeat with that period)."""
    if config.match is None:
        return schedule(config, deal_key)
    return list(itertools.islice(games(config, deal_key), 2 * config.table))


def _total(config: LeagueConfig) -> int | None:
    """The number of games of the league; None for a match that runs until it decides."""
    if config.match is None:
        return len(schedule(config, bytes(32)))
    units = config.match.max_units
    return None if units is None else 2 * units


async def _worker(
    config: LeagueConfig,
    receive: trio.MemoryReceiveChannel[Scheduled],
    pool: BotPool,
    logs: Path,
    key: bytes,
    ledger: Ledger,
    update: Callable[[Record], Awaitable[None]],
    on_record: Callable[[Record], None] | None,
) -> None:
    async with receive:
        async for game in receive:
            record = await play_scheduled(config, game, pool, logs, key)
            # The commit syncs to disk: in a thread, while the other games play on.
            if await ledger.in_thread(ledger.record, record):
                if on_record is not None:
                    on_record(record)
                await update(record)


def _has_tcp(config: LeagueConfig, game: Scheduled) -> bool:
    """A game with a TCP seat is played here, where the connections are."""
    tcp = {b.name for b in config.bots if b.tcp}
    return any(name in tcp for name in game.seats)


async def _deliver(
    logs: Path,
    stderr_dir: Path,
    ledger: Ledger,
    update: Callable[[Record], Awaitable[None]],
    on_record: Callable[[Record], None] | None,
    game: Scheduled,
    done: Done,
) -> None:
    """Write a game played on a cluster worker: its log (whole, or not at all), the
    stderr its bots wrote, then its ledger row. A game already recorded is skipped.

    The writes sync to disk, so they run in threads: games with TCP seats play on
    this loop meanwhile."""
    if await ledger.in_thread(ledger.has, game.index):  # never overwrite a recorded log
        return
    log_path = logs / f"{game.game_id}{log_suffix(done.log)}"
    await trio.to_thread.run_sync(_write_remote, log_path, stderr_dir, done)
    record = dataclasses.replace(done.record, log_path=str(log_path))
    if await ledger.in_thread(ledger.record, record, done.worker):
        if on_record is not None:
            on_record(record)
        await update(record)


def _write_remote(log_path: Path, stderr_dir: Path, done: Done) -> None:
    """The log of a game played on a worker, whole or not at all, and its bots' stderr."""
    from .cluster import worker_tag

    part = log_path.with_name(f".{log_path.name}.part")
    with part.open("wb") as handle:
        handle.write(done.log)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(part, log_path)
    tag = worker_tag(done.worker)
    for piece in done.stderr:
        stem = piece.process.removesuffix(".stderr")
        with (stderr_dir / f"{stem}@{tag}.stderr").open("ab") as handle:
            handle.write(piece.data)


async def _update(
    display: Display, ledger: Ledger, names: list[str], report_every: int, record: Record
) -> None:
    """Show a newly recorded game; every `report_every` games, the standings so far."""
    display.finished(record)
    done = display.counters.done
    if report_every and done % report_every == 0:
        # The full standings, whose cost grows with the league, in threads while the games
        # play on; of exactly the games counted now, though more may be recorded meanwhile.
        counted = frozenset(display.counters.recorded)
        records = [r for r in await ledger.in_thread(ledger.records) if r.idx in counted]
        standings = await trio.to_thread.run_sync(compute, names, records)
        print_table(
            display.console, standings, f"{display.title}: after {done} games", explain=False
        )


def print_outcome(
    console: Console,
    config: LeagueConfig,
    standings: Standings,
    judge: Judge | None,
    lines: Lines | None = None,
) -> int:
    """What `league` and `serve` print at the end, and their exit status: a match's
    report (0 only when H1 was accepted: a script or CI job gates on it), else the
    standings (0)."""
    if judge is None or config.match is None:
        print_standings(console, standings, f"{config.name}: {standings.games} games")
        return 0
    if lines is not None:
        lines.end()
    for line in final_lines(judge.summary(), (config.match.new, config.match.base)):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return 0 if judge.verdict is Verdict.H1 else 1


def print_standings(console: Console, standings: Standings, title: str) -> None:
    """The final tables with the legend, and whether the bots ran in the sandbox."""
    print_table(console, standings, title, explain=True)
    head = head_table(standings)
    if natural_width(head) <= console.width:
        console.print(head)
    else:  # a wrapped head-to-head table cannot be read
        console.print(
            f"head to head: too wide for {console.width} columns (it is in standings.md)",
            style="dim",
        )
    if standings.sandbox is not None:
        bare = bool(standings.sandbox.unsandboxed)
        console.print(
            standings.sandbox.line(),
            style="bold yellow" if bare else None,
            markup=False,  # it names bots
            highlight=False,
        )
