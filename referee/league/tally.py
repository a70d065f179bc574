"""The standings' running totals, kept in the ledger beside the games and updated in
the transaction that records a game, so that reading the standings does not grow with
the league (`referee standings` at 100,000 games reads a few hundred thousand small
rows instead of decoding and re-rating every game).

Two kinds of totals, per record and generic (any format that records games):

- Sums of integers, the same in any order: each bot's points and games per
  duplicate unit (`tally_units`, for the interval over units, kept in the order a
  unit first appeared), its faults and notices by kind (`tally_kinds`, in the order
  a kind first appeared, as the JSON lists them), head to head (`tally_head`), the
  number of games (`tally_count`) and the bots' decision time charged and excused
  for the referee's lag, in whole microseconds (`tally_clocks`; a ledger from
  before it has none, and its games count none).
  A game adds to them with an upsert.
- What depends on the order of the games: openskill ratings (one game after the
  other), the floating-point sums of wins and latencies, and the history the chart
  draws. `tally_steps` holds, for each game and seat, that bot's totals after the
  game in schedule order. A game recorded after games later in the schedule (jobs
  finish out of order, a resumed league fills its gaps) replays the steps from its
  own index on, starting from each bot's last step before it: a few games usually;
  past `REPLAY_NOW` games the replay is left to the next read of the standings.

Both are made by the functions the full computation (`standings.compute`) uses, so
the two agree to the last bit. A ledger written before the totals were kept gets
them once, when it is opened.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..bots.faults import FaultKind
from . import transport
from .records import Record, SandboxRecord, read_records
from .standings import (
    LAG_WARNING,
    BotStanding,
    Clocks,
    Outcome,
    Standings,
    advance,
    failed_starts,
    meetings,
    ranked,
    rating_model,
)

VERSION = "1"  # meta 'tallies': the totals below are there and complete

SCHEMA = """
CREATE TABLE IF NOT EXISTS tally_steps (
    idx INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,
    -- No type: a value comes back as the computation made it (an int stays an int).
    games, wins, rank_sum, points, forfeits, latency_sum, latency_n, latency_worst, mu, sigma,
    PRIMARY KEY (idx, seat)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tally_steps_by_bot ON tally_steps (name, idx, seat);
CREATE TABLE IF NOT EXISTS tally_units (
    name TEXT NOT NULL,
    unit INTEGER NOT NULL,
    first_idx INTEGER NOT NULL,
    points INTEGER NOT NULL,
    games INTEGER NOT NULL,
    PRIMARY KEY (name, unit)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tally_kinds (
    name TEXT NOT NULL,
    what TEXT NOT NULL,  -- 'fault' or 'notice'
    kind TEXT NOT NULL,
    first_idx INTEGER NOT NULL,
    first_pos INTEGER NOT NULL,  -- its place in the game's list of faults or notices
    n INTEGER NOT NULL,
    PRIMARY KEY (name, what, kind)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tally_count (
    one INTEGER PRIMARY KEY CHECK (one = 0),
    games INTEGER NOT NULL  -- COUNT(*) of games would read every page of that table
);
CREATE TABLE IF NOT EXISTS tally_clocks (
    one INTEGER PRIMARY KEY CHECK (one = 0),
    charged_us INTEGER NOT NULL,  -- the bots' decision time, whole microseconds
    excused_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tally_head (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    ahead INTEGER NOT NULL,
    met INTEGER NOT NULL,
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
"""

_SCALARS = (
    "games",
    "wins",
    "rank_sum",
    "points",
    "forfeits",
    "latency_sum",
    "latency_n",
    "latency_worst",
    "mu",
    "sigma",
)
TABLES = ("tally_steps", "tally_units", "tally_kinds", "tally_count", "tally_clocks", "tally_head")
_OUTCOME = ("seats", "scores", "ranks", "forfeited", "latency_mean", "latency_max")
_END = 2**62  # past every schedule index
# A game recorded before more than this many games later in the schedule leaves
# their replay to the next read of the standings (a game far behind, say).
REPLAY_NOW = 500


@dataclass
class Counts:
    """The order-free totals of some games, merged as the upserts merge them."""

    units: dict[tuple[str, int], list[int]] = field(default_factory=dict)  # first, points, n
    kinds: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)  # first, pos, n
    head: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # ahead, met
    games: int = 0
    clocks: Clocks = field(default_factory=Clocks)

    def add(self, rec: Record) -> None:
        """Count one game."""
        self.games += 1
        self.clocks.add(rec)
        for seat, name in enumerate(rec.seats):
            unit = self.units.setdefault((name, rec.unit), [rec.idx, 0, 0])
            unit[0] = min(unit[0], rec.idx)
            unit[1] += rec.scores[seat]
            unit[2] += 1
        for what, items in (("fault", rec.faults), ("notice", rec.notices)):
            for pos, item in enumerate(items):
                key = (rec.seats[item["seat"]], what, item["kind"])
                kind = self.kinds.setdefault(key, [rec.idx, pos, 0])
                kind[:2] = min(kind[:2], [rec.idx, pos])
                kind[2] += 1
        for x, y, ahead in meetings(rec):
            pair = self.head.setdefault((x, y), [0, 0])
            pair[0] += ahead
            pair[1] += 1

    def write(self, db: sqlite3.Connection) -> None:
        """Add these totals to the stored ones."""
        db.execute(
            "INSERT INTO tally_count VALUES (0, ?) ON CONFLICT (one) DO UPDATE"
            " SET games = games + excluded.games",
            (self.games,),
        )
        db.execute(
            "INSERT INTO tally_clocks VALUES (0, ?, ?) ON CONFLICT (one) DO UPDATE"
            " SET charged_us = charged_us + excluded.charged_us,"
            " excused_us = excused_us + excluded.excused_us",
            (self.clocks.charged_us, self.clocks.excused_us),
        )
        db.executemany(
            "INSERT INTO tally_units VALUES (?, ?, ?, ?, ?) ON CONFLICT (name, unit) DO UPDATE"
            " SET first_idx = MIN(first_idx, excluded.first_idx),"
            " points = points + excluded.points, games = games + excluded.games",
            [(*key, *v) for key, v in self.units.items()],
        )
        db.executemany(
            "INSERT INTO tally_kinds VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name, what, kind)"
            " DO UPDATE SET"
            " first_pos = CASE WHEN (excluded.first_idx, excluded.first_pos)"
            " < (first_idx, first_pos) THEN excluded.first_pos ELSE first_pos END,"
            " first_idx = MIN(first_idx, excluded.first_idx), n = n + excluded.n",
            [(*key, *v) for key, v in self.kinds.items()],
        )
        db.executemany(
            "INSERT INTO tally_head VALUES (?, ?, ?, ?) ON CONFLICT (a, b) DO UPDATE"
            " SET ahead = ahead + excluded.ahead, met = met + excluded.met",
            [(*key, *v) for key, v in self.head.items()],
        )


def add(db: sqlite3.Connection, records: Iterable[Record]) -> None:
    """Add newly inserted games to the totals, inside the transaction that inserted them."""
    counts = Counts()
    start = _END
    for rec in records:
        counts.add(rec)
        start = min(start, rec.idx)
    counts.write(db)
    if start == _END:
        return
    behind = _behind(db)
    if behind is None:
        too_many = db.execute(  # is there a game past the first REPLAY_NOW + 1 from start?
            "SELECT 1 FROM games WHERE idx >= ? ORDER BY idx LIMIT 1 OFFSET ?",
            (start, REPLAY_NOW + 1),
        ).fetchone()
        if too_many is None:
            replay(db, start)
            return
    # Too many games to replay while the league waits on this commit: done by the next
    # read of the standings, from the earliest such game (the steps after it are stale).
    start = start if behind is None else min(start, behind)
    db.execute("INSERT OR REPLACE INTO meta VALUES ('tallies_behind', ?)", (str(start),))


def _behind(db: sqlite3.Connection) -> int | None:
    """Where the steps stop being right, if a replay was put off (see `add`)."""
    row = db.execute("SELECT value FROM meta WHERE key = 'tallies_behind'").fetchone()
    return None if row is None else int(row[0])


def catch_up(db: sqlite3.Connection) -> None:
    """Do a replay that `add` put off, in a transaction of its own."""
    if _behind(db) is None:
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        behind = _behind(db)  # another connection may have done it meanwhile
        if behind is not None:
            replay(db, behind)
            db.execute("DELETE FROM meta WHERE key = 'tallies_behind'")


def replay(db: sqlite3.Connection, start: int) -> None:
    """Redo the order-dependent steps of every game from schedule index `start` on."""
    model = rating_model()
    bots: dict[str, BotStanding] = {}
    rows = []
    columns = ",".join(_OUTCOME)
    query = f"SELECT idx,{columns} FROM games WHERE idx >= ? ORDER BY idx"
    for idx, *texts in db.execute(query, (start,)).fetchall():
        game = Outcome(idx, *(json.loads(t) for t in texts))
        for name in game.seats:
            if name not in bots:
                bots[name] = _last_step(db, name, before=start)
        after = advance(bots, game, model)
        for seat, (name, (mu, sigma)) in enumerate(zip(game.seats, after, strict=True)):
            b = bots[name]
            rows.append((idx, seat, name, *(getattr(b, c) for c in _SCALARS[:-2]), mu, sigma))
    db.execute("DELETE FROM tally_steps WHERE idx >= ?", (start,))
    marks = ",".join("?" * (3 + len(_SCALARS)))
    db.executemany(f"INSERT INTO tally_steps VALUES ({marks})", rows)


def _last_step(db: sqlite3.Connection, name: str, before: int = _END) -> BotStanding:
    """A bot's totals after its last game before schedule index `before`."""
    row = db.execute(
        f"SELECT {','.join(_SCALARS)} FROM tally_steps WHERE name = ? AND idx < ?"
        " ORDER BY idx DESC, seat DESC LIMIT 1",
        (name, before),
    ).fetchone()
    if row is None:
        return BotStanding(name=name)
    return BotStanding(name, **dict(zip(_SCALARS, row, strict=True)))


def convert(db: sqlite3.Connection) -> None:
    """Give a ledger without the totals (written before they were kept) its totals, once."""
    if _ready(db):
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        if _ready(db):  # another process converted it meanwhile
            return
        for table in TABLES:
            db.execute(f"DELETE FROM {table}")  # fixed names, not input
        counts = Counts()
        for rec in _all_records(db):
            counts.add(rec)
        counts.write(db)
        replay(db, 0)
        db.execute("DELETE FROM meta WHERE key = 'tallies_behind'")
        db.execute("INSERT OR REPLACE INTO meta VALUES ('tallies', ?)", (VERSION,))


def _ready(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT value FROM meta WHERE key = 'tallies'").fetchone()
    return row is not None and row[0] == VERSION


def _all_records(db: sqlite3.Connection) -> Iterable[Record]:
    return read_records(db)


def count(db: sqlite3.Connection) -> int:
    """How many games are recorded."""
    row = db.execute("SELECT games FROM tally_count").fetchone()
    return 0 if row is None else int(row[0])


def standings(
    db: sqlite3.Connection,
    names: list[str],
    sandbox: SandboxRecord | None,
    *,
    history: bool = False,
    lag_warning: float = LAG_WARNING,
) -> Standings:
    """The standings of `names` from the stored totals, in one read transaction: the
    same as `compute` over every record (with the same `lag_warning`), with how a
    served league's tcp bots connected (`transport.recorded`). `history` (the chart's,
    one point per game and bot) is read only when asked."""
    catch_up(db)
    db.execute("BEGIN")
    try:
        games = count(db)
        clocks = Clocks(warn_at=lag_warning)
        row = db.execute("SELECT charged_us, excused_us FROM tally_clocks").fetchone()
        if row is not None:
            clocks.charged_us, clocks.excused_us = row
        table = {n: _last_step(db, n) for n in names}
        for name, unit, points, n in db.execute(
            "SELECT name, unit, points, games FROM tally_units ORDER BY name, first_idx"
        ):
            if name in table:
                table[name].units[unit] = (points, n)
        for name, what, kind, n in db.execute(
            "SELECT name, what, kind, n FROM tally_kinds ORDER BY name, what, first_idx, first_pos"
        ):
            if name in table:
                (table[name].faults if what == "fault" else table[name].notices)[kind] = n
        head = {a: {b: (0, 0) for b in names if b != a} for a in names}
        for a, b, ahead, met in db.execute("SELECT a, b, ahead, met FROM tally_head"):
            if a in head and b in head[a]:
                head[a][b] = (ahead, met)
        if history:
            for idx, name, n, points, mu, sigma in db.execute(
                "SELECT idx, name, games, points, mu, sigma FROM tally_steps ORDER BY idx, seat"
            ):
                if name in table:
                    table[name].history.append((idx, mu - 3 * sigma, points / n))
        failed = failed_starts(
            (game_id, json.loads(seats), json.loads(faults))
            for game_id, seats, faults in db.execute(
                "SELECT game_id, seats, faults FROM games WHERE faults LIKE ? ORDER BY idx",
                (f'%"{FaultKind.STARTUP_FAILURE.value}"%',),
            )
        )
        served = transport.recorded(db)
    finally:
        db.execute("COMMIT")
    result = ranked(list(table.values()), head, games, sandbox, clocks, failed)
    result.transport = served
    return result
