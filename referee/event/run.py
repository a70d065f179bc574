"""Running an event: stage after stage, round after round, each table a league of its
own (duplicate deals under every rotation of its seats) in
`OUT/stage-S/round-RR/table-T/`, played by `referee.league.run.run_league`.

A round's tables are made from the results of the rounds before it (`pairing`), so
they are only known once those are recorded; what is recorded is the tables' ledgers,
and the event's own file (`event.json`) is rewritten from them after each round. A
run stopped anywhere (Ctrl-C, kill -9) and started again with --resume re-derives the
same tables from the same results, resumes the table that was in play and goes on:
the same games as a straight run, with the keys pinned or kept (`event.db`).

Every table of a round plays the same board: its deals come from the round's key
(HMAC of the event's deal key), and a table is one combination, so its deal seeds
are the round's. No bot sits at two tables of a round, and a round's tables are all
played before the next round's are made.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from rich.console import Console

from ..bots.sandbox import Hidden
from ..league.apart import Apart
from ..league.config import LeagueConfig
from ..league.ledger import Ledger
from ..league.records import Record
from ..league.run import run_league
from ..league.starts import CannotPlay
from ..logs.outputs import ready_folder
from .config import EventConfig, Stage
from .pairing import (
    GameResult,
    PointsRule,
    Running,
    TableResult,
    add_bye,
    add_table,
    final_order,
    group_sizes,
    knockout_key,
    knockout_out,
    snake_groups,
    swiss_round,
    table_scores,
)
from .terms import STATE, event_commitment, reveal_event

log = logging.getLogger(__name__)


class EventError(Exception):
    """The event cannot go on: the one line to show."""


class MissingTable(EventError):
    """A re-derived event reached a round its folder does not hold yet (one in play)."""


@dataclass
class RoundRecord:
    """A round as played: its tables, byes, scores and who left after it."""

    index: int
    tables: list[list[str]]
    byes: list[str]
    scores: dict[str, float]
    out: list[str] = field(default_factory=list)  # knockout: eliminated after it, worst first
    withdrawn: list[str] = field(default_factory=list)  # forfeited every game of the round
    folders: list[str] = field(default_factory=list)


@dataclass
class StageRecord:
    """A stage as played: who entered (seeded), its rounds, its ranking and who advanced."""

    index: int
    format: str
    entries: list[str]
    rounds: list[RoundRecord] = field(default_factory=list)
    ranking: list[str] = field(default_factory=list)
    advanced: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # entry -> how it placed (the site)
    totals: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class EventRecord:
    name: str
    table: int
    points: Any
    stages: list[StageRecord] = field(default_factory=list)
    ended: bool = False

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def round_key(deal_key: bytes, stage: int, rnd: int) -> bytes:
    """The deal key of one round's tables: every table of the round plays its deals."""
    return hmac.new(deal_key, f"event/stage/{stage}/round/{rnd}".encode(), hashlib.sha256).digest()


def table_seed_key(bot_key: bytes, stage: int, rnd: int, table: int) -> bytes:
    """The bots' own seed key at one table."""
    text = f"event/stage/{stage}/round/{rnd}/table/{table}"
    return hmac.new(bot_key, text.encode(), hashlib.sha256).digest()


def table_config(
    cfg: EventConfig,
    stage: Stage,
    rnd: int,
    number: int,
    seats: Sequence[str],
    deal_key: bytes,
    bot_key: bytes,
    *,
    round_robin: bool = False,
) -> LeagueConfig:
    """The league of one table (or, for a round-robin stage, of the whole stage)."""
    base = cfg.base
    by_name = {b.name: b for b in base.bots}
    size = cfg.table if round_robin else len(seats)
    folder = Plan.of(cfg).folder(stage.index, rnd, number)
    return dataclasses.replace(
        base,
        name=f"{cfg.name} stage {stage.index} round {rnd} table {number}",
        bots=tuple(by_name[s] for s in seats),
        table=size,
        rules=dataclasses.replace(base.rules, players=size),
        format="round-robin",
        deals=stage.deals,
        duplicate=True,
        out=folder,
        deal_key=round_key(deal_key, stage.index, rnd),
        bot_seed_key=table_seed_key(bot_key, stage.index, rnd, number),
        start_failures=0,  # an entry that cannot start forfeits, and is withdrawn
        reveal="manual",  # the round's other tables may still play its board
        mix=(),
        commitment=None,
    )


def results(folder: Path) -> list[Record]:
    """The recorded games of the table in `folder`."""
    if not (folder / "league.db").is_file():
        raise EventError(f"{folder}: no table's ledger (league.db) here")
    ledger = Ledger(folder / "league.db")
    try:
        return ledger.records()
    finally:
        ledger.close()


def game_of(record: Record) -> GameResult:
    return GameResult(tuple(record.seats), tuple(record.ranks), tuple(record.scores))


@dataclass(frozen=True)
class Plan:
    """What seats an event's rounds: its entries (seeded in file order), table size,
    points and stages, and where its tables' folders are. From the event file when it
    is played, from its commitment when it is verified."""

    name: str
    entries: tuple[str, ...]
    table: int
    points: PointsRule
    stages: tuple[Stage, ...]
    out: Path

    @classmethod
    def of(cls, cfg: EventConfig) -> Plan:
        names = tuple(b.name for b in cfg.base.bots)
        return cls(cfg.name, names, cfg.table, cfg.points, cfg.stages, cfg.out)

    def folder(self, stage: int, rnd: int, number: int) -> Path:
        """The folder of table `number` (from 1) of round `rnd` of stage `stage`."""
        return self.out / f"stage-{stage}" / f"round-{rnd:02d}" / f"table-{number}"


# Plays (or resumes) the tables of one round: stage, round, the tables' seats, and
# whether it is a round robin's one league. None when an event is only re-derived.
Player = Callable[[Stage, int, Sequence[Sequence[str]], bool], Awaitable[None]]


class Event:
    """One run of an event (`run_event`), or its re-derivation from the tables' ledgers
    (`play` None: `referee verify`)."""

    def __init__(
        self,
        plan: Plan,
        *,
        play: Player | None,
        say: Callable[[str], None],
        on_round: Callable[[], None] | None = None,
        known: set[str] | None = None,
    ) -> None:
        self.plan = plan
        self.play = play
        self.known = known  # re-derived: the tables event.json lists as played
        self.on_round = on_round
        self.say = say
        points = plan.points
        self.record = EventRecord(
            plan.name, plan.table, list(points) if isinstance(points, tuple) else points
        )

    @property
    def rule(self) -> PointsRule:
        return self.plan.points

    def save(self) -> None:
        """Write `event.json` (atomically), and tell `on_round` (the site); nothing
        when the event is only re-derived."""
        if self.play is None:
            return
        path = self.plan.out / STATE
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.record.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        if self.on_round is not None:
            self.on_round()

    async def play_tables(
        self, stage: Stage, rnd: int, tables: Sequence[Sequence[str]], *, round_robin: bool = False
    ) -> tuple[list[TableResult], list[list[Record]], list[str]]:
        """Play (or resume) every table of a round: their results, records and folders."""
        if self.play is not None:
            await self.play(stage, rnd, tables, round_robin)
        folders = [self.plan.folder(stage.index, rnd, t + 1) for t in range(len(tables))]
        if self.known is not None:
            missing = [f for f in folders if os.path.relpath(f, self.plan.out) not in self.known]
            if missing:
                raise MissingTable(f"{missing[0]}: not played yet")
        records = [results(f) for f in folders]
        out = [
            TableResult(tuple(seats), tuple(game_of(r) for r in recs))
            for seats, recs in zip(tables, records, strict=True)
        ]
        return out, records, [os.path.relpath(f, self.plan.out) for f in folders]

    def withdrawals(
        self,
        running: dict[str, Running],
        tables: Sequence[TableResult],
        records: Sequence[Sequence[Record]],
    ) -> list[str]:
        """The entries that forfeited every game they had in the round."""
        forfeits: dict[str, list[bool]] = {}
        for recs in records:
            for rec in recs:
                for seat, lost in zip(rec.seats, rec.forfeited, strict=True):
                    forfeits.setdefault(seat, []).append(lost)
        gone = [n for n, f in forfeits.items() if f and all(f) and not running[n].withdrawn]
        for n in gone:
            running[n].withdrawn = True
        if tables and all(all(f) for f in forfeits.values()):
            raise EventError(
                "nothing could be played: every seat of every game of the round forfeited "
                "(see the tables' stderr folders)"
            )
        return gone

    async def run(self) -> EventRecord:
        entries = list(self.plan.entries)
        for stage in self.plan.stages:
            rec = StageRecord(stage.index, stage.format, list(entries))
            self.record.stages.append(rec)
            if stage.format == "swiss":
                await self.swiss(stage, rec)
            elif stage.format == "knockout":
                await self.knockout(stage, rec)
            else:
                await self.single(stage, rec)
            rec.advanced = rec.ranking[: stage.advance] if stage.advance else list(rec.ranking)
            if stage.advance is not None:
                for i, name in enumerate(rec.ranking):
                    cut = (
                        f"advanced ({i + 1} of {len(rec.ranking)}, top {stage.advance})"
                        if name in rec.advanced
                        else f"out: placed {i + 1}, below the cut of {stage.advance}"
                    )
                    rec.why[name] = f"{rec.why[name]}; {cut}" if name in rec.why else cut
            self.save()
            entries = rec.advanced
        self.record.ended = True
        self.save()
        return self.record

    def _running(self, entries: Sequence[str]) -> dict[str, Running]:
        return {n: Running(n, seed=i) for i, n in enumerate(entries)}

    def _totals(self, rec: StageRecord, running: dict[str, Running]) -> None:
        rec.totals = {
            n: {
                "score": round(r.score, 6),
                "opposition": round(r.opposition(running), 6),
                "games": r.games,
                "lasts": r.lasts,
                "pips": r.pips,
                "byes": r.byes,
                "withdrawn": r.withdrawn,
            }
            for n, r in running.items()
        }

    async def _round(
        self,
        stage: Stage,
        rec: StageRecord,
        running: dict[str, Running],
        tables: list[tuple[str, ...]],
        byes: list[str],
        *,
        round_robin: bool = False,
    ) -> list[TableResult]:
        rnd = len(rec.rounds) + 1
        what = f"stage {stage.index} ({stage.format}) round {rnd}"
        bye_text = f", bye: {', '.join(byes)}" if byes else ""
        self.say(f"{what}: {len(tables)} table{'s' * (len(tables) != 1)}{bye_text}")
        played, records, folders = await self.play_tables(
            stage, rnd, tables, round_robin=round_robin
        )
        before = {n: r.score for n, r in running.items()}
        if round_robin:
            all_games = [g for t in played for g in t.games]
            _add_games(running, all_games, self.rule, self.plan.table)
        else:
            for t in played:
                add_table(running, t, self.rule, self.plan.table)
        for n in byes:
            add_bye(running, n, self.rule, self.plan.table)
        gone = self.withdrawals(running, played, records)
        seated = {n for t in tables for n in t} | set(byes)
        scores = {n: round(running[n].score - before[n], 6) for n in running if n in seated}
        rec.rounds.append(
            RoundRecord(rnd, [list(t) for t in tables], list(byes), scores, [], gone, folders)
        )
        for n in gone:
            self.say(f"{what}: {n} forfeited every game of the round and is withdrawn")
        self._totals(rec, running)
        self.save()
        return played

    async def swiss(self, stage: Stage, rec: StageRecord) -> None:
        running = self._running(rec.entries)
        for _ in range(stage.rounds):
            tables, byes = swiss_round(running, self.plan.table, stage.remainder)
            if not tables:
                break  # fewer than two entries still in
            await self._round(stage, rec, running, tables, byes)
        ranked = sorted(
            running.values(), key=lambda r: (r.withdrawn, -r.score, -r.opposition(running), r.seed)
        )
        rec.ranking = [r.name for r in ranked]
        for r in ranked:
            rec.why[r.name] = f"{r.score:.2f} points" + (" (withdrawn)" if r.withdrawn else "")

    async def knockout(self, stage: Stage, rec: StageRecord) -> None:
        running = self._running(rec.entries)
        seeds = {n: r.seed for n, r in running.items()}
        alive = list(rec.entries)
        gone: list[list[str]] = []  # per round, worst first
        while len(alive) > self.plan.table:
            order = sorted(alive, key=lambda n: (running[n].withdrawn, -running[n].score, seeds[n]))
            groups = snake_groups(order, group_sizes(len(order), self.plan.table))
            played = await self._round(stage, rec, running, groups, [])
            out = knockout_out(
                played, running, seeds, rule=self.rule, full=self.plan.table,
                eliminate=stage.eliminate, strikes=stage.strikes,
            )  # fmt: skip
            rec.rounds[-1].out = out
            for n in out:
                why = (
                    f"out in round {len(rec.rounds)}: "
                    + ("withdrawn" if running[n].withdrawn else
                       f"{running[n].lasts} last places" if stage.strikes else
                       f"among the lowest {stage.eliminate} of its group")
                )  # fmt: skip
                rec.why[n] = why
                self.say(f"stage {stage.index} round {len(rec.rounds)}: {n} {why}")
            alive = [n for n in alive if n not in out]
            gone.append(out)
            self.save()
        final = (await self._round(stage, rec, running, [tuple(alive)], []))[0]
        top = final_order(final, running, seeds, self.rule)
        for i, n in enumerate(top):
            rec.why[n] = f"final table: {i + 1}"
        rec.ranking = top + [n for out in reversed(gone) for n in reversed(out)]

    async def single(self, stage: Stage, rec: StageRecord) -> None:
        """A round-robin stage (every combination of tables, one league) or a final (one
        table of every entry)."""
        running = self._running(rec.entries)
        seeds = {n: r.seed for n, r in running.items()}
        rr = stage.format == "round-robin"
        await self._round(stage, rec, running, [tuple(rec.entries)], [], round_robin=rr)
        scores = {n: running[n].score for n in running}
        ranked = sorted(
            running, key=lambda n: (running[n].withdrawn, knockout_key(n, scores, running, seeds))
        )
        rec.ranking = ranked
        for n in ranked:
            rec.why[n] = f"{running[n].score:.2f} points a game"
        self._totals(rec, running)


def _add_games(
    running: dict[str, Running], games: Sequence[GameResult], rule: PointsRule, full: int
) -> None:
    """A round robin's games: each entry's score is its mean over the games it played."""
    per: dict[str, list[GameResult]] = {}
    for g in games:
        for s in g.seats:
            per.setdefault(s, []).append(g)
    for name, mine in per.items():
        table = TableResult(tuple(dict.fromkeys(s for g in mine for s in g.seats)), tuple(mine))
        r = running[name]
        r.score += table_scores(table, rule, full)[name]
        for g in mine:
            for other in g.seats:
                if other != name:
                    r.met[other] = r.met.get(other, 0) + 1
            r.games += 1
            r.pips += g.scores[g.seats.index(name)]
            if name in g.last():
                r.lasts += 1
        r.rounds += 1


async def run_event(
    cfg: EventConfig,
    *,
    jobs: int,
    resume: bool,
    console: Console,
    say: Callable[[str], None],
    on_round: Callable[[], None] | None = None,
) -> EventRecord:
    """Play the event (or what a stopped run of it left), stage by stage; `on_round` is
    called each time `event.json` is written (after each round, and at each stage's
    end)."""
    ready_folder(cfg.out, "the output folder")
    ledger = Ledger(cfg.out / "event.db")
    try:
        if (
            ledger.db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
            and not resume
        ):
            raise EventError(f"{cfg.out / 'event.db'} holds an event already")
        ledger.claim(cfg.fingerprint(), True)
        deal_key = ledger.deal_key(cfg.base.deal_key)
        bot_key = ledger.bot_seed_key(cfg.base.bot_seed_key)
    finally:
        ledger.close()
    limit = trio.CapacityLimiter(jobs)
    # No sandboxed bot sees the event's folder: its keys (event.db), every table's logs.
    hidden = (Hidden(str(cfg.out), "the event's output folder", "give the event an output "
              "folder outside every bot's folder (--out or event.out)"),)  # fmt: skip

    async def play(
        stage: Stage, rnd: int, tables: Sequence[Sequence[str]], round_robin: bool
    ) -> None:
        configs = [
            table_config(cfg, stage, rnd, t + 1, seats, deal_key, bot_key, round_robin=round_robin)
            for t, seats in enumerate(tables)
        ]
        per_table = max(1, jobs // len(configs))
        # Every table of the round plays the same deals, and a table is one combination,
        # so a table's unit is its deal: one `Apart` for the round keeps each deal in
        # play at one table at a time (two entries at two tables could otherwise pass
        # a hand between them while both play it, through a covert channel).
        deals = Apart() if not round_robin else None

        async def one(config: LeagueConfig) -> None:
            async with limit:
                ready_folder(config.out, "the table's folder")
                await run_league(
                    config,
                    jobs=per_table,
                    resume=True,
                    console=console,
                    quiet=True,
                    say=lambda line: None,
                    apart=deals,
                    hide=hidden,
                )

        async with trio.open_nursery() as nursery:
            for config in configs:
                nursery.start_soon(one, config)

    pledge = event_commitment(cfg, deal_key)
    where = os.path.normpath(cfg.out / "commitment.json")
    if pledge.new:
        say(
            f"commitment {pledge.digest} ({where}): publish it before the games; "
            f"`referee verify {os.path.normpath(cfg.out)}` checks the event against it"
        )
    else:
        say(f"commitment {pledge.digest} ({where})")
    event = Event(Plan.of(cfg), play=play, say=say, on_round=on_round)
    try:
        record = await event.run()
    except CannotPlay as exc:
        raise EventError(str(exc)) from None
    if cfg.base.reveal == "at-end":
        path, _ = reveal_event(cfg.out, deal_key, bot_key)
        say(f"the event is over: its keys and every table's are revealed ({path})")
    return record
