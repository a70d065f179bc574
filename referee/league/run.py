"""Running a league: workers take games from the schedule, bots come from the pool,
each finished game is recorded at once and shown (see `progress`), the standings are
printed every N games when asked and written at the end.

Up to `jobs` games run at once in one trio process, each with its own clocks.
A game cut short (Ctrl-C, a crash of the referee) is never recorded, so
`--resume` plays exactly the games the ledger does not hold.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio
from rich.console import Console

from .. import lag
from ..outputs import ready_folder
from .config import LeagueConfig
from .game import play_scheduled
from .ledger import Ledger, Record
from .output import head_table, natural_width, print_table, write_files
from .pool import BotPool, TcpBots
from .progress import Display
from .schedule import Scheduled, schedule
from .standings import Standings, compute

if TYPE_CHECKING:  # Dask is imported only with --cluster
    from ..site.live import LiveSite
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
    site: LiveSite | None = None,
) -> Standings:
    """Play every game the ledger does not hold yet, then return the standings.

    TCP bots come from `server` (see `referee.server.serve_league`). With a
    `cluster`, games without a TCP seat run on its workers (see `cluster`) and
    `jobs` is the number of games with a TCP seat played here at once. With a
    `site`, the results site is refreshed every `site.every` games in the background
    and built at the end (`referee.site.live`)."""
    lag.ensure_running()  # the games' clocks leave out this loop's own stalls
    blob = None
    if cluster is not None:
        from .remote import league_blob

        blob = league_blob(config)
        # Which bots sit together does not depend on the deal key, which is not read yet.
        seated = schedule(config, deal_key=bytes(32))
        remote_games = [g for g in seated if not _has_tcp(config, g)]
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
        games = schedule(config, ledger.deal_key(config.deal_key))
        # For the results site: the progress, and when a deal's games are all played
        # (its hands are then no longer a secret of the games still to come).
        unit_games = max(Counter(g.unit for g in games).values(), default=1)
        ledger.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('scheduled', ?), ('unit_games', ?)",
            (str(len(games)), str(unit_games)),
        )
        done = ledger.done()
        todo = [g for g in games if g.index not in done]
        remote: list[Scheduled] = []
        if cluster is not None:
            remote = [g for g in todo if not _has_tcp(config, g)]
            todo = [g for g in todo if _has_tcp(config, g)]
        names = [b.name for b in config.bots]
        display = Display(console, config.name, len(games), len(done), quiet)
        display.counters.recorded.update(done)
        send, receive = trio.open_memory_channel[Scheduled](len(todo) + 1)
        for g in todo:
            send.send_nowait(g)
        send.close()
        if site is not None and not quiet:
            site.notice = display.notice
        with display:
            update = partial(_update, display, ledger, names, report_every, site)
            refreshing = site.running() if site is not None else contextlib.nullcontext()
            async with refreshing, trio.open_nursery() as procs:
                pool = BotPool(config, procs, stderr_dir, server)
                try:
                    async with trio.open_nursery() as workers:
                        if cluster is not None and blob is not None and remote:
                            deliver = partial(_deliver, logs, stderr_dir, ledger, update, on_record)

                            def notice(text: str) -> None:
                                if quiet:
                                    log.warning("%s", text)
                                else:
                                    display.notice(text)

                            workers.start_soon(
                                cluster.play, blob, remote, key, config, deliver, notice
                            )
                        for _ in range(min(jobs, len(todo))):
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
                finally:
                    await pool.close()
                    if server is not None:
                        await server.close()
                    procs.cancel_scope.cancel()
        standings = compute(names, ledger.records(), ledger.sandbox())
        write_files(standings, out, f"{config.name}: standings")
        if site is not None:
            site.report = await site.final()
        return standings
    finally:
        ledger.close()


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
    log_path = logs / f"{game.game_id}.jsonl"
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
    display: Display,
    ledger: Ledger,
    names: list[str],
    report_every: int,
    site: LiveSite | None,
    record: Record,
) -> None:
    """Show a newly recorded game; every `report_every` games, the standings so far
    (and the results site refreshed, in the background)."""
    display.finished(record)
    done = display.counters.done
    if site is not None:
        site.recorded(done)
    if report_every and done % report_every == 0:
        # The full standings, whose cost grows with the league, in threads while the games
        # play on; of exactly the games counted now, though more may be recorded meanwhile.
        counted = frozenset(display.counters.recorded)
        records = [r for r in await ledger.in_thread(ledger.records) if r.idx in counted]
        standings = await trio.to_thread.run_sync(compute, names, records)
        print_table(
            display.console, standings, f"{display.title}: after {done} games", explain=False
        )


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
