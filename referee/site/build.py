"""Building the results site from a league's output folder: what is published, and the
files written, each replacing the old one atomically.

The site is made from the ledger (`league.db`: the recorded games, the standings
computed from them) and the logs folder. Every file is written to a temporary
name in its folder and renamed over the old one, so a reader (a browser, a static
host's sync) sees the old file or the new one, never half of one; a game's data
files are written before the pages that link them, and the index last.

**What is public, and when.** A finished game's full log is public: every hand is
shown at each round's end, and the moves in between are what the table saw. But in
a league with duplicate deals the same deal is played again with the seats rotated,
so a game's hands are a secret until every game of its deal at that table (its
unit) is recorded: until then the game is listed with its result, but its replay
data, its fault evidence and its latencies are not on the site. No game's seed and
no bot-seed key is on it until the league reveals its keys at its end (`reveal.json`,
from which every seed derives), and neither is bots' stderr unless `with_stderr`,
and then only once the league is over (a bot process's stderr spans many games).

The files that let anyone check the results (`PROOF_FILES`: the commitment, the
contributions, results.json and its signature, the reveal, and the checkpoints) are
copied from the league's folder as they are (docs/proof.md).

A published game's log is on the site too (`logs/ID.jsonl.gz`), its lines as the
referee wrote them but for the header's seed and bot-seed key (null), and so are the
standings' files (`standings.csv`, `standings.json`), written as the league writes
them, from the same standings as the pages.

A game's files never change once written, so each build makes only those of the
games published since the last one (or made by a build of another `DATA_VERSION`),
and keeps a small summary per game (latencies, points by round, faults) for the bot
pages in OUT/.site-cache, beside the ledger: not in the site, which holds only what
it publishes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import gzip
import json
import os
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from ..league import transport
from ..league.ledger import Ledger, LedgerError, Record
from ..league.output import csv_text, json_text
from ..league.standings import compute
from ..logs.gamelog import GZIP_LEVEL, GameLog, LogError, find_log, line_bytes, log_bytes, read_log
from ..proof.commitment import CommitmentError, read_commitment
from ..text import file_stem
from .gamedata import mask, public_part, seat_part, seat_view
from .model import GameSummary, League, viewer_parts, write_atomic
from .pages import write_pages

ASSETS = ("site.css", "site.js", "game.js")


class SiteError(Exception):
    """A folder the site cannot be made from or written to; the message says which."""


@dataclass
class SiteReport:
    """What a build did."""

    folder: Path
    games: int
    published: int
    new_games: int  # game data made by this build
    seconds: float


def _js(key: str | int, data: dict[str, Any]) -> str:
    """A data file: a script that hands `data` to the page (`assets/game.js`)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    # Safe inside any HTML too, and U+2028/2029 are line ends to old JavaScript parsers.
    for char, escape in (("<", "\\u003c"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return f"siteGame({json.dumps(key)},{text});\n"


def game_files(log: GameLog) -> dict[str, str]:
    """A game's data files by name suffix: ".js" (public) and ".sS.js" per seat."""
    views = [seat_view(log, s) for s in range(log.header.rules.players)]
    public = mask(views[0], 0)
    files = {".js": _js("p", public_part(public))}
    for s, view in enumerate(views):
        files[f".s{s}.js"] = _js(s, seat_part(view, public, s))
    return files


def summarise(log: GameLog) -> GameSummary:
    """A game's latencies, points by round and faults, by seat."""
    players = log.header.rules.players
    latencies: list[list[float]] = [[] for _ in range(players)]
    faults: list[dict[str, Any]] = []
    counted: Counter[tuple[int, str, str]] = Counter()
    for d in log.decisions:
        if d.latency_ms is not None and not d.auto:
            latencies[d.seat].append(d.latency_ms)
        for f in d.faults:
            faults.append({"seat": f.seat, "kind": f.kind, "detail": f.detail, "n": d.n})
            counted[(f.seat, f.kind, f.detail)] += 1
    if log.footer is not None:  # faults at no decision (a bot that never started)
        for f in log.footer.faults:
            key = (f.seat, f.kind, f.detail)
            if counted[key]:
                counted[key] -= 1
            else:
                faults.append({"seat": f.seat, "kind": f.kind, "detail": f.detail, "n": None})
    rounds = [[r.scores[s] for r in log.rounds] for s in range(players)]
    return GameSummary(latencies, rounds, [r.engine for r in log.rounds], faults)


def _published(records: list[Record], unit_games: int | None) -> set[int]:
    """Games every game of whose unit (one deal at one table) is recorded."""
    counts = Counter(r.unit for r in records)
    # A ledger from before `unit_games` was kept: the fullest unit is taken as complete.
    need = unit_games if unit_games is not None else max(counts.values(), default=1)
    return {r.idx for r in records if counts[r.unit] >= need}


def _meta(ledger: Ledger) -> dict[str, str]:
    return dict(ledger.db.execute("SELECT key, value FROM meta").fetchall())


def read_league(out: Path, title: str | None) -> League:
    """The league in `out` as the ledger holds it; `SiteError` if there is none."""
    if not out.exists():
        raise SiteError(f"{out}: no such folder")
    if not out.is_dir():
        raise SiteError(f"{out}: not a folder; give a league's output folder (its --out)")
    db = out / "league.db"
    if not db.is_file():
        raise SiteError(f"{out}: no league.db here; is this a league's output folder?")
    try:
        ledger = Ledger(db)
    except LedgerError as exc:
        raise SiteError(str(exc)) from None
    try:
        meta = _meta(ledger)
        names: list[str] = json.loads(meta.get("bots", "[]"))
        records = ledger.records()
        sandbox = ledger.sandbox()
        lag_warning = ledger.lag_warning()
        served = transport.recorded(ledger.db)
    finally:
        ledger.close()
    try:
        pledge = read_commitment(out)
    except CommitmentError as exc:
        raise SiteError(str(exc)) from None
    terms = pledge.data.get("league", {}) if pledge is not None else {}
    name = meta.get("name", out.name)
    scheduled = int(meta["scheduled"]) if "scheduled" in meta else None
    unit_games = int(meta["unit_games"]) if "unit_games" in meta else None
    standings = compute(names, records, sandbox, lag_warning)
    standings.commitment = meta.get("commitment")
    standings.transport = served
    return League(
        name=name,
        title=title or f"{name}: results",
        names=names,
        records=records,
        standings=standings,
        scheduled=scheduled,
        published=_published(records, unit_games),
        preset=meta.get("preset"),
        built=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        updates_allowed=bool(terms.get("allow_updates")),
    )


def _stderr_files(out: Path, names: list[str]) -> dict[str, list[str]]:
    """Each bot's stderr files in OUT/stderr: STEM-K.stderr, or STEM-K@WORKER.stderr,
    STEM the name as a file name (`file_stem`)."""
    folder = out / "stderr"
    found: dict[str, list[str]] = {n: [] for n in names}
    if not folder.is_dir():
        return found
    for path in sorted(folder.iterdir()):
        for n in names:
            if re.fullmatch(re.escape(file_stem(n)) + r"-\d+(@[^/]*)?\.stderr", path.name):
                found[n].append(path.name)
    return found


def build_site(
    out: Path, to: Path | None = None, *, title: str | None = None, with_stderr: bool = False
) -> SiteReport:
    """Build (or bring up to date) the results site of the league in `out`, in `to`
    (default `out/site`); `SiteError` for a folder that is not a league's or cannot be
    written."""
    began = time.monotonic()
    league = read_league(out, title)
    site = to if to is not None else out / "site"
    games_dir, assets_dir, logs_dir = site / "games", site / "assets", site / "logs"
    cache_dir = out / ".site-cache"
    try:
        for folder in (games_dir, cache_dir, assets_dir, logs_dir):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SiteError(f"{exc.filename}: cannot write there: {exc.strerror}") from None
    logs = out / "logs"
    new = 0
    for rec in league.records:
        if league.header is None and (path := find_log(logs, rec.game_id)) is not None:
            with contextlib.suppress(LogError):
                league.header = read_log(path).header
        if rec.idx not in league.published:
            continue
        summary = _game(logs, site, cache_dir, rec)
        if summary is None:
            league.published.discard(rec.idx)  # no readable log: listed, not replayable
            continue
        new += summary[1]
        league.summaries[rec.idx] = summary[0]
    write_assets(assets_dir)
    stderr_dir = site / "stderr"
    # A process's stderr spans its games, published or not (a bot may print its hand):
    # it is published only once the league is over.
    over = league.scheduled is not None and len(league.records) >= league.scheduled
    if with_stderr and over:
        league.stderr = _stderr_files(out, league.names)
        stderr_dir.mkdir(exist_ok=True)
        for files in league.stderr.values():
            for name in files:
                shutil.copyfile(out / "stderr" / name, stderr_dir / f".{name}.tmp")
                os.replace(stderr_dir / f".{name}.tmp", stderr_dir / name)
    elif stderr_dir.is_dir():
        shutil.rmtree(stderr_dir)  # built before with --with-stderr: not public now
    _write_standings(site, league)
    league.proof = _copy_proof(out, site)
    write_pages(site, league)
    return SiteReport(
        folder=site,
        games=len(league.records),
        published=len(league.published),
        new_games=new,
        seconds=time.monotonic() - began,
    )


def _game(logs: Path, site: Path, cache_dir: Path, rec: Record) -> tuple[GameSummary, int] | None:
    """A published game's summary, its files (data, log) made first if they are not yet;
    and 1 if they were made now. None when its log cannot be read."""
    games_dir = site / "games"
    cached = cache_dir / f"{rec.game_id}.json"
    published = site / "logs" / f"{rec.game_id}.jsonl.gz"
    if cached.is_file() and (games_dir / f"{rec.game_id}.js").is_file() and published.is_file():
        try:
            return GameSummary.from_json(json.loads(cached.read_text(encoding="utf-8"))), 0
        except (ValueError, KeyError, OSError):
            pass  # made again below
    path = find_log(logs, rec.game_id)
    if path is None:
        return None
    try:
        log = read_log(path)
    except LogError:
        return None
    if not log.complete:
        return None
    # The log and the seat files first: the public file says the game's files are there.
    write_atomic(published, public_log(log, log_bytes(path)))
    files = game_files(log)
    for suffix, text in sorted(files.items(), key=lambda kv: kv[0] == ".js"):
        write_atomic(games_dir / f"{rec.game_id}{suffix}", text)
    summary = summarise(log)
    write_atomic(cached, json.dumps(summary.to_json(), separators=(",", ":")))
    return summary, 1


def public_log(log: GameLog, text: bytes) -> bytes:
    """A game's log as the site publishes it, gzipped: `text`, the lines of `log` as the
    referee wrote them, with the header's seed and bot-seed key withheld (null)."""
    header = msgspec.structs.replace(log.header, seed=None, bot_seed_key=None)
    lines = text.split(b"\n")
    first = next(k for k, line in enumerate(lines) if line.strip())  # the header's line
    lines[first] = line_bytes(header)
    return gzip.compress(b"\n".join(lines), compresslevel=GZIP_LEVEL, mtime=0)


def _write_standings(site: Path, league: League) -> None:
    """standings.json and standings.csv, as `referee league` writes them in its folder,
    but for the failed starts of games not yet published: their reasons (a bot's last
    stderr line) are fault evidence, public only with the game."""
    published = {r.game_id for r in league.records if r.idx in league.published}
    standings = dataclasses.replace(
        league.standings,
        failed_starts=[f for f in league.standings.failed_starts if f.game_id in published],
    )
    write_atomic(site / "standings.json", json_text(standings))
    write_atomic(site / "standings.csv", csv_text(standings))


# The files that let anyone check the results (referee.proof.commitment, .results):
# public from the start, but for the reveal, which the league writes only at its end.
PROOF_FILES = (
    "commitment.json",
    "contributions.json",
    "results.json",
    "results.json.minisig",
    "reveal.json",
)


def _copy_proof(out: Path, site: Path) -> list[str]:
    """Copy the league's proof files and checkpoints into the site; the names copied."""
    copied = []
    for name in PROOF_FILES:
        source = out / name
        if source.is_file():
            write_atomic(site / name, source.read_bytes())
            copied.append(name)
        elif (site / name).is_file():
            (site / name).unlink()  # gone from the league (a signature of an older file)
    checkpoints = out / "checkpoints"
    if checkpoints.is_dir():
        (site / "checkpoints").mkdir(exist_ok=True)
        for path in sorted(checkpoints.iterdir()):
            target = site / "checkpoints" / path.name
            if path.is_file() and not path.name.startswith(".") and not target.is_file():
                write_atomic(target, path.read_bytes())
                copied.append(f"checkpoints/{path.name}")
    return copied


def write_assets(folder: Path) -> None:
    css, _, script = viewer_parts()
    files = {"replay.css": css, "replay.js": script}
    for name in ASSETS:
        files[name] = resources.files("referee").joinpath(f"assets/{name}").read_text("utf-8")
    for name, text in files.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text)
