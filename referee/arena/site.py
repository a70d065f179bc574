"""The arena's results site, refreshed as games finish: the leaderboard (index), one
page per entry (each version's status, history, rating steps and faults, and why a
version was rejected or suspended, escaped), every game in pages of 100, the final's
result, and replays.

**What is public, and when.** As in a league, a game's replay, log and fault evidence
are published only once every game of its unit is over (its deal is then no secret of
a game still to come); before that the game is listed with its result. A unit abandoned
(a stop, a version removed) is over too. Seeds and keys are never published.

**Bounded work.** A refresh writes only what changed: the files of games published
since the last one (`games.site` in the ledger says how far each game is), the pages of
the list that hold them, the pages of the entries that played or changed, and the
index. So a refresh costs the same at the millionth game as at the tenth. Old games'
replays may be pruned (`keep_replays`): their logs and site files go, their results
stay on the lists and in the ratings.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ..logs.gamelog import LogError, find_log, log_bytes, read_log
from ..site.build import game_files, public_log, write_assets
from ..site.model import write_atomic
from ..site.pages import esc, page, replay_html, scroll, table, when
from ..text import file_stem, shown
from .board import Row, leaderboard, status_of
from .config import ArenaConfig
from .ledger import ArenaLedger, Game, Version
from .validate import stderr_tail

log = logging.getLogger(__name__)

PER_PAGE = 100
VERSION_GAMES = 50  # newest games listed per version on its entry's page
LATEST = 20
REFRESH_S = 1.0  # at least this long between the starts of two refreshes of a running arena


def entry_file(entry: str) -> str:
    return f"bot-{file_stem(entry)}.html"


def list_file(k: int) -> str:
    return f"games-{k + 1}.html"


def entry_of(name: str) -> str:
    """The entry of a version's name, ENTRY@K (or of a validation copy, ENTRY@K#N)."""
    return name.split("@", 1)[0]


@dataclass
class Built:
    """What one refresh wrote."""

    published: int
    listed: int
    entries: int
    seconds: float


def prune_replays(out: Path, ledger: ArenaLedger, keep: int, site: Path | None) -> int:
    """Delete the logs (and site files) of the games older than the newest `keep`,
    keeping their results; the number pruned."""
    if keep <= 0:
        return 0
    row = ledger.db.execute("SELECT MAX(idx) FROM games").fetchone()
    if row[0] is None:
        return 0
    candidates = ledger.unpruned_before(int(row[0]) - keep + 1)
    # Never a game of an open unit: its deal is still a secret to be kept whole.
    open_units = {u.id for u in ledger.units("open")}
    old = [(i, g) for i, g, unit in candidates if unit not in open_units]
    for _, game_id in old:
        path = find_log(out / "logs", game_id)
        if path is not None:
            path.unlink(missing_ok=True)
        if site is not None:
            for f in (site / "games").glob(f"{game_id}.*js"):
                f.unlink(missing_ok=True)
            (site / "logs" / f"{game_id}.jsonl.gz").unlink(missing_ok=True)
    ledger.mark_pruned([i for i, _ in old])
    return len(old)


def build_arena_site(
    arena: ArenaConfig, ledger: ArenaLedger, to: Path | None = None, *, live: bool = False
) -> Built:
    """Bring the site in `to` (default OUT/site) up to date with the ledger. `live`: the
    arena runs, so its open units are in play (else they wait for it to start again)."""
    began = time.monotonic()
    site = to if to is not None else arena.out / "site"
    for folder in (site / "games", site / "logs", site / "assets"):
        folder.mkdir(parents=True, exist_ok=True)
    write_assets(site / "assets")
    since = float(ledger.meta("site_built") or 0)
    stamp = time.time()
    built = _iso(stamp)
    title = arena.name
    pending = ledger.where("site < 2", index="games_site")
    states = ledger.unit_states(g.unit for g in pending)
    closed = {u for u, state in states.items() if state != "open"}
    pages: set[int] = set()
    touched: set[str] = set()
    published = 0
    for g in pending:
        target = 3 if g.pruned else 2 if g.unit in closed else 1
        if target == 2 and not _publish(arena.out, site, g):
            target = 1  # no readable log: listed, not replayable
        if target == 2:
            published += 1
        ledger.db.execute("UPDATE games SET site = ? WHERE idx = ?", (target, g.idx))
        pages.add(g.idx // PER_PAGE)
        touched.update(entry_of(n) for n in g.seats)
    changed = ledger.db.execute(
        "SELECT DISTINCT entry FROM versions WHERE changed >= ?", (since,)
    ).fetchall()
    touched.update(str(r[0]) for r in changed)
    versions = ledger.versions()
    names = {v.name: entry_file(v.entry) for v in versions}
    # A validation game's seats are copies of one version (NAME@K#1, ...): its page too.
    names.update(
        {
            f"{v.name}#{k}": entry_file(v.entry)
            for v in versions
            for k in range(1, max(arena.sizes) + 1)
        }
    )
    write_atomic(site / "replay.html", replay_html(title, list(names), names))
    last_page = _last_page(ledger)
    for k in sorted(pages):
        write_atomic(site / list_file(k), _list_page(ledger, title, k, last_page, built))
    if last_page not in pages:  # its pager names the newest page
        write_atomic(
            site / list_file(last_page), _list_page(ledger, title, last_page, last_page, built)
        )
    board = leaderboard(ledger, arena.arena.provisional_sigma)
    by_entry: dict[str, list[Version]] = {}
    for v in versions:
        by_entry.setdefault(v.entry, []).append(v)
    places = {r.version.name: r for r in board}
    for entry in sorted(touched):
        if entry in by_entry:
            write_atomic(
                site / entry_file(entry),
                _entry_page(arena, ledger, title, entry, by_entry[entry], places, built),
            )
    final = ledger.meta("final")
    if final is not None:
        write_atomic(site / "final.html", _final_page(title, json.loads(final), built))
    write_atomic(site / "index.html", _index(arena, ledger, board, last_page, built, live))
    ledger.set_meta("site_built", str(stamp))
    return Built(published, len(pending), len(touched), time.monotonic() - began)


def _iso(stamp: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat(timespec="seconds")


def _publish(out: Path, site: Path, g: Game) -> bool:
    """A game's data files and public log, from its log; False when it cannot be read."""
    path = find_log(out / "logs", g.game_id)
    if path is None:
        return False
    try:
        game_log = read_log(path)
    except LogError:
        return False
    if not game_log.complete:
        return False
    write_atomic(site / "logs" / f"{g.game_id}.jsonl.gz", public_log(game_log, log_bytes(path)))
    files = game_files(game_log)
    for suffix, text in sorted(files.items(), key=lambda kv: kv[0] == ".js"):
        write_atomic(site / "games" / f"{g.game_id}{suffix}", text)
    return True


def _last_page(ledger: ArenaLedger) -> int:
    row = ledger.db.execute("SELECT MAX(idx) FROM games").fetchone()
    return 0 if row[0] is None else int(row[0]) // PER_PAGE


def _seat_cells(g: Game) -> str:
    return ", ".join(
        f'<a href="{esc(entry_file(entry_of(n)))}">{esc(n)}</a> {s}' + (" ⚠" if f else "")
        for n, s, f in zip(g.seats, g.scores, g.faulted, strict=True)
    )


def _game_rows(games: Sequence[Game]) -> str:
    rows: list[tuple[dict[str, str], list[tuple[str, object]]]] = []
    for g in games:
        link = (
            f'<a href="replay.html?game={esc(g.game_id)}">{esc(g.game_id)}</a> '
            f'<a href="logs/{esc(g.game_id)}.jsonl.gz">log</a>'
            if g.replayable
            else esc(g.game_id)
        )
        rows.append(
            (
                {},
                [
                    (link, g.idx),
                    (esc(g.stage), g.stage),
                    (_seat_cells(g), ""),
                    (when(g.finished), g.finished),
                ],
            )
        )
    return table(
        "games",
        [
            ("game", "num"),
            ("stage", "text"),
            ("seats, points (⚠ a fault)", "text"),
            ("finished", "text"),
        ],
        rows,
        brief=("game", "seats, points (⚠ a fault)"),  # on a phone, a row a line or two
    )


def _list_page(ledger: ArenaLedger, title: str, k: int, last: int, built: str) -> str:
    games = ledger.where("idx >= ? AND idx < ?", (k * PER_PAGE, (k + 1) * PER_PAGE))
    pager = " ".join(
        f'<a href="{list_file(j)}">{"newest" if j == last else j + 1}</a>'
        for j in sorted({0, max(0, k - 1), k, min(last, k + 1), last})
        if j != k
    )
    body = (
        f'<p class="hint">Games {k * PER_PAGE + 1} to {(k + 1) * PER_PAGE} by schedule index '
        "(validation and final games included); a replay is published once every game of "
        f"its deal is over.</p><p>{pager}</p>" + scroll(_game_rows(games))
    )
    nav = f'<a href="index.html">← {esc(title)}</a>'
    return page(f"{title}: games, page {k + 1}", body, nav, built)


def _fault_rate(v: Version) -> str:
    return f"{v.fault_rate:.0%}" if v.games else "–"


def _board_table(board: Sequence[Row]) -> str:
    rows: list[tuple[dict[str, str], list[tuple[str, object]]]] = []
    for r in board:
        v = r.version
        name = f'<a href="{esc(entry_file(v.entry))}">{esc(v.name)}</a>'
        refit = "–" if r.refit is None else f"{r.refit:+.2f}"
        rows.append(
            (
                {},
                [
                    (str(r.place), r.place),
                    (name, v.name),
                    (esc(v.author), v.author),
                    (f"{v.conservative:.2f}", round(v.conservative, 4)),
                    (f"{v.mu:.2f} ± {v.sigma:.2f}", round(v.mu, 4)),
                    (esc(status_of(v, r.provisional)), status_of(v, r.provisional)),
                    (str(v.games), v.games),
                    (_fault_rate(v), round(v.fault_rate, 4)),
                    (refit, r.refit if r.refit is not None else -1e9),
                ],
            )
        )
    return table(
        "leaderboard",
        [
            ("#", "num"),
            ("version", "text"),
            ("author", "text"),
            ("μ − 3σ", "num"),
            ("μ ± σ", "num"),
            ("status", "text"),
            ("games", "num"),
            ("fault rate", "num"),
            ("refit", "num"),
        ],
        rows,
        brief=("#", "version", "μ − 3σ", "status", "games"),  # on a phone, a row a line
    )


def _index(
    arena: ArenaConfig,
    ledger: ArenaLedger,
    board: Sequence[Row],
    last: int,
    built: str,
    live: bool,
) -> str:
    games = ledger.count()
    open_units = ledger.units("open")
    waiting = ledger.versions(("pending",))
    out_of_play = [v for v in ledger.versions(("rejected",))][-10:]
    facts = (
        f"<p>Rules: {esc(json.dumps(arena.rules) if arena.rules else 'standard')}; tables of "
        f"{esc(', '.join(map(str, arena.sizes)))} seats; "
        f"{'duplicate deals for process bots' if arena.arena.duplicate else 'independent deals'}; "
        f"{games} rated games. The leaderboard is ordered by μ − 3σ (OpenSkill); a version is "
        f"provisional while σ ≥ {arena.arena.provisional_sigma:g}. The refit is an order-free "
        "maximum-likelihood Plackett-Luce fit over every game (log-strength, mean 0).</p>"
    )
    frozen = ledger.meta("frozen") is not None
    if frozen:
        facts += "<p><strong>Entries are closed</strong> (the arena is frozen).</p>"
    if ledger.meta("final") is not None:
        facts += (
            "<p><a href=\"final.html\">The final's result</a>: the competition's standings.</p>"
        )
    parts = [facts, "<h2>Leaderboard</h2>", scroll(_board_table(board))]
    if open_units:
        items = "".join(
            f"<li>unit {u.id} ({esc(u.stage)}): {esc(', '.join(u.seats))}</li>" for u in open_units
        )
        if live:
            parts.append(f"<h2>In play</h2><ul>{items}</ul>")
        else:
            parts.append(
                "<h2>Unfinished</h2><p>The arena is stopped: these units are played on when "
                f"it starts again.</p><ul>{items}</ul>"
            )
    if waiting:
        parts.append(
            "<h2>Waiting for validation</h2><ul>"
            + "".join(f"<li>{esc(v.name)}</li>" for v in waiting)
            + "</ul>"
        )
    if out_of_play:
        parts.append(
            "<h2>Rejected lately</h2><ul>"
            + "".join(
                f'<li><a href="{esc(entry_file(v.entry))}">{esc(v.name)}</a>: '
                f"{esc(shown(v.reason))}</li>"
                for v in out_of_play
            )
            + "</ul>"
        )
    latest = ledger.where("1", order=f"idx DESC LIMIT {LATEST}")
    parts.append(
        f'<h2>Latest games</h2><p><a href="{list_file(last)}">Every game</a>, in pages of '
        f"{PER_PAGE}.</p>" + scroll(_game_rows(latest))
    )
    return page(f"{arena.name}: arena", "".join(parts), "", built)


def rating_steps_svg(steps: Sequence[tuple[int, float, float]]) -> str:
    """μ − 3σ game by game (the newest steps the ledger keeps), as a small SVG line: its
    highest and lowest values labelled at the left, in a margin of their own, so the
    line never runs under them and no label leaves the drawing."""
    if len(steps) < 2:
        return ""
    values = [mu - 3 * s for _, mu, s in steps]
    lo, hi = min(values), max(values)
    span = max(hi - lo, 1e-9)
    width, height, left, pad = 600, 120, 64, 14
    points = " ".join(
        f"{left + k / (len(values) - 1) * (width - left - 4):.1f},"
        f"{height - pad - (v - lo) / span * (height - 2 * pad):.1f}"
        for k, v in enumerate(values)
    )
    return (
        f'<svg class="chart" id="rating-steps" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="rating over its last {len(values)} games">'
        f'<polyline fill="none" stroke="currentColor" points="{points}"/>'
        f'<text x="4" y="{pad + 4}" class="tick start">{hi:.1f}</text>'
        f'<text x="4" y="{height - pad + 4}" class="tick start">{lo:.1f}</text></svg>'
    )


def _entry_page(
    arena: ArenaConfig,
    ledger: ArenaLedger,
    title: str,
    entry: str,
    versions: list[Version],
    places: dict[str, Row],
    built: str,
) -> str:
    parts = [f"<p>Author: {esc(versions[-1].author)}. Versions, newest first.</p>"]
    for v in reversed(versions):
        row = places.get(v.name)
        where = f"place {row.place}, " if row is not None else ""
        state = status_of(v, row.provisional if row else True)
        parts.append(
            f'<h2 id="{esc(v.name)}">{esc(v.name)}: {esc(state)}</h2>'
            f"<p>{where}μ {v.mu:.2f}, σ {v.sigma:.2f}, μ − 3σ {v.conservative:.2f}; "
            f"{v.games} games, fault rate {_fault_rate(v)}; added {when(_iso(v.added))}.</p>"
        )
        if v.reason:
            parts.append(f"<p>{esc(shown(v.reason))}</p>")
        if v.evidence:
            items = "".join(
                f"<li>{esc(e['game'])}: {esc(shown(e['fault']))}</li>"
                for e in json.loads(v.evidence)
            )
            parts.append(f"<p>Evidence:</p><ul>{items}</ul>")
        if v.status == "rejected":
            tail = stderr_tail(arena.out, v.stderr)
            if tail:
                parts.append(f"<p>The end of its stderr:</p><pre>{esc(shown(tail))}</pre>")
        parts.append(rating_steps_svg(ledger.steps(v.name)))
        games = ledger.games_of(v.name, VERSION_GAMES)
        if games:
            parts.append(scroll(_game_rows(games)))
    nav = f'<a href="index.html">← {esc(title)}</a>'
    return page(f"{title}: {entry}", "".join(parts), nav, built)


def _final_page(title: str, final: dict[str, object], built: str) -> str:
    standings = final.get("standings", [])
    assert isinstance(standings, list)
    rows: list[tuple[dict[str, str], list[tuple[str, object]]]] = [
        (
            {},
            [
                (str(k), k),
                (esc(s["name"]), s["name"]),
                (f"{s['score']:.3f}", s["score"]),
                (str(s["games"]), s["games"]),
                (str(s.get("forfeits", 0)), s.get("forfeits", 0)),
            ],
        )
        for k, s in enumerate(standings, start=1)
    ]
    forfeits = final.get("forfeits") or {}
    assert isinstance(forfeits, dict)
    pairs = final.get("pairs", [])
    assert isinstance(pairs, list)
    items = "".join(
        f"<li>{esc(p['ahead'])} over {esc(p['behind'])}: {p['mean']:.3f} "
        f"[{p['low']:.3f}, {p['high']:.3f}] over {p['units']} units: "
        + (
            "not a result: forfeits"
            if p["ahead"] in forfeits or p["behind"] in forfeits
            else ("separated" if p["separated"] else "not separated")
        )
        + "</li>"
        for p in pairs
    )
    warning = "".join(
        f"<p><strong>{esc(name)} forfeited {f['games']} games of the final (first: "
        f"{esc(f['first'])}): a separation that rests on forfeits is not a result."
        "</strong></p>"
        for name, f in forfeits.items()
    )
    columns = [("#", "num"), ("version", "text"), ("score", "num"), ("games", "num")]
    body = (
        f"<p>{esc(final.get('summary', ''))}</p>"
        + warning
        + table("final", [*columns, ("forfeits", "num")], rows)
        + f"<h2>Adjacent pairs</h2><ul>{items}</ul>"
    )
    nav = f'<a href="index.html">← {esc(title)}</a>'
    return page(f"{title}: final", body, nav, built)


@dataclass
class ArenaSite:
    """The site refreshed in a worker thread as games finish, one build at a time: a
    refresh due while one runs is folded into the next, which starts no sooner than
    `REFRESH_S` after the one before it started (a refresh costs about 50 ms of CPU
    however many games there are, and a busy arena finishes many games a second:
    refreshing after each would cost as much as the games; spec/ARENA.md)."""

    arena: ArenaConfig
    to: Path | None = None
    notice: Callable[[str], None] | None = None
    builds: int = 0
    _busy: bool = field(default=False, init=False)
    _again: bool = field(default=False, init=False)
    _started: float = field(default=-math.inf, init=False)  # the last build's start (trio)
    _pause: trio.CancelScope | None = field(default=None, init=False)
    _nursery: trio.Nursery | None = field(default=None, init=False)

    @property
    def folder(self) -> Path:
        """Where the site is."""
        return self.to if self.to is not None else self.arena.out / "site"

    def build(self, live: bool = True) -> Built:
        ledger = ArenaLedger(self.arena.out / "arena.db")
        try:
            return build_arena_site(self.arena, ledger, self.to, live=live)
        finally:
            ledger.close()

    async def built(self, live: bool) -> Built:
        """`build` in a worker thread: the arena's games go on meanwhile."""
        return await trio.to_thread.run_sync(self.build, live, abandon_on_cancel=False)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                yield
            finally:
                self._nursery = None

    def recorded(self) -> None:
        """Something changed: refresh now, or after the refresh in progress."""
        if self._nursery is None:
            return
        if self._busy:
            self._again = True
            return
        self._busy = True
        self._nursery.start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            while True:
                wait = self._started + REFRESH_S - trio.current_time()
                if wait > 0:
                    with trio.CancelScope() as self._pause:
                        await trio.sleep(wait)
                    self._pause = None
                    if self._nursery is None:
                        return  # the run ended meanwhile: its last build follows
                self._started = trio.current_time()
                self._again = False
                try:
                    await self.built(True)
                    self.builds += 1
                except (OSError, ValueError) as exc:
                    if self.notice is not None:
                        self.notice(f"the site could not be refreshed: {exc}")
                    log.warning("arena site: %s", exc)
                if not self._again or self._nursery is None:
                    return  # nothing new, or the run ended: its last build follows
        finally:
            self._busy = False

    async def final(self) -> Built:
        """The last build, when the run ends: nothing is in play any more. A refresh
        still running finishes first, so this build is the one that stays."""
        self._nursery = None  # no refresh starts from now on
        while self._busy:
            if self._pause is not None:
                self._pause.cancel()  # a refresh waiting for its turn: this build replaces it
            await trio.sleep(0.05)
        built = await self.built(False)
        self.builds += 1
        return built
