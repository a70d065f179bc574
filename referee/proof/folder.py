"""A league's folder as `referee verify` reads it (`referee.proof.verify`): its
commitment, results.json, ledger and public key, the games to check, the schedule the
commitment fixes and the seeds its key derives; and the report the checks add their
lines to.

The checks are parts of `Folder` (mixins), one module a part: `verify_deals`,
`verify_logs`, `verify_results`, `verify_standings`; `verify.Verifier` puts them
together. What they re-derive with the league's own code (the ledger's games, the
standings) is handed to the folder as a `Restater` (`referee.league.restate`): proof
is below the league, and imports nothing of it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..logs.gamelog import GameLog
from .commitment import COMMITMENT, CommitmentError, deal_seed, read_commitment
from .keys import ProofError, PublicKey
from .results import RESULTS, Recorded

Units = dict[str, dict[int, tuple[int, int]]]  # bot -> {unit: (points, games)}


class VerifyError(Exception):
    """A folder `verify` cannot start on (no commitment, no results); one line."""


@dataclass
class Check:
    """One line of the report."""

    name: str
    ok: bool
    text: str

    def line(self) -> str:
        """The line as printed."""
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.name}: {self.text}"


@dataclass
class Game:
    """A game as the results list it (and, in an output folder, its ledger row)."""

    id: str
    index: int
    unit: int
    deal: int
    rotation: int
    seats: list[str]
    scores: list[int]
    ranks: list[int]
    forfeited: list[bool]
    log_sha256: str
    seq: int
    seed: int | None = None  # in an output folder: the ledger's

    @classmethod
    def of_entry(cls, e: dict[str, Any]) -> Game:
        return cls(
            id=str(e["id"]),
            index=int(e["index"]),
            unit=int(e["unit"]),
            deal=int(e["deal"]),
            rotation=int(e["rotation"]),
            seats=[str(s) for s in e["seats"]],
            scores=[int(x) for x in e["scores"]],
            ranks=[int(x) for x in e["ranks"]],
            forfeited=[bool(x) for x in e["forfeited"]],
            log_sha256=str(e["log_sha256"]),
            seq=int(e["seq"]),
        )

    @classmethod
    def of_record(cls, r: Recorded) -> Game:
        return cls(
            id=r.game_id,
            index=r.idx,
            unit=r.unit,
            deal=r.deal,
            rotation=r.rotation,
            seats=list(r.seats),
            scores=list(r.scores),
            ranks=list(r.ranks),
            forfeited=list(r.forfeited),
            log_sha256=r.log_sha256,
            seq=r.seq,
            seed=r.seed,
        )

    def same(self) -> tuple[Any, ...]:
        """What results.json and the ledger must agree on."""
        return (
            self.id,
            self.index,
            self.unit,
            self.deal,
            self.rotation,
            self.seats,
            self.scores,
            self.ranks,
            self.forfeited,
            self.log_sha256,
            self.seq,
        )


@dataclass
class Report:
    """Every check made, in order, and what the folder publishes that none of them
    re-derives (`uncovered`: each a file, a group of files, or a part of one)."""

    checks: list[Check] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def add(self, name: str, problem: str | None, good: str) -> bool:
        self.checks.append(Check(name, problem is None, problem if problem else good))
        return problem is None


Played = tuple[Game, GameLog | None]  # a game, and its log when the standings read it


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file of the folder, or None when it is not there."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise VerifyError(f"{path}: cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict):
        raise VerifyError(f"{path}: not a JSON object")
    return data


class Restater(Protocol):
    """The league's own code that the checks re-derive with (`referee.league.restate`),
    handed in by `referee verify`: the games of a ledger, and the standings the games
    give and the files the referee writes from them."""

    def records(self, db: sqlite3.Connection) -> Sequence[Recorded]:
        """Every game the ledger `db` holds."""
        ...

    def standings(
        self, names: list[str], games: Sequence[Played], clocks: Any, commitment: str
    ) -> tuple[dict[str, Any], Units]:
        """The standings of the bots `names` that `games` give (a game's faults, notices,
        latencies and decision time from its log, when it comes with one; the clocks
        warning at the `warn_at` of `clocks`, the stated standings' clocks, or at the
        referee's default), as standings.json holds them, and each bot's units (which it
        leaves out)."""
        ...

    def written(self, name: str, data: dict[str, Any], units: Units, title: str) -> str:
        """standings.csv or standings.md (`name`) as the referee writes them from the
        standings `data`, as standings.json holds them, and each bot's `units`."""
        ...


class Folder:
    """One folder as the checks read it: a league's output folder (with its ledger) or
    its site; what the checks found so far (the report, the keys, the logs that hold,
    the files covered)."""

    def __init__(self, folder: Path, restate: Restater, *, expected: str | None = None) -> None:
        if not folder.is_dir():
            raise VerifyError(f"{folder}: no such folder")
        self.folder = folder
        self.restate = restate
        self.expected = expected
        self.report = Report()
        try:
            commitment = read_commitment(folder)
        except CommitmentError as exc:
            raise VerifyError(str(exc)) from None
        if commitment is None:
            raise VerifyError(
                f"{folder}: no {COMMITMENT} here; give a league's output folder or its site"
            )
        self.commitment = commitment
        self.terms: dict[str, Any] = commitment.data.get("league", {})
        results = read_json(folder / RESULTS)
        self.results = results
        self.ledger: list[Recorded] | None = None
        self.meta: dict[str, str] = {}
        db = folder / "league.db"
        if db.is_file():
            try:
                with _read_only(db) as conn:
                    self.ledger = list(restate.records(conn))
                    self.meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            except (sqlite3.Error, OSError) as exc:
                raise VerifyError(f"{db}: cannot read the ledger: {exc}") from None
        if results is None and self.ledger is None:
            raise VerifyError(f"{folder}: neither {RESULTS} nor league.db is here")
        self.public: PublicKey | None = None
        line = commitment.data.get("public_key")
        if line:
            try:
                self.public = PublicKey.from_text(str(line))
            except ProofError as exc:
                raise VerifyError(f"{folder / COMMITMENT}: public_key: {exc}") from None
        self.deal_key: bytes | None = None
        self.bot_seed_key: bytes | None = None
        self.key: bytes | None = None  # the deals' key, contributions mixed in
        self._schedule: Callable[[int], tuple[int, int, int, int, list[str]] | None] | None = None
        self.logs: dict[str, GameLog] = {}  # the games whose log holds, by id
        # The files a check re-derived or compared, relative to the folder: every other
        # file in it is named as not covered.
        self.covered: set[str] = {COMMITMENT}
        self.unrecorded = 0  # seats of bots the referee started whose logs name no files

    # ------------------------------------------------------------------ the games

    def games(self) -> list[Game]:
        """The games checked: the ledger's in an output folder, else results.json's."""
        if self.ledger is not None:
            return [Game.of_record(r) for r in sorted(self.ledger, key=lambda r: (r.seq, r.idx))]
        assert self.results is not None
        return [Game.of_entry(e) for e in self.results.get("games", [])]

    # ------------------------------------------------------------------ the schedule

    def _scheduled(self) -> Callable[[int], tuple[int, int, int, int, list[str]] | None]:
        """The commitment's game at a schedule index: unit, table, deal, rotation, seats."""
        if self._schedule is None:
            self._schedule = self._schedule_of()
        return self._schedule

    def _schedule_of(self) -> Callable[[int], tuple[int, int, int, int, list[str]] | None]:
        terms = self.terms
        match = terms.get("match")
        if match is None:
            by_index = {
                k: (int(u), int(t), int(d), int(r), [str(s) for s in seats])
                for k, (_id, u, t, d, r, seats) in enumerate(terms.get("schedule", []))
            }
            return by_index.get
        table = int(terms["table"])
        new, base, fld = str(match["new"]), str(match["base"]), [str(f) for f in match["field"]]

        def of(index: int) -> tuple[int, int, int, int, list[str]] | None:
            unit, which = divmod(index, 2)
            me, other = (new, base) if which == 0 else (base, new)
            others = iter(fld or [other])
            tested = unit % table
            seats = [me if s == tested else next(others) for s in range(table)]
            return unit, 0, unit, which, seats

        return of

    def _seed(self, deal: int, table: int) -> int | None:
        if self.key is None:
            return None
        return deal_seed(self.key, int(self.terms.get("seed", 1)), deal, table)

    def _scheduled_table(self, g: Game) -> int:
        want = self._scheduled()(g.index)
        return want[1] if want is not None else 0


@contextlib.contextmanager
def _read_only(db: Path) -> Iterator[sqlite3.Connection]:
    """The ledger `db`, read without writing a byte beside it. SQLite opens a database
    in write-ahead-log mode, even read-only, by making its `-shm` and `-wal` files; a
    ledger without them (a league that closed its ledger) is read as immutable, one
    with them (a league running, or cut short) from a copy of the two in a temporary
    folder."""
    wal, shm = db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")
    if not wal.exists() and not shm.exists():
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            yield conn
        finally:
            conn.close()
        return
    with tempfile.TemporaryDirectory(prefix="referee-verify-") as copy:
        shutil.copyfile(db, Path(copy) / db.name)
        if wal.exists():
            shutil.copyfile(wal, Path(copy) / wal.name)
        conn = sqlite3.connect(Path(copy) / db.name)
        try:
            yield conn
        finally:
            conn.close()
