"""Running a league: workers take games from the schedule, bots come from the pool,
each finished game is recorded at once and shown (see `progress`), the standings are
printed every N games when asked and written at the end.

Up to `jobs` games run at once in one trio process, each with its own clocks,
and never two games of one deal at a time (`apart`: here and on a cluster).
A game cut short (Ctrl-C, a crash of the referee) is never recorded, so
`--resume` plays exactly the games the ledger does not hold. A league that cannot
write its own files any more (a full disk) stops as Ctrl-C stops it, and says
which file and how to resume (`LeagueStopped`).

A match (format = "match") has no fixed end: its games are made as they are
needed, each recorded game goes to its `Judge`, and the run stops at the
first unit that crosses a bound of the test, abandoning the games in play.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import logging
import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import trio
from rich.console import Console

from ..bots.sandbox import Hidden, user_line
from ..game import lag
from ..live.feed import LiveFeed
from ..logs.gamelog import log_bytes, log_suffix, sha256_text
from ..logs.outputs import WriteError, disk_full, ready_folder
from ..proof.commitment import (
    COMMITMENT,
    Commitment,
    CommitmentError,
    changed_files,
    mixed_key,
    write_contributions,
    write_reveal,
)
from ..proof.results import ChainState, Signer, results_data, write_checkpoint, write_results
from ..stats import Verdict
from ..text import shown
from .apart import Apart, Queue
from .config import LeagueConfig
from .game import play_scheduled
from .judge import Judge, final_lines, json_result
from .ledger import Ledger, Record
from .output import print_standings as print_standings  # where the commands look for it
from .output import print_table, write_files
from .pool import BotPool, TcpBots
from .progress import Display
from .schedule import Scheduled, games, schedule
from .standings import Standings, compute
from .starts import CannotPlay, Starts
from .terms import league_commitment, league_terms

if TYPE_CHECKING:  # Dask is imported only with --cluster
    from ..proof.keys import SigningKey
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
    judge: Judge | None = None,
    files: bool = True,
    site: LiveSite | None = None,
    beacon: str | None = None,
    say: Callable[[str], None] | None = None,
    live: LiveFeed | None = None,
    apart: Apart | None = None,
    hide: Sequence[Hidden] = (),
) -> Standings:
    """Play every game the ledger does not hold yet, then return the standings.

    TCP bots come from `server` (see `referee.net.server.serve_league`). With a
    `cluster`, games without a TCP seat run on its workers (see `cluster`) and
    `jobs` is the number of games with a TCP seat played here at once. A match
    is judged by `judge` (a silent one if none is given): it is fed the ledger
    first, and the run ends as soon as it decides; its standings count only the
    units the test counted, and carry its summary. The standings files are written
    in the output folder unless `files` is false (a folder removed at the end).
    With a `site`, the results site is refreshed every `site.every` games in the
    background and built at the end (`referee.site.live`).
    A `live` feed (`referee.live`) is given the schedule and follows each game played
    here; it is told when the run ends. (Served by the caller: `commands.league`.)
    `apart`, when given, is shared with other leagues run beside this one whose units
    are the same deals (an event's tables of one round, `referee.event.run`): no two
    games of one unit are then in play at once across all of them. `hide` adds places
    no sandboxed bot may see to the league's own (an event's folder, keys and all).

    Before its first game the league commits to its terms and its deal key
    (`commitment`), mixes in the contributions `[league] mix` names (`beacon`, the
    tcp bots' first nonces), and ties every log and receipt to the commitment; each
    recorded game extends the chain of results, checkpointed every `report_every`
    games, and the run ends by writing results.json (signed when the league signs)
    and, with `reveal = "at-end"` once every game is recorded, the keys. `say` gets
    the lines about the commitment (default: the console, or stderr when quiet)."""
    if config.match is not None and judge is None:
        judge = Judge(config)
    lag.ensure_running()  # the games' clocks leave out this loop's own stalls
    blob = None
    signing = load_signing_key(config)  # before anything is written: a bad key stops here

    def tell(line: str) -> None:
        if say is not None:
            say(line)
        elif quiet:
            return  # the commitment's digest is in its file, and on the site
        elif judge is not None:  # a match's stdout keeps its result alone
            print(shown(line), file=sys.stderr, flush=True)
        else:
            console.print(shown(line), markup=False, highlight=False, soft_wrap=True)

    def warn(line: str) -> None:
        """A line about the commitment said on stderr (to `say`, if given), quiet or not."""
        if say is not None:
            say(line)
        else:
            print(shown(line), file=sys.stderr, flush=True)

    out = config.out
    logs = out / "logs"
    stderr_dir = out / "stderr"
    ready_folder(logs, "the logs folder")  # OutputError: a file where it should be, say
    ready_folder(stderr_dir, "the stderr folder")
    ledger = Ledger(out / "league.db")
    try:
        ledger.claim(config.fingerprint(), resume)
        ledger.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('name', ?), ('bots', ?), ('preset', ?)",
            (config.name, json.dumps([b.name for b in config.bots]), config.rules_preset),
        )
        modes = {b.name: "tcp" if b.tcp else b.spec.sandbox for b in config.bots}
        users = {mode: user_line(mode) for mode in set(modes.values()) if mode != "tcp"}
        ledger.note_sandbox(modes, config.sandbox_note, users)
        ledger.note_lag_warning(config.lag_warning)
        key = ledger.bot_seed_key(config.bot_seed_key)
        committed_key = ledger.deal_key(config.deal_key)
        done = ledger.done()
        public = signing.public.line() if signing is not None else None
        pledge = league_commitment(config, committed_key, public_key=public, recorded=len(done))
        ledger.db.execute("INSERT OR REPLACE INTO meta VALUES ('commitment', ?)", (pledge.digest,))
        config = dataclasses.replace(config, commitment=pledge.digest)
        if pledge.new:
            tell(
                f"commitment {pledge.digest} ({os.path.normpath(out / COMMITMENT)}): publish "
                "it before the games; `referee verify` checks the league against it"
            )
        else:
            tell(f"commitment {pledge.digest} ({os.path.normpath(out / COMMITMENT)})")
            changed = changed_files(pledge, league_terms(config))
            if changed and config.allow_updates:
                warn(
                    f"note: the files of {', '.join(changed)} changed since the commitment, "
                    "which allows updates ([league] allow_updates): their games from now on "
                    "are played by the new version, and each game's log names its files"
                )
            elif changed:
                warn(
                    f"warning: the files of {', '.join(changed)} changed since the commitment: "
                    "their games from now on are played by another version than it names, "
                    "and `referee verify` fails on each of them (only a league committed "
                    "with [league] allow_updates = true may update its bots)"
                )
        contributions = await _contributions(config, ledger, pledge, beacon, server, tell)
        deal_key = mixed_key(committed_key, contributions)
        signer = Signer(pledge.digest, signing)
        links = ChainState.of(pledge.digest, ledger.records() if done else [])
        if cluster is not None:
            from .remote import league_blob

            blob = league_blob(config)
            # Which bots sit together does not depend on the deal key.
            remote_games = [g for g in _seatings(config, bytes(32)) if not _has_tcp(config, g)]
            await trio.to_thread.run_sync(cluster.check, config, blob, remote_games)
        # For the results site: the progress, and when a deal's games are all played
        # (its hands are then no longer a secret of the games still to come).
        if config.match is None:
            planned = schedule(config, deal_key)
            unit_games = max(Counter(g.unit for g in planned).values(), default=1)
            meta = [("scheduled", str(len(planned))), ("unit_games", str(unit_games))]
            if live is not None:
                live.schedule(
                    ((g.game_id, list(g.seats), g.seed) for g in planned),
                    (g.game_id for g in planned if g.index in done),
                )
        else:  # a match's unit is one deal played twice; it may have no planned end
            if live is not None:
                live.per_deal = 2  # NEW's game and BASE's, on one deal
            total_games = _total(config)
            meta = [("unit_games", "2")]
            if total_games is not None:
                meta.append(("scheduled", str(total_games)))
        ledger.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta)
        # A match's report is kept when a run of it ends: none while it runs again.
        ledger.db.execute("DELETE FROM meta WHERE key = 'match'")
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

        # No two games of one deal in play at once, wherever they are played.
        apart = apart if apart is not None else Apart()
        local = apart.queue(todo(True))
        names = [b.name for b in config.bots]
        display = Display(console, config.name, total or 0, len(done), quiet or judge is not None)
        display.counters.recorded.update(done)
        stop = trio.CancelScope()  # a match's test has decided
        if site is not None and not quiet:
            site.notice = display.notice
        starts = Starts.of(ledger.records() if done else [], config.start_failures)
        where: dict[int, str | None] = {}  # the cluster worker of each held game

        def say_failed(line: str) -> None:
            if quiet:  # a match, or --quiet: stdout keeps only the result
                print(shown(line), file=sys.stderr, flush=True)
            else:
                display.notice(line)

        with display:
            keep = partial(
                _keep, display, ledger, names, report_every, on_record, site, links, signer, out
            )

            async def update(record: Record, worker: str | None) -> None:
                lines, ready = starts.see(record)
                for line in lines:
                    say_failed(line)
                if starts.stopped is not None:
                    stop.cancel()  # the games in play are abandoned, never counted
                    return
                where[record.idx] = worker
                for rec in ready:
                    recorded = await keep(rec, where.pop(rec.idx, None))
                    if recorded and judge is not None and await judge.add(rec):
                        stop.cancel()  # the games in play are abandoned, never counted

            refreshing = site.running() if site is not None else contextlib.nullcontext()
            async with refreshing, trio.open_nursery() as procs:
                pool = BotPool(config, procs, stderr_dir, server, hide)
                try:
                    with stop:
                        async with trio.open_nursery() as workers:
                            if cluster is not None and blob is not None:
                                deliver = partial(_deliver, logs, stderr_dir, ledger, update, live)

                                def notice(text: str) -> None:
                                    if quiet:
                                        log.warning("%s", shown(text))
                                    else:
                                        display.notice(text)

                                remote = apart.queue(todo(False))
                                workers.start_soon(
                                    cluster.play, blob, apart, remote, key, config, deliver, notice
                                )
                            for _ in range(jobs):
                                workers.start_soon(
                                    _worker,
                                    config,
                                    apart,
                                    local,
                                    pool,
                                    logs,
                                    key,
                                    update,
                                    signer,
                                    live,
                                )
                finally:
                    await pool.close()
                    if server is not None:
                        await server.close()
                    procs.cancel_scope.cancel()
        if starts.stopped is None and (judge is None or judge.verdict is None):
            starts.finish()  # every game was played: none may be left held
        if starts.stopped is not None:
            starts.drop_held()
            raise CannotPlay(starts.stopped)
        if judge is not None and config.match is not None:
            # The standings of the units the test counted: not the stored totals, which
            # also hold the games of units after the one that decided.
            counted = [r for r in ledger.records() if r.unit < judge.counted]
            standings = compute(names, counted, ledger.sandbox(), ledger.lag_warning())
            match = config.match
            standings.match = {"new": match.new, "base": match.base}
            standings.match.update(json_result(judge.summary()))
            # For `referee standings`: the report, and which units it counted.
            kept = {**standings.match, "counted_units": judge.counted}
            ledger.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('match', ?)", (json.dumps(kept),)
            )
        else:
            standings = ledger.standings(names, history=True)  # the stored totals: no recount
        standings.commitment = pledge.digest
        ended = _ended(config, ledger, judge)
        if ended:
            ledger.db.execute("INSERT OR REPLACE INTO meta VALUES ('ended', '1')")
        scheduled = _total(config)
        results = results_data(
            config.name,
            signer,
            ledger.records(),
            standings.to_json(),
            scheduled=scheduled,
            ended=ended,
            allow_updates=config.allow_updates,
        )
        write_results(out, signer, results)
        if ended and config.reveal == "at-end":
            path = write_reveal(out, pledge.digest, committed_key, key)
            tell(f"every game is recorded: the deal key is revealed in {path}")
        if files:
            write_files(standings, out, f"{config.name}: standings")
        if site is not None:
            site.report = await site.final()
        return standings
    except BaseException as exc:
        failed = _write_failed(exc, ledger, out)
        if failed is None:
            raise
        raise LeagueStopped(failed, _recorded(ledger), ledger.path) from None
    finally:
        ledger.close()


def load_signing_key(config: LeagueConfig) -> SigningKey | None:
    """The organiser's key, when the league signs (`ProofError` for a bad one)."""
    if config.sign is None:
        return None
    from ..proof.keys import ProofError, SigningKey

    try:
        return SigningKey.load(config.sign)
    except ProofError as exc:
        raise CommitmentError(f"league.sign: {exc}") from None


def _ended(config: LeagueConfig, ledger: Ledger, judge: Judge | None) -> bool:
    """Whether the league is over: every scheduled game recorded, or the match decided."""
    if config.match is not None:
        if judge is not None and judge.verdict is not None:
            return True
        units = config.match.max_units
        return units is not None and ledger.count() >= 2 * units
    return ledger.count() >= len(schedule(config, bytes(32)))


async def _contributions(
    config: LeagueConfig,
    ledger: Ledger,
    pledge: Commitment,
    beacon: str | None,
    server: TcpBots | None,
    tell: Callable[[str], None],
) -> dict[str, Any] | None:
    """What `[league] mix` mixes into the deals: kept from the league's first run, or
    gathered now (the beacon given, each tcp bot's first nonce). `CommitmentError`
    when the beacon is missing, differs from the one the league started with, or could
    have been chosen knowing nothing of the commitment's publication."""
    row = ledger.db.execute("SELECT value FROM meta WHERE key='contributions'").fetchone()
    if row is not None:
        kept: dict[str, Any] = json.loads(row[0])
        if beacon is not None and kept.get("beacon") != beacon:
            raise CommitmentError(
                "--beacon differs from the beacon this league started with; resume without "
                "--beacon, or with the same value"
            )
        return kept or None
    if not config.mix:
        if beacon is not None:
            raise CommitmentError('--beacon: the league does not mix one (add mix = ["beacon"])')
        return None
    contributions: dict[str, Any] = {}
    if "beacon" in config.mix:
        if beacon is None:
            raise CommitmentError(
                'league.mix has "beacon": start with --beacon VALUE, the public value '
                "announced for it"
            )
        if pledge.new:
            raise CommitmentError(
                'league.mix has "beacon", which must be chosen after the commitment is '
                f"published: run `referee commit {config.path}` first, publish the digest "
                "it prints, then start with --beacon once the value is out"
            )
        contributions["beacon"] = beacon
    if "entrants" in config.mix:
        tcp = [b.name for b in config.bots if b.tcp]
        if server is None:
            raise CommitmentError('league.mix has "entrants": run it with `referee serve`')
        wait_s = config.server.entrants_ms / 1000
        tell(
            f"waiting up to {wait_s:g} s for the first login of every tcp bot "
            f"({', '.join(tcp)}): their nonces go into the deal seeds"
        )
        nonces = await server.first_nonces(tcp, wait_s)
        missing = [n for n, v in nonces.items() if v is None]
        if missing:
            tell(f"not logged in, so no nonce: {', '.join(missing)}")
        contributions["nonces"] = dict(sorted(nonces.items()))
    ledger.db.execute("INSERT INTO meta VALUES ('contributions', ?)", (json.dumps(contributions),))
    write_contributions(config.out, pledge.digest, contributions)
    return contributions


class LeagueStopped(Exception):
    """A league stopped because one of its own files could not be written (its disk is
    full): the games recorded are kept whole in the ledger, the games in progress were
    abandoned (not scored, their logs left plain and incomplete), and a resumed league
    plays them again."""

    def __init__(self, cause: WriteError, recorded: int | None, ledger: Path) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.recorded = recorded
        self.ledger = ledger

    def line(self, resume: str) -> str:
        """What happened and how to go on, in one line; `resume` says how to resume."""
        n = self.recorded
        games = "recorded games" if n is None else f"{n} recorded game{'' if n == 1 else 's'}"
        kept = "is" if n == 1 else "are"
        then = "Free some space, then" if self.cause.full else "Once it can be written,"
        return (
            f"{self.cause}; the league stopped: its {games} {kept} kept in {self.ledger}, the "
            f"games in progress were abandoned (not scored). {then} {resume}"
        )


def _recorded(ledger: Ledger) -> int | None:
    """How many games the ledger holds, if it can still say."""
    try:
        return ledger.count()
    except sqlite3.Error:
        return None


def _write_failed(exc: BaseException, ledger: Ledger, out: Path) -> WriteError | None:
    """The write that stopped the league, if `exc` (perhaps a group of what every job
    raised) holds one: a `WriteError`, or an OSError or database error saying that the
    disk is full. None for anything else, and for Ctrl-C."""
    leaves = list(_leaves(exc))
    if any(isinstance(e, KeyboardInterrupt) for e in leaves):
        return None
    for e in leaves:
        if isinstance(e, WriteError):
            return e
    for e in leaves:
        if disk_full(e):
            return WriteError.of(e, out if isinstance(e, OSError) else ledger.path)
    return None


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


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
    apart: Apart,
    games: Queue,
    pool: BotPool,
    logs: Path,
    key: bytes,
    keep: Callable[[Record, str | None], Awaitable[object]],
    signer: Signer,
    live: LiveFeed | None = None,
) -> None:
    """One job: the next game whose deal is not in play, until none is left."""
    while (game := await apart.take(games)) is not None:
        try:
            record = await play_scheduled(config, game, pool, logs, key, signer=signer, live=live)
        finally:
            apart.done(game)  # its bots are back in the pool: the deal's next game may start
        await keep(record, None)


def _has_tcp(config: LeagueConfig, game: Scheduled) -> bool:
    """A game with a TCP seat is played here, where the connections are."""
    tcp = {b.name for b in config.bots if b.tcp}
    return any(name in tcp for name in game.seats)


async def _deliver(
    logs: Path,
    stderr_dir: Path,
    ledger: Ledger,
    keep: Callable[[Record, str | None], Awaitable[object]],
    live: LiveFeed | None,
    game: Scheduled,
    done: Done,
) -> None:
    """Write a game played on a cluster worker: its log (whole, or not at all), the
    stderr its bots wrote, then its ledger row, and hand it to the `live` feed (which
    shows it with its deal: a worker's game is not followed move by move). A game
    already recorded is skipped.

    The writes sync to disk, so they run in threads: games with TCP seats play on
    this loop meanwhile."""
    if await ledger.in_thread(ledger.has, game.index):  # never overwrite a recorded log
        return
    log_path = logs / f"{game.game_id}{log_suffix(done.log)}"
    await trio.to_thread.run_sync(write_remote, log_path, stderr_dir, done)
    # The digest of the log as written here, whatever the worker said.
    digest = await trio.to_thread.run_sync(log_digest, log_path)
    record = dataclasses.replace(done.record, log_path=str(log_path), log_sha256=digest)
    await keep(record, done.worker)
    if live is not None:
        await live.end(game.game_id, log_path, list(game.seats), game.seed)


def log_digest(path: Path) -> str:
    """A log file's digest: of its bytes uncompressed."""
    return sha256_text(log_bytes(path))


def write_remote(log_path: Path, stderr_dir: Path, done: Done) -> None:
    """The log of a game played on a worker, whole or not at all (`WriteError` when it
    cannot be written), and its bots' stderr, which may be dropped: a bot's stderr that
    cannot be written costs no game."""
    from .cluster import worker_tag

    part = log_path.with_name(f".{log_path.name}.part")
    try:
        with part.open("wb") as handle:
            handle.write(done.log)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(part, log_path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise WriteError.of(exc, log_path) from None
    tag = worker_tag(done.worker)
    for piece in done.stderr:
        stem = piece.process.removesuffix(".stderr")
        path = stderr_dir / f"{stem}@{tag}.stderr"
        try:
            with path.open("ab") as handle:
                handle.write(piece.data)
        except OSError as exc:
            log.warning("%s: cannot write (%s): that stderr of the bot is dropped", path, exc)


async def _keep(
    display: Display,
    ledger: Ledger,
    names: list[str],
    report_every: int,
    on_record: Callable[[Record], None] | None,
    site: LiveSite | None,
    links: ChainState,
    signer: Signer,
    out: Path,
    record: Record,
    worker: str | None,
) -> bool:
    """Record a finished game and show it; every `report_every` games, the standings so far.
    False when the ledger already held it (a cluster's late duplicate).

    The commit syncs to disk: in a thread, while the other games play on. The
    standings are read from the ledger's totals in the same turn, so they hold
    exactly the games recorded by then. The results site, if any, is refreshed in
    the background."""

    def commit() -> tuple[bool, Standings | None]:
        # In the ledger's thread, one game at a time: the chain follows the record order.
        if not ledger.record(record, worker):
            return False, None
        links.add(record.game_id, record.log_sha256)
        due = report_every and ledger.count() % report_every == 0
        if due:
            write_checkpoint(out, signer, links.games, links.last)
        return True, ledger.standings(names) if due else None

    recorded, report = await ledger.in_thread(commit)
    if not recorded:
        return False
    if on_record is not None:
        on_record(record)
    display.finished(record)
    if site is not None:
        site.recorded(display.counters.done)
    if report is not None:
        title = f"{display.title}: after {report.games} games"
        print_table(display.console, report, title, explain=False)
    return True


class Ending(Protocol):
    """The live line of a match (`referee.commands.match_lines.Lines`), ended before
    the final block."""

    def end(self) -> None: ...


def print_outcome(
    console: Console,
    config: LeagueConfig,
    standings: Standings,
    judge: Judge | None,
    lines: Ending | None = None,
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
        console.print(shown(line), markup=False, highlight=False, soft_wrap=True)
    return 0 if judge.verdict is Verdict.H1 else 1
