"""The ledger: finished games in SQLite, one transaction per game.

A game is recorded once: the schedule index is the primary key, so a second
insert of the same game is refused, and a game cut short is never inserted.
The league's fingerprint is stored so that `--resume` refuses a changed file,
and so are the league's two secrets: the deal key (every deal of the league is
derived from it) and the key of the bots' own seeds. They are made once, when
the league starts, so a resumed league plays the deals it would have played.
How each bot was sandboxed is kept too, so that the standings can say so.
Notices (stale replies, which the protocol ignores) are kept apart from faults,
so no fault table counts them; a ledger from before they were is moved over once.
Each game's decision time is kept too (charged to the bots, and excused for the
referee's own lag), so the standings can say when the clocks were barely enforced.
The standings' running totals are kept beside the games and updated in the same
transaction (see `tally`), so reading the standings does not grow with the league.

A commit with a full sync takes milliseconds, which an event loop playing games
must not lose: while a league runs, `in_thread` does the ledger's work in a
worker thread, one call at a time. A call that has started is never abandoned,
so Ctrl-C during a commit leaves the game recorded whole or not at all.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, Unpack

from ..logs.outputs import WriteError, disk_full
from . import tally
from .records import JSON_FIELDS
from .records import Record as Record  # where the league's modules look for it
from .records import SandboxRecord as SandboxRecord
from .records import read_records as read_records
from .standings import LAG_WARNING

if TYPE_CHECKING:
    import trio

    from .standings import Standings

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    idx INTEGER PRIMARY KEY,
    game_id TEXT NOT NULL,
    unit INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed TEXT NOT NULL,  -- 128-bit deal seeds do not fit an SQLite integer
    seats TEXT NOT NULL,
    scores TEXT NOT NULL,
    ranks TEXT NOT NULL,
    forfeited TEXT NOT NULL,
    faults TEXT NOT NULL,
    latency_mean TEXT NOT NULL,
    latency_max TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    log_path TEXT NOT NULL,
    finished TEXT NOT NULL,
    notices TEXT NOT NULL DEFAULT '[]',
    charged_ms REAL NOT NULL DEFAULT 0,
    excused_ms REAL NOT NULL DEFAULT 0,
    log_sha256 TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS placements (idx INTEGER PRIMARY KEY, worker TEXT NOT NULL);
"""


class LedgerError(Exception):
    """The database does not belong to this league, or cannot be used."""


class Ledger:
    """The league's SQLite database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._turn: trio.Lock | None = None  # one user of the connection at a time (in_thread)
        try:
            # Used from worker threads, never two at once.
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(SCHEMA + tally.SCHEMA)
            _add_notices(self.db)
            _add_clocks(self.db)
            _add_digests(self.db)
            tally.convert(self.db)
        except sqlite3.Error as exc:
            raise LedgerError(f"{path}: cannot use the database: {exc}") from None

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    async def in_thread(self, work: Callable[[Unpack[Ts]], T], *args: *Ts) -> T:
        """`work(*args)` (this ledger's methods) in a worker thread, after the calls
        before it; once started it runs to its end even if the caller is cancelled."""
        import trio  # here: `referee standings`, which never needs it, starts faster

        if self._turn is None:
            self._turn = trio.Lock()
        async with self._turn:
            return await trio.to_thread.run_sync(work, *args, abandon_on_cancel=False)

    def claim(self, fingerprint: str, resume: bool) -> None:
        """Tie the database to this league; refuse another league's or a changed one's."""
        row = self.db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        done = self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            return
        if row[0] != fingerprint:
            raise LedgerError(
                f"{self.path} holds a league with other settings; use another --out folder"
            )
        if done and not resume:
            raise LedgerError(
                f"{self.path} already holds {done} finished games; add --resume to go on"
            )

    def bot_seed_key(self, pinned: bytes | None) -> bytes:
        """The key for the bots' own seeds: made once and kept, or pinned by the config.

        A resumed league must keep its key, or bots would get other seeds than in
        the games already recorded.
        """
        return self._secret("bot_seed_key", pinned, 16)

    def deal_key(self, pinned: bytes | None) -> bytes:
        """The secret every deal of the league is derived from: made once and kept, or
        pinned by `league.deal_key`. A resumed league must play the same deals."""
        return self._secret("deal_key", pinned, 32)

    def _secret(self, name: str, pinned: bytes | None, size: int) -> bytes:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (name,)).fetchone()
        if row is not None:
            stored = bytes.fromhex(row[0])
            if pinned is not None and pinned != stored:
                raise LedgerError(
                    f"{self.path}: league.{name} differs from the one these games used"
                )
            return stored
        key = pinned if pinned is not None else secrets.token_bytes(size)
        self.db.execute("INSERT INTO meta VALUES (?, ?)", (name, key.hex()))
        return key

    def note_sandbox(
        self, bots: dict[str, str], note: str | None, users: dict[str, str] | None = None
    ) -> SandboxRecord:
        """Record how this run sandboxes each bot, and as whom each mode runs bots,
        merged with the earlier runs of the league: a bot that ran without the sandbox
        once stays recorded so."""
        old = self.sandbox() or SandboxRecord()
        merged = dict(old.bots)
        for name, mode in bots.items():
            if merged.get(name) != "none":
                merged[name] = mode
        record = SandboxRecord(merged, note or old.note, {**old.users, **(users or {})})
        self.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('sandbox', ?)", (json.dumps(record.to_json()),)
        )
        return record

    def sandbox(self) -> SandboxRecord | None:
        """How the league's bots were sandboxed; None for a league recorded before this
        was kept."""
        row = self.db.execute("SELECT value FROM meta WHERE key='sandbox'").fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return SandboxRecord(
            dict(data["bots"]), str(data.get("note", "")), dict(data.get("users", {}))
        )

    def has(self, idx: int) -> bool:
        """Whether the game with schedule index `idx` is recorded."""
        return self.db.execute("SELECT 1 FROM games WHERE idx=?", (idx,)).fetchone() is not None

    def done(self) -> set[int]:
        """Schedule indexes of the recorded games."""
        return {r[0] for r in self.db.execute("SELECT idx FROM games")}

    def record(self, rec: Record, worker: str | None = None) -> bool:
        """Insert one finished game and add it to the standings' totals, in its own
        transaction; False if it was already there.

        `worker`: the cluster worker that played it, kept in `placements`. `WriteError`
        when the disk is full: the transaction is rolled back, the game not recorded."""
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute(_INSERT, _row(dataclasses.replace(rec, seq=self._next_seq())))
                if worker is not None:
                    self.db.execute("INSERT INTO placements VALUES (?, ?)", (rec.idx, worker))
                tally.add(self.db, [rec])
        except sqlite3.IntegrityError:
            return False
        except sqlite3.OperationalError as exc:
            raise self.write_error(exc) from None
        return True

    def write_error(self, exc: BaseException) -> BaseException:
        """`exc`, met while writing the database, as a `WriteError` if it says that the
        disk is full (else itself)."""
        return WriteError.of(exc, self.path) if disk_full(exc) else exc

    def record_many(self, records: list[Record]) -> None:
        """Insert many new games at once, in one transaction (a benchmark's synthetic
        league; `record` is the path a league takes): the same rows and totals as
        recording them one by one. Raises sqlite3.IntegrityError, inserting none, if
        one of them is there already."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            first = self._next_seq()
            rows = [_row(dataclasses.replace(r, seq=first + k)) for k, r in enumerate(records)]
            self.db.executemany(_INSERT, rows)
            tally.add(self.db, records)

    def _next_seq(self) -> int:
        """The record order of the next game recorded (inside its transaction)."""
        return int(self.db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM games").fetchone()[0])

    def note_lag_warning(self, share: float) -> None:
        """Keep `league.lag_warning` of this run, for the standings read later."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('lag_warning', ?)", (repr(share),))

    def lag_warning(self) -> float:
        """The excused share of decision time above which the standings warn: the one
        the league last ran with, else the default."""
        row = self.db.execute("SELECT value FROM meta WHERE key='lag_warning'").fetchone()
        return float(row[0]) if row is not None else LAG_WARNING

    def standings(self, names: list[str], *, history: bool = False) -> Standings:
        """The standings from the stored totals, the same as `standings.compute` over
        every record; `history` (the chart's) only when asked, as it grows with the
        league."""
        standings = tally.standings(
            self.db, names, self.sandbox(), history=history, lag_warning=self.lag_warning()
        )
        standings.commitment = self.commitment()
        return standings

    def commitment(self) -> str | None:
        """The league's commitment (`referee.proof.commitment`), once it has made one."""
        row = self.db.execute("SELECT value FROM meta WHERE key='commitment'").fetchone()
        return str(row[0]) if row is not None else None

    def count(self) -> int:
        """How many games are recorded."""
        return tally.count(self.db)

    def placements(self) -> dict[int, str]:
        """The cluster worker of each game played on a cluster, by schedule index."""
        return dict(self.db.execute("SELECT idx, worker FROM placements"))

    def records(self) -> list[Record]:
        """Every recorded game, in schedule order."""
        return read_records(self.db)


_FIELDS = list(Record.__dataclass_fields__)
_INSERT = f"INSERT INTO games ({','.join(_FIELDS)}) VALUES ({','.join('?' * len(_FIELDS))})"


def _row(rec: Record) -> list[Any]:
    """A record as its row of `games`."""
    return [_column(name, getattr(rec, name)) for name in _FIELDS]


def _has_column(db: sqlite3.Connection, name: str) -> bool:
    return any(row[1] == name for row in db.execute("PRAGMA table_info(games)"))


def _add_notices(db: sqlite3.Connection) -> None:
    """Give a ledger written before notices existed its `notices` column, and move its
    stale replies there from `faults`: they were recorded as faults then, and a
    resumed league must not count them as faults now."""
    if _has_column(db, "notices"):
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE games ADD COLUMN notices TEXT NOT NULL DEFAULT '[]'")
        for idx, text in db.execute("SELECT idx, faults FROM games").fetchall():
            faults = json.loads(text)
            stale = [f for f in faults if f["kind"] == "stale_reply"]
            if stale:
                kept = [f for f in faults if f["kind"] != "stale_reply"]
                db.execute(
                    "UPDATE games SET faults=?, notices=? WHERE idx=?",
                    (json.dumps(kept), json.dumps(stale), idx),
                )


def _add_clocks(db: sqlite3.Connection) -> None:
    """Give a ledger written before the games' decision time was kept its two columns:
    its games count 0 ms charged and 0 ms excused."""
    if _has_column(db, "charged_ms"):
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE games ADD COLUMN charged_ms REAL NOT NULL DEFAULT 0")
        db.execute("ALTER TABLE games ADD COLUMN excused_ms REAL NOT NULL DEFAULT 0")


def _add_digests(db: sqlite3.Connection) -> None:
    """Give a ledger written before logs were digested its `log_sha256` and `seq` columns:
    its games have no digest (""), and their record order is taken to be the schedule's."""
    if _has_column(db, "log_sha256"):
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE games ADD COLUMN log_sha256 TEXT NOT NULL DEFAULT ''")
        db.execute("ALTER TABLE games ADD COLUMN seq INTEGER NOT NULL DEFAULT 0")
        db.execute("UPDATE games SET seq = (SELECT COUNT(*) FROM games g WHERE g.idx <= games.idx)")


def _column(name: str, value: Any) -> Any:
    """A record's field as its column holds it."""
    if name in JSON_FIELDS:
        return json.dumps(value)
    return str(value) if name == "seed" else value
