"""The arena's ledger: its entries and their versions, the units it scheduled, the games
it recorded and the ratings, in one SQLite database (WAL) that the running arena and
the `referee arena` commands share.

The commands act on a running arena through this file alone: `add`, `update` and
`remove` change the versions table, `freeze` and `stop` set a flag, and the arena
reads them between games. A game is recorded in one transaction with everything it
changes (the unit's progress, each seat's totals, rating and recent faults, the pair
counts), under a primary key made when its unit was scheduled: a game is counted once,
and a game cut short (a stop, a crash) is never recorded, so a resumed arena plays
exactly the games of its open units that the ledger does not hold.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, TypeVarTuple, Unpack

import trio

from ..league.records import Record
from ..stats.score import game_score

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

DB_NAME = "arena.db"
MU, SIGMA = 25.0, 25.0 / 3.0  # openskill's defaults: a version starts there

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    name TEXT PRIMARY KEY,           -- ENTRY@K: the bot's name in games and logs
    entry TEXT NOT NULL,
    version INTEGER NOT NULL,
    author TEXT NOT NULL,
    bot TEXT NOT NULL,               -- its [[bot]] table, as JSON
    status TEXT NOT NULL,            -- pending, active, rejected, suspended, retired, removed
    reason TEXT NOT NULL DEFAULT '',
    evidence TEXT NOT NULL DEFAULT '',
    stderr TEXT NOT NULL DEFAULT '', -- the validation's stderr file, for a rejected version
    added REAL NOT NULL,
    changed REAL NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    faulted INTEGER NOT NULL DEFAULT 0,  -- games in which it had a fault
    points INTEGER NOT NULL DEFAULT 0,
    score REAL NOT NULL DEFAULT 0,       -- sum of game scores (share of the table beaten)
    recent TEXT NOT NULL DEFAULT '[]',   -- its last games: [game_id, faulted, detail]
    last_end REAL NOT NULL DEFAULT 0,    -- when its last game ended (or it was accepted)
    UNIQUE (entry, version)
);
CREATE TABLE IF NOT EXISTS units (
    id INTEGER PRIMARY KEY,
    stage TEXT NOT NULL,             -- arena, validation, final
    size INTEGER NOT NULL,
    seats TEXT NOT NULL,             -- the versions at rotation 0, as JSON
    games INTEGER NOT NULL,          -- its games: every rotation, or 1
    first INTEGER NOT NULL,          -- the schedule index of its first game
    state TEXT NOT NULL,             -- open, done, abandoned
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    idx INTEGER PRIMARY KEY,
    unit INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    stage TEXT NOT NULL,
    game_id TEXT NOT NULL,
    seats TEXT NOT NULL,
    scores TEXT NOT NULL,
    ranks TEXT NOT NULL,
    faulted TEXT NOT NULL,
    finished TEXT NOT NULL,
    ended REAL NOT NULL,
    record TEXT NOT NULL,
    pruned INTEGER NOT NULL DEFAULT 0,
    site INTEGER NOT NULL DEFAULT 0  -- on the site: 0 not yet, 1 listed, 2 replayable, 3 pruned
);
CREATE INDEX IF NOT EXISTS games_site ON games (site) WHERE site < 2;
CREATE INDEX IF NOT EXISTS games_kept ON games (idx) WHERE pruned = 0;
CREATE INDEX IF NOT EXISTS units_open ON units (state) WHERE state = 'open';
CREATE TABLE IF NOT EXISTS counts (stage TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS games_unit ON games (unit);
CREATE TABLE IF NOT EXISTS steps (
    name TEXT NOT NULL, idx INTEGER NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS steps_name ON steps (name, idx);
CREATE TABLE IF NOT EXISTS plays (name TEXT NOT NULL, idx INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS plays_name ON plays (name, idx);
CREATE TABLE IF NOT EXISTS pairs (
    a TEXT NOT NULL, b TEXT NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (a, b, hour)
);
CREATE TABLE IF NOT EXISTS uploads (author TEXT NOT NULL, at REAL NOT NULL);
"""

LIVE = ("pending", "active")  # versions that count against their author's cap
STEPS_KEPT = 400  # rating steps kept per version for its chart (the ledger stays bounded)


class ArenaError(Exception):
    """An arena request that cannot be carried out; the message says why, in one line."""


@dataclass
class Version:
    """One version of an entry, as the ledger holds it."""

    name: str
    entry: str
    version: int
    author: str
    bot: dict[str, Any]
    status: str
    reason: str = ""
    evidence: str = ""
    stderr: str = ""
    added: float = 0.0
    changed: float = 0.0
    mu: float = MU
    sigma: float = SIGMA
    games: int = 0
    faulted: int = 0
    points: int = 0
    score: float = 0.0
    recent: list[list[Any]] = field(default_factory=list)
    last_end: float = 0.0

    @property
    def tcp(self) -> bool:
        """It connects over TCP: the arena cannot start it, or copies of it."""
        return self.bot.get("transport") == "tcp"

    @property
    def conservative(self) -> float:
        """μ − 3σ: what the leaderboard is ordered by."""
        return self.mu - 3.0 * self.sigma

    @property
    def fault_rate(self) -> float:
        """The share of its games with a fault."""
        return self.faulted / self.games if self.games else 0.0


_VERSION_COLUMNS = [f.name for f in dataclasses.fields(Version)]


def _version(row: Sequence[Any]) -> Version:
    data = dict(zip(_VERSION_COLUMNS, row, strict=True))
    data["bot"] = json.loads(data["bot"])
    data["recent"] = json.loads(data["recent"])
    return Version(**data)


@dataclass(frozen=True)
class Unit:
    """Games of one deal at one table: every rotation of the seats, or one game."""

    id: int
    stage: str
    size: int
    seats: tuple[str, ...]
    games: int
    first: int
    state: str
    created: float

    def seats_of(self, rotation: int) -> tuple[str, ...]:
        """The versions by seat in the unit's game `rotation`."""
        return self.seats[rotation:] + self.seats[:rotation]


def _unit(row: Sequence[Any]) -> Unit:
    return Unit(row[0], row[1], row[2], tuple(json.loads(row[3])), *row[4:])


@dataclass(frozen=True)
class Game:
    """A recorded game, as the pages and the statistics read it."""

    idx: int
    unit: int
    rotation: int
    stage: str
    game_id: str
    seats: list[str]
    scores: list[int]
    ranks: list[int]
    faulted: list[bool]
    finished: str
    pruned: bool
    site: int  # 0: not on the site yet, 1: listed, 2: its replay published, 3: pruned

    @property
    def replayable(self) -> bool:
        """Its replay and log are on the site."""
        return self.site == 2 and not self.pruned


def _game(row: Sequence[Any]) -> Game:
    return Game(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        json.loads(row[5]),
        json.loads(row[6]),
        json.loads(row[7]),
        json.loads(row[8]),
        row[9],
        bool(row[10]),
        int(row[11]),
    )


_GAME_COLUMNS = (
    "idx, unit, rotation, stage, game_id, seats, scores, ranks, faulted, finished, pruned, site"
)


class ArenaLedger:
    """The arena's database. Every method is one transaction."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        if not create and not path.is_file():
            raise ArenaError(f"{path}: no arena here (start one with `referee arena ARENA.toml`)")
        self._turn: trio.Lock | None = None
        # Opening sets the journal mode and the schema, which another process opening the
        # arena at the same moment (`arena add` beside the running arena) can hold for an
        # instant: SQLite answers "locked" at once there, without its busy timeout, so
        # the open is tried again, for as long as that timeout.
        deadline = time.monotonic() + 30.0
        while True:
            db: sqlite3.Connection | None = None
            try:
                db = sqlite3.connect(
                    path, isolation_level=None, check_same_thread=False, timeout=30.0
                )
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.executescript(SCHEMA)
                self.db = db
                break
            except sqlite3.OperationalError as exc:
                if db is not None:
                    db.close()
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise ArenaError(f"{path}: cannot use the database: {exc}") from None
                time.sleep(0.05)
            except sqlite3.Error as exc:
                raise ArenaError(f"{path}: cannot use the database: {exc}") from None

    def close(self) -> None:
        self.db.close()

    async def in_thread(self, work: Callable[[Unpack[Ts]], T], *args: *Ts) -> T:
        """`work(*args)` in a worker thread, one call at a time, never abandoned once
        started (a stop during a commit leaves the game recorded whole or not at all)."""
        if self._turn is None:
            self._turn = trio.Lock()
        async with self._turn:
            return await trio.to_thread.run_sync(work, *args, abandon_on_cancel=False)

    # ------------------------------------------------------------------ meta

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def secret(self, key: str, pinned: bytes | None = None) -> bytes:
        """A secret made once and kept (the deal key, the bots' seed key): 256 random
        bits, or `pinned` (`arena.deal_key`, `arena.bot_seed_key`). `ArenaError` when
        a pinned key differs from the one this arena's games already used."""
        made = pinned if pinned is not None else secrets.token_bytes(32)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, made.hex()))
        value = self.meta(key)
        assert value is not None
        stored = bytes.fromhex(value)
        if pinned is not None and pinned != stored:
            raise ArenaError(f"{self.path}: arena.{key} differs from the one this arena used")
        return stored

    def claim(self, terms: str, arena_file: dict[str, Any]) -> bool:
        """Tie the ledger to these terms; True when it is new. `ArenaError` for a
        ledger made under other rules, clocks or table sizes."""
        kept = self.meta("terms")
        if kept is None:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.set_meta("terms", terms)
                self.set_meta("arena_file", json.dumps(arena_file))
                self.set_meta("created", str(time.time()))
            return True
        if kept != terms:
            raise ArenaError(
                f"{self.path}: this arena was started under other rules, clocks, table sizes "
                "or fault policy; its games cannot count under these (use another --out)"
            )
        self.set_meta("arena_file", json.dumps(arena_file))
        return False

    # ------------------------------------------------------------------ entries

    def versions(self, statuses: Iterable[str] | None = None) -> list[Version]:
        query = f"SELECT {', '.join(_VERSION_COLUMNS)} FROM versions"
        args: tuple[str, ...] = ()
        if statuses is not None:
            chosen = tuple(statuses)
            query += f" WHERE status IN ({', '.join('?' * len(chosen))})"
            args = chosen
        return [_version(r) for r in self.db.execute(query + " ORDER BY entry, version", args)]

    def version(self, name: str) -> Version | None:
        row = self.db.execute(
            f"SELECT {', '.join(_VERSION_COLUMNS)} FROM versions WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else _version(row)

    def entry(self, entry: str) -> list[Version]:
        rows = self.db.execute(
            f"SELECT {', '.join(_VERSION_COLUMNS)} FROM versions WHERE entry = ? ORDER BY version",
            (entry,),
        )
        return [_version(r) for r in rows]

    def add(
        self,
        entry: str,
        author: str,
        bot: dict[str, Any],
        *,
        update: bool,
        max_active: int,
        per_day: int,
        status: str = "pending",
        now: float | None = None,
        counted: bool = True,
    ) -> Version:
        """A new entry (`update` false) or a new version of one (`update` true), pending
        validation (or `status`). `ArenaError` when the arena is frozen, the name is taken
        (or unknown, for an update), or the author is at a cap; `counted` false for the
        entries the arena file lists (no upload)."""
        now = time.time() if now is None else now
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if self.meta("frozen") is not None:
                raise ArenaError("the arena is frozen: it takes no new entry or version")
            versions = self.entry(entry)
            if update and not versions:
                raise ArenaError(f"{entry}: no such entry (add it with `referee arena add`)")
            if not update and versions:
                raise ArenaError(f"{entry}: an entry of that name exists (`referee arena update`)")
            if update:
                if versions[-1].status == "removed":
                    raise ArenaError(f"{entry}: removed; add it again under another name")
                author = versions[-1].author
            else:
                live = self.db.execute(
                    "SELECT COUNT(DISTINCT entry) FROM versions WHERE author = ? AND status IN "
                    "('pending', 'active')",
                    (author,),
                ).fetchone()[0]
                if live >= max_active:
                    raise ArenaError(
                        f"{author} has {live} entries playing or waiting, the most this arena "
                        f"allows (max_active_per_author = {max_active}); remove one first"
                    )
            if counted:
                uploads = self.db.execute(
                    "SELECT COUNT(*) FROM uploads WHERE author = ? AND at > ?",
                    (author, now - 86400.0),
                ).fetchone()[0]
                if uploads >= per_day:
                    raise ArenaError(
                        f"{author} uploaded {uploads} versions in the last 24 hours, the most "
                        f"this arena allows (uploads_per_day = {per_day}); try again later"
                    )
                self.db.execute("INSERT INTO uploads VALUES (?, ?)", (author, now))
            number = versions[-1].version + 1 if versions else 1
            name = f"{entry}@{number}"
            bot = {**bot, "name": name}
            self.db.execute(
                "INSERT INTO versions (name, entry, version, author, bot, status, added, "
                "changed, mu, sigma) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, entry, number, author, json.dumps(bot), status, now, now, MU, SIGMA),
            )
        found = self.version(name)
        assert found is not None
        return found

    def remove(self, entry: str) -> list[str]:
        """Take an entry out: none of its versions plays a new game; their games stay."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            versions = self.entry(entry)
            if not versions:
                raise ArenaError(f"{entry}: no such entry")
            names = [v.name for v in versions if v.status in ("pending", "active", "suspended")]
            self.db.execute(
                "UPDATE versions SET status = 'removed', changed = ? WHERE entry = ? AND status "
                "IN ('pending', 'active', 'suspended')",
                (time.time(), entry),
            )
        return names

    def set_status(
        self, name: str, status: str, reason: str = "", evidence: str = "", stderr: str = ""
    ) -> None:
        """A version's new status, with why; accepting a version retires the versions of
        its entry before it (they keep their history). A version removed meanwhile stays
        removed."""
        now = time.time()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            current = self.version(name)
            if current is None or current.status == "removed":
                return
            self.db.execute(
                "UPDATE versions SET status = ?, reason = ?, evidence = ?, stderr = ?, "
                "changed = ?, last_end = CASE WHEN ? = 'active' THEN ? ELSE last_end END "
                "WHERE name = ?",
                (status, reason, evidence, stderr, now, status, now, name),
            )
            if status == "active":
                self.db.execute(
                    "UPDATE versions SET status = 'retired', reason = ?, changed = ? "
                    "WHERE entry = ? AND version < ? AND status IN ('active', 'pending', "
                    "'suspended')",
                    (f"replaced by {name}", now, current.entry, current.version),
                )

    # ------------------------------------------------------------------ units

    def open_unit(self, stage: str, size: int, seats: Sequence[str], games: int) -> Unit:
        """Schedule a unit: its games' indexes are fixed now, so each is recorded once."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            first = int(self.meta("next_idx") or 0)
            self.set_meta("next_idx", str(first + games))
            cur = self.db.execute(
                "INSERT INTO units (stage, size, seats, games, first, state, created) "
                "VALUES (?, ?, ?, ?, ?, 'open', ?)",
                (stage, size, json.dumps(list(seats)), games, first, time.time()),
            )
            unit_id = cur.lastrowid
        assert unit_id is not None
        return Unit(unit_id, stage, size, tuple(seats), games, first, "open", time.time())

    def units(self, state: str | None = None, stage: str | None = None) -> list[Unit]:
        """Units by id, of a state and a stage (all when None)."""
        query, args = "SELECT * FROM units", []
        where = []
        if state is not None:
            where.append("state = ?")
            args.append(state)
        if stage is not None:
            where.append("stage = ?")
            args.append(stage)
        if where:
            query += " WHERE " + " AND ".join(where)
        return [_unit(r) for r in self.db.execute(query + " ORDER BY id", args)]

    def recorded_rotations(self, unit: int) -> set[int]:
        rows = self.db.execute("SELECT rotation FROM games WHERE unit = ?", (unit,))
        return {r[0] for r in rows}

    def close_unit(self, unit: int, state: str) -> None:
        self.db.execute("UPDATE units SET state = ? WHERE id = ? AND state = 'open'", (state, unit))

    # ------------------------------------------------------------------ games

    def record(
        self,
        unit: Unit,
        rotation: int,
        rec: Record,
        rated: Callable[[list[Version], Record], list[tuple[float, float]]] | None,
        window: int,
    ) -> list[Version] | None:
        """Record one finished game and all it changes; the seats' versions after it,
        or None when the ledger already holds it. `rated` gives each seat's new (μ, σ)
        (None: an unrated game, of a validation or the final)."""
        faulted = [False] * len(rec.seats)
        details: list[str] = [""] * len(rec.seats)
        for f in rec.faults:
            seat = int(f["seat"])
            if not faulted[seat]:
                faulted[seat] = True
                details[seat] = f"{f['kind']}: {f['detail']}"
        for seat, gone in enumerate(rec.forfeited):
            if gone and not faulted[seat]:
                faulted[seat], details[seat] = True, "forfeited"
        now = time.time()
        record = dataclasses.asdict(rec)
        record["seed"] = str(rec.seed)
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if self.db.execute("SELECT 1 FROM games WHERE idx = ?", (rec.idx,)).fetchone():
                return None
            self.db.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)",
                (
                    rec.idx,
                    unit.id,
                    rotation,
                    unit.stage,
                    rec.game_id,
                    json.dumps(rec.seats),
                    json.dumps(rec.scores),
                    json.dumps(rec.ranks),
                    json.dumps(faulted),
                    rec.finished,
                    now,
                    json.dumps(record),
                ),
            )
            self.db.execute(
                "INSERT INTO counts VALUES (?, 1) ON CONFLICT (stage) DO UPDATE SET n = n + 1",
                (unit.stage,),
            )
            done = self.db.execute(
                "SELECT COUNT(*) FROM games WHERE unit = ?", (unit.id,)
            ).fetchone()[0]
            if done >= unit.games:
                self.close_unit(unit.id, "done")
            if unit.stage != "arena":  # validation and final games leave ratings alone
                return []
            seats = [self.version(n) for n in rec.seats]
            versions = [v for v in seats if v is not None]
            if len(versions) != len(seats):
                return []
            ratings = rated(versions, rec) if rated is not None else None
            for s, v in enumerate(versions):
                v.games += 1
                v.faulted += faulted[s]
                v.points += rec.scores[s]
                v.score += game_score(rec.ranks, s)
                v.recent = [*v.recent, [rec.game_id, faulted[s], details[s]]][-window:]
                v.last_end = now
                if ratings is not None:
                    v.mu, v.sigma = ratings[s]
                self.db.execute(
                    "UPDATE versions SET games = ?, faulted = ?, points = ?, score = ?, "
                    "recent = ?, last_end = ?, mu = ?, sigma = ? WHERE name = ?",
                    (
                        v.games,
                        v.faulted,
                        v.points,
                        v.score,
                        json.dumps(v.recent),
                        v.last_end,
                        v.mu,
                        v.sigma,
                        v.name,
                    ),
                )
                self.db.execute(
                    "INSERT INTO steps VALUES (?, ?, ?, ?)", (v.name, rec.idx, v.mu, v.sigma)
                )
                self.db.execute("INSERT INTO plays VALUES (?, ?)", (v.name, rec.idx))
                if v.games % STEPS_KEPT == 0:  # the chart keeps the newest steps
                    self.db.execute(
                        "DELETE FROM steps WHERE name = ? AND idx < (SELECT MIN(idx) FROM "
                        "(SELECT idx FROM steps WHERE name = ? ORDER BY idx DESC LIMIT ?))",
                        (v.name, v.name, STEPS_KEPT),
                    )
            hour = int(now // 3600)
            for i, a in enumerate(rec.seats):
                for b in rec.seats[i + 1 :]:
                    x, y = sorted((a, b))
                    self.db.execute(
                        "INSERT INTO pairs VALUES (?, ?, ?, 1) ON CONFLICT (a, b, hour) "
                        "DO UPDATE SET n = n + 1",
                        (x, y, hour),
                    )
        return versions

    def pair_counts(self, now: float | None = None) -> dict[tuple[str, str], int]:
        """Games of each pair of versions this hour."""
        hour = int((time.time() if now is None else now) // 3600)
        rows = self.db.execute("SELECT a, b, n FROM pairs WHERE hour = ?", (hour,))
        return {(a, b): n for a, b, n in rows}

    def count(self, stage: str = "arena") -> int:
        """The games recorded of a stage (a running count: no pass over the games)."""
        row = self.db.execute("SELECT n FROM counts WHERE stage = ?", (stage,)).fetchone()
        return 0 if row is None else int(row[0])

    def unit_states(self, units: Iterable[int]) -> dict[int, str]:
        """The state of each of `units`."""
        chosen = sorted(set(units))
        found: dict[int, str] = {}
        for k in range(0, len(chosen), 500):
            part = chosen[k : k + 500]
            rows = self.db.execute(
                f"SELECT id, state FROM units WHERE id IN ({', '.join('?' * len(part))})", part
            )
            found.update((int(i), str(st)) for i, st in rows)
        return found

    def games(
        self,
        *,
        stage: str | None = "arena",
        after: int = -1,
        limit: int | None = None,
        newest: bool = False,
        unit: int | None = None,
    ) -> list[Game]:
        query = f"SELECT {_GAME_COLUMNS} FROM games WHERE idx > ?"
        args: list[Any] = [after]
        if stage is not None:
            query += " AND stage = ?"
            args.append(stage)
        if unit is not None:
            query += " AND unit = ?"
            args.append(unit)
        query += " ORDER BY idx DESC" if newest else " ORDER BY idx"
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        return [_game(r) for r in self.db.execute(query, args)]

    def where(
        self,
        condition: str,
        args: Sequence[Any] = (),
        *,
        order: str = "idx",
        index: str | None = None,
    ) -> list[Game]:
        """The games that meet an SQL condition (of this module's callers, never a
        user's text), in `order`, read through `index` if named (SQLite would rather
        walk every game in order than use a partial index)."""
        table = f"games INDEXED BY {index}" if index else "games"
        query = f"SELECT {_GAME_COLUMNS} FROM {table} WHERE {condition} ORDER BY {order}"
        return [_game(r) for r in self.db.execute(query, tuple(args))]

    def recent_seats(self, name: str, limit: int) -> list[list[str]]:
        """The seats of a version's newest `limit` games, newest first (what matchmaking
        reads of its history: only the seats, decoded)."""
        rows = self.db.execute(
            "SELECT g.seats FROM plays p JOIN games g ON g.idx = p.idx WHERE p.name = ? "
            "ORDER BY p.idx DESC LIMIT ?",
            (name, limit),
        )
        return [json.loads(r[0]) for r in rows]

    def games_of(self, name: str, limit: int) -> list[Game]:
        """A version's newest games, newest first."""
        rows = self.db.execute(
            f"SELECT {', '.join('g.' + c.strip() for c in _GAME_COLUMNS.split(','))} FROM plays "
            "p JOIN games g ON g.idx = p.idx WHERE p.name = ? ORDER BY p.idx DESC LIMIT ?",
            (name, limit),
        )
        return [_game(r) for r in rows]

    def forfeits(self, stage: str) -> dict[str, tuple[int, str]]:
        """The versions that forfeited games of `stage`: name -> (games forfeited, the
        first one's reason), in the order of the games."""
        found: dict[str, tuple[int, str]] = {}
        rows = self.db.execute("SELECT record FROM games WHERE stage = ? ORDER BY idx", (stage,))
        for (text,) in rows:
            data = json.loads(text)
            for seat, gone in enumerate(data["forfeited"]):
                if not gone:
                    continue
                name = data["seats"][seat]
                why = next(
                    (f"{f['kind']}: {f['detail']}" for f in data["faults"] if f["seat"] == seat),
                    "forfeited",
                )
                count, first = found.get(name, (0, why))
                found[name] = (count + 1, first)
        return found

    def record_of(self, idx: int) -> Record | None:
        row = self.db.execute("SELECT record FROM games WHERE idx = ?", (idx,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        data["seed"] = int(data["seed"])
        return Record(**data)

    def steps(self, name: str) -> list[tuple[int, float, float]]:
        rows = self.db.execute(
            "SELECT idx, mu, sigma FROM steps WHERE name = ? ORDER BY idx", (name,)
        )
        return [(int(i), float(mu), float(s)) for i, mu, s in rows]

    def mark_pruned(self, indexes: Sequence[int]) -> None:
        """Games whose logs are gone: the site lists them again, without a replay."""
        self.db.executemany(
            "UPDATE games SET pruned = 1, site = 0 WHERE idx = ?", [(i,) for i in indexes]
        )

    def unpruned_before(self, idx: int) -> list[tuple[int, str, int]]:
        """(index, game id, unit) of the games before `idx` that keep their logs."""
        rows = self.db.execute(
            "SELECT idx, game_id, unit FROM games INDEXED BY games_kept WHERE pruned = 0 "
            "AND idx < ? ORDER BY idx",
            (idx,),
        )
        return [(int(i), str(g), int(u)) for i, g, u in rows]
