"""Running the arena: until it is stopped, keep `jobs` tables busy with the active
versions, validate new versions as they arrive, record every game at once.

One trio process plays up to `jobs` units at a time: a unit is one deal at one table,
under every rotation of the seats for process bots (duplicate deals: each rotation by
processes that never saw the deal, as the league's pool ensures), or a single game
when a seat is a tcp bot (one program the arena cannot restart plays independent
deals). A version sits at one table at a time. Between games the arena reads its
ledger: versions added, updated or removed by `referee arena add/update/remove` join
or leave without a restart, and `referee arena stop` (or Ctrl-C) ends the run: the
games in play are abandoned, never counted, and the next run plays the rest of their
units. A version whose last games exceed `max_fault_rate` is suspended, with the
games and faults that did it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import hmac
import json
import logging
import os
import random
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from rich.console import Console

from ..bots.sandbox import resolve
from ..game.match import SEED_BITS
from ..league.config import ConfigError, LeagueConfig
from ..league.game import play_scheduled
from ..league.pool import BotPool, TcpBots
from ..league.records import Record
from ..league.schedule import Scheduled
from ..league.standings import rating_model
from ..logs.gamelog import log_suffix
from ..logs.outputs import ready_folder
from ..text import shown
from . import matchmaking
from .board import make_refit, refit_due
from .config import ArenaConfig, without_author
from .ledger import DB_NAME, ArenaError, ArenaLedger, Unit, Version
from .site import ArenaSite, prune_replays
from .validate import sandbox_problem, validate

if TYPE_CHECKING:  # Dask is imported only with --cluster
    from ..league.cluster import Cluster
    from ..live.feed import LiveFeed

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often a waiting arena reads its ledger for changes
LOCK = "arena.lock"
MIN_WINDOW = 5  # games before a version's fault rate may suspend it


@contextlib.contextmanager
def arena_lock(out: Path) -> Iterator[None]:
    """Hold OUT/arena.lock while the arena runs: one arena per folder, and the commands
    can tell whether it runs (`running`)."""
    path = out / LOCK
    handle = path.open("a")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ArenaError(f"{out}: an arena is already running in this folder") from None
        yield
    finally:
        handle.close()


def running(out: Path) -> bool:
    """Whether an arena runs in `out` now (it holds the lock)."""
    path = out / LOCK
    if not path.is_file():
        return False
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def unit_seed(key: bytes, unit: int, label: str = "arena/unit") -> int:
    """The deal of unit `unit`: 128 bits from the arena's secret deal key."""
    digest = hmac.new(key, f"{label}/{unit}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[: SEED_BITS // 8], "big")


def deal_of(ledger: ArenaLedger, unit: Unit, key: bytes) -> int:
    """The deal a unit is played on. A final's units are numbered from 0 in the final
    (`arena/final/K`), so a final's deals do not depend on how many units the arena
    played before it: with a pinned `deal_key`, a final is dealt the same every time."""
    if unit.stage == "final":
        number = sum(1 for u in ledger.units(stage="final") if u.id < unit.id)
        return unit_seed(key, number, "arena/final")
    return unit_seed(key, unit.id)


def rate(versions: list[Version], rec: Record) -> list[tuple[float, float]]:
    """Each seat's (μ, σ) after the game: OpenSkill's Plackett-Luce, by final ranks."""
    model = rating_model()
    teams = [[model.rating(mu=v.mu, sigma=v.sigma, name=v.name)] for v in versions]
    new = model.rate(teams, ranks=[float(r) for r in rec.ranks])
    return [(t[0].mu, t[0].sigma) for t in new]


def fault_check(version: Version, max_rate: float, window: int) -> tuple[str, str] | None:
    """Why `version` must be suspended, and the evidence (JSON), or None."""
    recent = version.recent[-window:]
    if len(recent) < min(MIN_WINDOW, window):
        return None
    bad = [r for r in recent if r[1]]
    share = len(bad) / len(recent)
    if share <= max_rate:
        return None
    reason = (
        f"faults in {len(bad)} of its last {len(recent)} games ({share:.0%}), over "
        f"max_fault_rate = {max_rate:g}"
    )
    evidence = json.dumps([{"game": g, "fault": d} for g, _, d in bad])
    return reason, evidence


@dataclass
class ArenaRun:
    """One run of the arena: what is in play, and how to reach the ledger and bots."""

    arena: ArenaConfig
    ledger: ArenaLedger
    console: Console
    jobs: int
    quiet: bool = False
    server: Any = None  # a BotServer (the pool's TcpBots, with admit and ready) for tcp bots
    site: ArenaSite | None = None
    auto: str | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(secrets_seed()))
    in_play: dict[int, Unit] = field(default_factory=dict)
    busy: set[str] = field(default_factory=set)
    validating: str | None = None
    pools: dict[int, BotPool] = field(default_factory=dict)
    wake: trio.Event = field(default_factory=trio.Event)
    recorded: int = 0
    turn: int = 0  # which table size the next new table takes
    background: trio.Nursery | None = None  # where the refit runs
    refitting: bool = False
    cluster: Cluster | None = None  # units without a tcp seat play on its workers
    checked: set[str] = field(default_factory=set)  # the blobs the workers were checked for
    waiting: str | None = None  # the last "waiting for entries" line said
    authors_at_end: int = 0  # authors with an active version when the run ended
    live: LiveFeed | None = None  # `arena run --live`: follows the games played here

    def say(self, line: str) -> None:
        if not self.quiet:
            self.console.print(shown(line), markup=False, highlight=False, soft_wrap=True)

    def poke(self) -> None:
        self.wake.set()
        self.wake = trio.Event()

    # ------------------------------------------------------------------ configs

    def config_for(self, size: int, versions: list[Version]) -> LeagueConfig:
        return self.arena.table_config(
            size, [without_author(v.bot) for v in versions], auto=self.auto, check_folders=False
        )

    def pool(self, size: int, config: LeagueConfig, nursery: trio.Nursery) -> BotPool:
        pool = self.pools.get(size)
        if pool is None:
            server: TcpBots | None = self.server
            pool = BotPool(config, nursery, self.arena.out / "stderr", server)
            self.pools[size] = pool
        pool.config = config
        return pool

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Until `referee arena stop` (or Ctrl-C): validate, match, play, record."""
        key = await self.ledger.in_thread(self.ledger.secret, "deal_key")
        seed_key = await self.ledger.in_thread(self.ledger.secret, "bot_seed_key")
        self.ledger.set_meta("stop", None)
        async with trio.open_nursery() as procs:
            try:
                async with trio.open_nursery() as games:
                    self.background = games
                    games.start_soon(self._watch_stop, games.cancel_scope)
                    for unit in self.ledger.units("open", "arena"):
                        self._start_unit(games, procs, unit, key, seed_key)
                    while True:
                        await self._step(games, procs, key, seed_key)
                        with trio.move_on_after(POLL_S):
                            await self.wake.wait()
            finally:
                with trio.CancelScope(shield=True):
                    for pool in self.pools.values():
                        await pool.close()
                procs.cancel_scope.cancel()

    async def _watch_stop(self, scope: trio.CancelScope) -> None:
        while True:
            await trio.sleep(POLL_S)
            stop = await self.ledger.in_thread(self.ledger.meta, "stop")
            if stop is not None:
                await self.ledger.in_thread(self.ledger.set_meta, "stop", None)
                self.say("stop asked for (referee arena stop): the games in play are abandoned")
                scope.cancel()
                return

    async def _step(
        self, games: trio.Nursery, procs: trio.Nursery, key: bytes, seed_key: bytes
    ) -> None:
        versions = await self.ledger.in_thread(self.ledger.versions, ("pending", "active"))
        for v in versions:
            if v.status == "pending" and self.validating is None:
                self.validating = v.name
                games.start_soon(self._validate, v, key, seed_key)
        self._forget_retired(versions)
        active = [v for v in versions if v.status == "active"]
        while len(self.in_play) < self.jobs:
            seats = await self._match(active)
            if seats is None:
                self._say_waiting(active)
                return
            self.waiting = None
            size = len(seats)
            tcp = any(v.tcp for v in seats)
            count = size if self.arena.arena.duplicate and not tcp else 1
            unit = await self.ledger.in_thread(
                self.ledger.open_unit, "arena", size, [v.name for v in seats], count
            )
            self._start_unit(games, procs, unit, key, seed_key)

    def _say_waiting(self, active: list[Version]) -> None:
        """Say once that no table can be filled while nothing plays or validates."""
        if self.in_play or self.validating is not None:
            return
        need = min(self.arena.sizes)
        authors = len({v.author for v in active})
        line = (
            f"waiting for entries: {len(active)} active versions of {authors} authors can "
            f"play; a table needs {need} of distinct authors (referee arena add)"
        )
        if any(v.tcp for v in active):
            line += "; tcp versions play once they are connected"
        if line != self.waiting:
            self.waiting = line
            self.say(line)

    def _forget_retired(self, versions: list[Version]) -> None:
        """End the kept processes of versions that play no more."""
        live = {v.name for v in versions if v.status == "active"} | self.busy
        for pool in self.pools.values():
            for name in [n for n, idle in pool.idle.items() if idle and n not in live]:
                pool.nursery.start_soon(pool.retire, name)

    async def _match(self, active: list[Version]) -> list[Version] | None:
        """The versions of the next new table, or None when none can be filled now."""
        now = time.time()
        free = [
            v for v in active if v.name not in self.busy and (not v.tcp or self._connected(v.name))
        ]
        if len(free) < min(self.arena.sizes):
            return None
        burst = self.arena.arena.newcomer_games
        met = await self.ledger.in_thread(_burst_meetings, self.ledger, free, burst)
        sizes = self.arena.sizes
        # Enough of each one's history for the largest threshold of any table size: a
        # pair not met within it is overdue at every size.
        window = max(matchmaking.overdue_games(len(active), s) for s in sizes)
        seen = await self.ledger.in_thread(_histories, self.ledger, free, window)
        candidates = [
            matchmaking.Candidate(
                name=v.name,
                author=v.author,
                mu=v.mu,
                games=v.games,
                idle_s=max(0.0, now - v.last_end),
                burst=max(0, burst - v.games),
                met=met.get(v.name, {}),
                since=seen[v.name][0],
                last=seen[v.name][1],
            )
            for v in free
        ]
        pairs = await self.ledger.in_thread(self.ledger.pair_counts, now)
        by_name = {v.name: v for v in free}
        for step in range(len(sizes)):
            size = sizes[(self.turn + step) % len(sizes)]
            chosen = matchmaking.table(
                candidates,
                size,
                self.rng,
                pairs=pairs,
                pair_cap=self.arena.arena.pair_cap_per_hour,
                overdue=matchmaking.overdue_games(len(active), size),
                others_busy=bool(self.in_play),
            )
            if chosen is not None:
                self.turn += 1
                return [by_name[c.name] for c in chosen]
        return None

    def _connected(self, name: str) -> bool:
        return self.server is not None and bool(self.server.ready(name))

    def _start_unit(
        self, games: trio.Nursery, procs: trio.Nursery, unit: Unit, key: bytes, seed_key: bytes
    ) -> None:
        self.in_play[unit.id] = unit
        self.busy.update(unit.seats)
        games.start_soon(self.play_unit, procs, unit, key, seed_key)

    async def play_unit(self, procs: trio.Nursery, unit: Unit, key: bytes, seed_key: bytes) -> None:
        """Play the games of `unit` the ledger does not hold, one after the other; the
        unit is abandoned when one of its versions no longer plays."""
        self.in_play[unit.id] = unit
        self.busy.update(unit.seats)
        seed: int | None = None
        try:
            done = await self.ledger.in_thread(self.ledger.recorded_rotations, unit.id)
            seed = await self.ledger.in_thread(deal_of, self.ledger, unit, key)
            if self.live is not None:  # the unit's games are its deal's
                planned = [self._game(unit, r, seed) for r in range(unit.games)]
                self.live.schedule(
                    ((g.game_id, list(g.seats), seed) for g in planned),
                    (g.game_id for g in planned if g.rotation in done),
                )
            for rotation in range(unit.games):
                if rotation in done:
                    continue
                versions = [await self.ledger.in_thread(self.ledger.version, n) for n in unit.seats]
                gone = [
                    n
                    for n, v in zip(unit.seats, versions, strict=True)
                    if v is None or v.status in ("removed", "suspended", "rejected")
                ]
                if gone:
                    await self._abandon(unit, seed, f"{', '.join(gone)} no longer plays")
                    return
                known = [v for v in versions if v is not None]
                config = self.config_for(unit.size, known)
                game = self._game(unit, rotation, seed)
                if self.cluster is not None and not any(v.tcp for v in known):
                    rec = await self._remote(config, game, seed_key)
                else:
                    pool = self.pool(unit.size, config, procs)
                    logs = self.arena.out / "logs"
                    rec = await play_scheduled(config, game, pool, logs, seed_key, live=self.live)
                await self._keep(unit, rotation, rec)
        except ConfigError as exc:
            await self._abandon(unit, seed, str(exc))
        finally:
            self.in_play.pop(unit.id, None)
            self.busy.difference_update(unit.seats)
            self.poke()
        keep = self.arena.arena.keep_replays
        if keep:
            site = None if self.site is None else self.site.folder
            await self.ledger.in_thread(prune_replays, self.arena.out, self.ledger, keep, site)

    @staticmethod
    def _game(unit: Unit, rotation: int, seed: int) -> Scheduled:
        return Scheduled(
            index=unit.first + rotation,
            unit=unit.id,
            table=0,
            deal=unit.id,
            rotation=rotation,
            seed=seed,
            seats=unit.seats_of(rotation),
        )

    async def _abandon(self, unit: Unit, seed: int | None, why: str) -> None:
        """The unit ends here: no other game of its deal will be played (so the live
        feed may show those that were)."""
        await self.ledger.in_thread(self.ledger.close_unit, unit.id, "abandoned")
        self.say(f"unit {unit.id} abandoned: {why}")
        if self.live is not None and seed is not None:
            await self.live.close_deal(seed)

    async def _remote(self, config: LeagueConfig, game: Scheduled, seed_key: bytes) -> Record:
        """Play one game on the cluster (its bots started by the worker), and write its
        log here: the record, with the log's digest as written here."""
        from ..league.apart import Apart
        from ..league.remote import league_blob
        from ..league.run import log_digest, write_remote

        assert self.cluster is not None
        cluster = self.cluster
        blob = league_blob(config)
        if blob.digest not in self.checked:
            await trio.to_thread.run_sync(cluster.check, config, blob, [game])
            self.checked.add(blob.digest)
        got: list[Record] = []
        out = self.arena.out

        async def deliver(played: Scheduled, done: Any) -> None:
            log_path = out / "logs" / f"{played.game_id}{log_suffix(done.log)}"
            await trio.to_thread.run_sync(write_remote, log_path, out / "stderr", done)
            digest = await trio.to_thread.run_sync(log_digest, log_path)
            got.append(dataclasses.replace(done.record, log_path=str(log_path), log_sha256=digest))
            if self.live is not None:  # shown with its deal: not followed move by move
                await self.live.end(played.game_id, log_path, list(played.seats), played.seed)

        def notice(text: str) -> None:
            self.say(text)

        apart = Apart()
        queue = apart.queue(iter([game]))
        await cluster.play(blob, apart, queue, seed_key, config, deliver, notice)
        if not got:
            raise ConfigError(f"{game.game_id}: the cluster returned no result")
        return got[0]

    async def _keep(self, unit: Unit, rotation: int, rec: Record) -> None:
        window = self.arena.arena.fault_window
        after = await self.ledger.in_thread(self.ledger.record, unit, rotation, rec, rate, window)
        if after is None:
            return
        self.recorded += 1
        table = ", ".join(f"{n} {s}" for n, s in zip(rec.seats, rec.scores, strict=True))
        self.say(f"{rec.game_id}  {table}  (unit {unit.id}, game {rotation + 1} of {unit.games})")
        for v in after:
            found = fault_check(v, self.arena.arena.max_fault_rate, window)
            if found is not None and v.status == "active":
                reason, evidence = found
                await self.ledger.in_thread(
                    self.ledger.set_status, v.name, "suspended", reason, evidence
                )
                self.say(f"{v.name} suspended: {reason}")
        if self.site is not None:
            self.site.recorded()
        due = not self.refitting and self.background is not None
        if due and await self.ledger.in_thread(refit_due, self.ledger):
            assert self.background is not None
            self.refitting = True
            self.background.start_soon(self._refit)

    async def _refit(self) -> None:
        """The order-free refit, on a connection of its own: the games play on."""
        try:
            await trio.to_thread.run_sync(_refit_at, self.ledger.path, abandon_on_cancel=True)
        finally:
            self.refitting = False

    async def _validate(self, version: Version, key: bytes, seed_key: bytes) -> None:
        try:
            if version.tcp:  # the arena cannot start copies of a program it does not run
                await self.ledger.in_thread(
                    self.ledger.set_status,
                    version.name,
                    "active",
                    "a tcp bot: no validation (its faults count from its first game)",
                )
                if self.server is not None:
                    self.server.admit(version.name, bytes.fromhex(version.bot["token_sha256"]))
                self.say(f"{version.name} joins (tcp): it plays once it is connected")
                return
            problem = await trio.to_thread.run_sync(sandbox_problem, self.arena, version, self.auto)
            if problem is not None:
                await self.ledger.in_thread(
                    self.ledger.set_status, version.name, "rejected", problem
                )
                self.say(f"{version.name} rejected: {problem}")
                return
            if not self.arena.arena.validate:
                await self.ledger.in_thread(
                    self.ledger.set_status, version.name, "active", "validation is off"
                )
                return
            self.say(
                f"{version.name}: validating (check-bot, then a game against copies of itself)"
            )
            unit = int(await self.ledger.in_thread(self.ledger.meta, "next_idx") or 0)
            seed = unit_seed(key, -1 - unit)  # never a deal of the arena's own units
            verdict = await validate(self.arena, self.ledger, version, seed, seed_key, self.auto)
            status = "active" if verdict.ok else "rejected"
            await self.ledger.in_thread(
                self.ledger.set_status, version.name, status, verdict.reason, "", verdict.stderr
            )
            word = "accepted" if verdict.ok else "rejected"
            self.say(f"{version.name} {word}: {verdict.reason}")
            if self.site is not None:
                self.site.recorded()
        finally:
            self.validating = None
            self.poke()


def _refit_at(path: Path) -> None:
    ledger = ArenaLedger(path)
    try:
        make_refit(ledger)
    finally:
        ledger.close()


def secrets_seed() -> int:
    return int.from_bytes(os.urandom(8), "big")


def _histories(
    ledger: ArenaLedger, free: list[Version], games: int
) -> dict[str, tuple[dict[str, int], frozenset[str]]]:
    """Each free version's games since it met each other one (within its last `games`)
    and the versions of its last table (`matchmaking.history`)."""
    return {v.name: matchmaking.history(v.name, ledger.recent_seats(v.name, games)) for v in free}


def _burst_meetings(
    ledger: ArenaLedger, free: list[Version], burst: int
) -> dict[str, dict[str, int]]:
    """For each version still in its newcomer burst: how often it met each other."""
    met: dict[str, dict[str, int]] = {}
    for v in free:
        if 0 < v.games < burst:
            counts: dict[str, int] = {}
            for g in ledger.games_of(v.name, burst):
                for other in g.seats:
                    if other != v.name:
                        counts[other] = counts.get(other, 0) + 1
            met[v.name] = counts
    return met


def seed_entries(arena: ArenaConfig, ledger: ArenaLedger) -> list[str]:
    """Add the bots the arena file lists and the ledger does not hold yet (no upload
    counted); the ledger is the truth after that: `arena update` changes a version."""
    added = []
    for bot in arena.bots:
        if ledger.entry(bot["name"]):
            continue
        table = without_author(bot)
        entry = table.pop("name")
        if table.get("transport") != "tcp":
            table["cwd"] = str((arena.base / table.get("cwd", ".")).resolve())
            if isinstance(table.get("command"), str):
                table["command"] = shlex.split(table["command"])
        ledger.add(
            entry,
            bot["author"],
            table,
            update=False,
            max_active=1 << 30,
            per_day=1 << 30,
            counted=False,
        )
        added.append(entry)
    return added


def prepare(
    arena: ArenaConfig, raw: dict[str, Any] | None, ledger: ArenaLedger | None = None
) -> ArenaLedger:
    """The arena's folders and ledger, tied to its terms, with the file's bots added:
    what `referee arena add` and the other commands need, made before the arena says it
    listens. `ArenaError` for a ledger made under other terms."""
    ready_folder(arena.out / "logs", "the logs folder")
    ready_folder(arena.out / "stderr", "the stderr folder")
    if ledger is None:
        if running(arena.out):
            raise ArenaError(f"{arena.out}: an arena is already running in this folder")
        ledger = ArenaLedger(arena.out / DB_NAME, create=True)
    try:
        ledger.claim(arena.terms(), {"path": str(arena.path), "data": raw or {}})
        ledger.secret("deal_key", arena.deal_key)
        ledger.secret("bot_seed_key", arena.bot_seed_key)
        seed_entries(arena, ledger)
    except BaseException:
        ledger.close()
        raise
    return ledger


async def run_arena(
    arena: ArenaConfig,
    *,
    jobs: int,
    console: Console,
    quiet: bool = False,
    server: Any = None,
    site: ArenaSite | None = None,
    raw: dict[str, Any] | None = None,
    on_start: Callable[[ArenaRun], None] | None = None,
    cluster: Cluster | None = None,
    live: LiveFeed | None = None,
) -> ArenaRun:
    """Run the arena in `arena.out` until it is stopped; resumes whatever its ledger
    holds; a `live` feed follows its games. `ArenaError` for a folder another arena
    runs in, or made under other terms."""
    out = arena.out
    ledger = prepare(arena, raw)
    try:
        with arena_lock(out):
            prepare(arena, raw, ledger)  # again, now that it holds the folder
            # A validation cut short is made again from the start (its version is still
            # pending): the game it left is over, and may be published.
            for unit in ledger.units("open", "validation"):
                ledger.close_unit(unit.id, "abandoned")
            auto, note = resolve("auto")
            if note:
                console.print(
                    shown(f"warning: bots run without a sandbox here: {note}"),
                    markup=False,
                    highlight=False,
                )
            run = ArenaRun(arena, ledger, console, jobs, quiet, server, site, auto)
            run.cluster = cluster
            run.live = live
            if server is not None:
                for v in ledger.versions(("active",)):
                    if v.tcp:
                        server.admit(v.name, bytes.fromhex(v.bot["token_sha256"]))
            if on_start is not None:
                on_start(run)
            refreshing = site.running() if site is not None else contextlib.nullcontext()
            async with refreshing:
                try:
                    await run.run()
                finally:
                    run.authors_at_end = len({v.author for v in ledger.versions(("active",))})
                    if site is not None:
                        with trio.CancelScope(shield=True):
                            await site.final()
            return run
    finally:
        ledger.close()
