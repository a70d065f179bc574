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
- **ledger** (an output folder): the ledger and results.json hold the same games;
- **standings**: the standings are the ones the games give;
- **signatures**: results.json and every checkpoint are signed by the key the
  commitment names, and every checkpoint's chain is the chain of the results' first
  games (a league played again shows here);
- **receipts** (`--receipt`): each receipt is signed by that key, and the results still
  hold its game as it was.

What it cannot check is said in docs/proof.md: the organiser saw the deals while the
league ran, and latencies and faults are measured by the organiser's machine.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from protocol import messages as m

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
from .records import Record, read_records
from .results import CHECKPOINTS, RESULTS, SIGNATURE_SUFFIX, chain
from .schedule import deal_seed
from .standings import compute


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
    """Every check made, in order."""

    checks: list[Check] = field(default_factory=list)

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
                conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                try:
                    self.ledger = read_records(conn)
                    self.meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                finally:
                    conn.close()
            except sqlite3.Error as exc:
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
        self._guarded("ledger", self.check_ledger)
        self._guarded("standings", lambda: self.check_standings(games))
        self._guarded("signatures", lambda: self.check_signatures(games))
        for path in receipts:
            self._guarded(f"receipt {path.name}", partial(self.check_receipt, path, games))
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
        for g in games:
            problem = self._check_log(g)
            if problem is not None:
                self.report.add("logs", problem, "")
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
        return None

    def check_ledger(self) -> None:
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

    def check_standings(self, games: list[Game]) -> None:
        if self.results is None:
            return
        names = [str(b["name"]) for b in self.terms.get("bots", [])]
        records = [_record(g) for g in games]
        derived = compute(names, records).to_json()
        stated = self.results.get("standings", {})
        for key in ("games", "head_to_head"):
            if derived.get(key) != stated.get(key):
                self.report.add("standings", f"the standings' {key} are not the games'", "")
                return
        want = {b["name"]: b for b in derived["bots"]}
        for row in stated.get("bots", []):
            mine = want.get(row.get("name"))
            if mine is None:
                self.report.add("standings", f"{row.get('name')!r} is no bot of the league", "")
                return
            for key in ("games", "points", "wins", "avg_rank", "mean_points", "rating"):
                if key in mine and mine[key] != row.get(key):
                    self.report.add(
                        "standings",
                        f"{row['name']}: {key} {row.get(key)}; the games give {mine[key]}",
                        "",
                    )
                    return
        order = [b["name"] for b in derived["bots"]]
        if order != [b.get("name") for b in stated.get("bots", [])]:
            self.report.add("standings", "the standings' order is not the games'", "")
            return
        self.report.add("standings", None, "the standings are the ones the games give")

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
    """The report's lines."""
    for check in report.checks:
        yield check.line()
