"""`referee verify`: check a league's results against its commitment, from its output
folder or from its published site, as any entrant can.

Each check gives one line, `ok` or `FAIL`, and a failing check names the first game
where something differs and what:

- **commitment**: `commitment.json` is there (and is the one published, with
  `--commitment`);
- **key**: the revealed deal key (`reveal.json`) is the one committed to (in an output
  folder before the reveal, the ledger's key, and the line says so);
- **contributions**: what `mix` names was mixed in, as logged;
- **schedule**: every game sits the seats the commitment scheduled, with the deal seed
  derived from the key and the contributions, and none is missing from a league that
  ended;
- **logs**: every game's log is there, is the log recorded (its digest), has not been
  edited since it was written (the footer's digest of the lines before it: a latency,
  a fault), names the commitment and its seed, re-derives with the engine, and ends
  with the result recorded;
- **results**: results.json names this commitment, league, signing key and
  `allow_updates`, and as many games as it lists;
- **bots**: each game's log says which files each bot the referee started played
  with; they are the ones the commitment names, unless it allows updates
  (`[league] allow_updates`), and then the games played with others are listed;
- **ledger** (an output folder): the ledger and results.json hold the same games;
- **standings**: the standings are the ones the games give, their faults, latencies,
  failed starts and decision time the ones the logs give;
- **published**: standings.json (in an output folder and on a site) is those
  standings too, and standings.csv and standings.md are what the referee writes
  from it, byte for byte;
- **signatures**: results.json and every checkpoint are signed by the key the
  commitment names, and every checkpoint's chain is the chain of the results' first
  games (a league played again shows here);
- **receipts** (`--receipt`): each receipt is signed by that key, and the results still
  hold its game as it was.

Then a `not covered:` line names every file of the folder no check read (the site's
pages and replay data, the chart, the bots' stderr, a file added by hand) and what
the standings say on the organiser's word alone (the sandbox, the transport, the
clocks' threshold, a match's test), so that nothing passes unsaid. What it cannot
check is said in docs/proof.md: the organiser saw the deals while the league ran,
and latencies and faults are measured by the organiser's machine.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import shutil
import sqlite3
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from protocol import messages as m

from ..bots.faults import FaultKind
from ..logs.gamelog import (
    GameLog,
    LogError,
    find_log,
    line_bytes,
    log_bytes,
    parse_log,
    sha256_text,
)
from ..logs.replay import verify as replay_verify
from ..proof.keys import ProofError, PublicKey
from .commitment import (
    COMMITMENT,
    CONTRIBUTIONS,
    REVEAL,
    CommitmentError,
    key_digest,
    mixed_key,
    read_commitment,
)
from .output import csv_text, markdown
from .records import Record, SandboxRecord, read_records
from .results import CHECKPOINTS, RESULTS, SIGNATURE_SUFFIX, chain
from .schedule import deal_seed
from .standings import BotStanding, Clocks, FailedStart, Standings, compute
from .transport import Transport


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
    def of_record(cls, r: Record) -> Game:
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


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise VerifyError(f"{path}: cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict):
        raise VerifyError(f"{path}: not a JSON object")
    return data


def _hex_key(value: object, what: str) -> bytes:
    try:
        return bytes.fromhex(str(value))
    except ValueError:
        raise VerifyError(f"{what}: not hexadecimal") from None


class Verifier:
    """The checks of one folder: a league's output folder (with its ledger) or its site."""

    def __init__(self, folder: Path, *, expected: str | None = None) -> None:
        if not folder.is_dir():
            raise VerifyError(f"{folder}: no such folder")
        self.folder = folder
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
        results = _read_json(folder / RESULTS)
        self.results = results
        self.ledger: list[Record] | None = None
        self.meta: dict[str, str] = {}
        db = folder / "league.db"
        if db.is_file():
            try:
                with _read_only(db) as conn:
                    self.ledger = read_records(conn)
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

    # ------------------------------------------------------------------ checks

    def run(self, receipts: list[Path]) -> Report:
        """Every check, in order. A file whose shape is not the one the referee writes
        (a key missing, a number that is text: edited by hand, or by someone hiding an
        edit) fails the check that reads it, with the file named, and the others go on."""
        self._guarded("commitment", self.check_commitment)
        self._guarded("key", self.check_key)
        self._guarded("contributions", self.check_contributions)
        games: list[Game] = []
        if not self._guarded("results", lambda: games.extend(self.games())):
            return self.report
        self._guarded("schedule", lambda: self.check_schedule(games))
        self._guarded("logs", lambda: self.check_logs(games))
        self._guarded("results", lambda: self.check_results(games))
        self._guarded("bots", lambda: self.check_bots(games))
        self._guarded("ledger", self.check_ledger)
        self._guarded("standings", lambda: self.check_standings(games))
        self._guarded("published", lambda: self.check_published(games))
        self._guarded("signatures", lambda: self.check_signatures(games))
        for path in receipts:
            self._guarded(f"receipt {path.name}", partial(self.check_receipt, path, games))
        self.report.uncovered = self.not_covered()
        return self.report

    def _guarded(self, name: str, check: Callable[[], object]) -> bool:
        """Run one check; False, and a failed line, when a file it read is malformed."""
        try:
            check()
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            self.report.add(
                name,
                f"a file of the league is not as the referee writes it ({type(exc).__name__}: "
                f"{what}); the results cannot be checked against it",
                "",
            )
            return False
        return True

    def check_commitment(self) -> None:
        digest = self.commitment.digest
        if self.expected is not None and self.expected != digest:
            self.report.add(
                "commitment",
                f"{COMMITMENT} is {digest}, not the published {self.expected}",
                "",
            )
            return
        before = self.commitment.data.get("games_before")
        if before:
            self.report.add(
                "commitment",
                f"{digest} was made after {before} games had been played, so it fixed "
                "nothing of them",
                "",
            )
            return
        said = "the published one" if self.expected else "not compared: give --commitment"
        self.report.add("commitment", None, f"{digest} ({said})")

    def check_key(self) -> None:
        reveal = _read_json(self.folder / REVEAL)
        committed = self.commitment.data.get("deal_key_sha256")
        if reveal is None:
            stored = self.meta.get("deal_key")
            if stored is None:
                self.report.add(
                    "key",
                    f"the deal key is not revealed ({REVEAL} is missing: `referee reveal`); "
                    "the deals cannot be re-derived",
                    "",
                )
                return
            key = _hex_key(stored, "league.db: deal_key")
            where = "taken from the ledger: not revealed yet"
            seeds = self.meta.get("bot_seed_key")
            self.bot_seed_key = _hex_key(seeds, "league.db: bot_seed_key") if seeds else None
        else:
            self.covered.add(REVEAL)
            key = _hex_key(reveal.get("deal_key"), f"{REVEAL}: deal_key")
            where = f"revealed in {REVEAL}"
            if reveal.get("bot_seed_key"):
                self.bot_seed_key = _hex_key(reveal["bot_seed_key"], f"{REVEAL}: bot_seed_key")
            if reveal.get("commitment") != self.commitment.digest:
                self.report.add("key", f"{REVEAL} names another commitment", "")
                return
        if key_digest(key) != committed:
            self.report.add(
                "key",
                f"the deal key {where} hashes to {key_digest(key)}; the commitment says "
                f"{committed}",
                "",
            )
            return
        self.deal_key = key
        self.report.add("key", None, f"the deal key ({where}) is the one committed to")

    def check_contributions(self) -> None:
        mix = self.commitment.mix
        if self.deal_key is None:
            return
        if not mix:
            self.key = self.deal_key
            return
        logged = _read_json(self.folder / CONTRIBUTIONS)
        self.covered.add(CONTRIBUTIONS)
        if logged is None:
            self.report.add(
                "contributions", f"the league mixes {mix}; {CONTRIBUTIONS} is missing", ""
            )
            return
        given = logged.get("contributions", {})
        if logged.get("commitment") != self.commitment.digest:
            self.report.add("contributions", f"{CONTRIBUTIONS} names another commitment", "")
            return
        wanted = {"beacon": "beacon", "entrants": "nonces"}
        lacking = [k for k in mix if wanted[k] not in given]
        if lacking:
            self.report.add("contributions", f"{CONTRIBUTIONS} lacks {', '.join(lacking)}", "")
            return
        if "contributions" in self.meta and json.loads(self.meta["contributions"]) != given:
            self.report.add(
                "contributions", f"{CONTRIBUTIONS} differs from the ledger's contributions", ""
            )
            return
        self.key = mixed_key(self.deal_key, given)
        parts = []
        if "beacon" in given:
            parts.append(f"beacon {json.dumps(given['beacon'])}")
        if "nonces" in given:
            absent = [n for n, v in given["nonces"].items() if v is None]
            parts.append(
                f"{len(given['nonces'])} entrants' nonces"
                + (f" ({', '.join(absent)} sent none)" if absent else "")
            )
        self.report.add("contributions", None, "mixed into the deals: " + "; ".join(parts))

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

    def check_schedule(self, games: list[Game]) -> None:
        scheduled = self._scheduled()
        seen: set[int] = set()
        for g in games:
            want = scheduled(g.index)
            if want is None:
                self.report.add("schedule", f"{g.id}: no game {g.index + 1} was scheduled", "")
                return
            if f"g{g.index + 1:05d}" != g.id:
                self.report.add("schedule", f"{g.id}: recorded as game {g.index + 1}", "")
                return
            if g.index in seen:
                self.report.add("schedule", f"{g.id}: recorded twice", "")
                return
            seen.add(g.index)
            unit, table, deal, rotation, seats = want
            got = (g.unit, g.deal, g.rotation, g.seats)
            if got != (unit, deal, rotation, seats):
                self.report.add(
                    "schedule",
                    f"{g.id}: seats {g.seats} (unit {g.unit}, deal {g.deal}, rotation "
                    f"{g.rotation}); the commitment scheduled {seats} (unit {unit}, deal "
                    f"{deal}, rotation {rotation})",
                    "",
                )
                return
            seed = self._seed(deal, table)
            if g.seed is not None and seed is not None and g.seed != seed:
                self.report.add(
                    "schedule", f"{g.id}: the ledger's seed is not the one the key derives", ""
                )
                return
        missing = self._missing(seen)
        if missing:
            self.report.add("schedule", missing, "")
            return
        keyed = "their seeds derived from the key" if self.key is not None else "seeds unchecked"
        self.report.add("schedule", None, f"{len(games)} games as scheduled, {keyed}")

    def _missing(self, seen: set[int]) -> str | None:
        """A game the results should hold but do not."""
        listed = {int(e["index"]): str(e["id"]) for e in (self.results or {}).get("games", [])}
        for index, game_id in sorted(listed.items()):
            if index not in seen:
                return f"{game_id}: in {RESULTS} but not in the ledger"
        if self.results is not None and self.results.get("ended"):
            if self.terms.get("match") is None:
                total = len(self.terms.get("schedule", []))
                for index in range(total):
                    if index not in seen:
                        return (
                            f"g{index + 1:05d}: scheduled, and not among the results of a "
                            "league that ended"
                        )
            elif seen and sorted(seen) != list(range(max(seen) + 1)):
                first = next(i for i in range(max(seen) + 1) if i not in seen)
                return f"g{first + 1:05d}: missing from the results of a match that ended"
        return None

    def _log(self, g: Game) -> tuple[bytes, GameLog] | str:
        """A game's log as written (its seed and bot-seed key restored, for a site's log,
        which withholds them), or what is wrong with it."""
        path = find_log(self.folder / "logs", g.id)
        if path is None:
            return f"{g.id}: its log is missing"
        self.covered.add(path.relative_to(self.folder).as_posix())
        try:
            raw = log_bytes(path)
            log = parse_log(raw, path, allow_redacted=True)
        except LogError as exc:
            return f"{g.id}: {exc}"
        if log.header.seed is None:
            if log.header.seat is not None:
                return f"{g.id}: its log is one seat's, not the game's"
            seed = self._seed(g.deal, self._scheduled_table(g))
            if seed is None or self.bot_seed_key is None:
                return f"{g.id}: its log withholds its seed, and the keys are not revealed"
            header = msgspec.structs.replace(
                log.header, seed=seed, bot_seed_key=self.bot_seed_key.hex()
            )
            lines = raw.split(b"\n")
            first = next(k for k, line in enumerate(lines) if line.strip())
            lines[first] = line_bytes(header)
            raw = b"\n".join(lines)
            log = parse_log(raw, path)
        return raw, log

    def _scheduled_table(self, g: Game) -> int:
        want = self._scheduled()(g.index)
        return want[1] if want is not None else 0

    def check_logs(self, games: list[Game]) -> None:
        first: str | None = None
        for g in games:  # every one, after a failure too: the later checks read them
            problem = self._check_log(g)
            if first is None:
                first = problem
        if first is not None:
            self.report.add("logs", first, "")
            return
        self.report.add(
            "logs",
            None,
            f"{len(games)} logs: each the one recorded, unedited, re-derived by the engine",
        )

    def _check_log(self, g: Game) -> str | None:
        got = self._log(g)
        if isinstance(got, str):
            return got
        raw, log = got
        digest = sha256_text(raw)
        if digest != g.log_sha256:
            recorded = g.log_sha256 or "none"
            return f"{g.id}: its log's digest is {digest}; the results recorded {recorded}"
        footer = log.footer
        if footer is None:
            return f"{g.id}: its log has no footer (incomplete)"
        body = raw[: _footer_start(raw)]
        if footer.sha256 != sha256_text(body):
            return (
                f"{g.id}: its log was edited after it was written: its lines differ from "
                "its footer's digest"
            )
        header = log.header
        if header.game != g.id:
            return f"{g.id}: its log is the log of {header.game}"
        if header.commitment != self.commitment.digest:
            named = header.commitment
            return f"{g.id}: its log names commitment {named}, not {self.commitment.digest}"
        seed = self._seed(g.deal, self._scheduled_table(g))
        if seed is not None and header.seed != seed:
            return f"{g.id}: its log's seed is not the one the key derives for deal {g.deal}"
        names = [b.name for b in sorted(header.bots, key=lambda b: b.seat)]
        if names != g.seats:
            return f"{g.id}: its log seats {names}; the results say {g.seats}"
        verdict = replay_verify(log)
        if verdict.divergence is not None:
            return f"{g.id}: {verdict.divergence}"
        ends: list[tuple[str, list[int] | list[bool], list[int] | list[bool]]] = [
            ("scores", footer.scores, g.scores),
            ("ranks", footer.ranks, g.ranks),
            ("forfeits", footer.forfeited, g.forfeited),
        ]
        for what, said, kept in ends:
            if said != kept:
                return f"{g.id}: its log ends with {what} {said}; the results say {kept}"
        self.logs[g.id] = log
        return None

    def check_ledger(self) -> None:
        if self.ledger is not None:
            self.covered.add("league.db")
        if self.ledger is None or self.results is None:
            if self.ledger is not None:
                self.report.add("ledger", f"{RESULTS} is missing", "")
            return
        listed = {str(e["id"]): Game.of_entry(e) for e in self.results.get("games", [])}
        rows = {r.game_id: Game.of_record(r) for r in self.ledger}
        for game_id, row in sorted(rows.items()):
            entry = listed.get(game_id)
            if entry is None:
                self.report.add("ledger", f"{game_id}: in the ledger, not in {RESULTS}", "")
                return
            if entry.same() != row.same():
                diff = [
                    name
                    for name, a, b in zip(_SAME, entry.same(), row.same(), strict=True)
                    if a != b
                ]
                self.report.add(
                    "ledger", f"{game_id}: the ledger and {RESULTS} differ in {', '.join(diff)}", ""
                )
                return
        for game_id in sorted(listed):
            if game_id not in rows:
                self.report.add("ledger", f"{game_id}: in {RESULTS}, not in the ledger", "")
                return
        self.report.add("ledger", None, f"the ledger and {RESULTS} hold the same {len(rows)} games")

    def check_results(self, games: list[Game]) -> None:
        """results.json's own lines: its commitment, league, count, plan and signer."""
        if self.results is None:
            return
        self.covered.add(RESULTS)
        results, terms = self.results, self.terms
        allowed = bool(terms.get("allow_updates"))
        listed = len(results.get("games", []))
        key_id = self.public.id_hex if self.public is not None else None
        problems = [
            (
                results.get("commitment") != self.commitment.digest,
                f"{RESULTS} names commitment {results.get('commitment')}, not this one",
            ),
            (
                results.get("league") != terms.get("name"),
                f"{RESULTS} is the results of league {json.dumps(results.get('league'))}; "
                f"the commitment's is {json.dumps(terms.get('name'))}",
            ),
            (
                results.get("recorded") != listed,
                f"{RESULTS} says {results.get('recorded')} games were recorded and lists {listed}",
            ),
            (
                terms.get("match") is None
                and results.get("scheduled") != len(terms.get("schedule", [])),
                f"{RESULTS} says {results.get('scheduled')} games were scheduled; the "
                f"commitment schedules {len(terms.get('schedule', []))}",
            ),
            (
                results.get("key_id") != key_id,
                f"{RESULTS} names signing key {results.get('key_id')}; the commitment's is "
                f"{key_id}",
            ),
            (
                bool(results.get("allow_updates", False)) != allowed,
                f"{RESULTS} says allow_updates = {json.dumps(results.get('allow_updates'))}; "
                f"the commitment says {json.dumps(allowed)}",
            ),
        ]
        problem = next((said for wrong, said in problems if wrong), None)
        allows = "; the commitment allows updates" if allowed else ""
        self.report.add(
            "results", problem, f"{RESULTS} is this league's, with the {listed} games{allows}"
        )

    def check_bots(self, games: list[Game]) -> None:
        """Each game's bots played with the files the commitment names (each log's header
        says which files each process's command named when it started), unless the
        commitment allows updates: then the games played with other files are listed."""
        committed = {str(b["name"]): b.get("files") for b in self.terms.get("bots", [])}
        started = {name for name, files in committed.items() if files is not None}
        if not started:
            self.report.add(
                "bots", None, "the referee started no bot: a tcp bot's files are its own"
            )
            return
        allowed = bool(self.terms.get("allow_updates"))
        other: list[tuple[str, str, str, str | None, str | None]] = []
        seats = 0
        for g in games:
            log = self.logs.get(g.id)
            if log is None or log.footer is None:
                continue  # the logs check failed on it
            failed = {f.seat for f in log.footer.faults if f.kind == _FAILED_START}
            for bot in log.header.bots:
                want = committed.get(bot.name)
                if want is None:
                    continue  # a tcp bot
                if bot.files is None:
                    if bot.seat not in failed:  # a bot that started, in an older log
                        self.unrecorded += 1
                    continue
                seats += 1
                apart = _files_apart(want, bot.files)
                if apart is not None:
                    other.append((g.id, bot.name, *apart))
        if other and not allowed:
            game, name, word, got, want = other[0]
            played = f"played with {word} at {got}" if got else f"played without {word}"
            named = want if want else "no such file"
            more = len(other) - 1  # a bot has one seat in a game
            self.report.add(
                "bots",
                f"{game}: {name} {played}; the commitment names {named}"
                + (f" ({more} more seat{'s' * (more > 1)} played with other files)" if more else "")
                + "; the league does not allow updates ([league] allow_updates)",
                "",
            )
            return
        if other:
            first: dict[tuple[str, str], list[str]] = {}
            for game, name, word, _got, _want in other:
                first.setdefault((name, word), []).append(game)
            which = ", ".join(
                f"{name}'s {word} in {len(ids)} game{'s' if len(ids) > 1 else ''} from {ids[0]}"
                for (name, word), ids in first.items()
            )
            self.report.add(
                "bots",
                None,
                "the commitment allows updates ([league] allow_updates); played with other "
                f"files than it names: {which}",
            )
            return
        self.report.add("bots", None, f"{seats} seats played with the files the commitment names")

    def _record(self, g: Game, log: GameLog | None) -> Record:
        """A game as the standings need it: its result from the results (or the ledger),
        and with its log, the faults, notices, latencies and decision time it holds."""
        seats = len(g.seats)
        if log is None or log.footer is None:
            return _record(g)
        footer = log.footer
        timed: list[list[float]] = [[] for _ in range(seats)]
        for d in log.decisions:
            if d.latency_ms is not None and not d.auto:
                timed[d.seat].append(d.latency_ms)
        return replace(
            _record(g),
            faults=[{"seat": f.seat, "kind": f.kind, "detail": f.detail} for f in footer.faults],
            latency_mean=[round(statistics.fmean(v), 3) if v else None for v in timed],
            latency_max=[round(max(v), 3) if v else None for v in timed],
            decisions=footer.decisions,
            notices=[{"seat": n.seat, "kind": n.kind, "detail": n.detail} for n in footer.notices],
            charged_ms=footer.charged_ms or 0.0,
            excused_ms=footer.excused_ms or 0.0,
        )

    def _derived(self, stated: dict[str, Any], games: list[Game]) -> tuple[Standings, bool]:
        """The standings `stated` should be, from the games (a match's: those of the units
        its test counted) and, when every one of them has a log that holds, from their
        logs too (the second value: whether they were read)."""
        counted = games
        if stated.get("match") is not None:
            units = int(stated["match"]["units"])
            counted = [g for g in games if g.unit < units]
        full = all(g.id in self.logs for g in counted)
        records = [self._record(g, self.logs.get(g.id) if full else None) for g in counted]
        names = [str(b["name"]) for b in self.terms.get("bots", [])]
        warn_at = float(stated.get("clocks", {}).get("warn_at", Clocks().warn_at))
        derived = compute(names, records, lag_warning=warn_at)
        derived.commitment = self.commitment.digest
        return derived, full

    def _standings_problem(
        self, stated: dict[str, Any], games: list[Game], what: str
    ) -> tuple[str | None, bool]:
        """What differs between the standings `stated` (in `what`) and the ones the games
        give, first; and whether the logs were read."""
        derived, full = self._derived(stated, games)
        problem = _compare(stated, derived.to_json(), full)
        return (f"{what}: {problem}" if problem else None), full

    def check_standings(self, games: list[Game]) -> None:
        if self.results is None:
            return
        stated = self.results.get("standings")
        if not isinstance(stated, dict):
            self.report.add("standings", f"{RESULTS} holds no standings", "")
            return
        problem, full = self._standings_problem(stated, games, f"{RESULTS}'s standings")
        also = ", and their faults, latencies and decision time the ones their logs hold"
        self.report.add(
            "standings",
            problem,
            f"the standings are the ones the games give{also if full else ''}",
        )

    def check_published(self, games: list[Game]) -> None:
        """The standings' files (standings.json, .csv, and in an output folder .md): each
        the standings the games give, written as the referee writes them."""
        present = [n for n in STANDINGS_FILES if (self.folder / n).is_file()]
        if not present:
            return
        base = self.results.get("standings") if self.results is not None else None
        source = base if isinstance(base, dict) else None
        first: str | None = None
        for name in present:  # every one, after a failure too: each is covered
            self.covered.add(name)
            problem: str | None = None
            if name == "standings.json":
                problem, data = self._standings_file(games, base)
                if data is not None:
                    source = data
            elif source is None:
                problem = f"{name}: no standings to compare it with ({RESULTS} is missing)"
            else:
                derived, _full = self._derived(source, games)
                rebuilt = _rebuilt(source, {b.name: b.units for b in derived.bots})
                title = f"{self.terms.get('name')}: standings"
                text = csv_text(rebuilt) if name == "standings.csv" else markdown(rebuilt, title)
                problem = _first_line_apart(name, (self.folder / name).read_bytes(), text)
            first = first or problem
        said = ", ".join(present)
        self.report.add("published", first, f"{said}: the standings the games give")

    def _standings_file(
        self, games: list[Game], base: dict[str, Any] | None
    ) -> tuple[str | None, dict[str, Any] | None]:
        """standings.json checked against the games and against results.json's standings
        (the same in an output folder; on a site, what the organiser says of the sandbox,
        the transport and the clocks' threshold); what is wrong, and its contents."""
        name = "standings.json"
        try:
            data = _read_json(self.folder / name)
        except VerifyError as exc:
            return str(exc), None
        assert data is not None
        problem, _full = self._standings_problem(data, games, name)
        if problem is not None:
            return problem, None
        if base is not None and self.ledger is not None and data != base:
            apart = sorted(k for k in set(data) | set(base) if data.get(k) != base.get(k))
            return f"{name} differs from {RESULTS}'s standings in {', '.join(apart)}", None
        if base is not None:
            for key in ("sandbox", "transport"):
                if data.get(key) != base.get(key):
                    return f"{name}: its {key} is not the one {RESULTS} states", None
            if data["clocks"].get("warn_at") != base.get("clocks", {}).get("warn_at"):
                return f"{name}: its clocks' warn_at is not the one {RESULTS} states", None
            if "match" in data and data["match"] != base.get("match"):
                return f"{name}: its match is not the one {RESULTS} states", None
        return None, data

    def not_covered(self) -> list[str]:
        """What the folder publishes that no check re-derived: files (grouped by folder,
        pages together) and what the results say on the organiser's word alone."""
        loose: list[str] = []
        folders: dict[str, int] = {}
        pages = 0
        db = "league.db" in self.covered
        for path in sorted(p for p in self.folder.rglob("*") if p.is_file()):
            rel = path.relative_to(self.folder).as_posix()
            if rel in self.covered or (db and rel.startswith("league.db-")):
                continue
            top, _, rest = rel.partition("/")
            if rest:
                folders[top] = folders.get(top, 0) + 1
            elif rel.endswith(".html"):
                pages += 1
            else:
                loose.append(rel + _WHY.get(rel, ""))
        items = [f"{pages} page{'s' if pages > 1 else ''} (*.html)"] if pages else []
        items += loose
        items += [
            f"{top}/ ({n} file{'s' if n > 1 else ''}{_WHY.get(top + '/', '')})"
            for top, n in sorted(folders.items())
        ]
        if self.unrecorded:
            items.append(
                f"the files of {self.unrecorded} seats whose logs do not name them (written "
                "by an older referee)"
            )
        tcp = [str(b["name"]) for b in self.terms.get("bots", []) if b.get("files") is None]
        if tcp:
            items.append(f"the files of the tcp bots ({', '.join(tcp)}): their own")
        stated = (self.results or {}).get("standings")
        if isinstance(stated, dict):
            said = [k for k in ("sandbox", "transport") if stated.get(k) is not None]
            said.append("the clocks' warn_at")
            if stated.get("match") is not None:
                said.append("the match's test")
            items.append(f"the standings' {', '.join(said)} (the organiser's word)")
        return items

    def check_signatures(self, games: list[Game]) -> None:
        links = chain(self.commitment.digest, ((g.id, g.log_sha256) for g in games))
        checkpoints = sorted((self.folder / CHECKPOINTS).glob("*.json"))
        for path in checkpoints:
            problem = self._checkpoint(path, links)
            if problem is not None:
                self.report.add("checkpoints", problem, "")
                break
        else:
            if checkpoints:
                self.report.add(
                    "checkpoints",
                    None,
                    f"{len(checkpoints)} checkpoints, each a prefix of the results' chain",
                )
        if self.results is not None and self.results.get("chain") != links[-1]:
            self.report.add("signatures", f"{RESULTS}'s chain is not the chain of its games", "")
            return
        if self.public is None:
            self.report.add("signatures", None, "the league signs nothing (no [league] sign)")
            return
        if self.results is None:
            self.report.add("signatures", f"{RESULTS} is missing", "")
            return
        problem = self._signed(self.folder / RESULTS)
        if problem is not None:
            self.report.add("signatures", problem, "")
            return
        self.report.add("signatures", None, f"{RESULTS} is signed by key {self.public.id_hex}")

    def _signed(self, path: Path) -> str | None:
        assert self.public is not None
        signature = path.with_name(path.name + SIGNATURE_SUFFIX)
        self.covered.add(signature.relative_to(self.folder).as_posix())
        try:
            text = signature.read_text(encoding="utf-8")
        except OSError:
            return f"{signature.name} is missing"
        try:
            self.public.verify_minisig(path.read_bytes(), text)
        except ProofError as exc:
            return f"{path.name}: {exc}"
        return None

    def _checkpoint(self, path: Path, links: list[str]) -> str | None:
        self.covered.add(path.relative_to(self.folder).as_posix())
        data = _read_json(path)
        assert data is not None
        if data.get("commitment") != self.commitment.digest:
            return f"{path.name} names another commitment"
        n = int(data.get("games", -1))
        if not 0 <= n < len(links):
            return f"{path.name} is after {n} games; the results hold {len(links) - 1}"
        if data.get("chain") != links[n]:
            return (
                f"{path.name}: its first {n} games differ from the results' first {n} "
                "(a game changed, or the league was played again)"
            )
        if self.public is not None:
            return self._signed(path)
        return None

    def check_receipt(self, path: Path, games: list[Game]) -> None:
        name = f"receipt {path.name}"
        try:
            receipt = load_receipt(path)
        except VerifyError as exc:
            self.report.add(name, str(exc), "")
            return
        if receipt.league != self.commitment.digest:
            self.report.add(name, f"{receipt.game}: from another league ({receipt.league})", "")
            return
        if self.public is not None:
            if receipt.signature is None:
                self.report.add(name, f"{receipt.game}: not signed", "")
                return
            try:
                signature = base64.b64decode(receipt.signature, validate=True)
            except (binascii.Error, ValueError):
                self.report.add(name, f"{receipt.game}: its signature is not base64", "")
                return
            if not self.public.verify(m.receipt_bytes(receipt), signature):
                self.report.add(name, f"{receipt.game}: not signed by the organiser's key", "")
                return
        game = next((g for g in games if g.id == receipt.game), None)
        if game is None:
            self.report.add(name, f"{receipt.game}: no longer among the results", "")
            return
        for what, said, now in (
            ("log digest", receipt.log_sha256, game.log_sha256),
            ("scores", receipt.scores, game.scores),
            ("ranks", receipt.ranks, game.ranks),
            (
                "seat",
                receipt.name,
                game.seats[receipt.seat] if receipt.seat < len(game.seats) else None,
            ),
        ):
            if said != now:
                self.report.add(
                    name,
                    f"{receipt.game}: the receipt's {what} is {said}; the results now say {now}",
                    "",
                )
                return
        signed = "signed, " if self.public is not None else ""
        self.report.add(
            name, None, f"{receipt.game} ({receipt.name}, seat {receipt.seat}): {signed}as recorded"
        )


_SAME = (
    "id",
    "index",
    "unit",
    "deal",
    "rotation",
    "seats",
    "scores",
    "ranks",
    "forfeited",
    "log digest",
    "record order",
)


def _footer_start(raw: bytes) -> int:
    """Where the footer's line starts in a log's bytes (its last line)."""
    end = len(raw.rstrip(b"\n"))
    return raw.rfind(b"\n", 0, end) + 1


def _record(g: Game) -> Record:
    """A game as the standings need it."""
    return Record(
        idx=g.index,
        game_id=g.id,
        unit=g.unit,
        deal=g.deal,
        rotation=g.rotation,
        seed=0,
        seats=g.seats,
        scores=g.scores,
        ranks=g.ranks,
        forfeited=g.forfeited,
        faults=[],
        latency_mean=[None] * len(g.seats),
        latency_max=[None] * len(g.seats),
        decisions=0,
        log_path="",
        finished="",
    )


_FAILED_START = FaultKind.STARTUP_FAILURE.value
STANDINGS_FILES = ("standings.json", "standings.csv", "standings.md")
_WHY = {
    "standings.svg": " (a chart of the standings)",
    "games/": ": the replays' data",
    "assets/": ": the pages' scripts and styles",
    "stderr/": ": the bots' stderr",
    "logs/": ": logs of no game of the results",
    "site/": ": the site, checked on its own",
    ".site-cache/": ": the site builder's cache",
}
# Keys of a bot's line of the standings read from the games' logs, not their results.
_FROM_LOGS = ("faults", "notices", "latency_sum", "latency_n", "latency_worst", "latency_mean")
# A log keeps each latency to the microsecond, the ledger a game's mean before rounding:
# a game's mean from the log may differ from the ledger's by half a microsecond (each
# latency's rounding), and each of the two is rounded again (half a microsecond each),
# so by 0.0015 ms; the standings' sum of game means by that much a game, and their mean
# of game means, rounded once more on each side, by 0.0025 ms.
_LATENCY_SLACK = {"latency_sum": 0.0015, "latency_mean": 0.0025}


def _files_apart(
    want: dict[str, str], got: dict[str, str]
) -> tuple[str, str | None, str | None] | None:
    """None when a bot played with the files the commitment names (the same digests: a
    cluster worker may see them under other paths); else the first file that differs,
    with the digest it played with and the one the commitment names (None: no such
    file)."""
    if Counter(want.values()) == Counter(got.values()):
        return None
    wanted, played = set(want.values()), set(got.values())
    lost = [w for w in sorted(want) if want[w] not in played]  # named, not played
    new = [w for w in sorted(got) if got[w] not in wanted]  # played, not named
    if new:
        word = new[0]
        twin = word if word in lost else (lost[0] if lost else None)
        return word, got[word], want[twin] if twin is not None else None
    if lost:
        return lost[0], None, want[lost[0]]
    word = min(set(want) | set(got))  # the same digests, not as many times
    return word, got.get(word), want.get(word)


def _compare(stated: dict[str, Any], derived: dict[str, Any], full: bool) -> str | None:
    """The first difference between standings as stated and as the games give them; with
    `full`, also their faults, notices, latencies, failed starts and decision time (as
    their logs give them). The sandbox, the transport, the clocks' warn_at and a match's
    test are the organiser's word, compared with nothing here."""
    extra = sorted(set(stated) - set(derived) - {"sandbox", "transport", "match"})
    if extra:
        return f"{', '.join(extra)}: not in the standings the referee writes"
    for key in ("games", "bots", "head_to_head", "clocks", "failed_starts"):
        if key not in stated:
            raise KeyError(key)
    if stated.get("commitment", derived["commitment"]) != derived["commitment"]:
        return f"they name commitment {stated['commitment']}, not {derived['commitment']}"
    if stated["games"] != derived["games"]:
        return f"games {stated['games']}; the games give {derived['games']}"
    want = {b["name"]: b for b in derived["bots"]}
    for row in stated["bots"]:
        mine = want.get(row.get("name"))
        if mine is None:
            return f"{json.dumps(row.get('name'))} is no bot of the league"
        odd = sorted(set(row) ^ set(mine))
        if odd:
            return f"{row['name']}: {', '.join(odd)}: not the keys the referee writes"
        for key, value in mine.items():
            if key in _FROM_LOGS and not full:
                continue
            said = row[key]
            if key in _LATENCY_SLACK:
                games = int(mine["latency_n"]) if key == "latency_sum" else 1
                rounded = 0.0005 if key == "latency_sum" else 0.0  # the sum's own rounding
                slack = _LATENCY_SLACK[key] * max(games, 1) + rounded + 1e-9
                if abs(float(said) - value) <= slack:
                    continue
            elif said == value:
                continue
            source = "logs" if key in _FROM_LOGS else "games"
            return f"{row['name']}: {key} {json.dumps(said)}; the {source} give {json.dumps(value)}"
    if [b.get("name") for b in stated["bots"]] != [b["name"] for b in derived["bots"]]:
        return "the bots' order is not the one the games give"
    if stated["head_to_head"] != derived["head_to_head"]:
        return "the head to head is not the one the games give"
    if full:
        if stated["failed_starts"] != derived["failed_starts"]:
            return "the failed starts are not the ones the logs give"
        clocks = derived["clocks"]
        if set(stated["clocks"]) != set(clocks):
            return "the clocks are not written as the referee writes them"
        for key in ("charged_ms", "excused_ms", "excused_share", "overloaded"):
            if stated["clocks"][key] != clocks[key]:
                said = json.dumps(stated["clocks"][key])
                return f"clocks: {key} {said}; the logs give {json.dumps(clocks[key])}"
    return None


def _rebuilt(data: dict[str, Any], units: dict[str, dict[int, tuple[int, int]]]) -> Standings:
    """Standings as standings.json (or results.json) holds them, with each bot's units
    (which the JSON leaves out) from the games: what the other files are written from."""
    bots = [
        BotStanding(
            name=str(row["name"]),
            games=int(row["games"]),
            wins=float(row["wins"]),
            rank_sum=int(row["rank_sum"]),
            points=int(row["points"]),
            units=dict(units.get(str(row["name"]), {})),
            mu=float(row["mu"]),
            sigma=float(row["sigma"]),
            faults={str(k): int(v) for k, v in row["faults"].items()},
            notices={str(k): int(v) for k, v in row["notices"].items()},
            forfeits=int(row["forfeits"]),
            latency_sum=float(row["latency_sum"]),
            latency_n=int(row["latency_n"]),
            latency_worst=float(row["latency_worst"]),
        )
        for row in data["bots"]
    ]
    head = {
        a: {b: (int(v[0]), int(v[1])) for b, v in row.items()}
        for a, row in data["head_to_head"].items()
    }
    said = data.get("sandbox")
    sandbox = (
        SandboxRecord(dict(said["bots"]), str(said["note"]), dict(said.get("users", {})))
        if said is not None
        else None
    )
    c = data["clocks"]
    clocks = Clocks(
        charged_us=round(float(c["charged_ms"]) * 1000),
        excused_us=round(float(c["excused_ms"]) * 1000),
        warn_at=float(c["warn_at"]),
    )
    served = data.get("transport")
    return Standings(
        bots,
        head,
        int(data["games"]),
        sandbox,
        match=data.get("match"),
        clocks=clocks,
        failed_starts=[
            FailedStart(str(f["game"]), str(f["bot"]), str(f["detail"]))
            for f in data["failed_starts"]
        ],
        commitment=data.get("commitment"),
        transport=(
            Transport(served["kind"], served.get("tls_fingerprint") or "")
            if served is not None
            else None
        ),
    )


def _first_line_apart(name: str, raw: bytes, text: str) -> str | None:
    """None when the file `name` holds `text`; else which of its lines differs first."""
    if raw == text.encode("utf-8"):
        return None
    have = raw.decode("utf-8", errors="replace").splitlines()
    want = text.splitlines()
    for k, (a, b) in enumerate(zip(have, want, strict=False), start=1):
        if a != b:
            return f"{name}: line {k} is not the one the standings give"
    return f"{name}: {len(have)} lines; the standings give {len(want)}"


def load_receipt(path: Path) -> m.Receipt:
    """A receipt kept by a bot: the receipt object, or the whole `game_end` line."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise VerifyError(f"{path}: cannot be read as JSON: {exc}") from None
    if isinstance(data, dict) and data.get("type") == "game_end":
        data = data.get("receipt")
    try:
        return msgspec.convert(data, m.Receipt)
    except msgspec.ValidationError as exc:
        raise VerifyError(f"{path}: not a receipt: {exc}") from None


def verify_folder(
    folder: Path, *, expected: str | None = None, receipts: list[Path] | None = None
) -> Report:
    """Every check of `folder` (`VerifyError` when it holds no league to check)."""
    return Verifier(folder, expected=expected).run(list(receipts or []))


def digest_of(path: Path) -> str:
    """`sha256:` + hex of a file, as commitments are named."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def lines(report: Report) -> Iterator[str]:
    """The report's lines: one a check, then what it does not cover, if anything."""
    for check in report.checks:
        yield check.line()
    if report.uncovered:
        yield "not covered: " + "; ".join(report.uncovered)


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
