"""The site's pages: the index (standings, rating chart, head to head, rules and clocks,
progress), one page per bot (games, faults, latency, points by round) and the replay
page. Plain HTML with inline SVG charts; the only scripts are `assets/site.js` (sorting
and filtering tables) and the replay's. Every name and every bot's text is escaped.
"""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..league.ledger import Record
from ..league.output import COLUMNS, legend
from ..league.standings import BotStanding
from ..text import file_stem
from .model import League, viewer_parts, write_atomic

CSP = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'self'; img-src 'self' data:"
)
_SORT_KEYS: dict[str, Any] = {
    "games": lambda b: b.games,
    "wins": lambda b: b.wins,
    "avg rank": lambda b: b.avg_rank,
    "points/game": lambda b: b.mean_points,
    "±95%": lambda b: b.ci95 if math.isfinite(b.ci95) else 1e12,
    "rating": lambda b: b.rating,
    "μ ± σ": lambda b: b.mu,
    "forfeits": lambda b: b.forfeits,
    "faults": lambda b: b.fault_count,
    "latency ms": lambda b: b.latency_mean,
}


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def bot_file(name: str) -> str:
    """A bot's page: `bot-STEM.html`, STEM the name as a file name (`file_stem`: the
    name itself when it is plain ASCII and short, else a slug and a hash), so that
    every name is one short, safe file name of its own."""
    return f"bot-{file_stem(name)}.html"


def replay_link(rec: Record, fragment: str = "") -> str:
    return f"replay.html?game={rec.game_id}" + (f"#{fragment}" if fragment else "")


def page(title: str, body: str, nav: str = "") -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n"
        '<link rel="stylesheet" href="assets/site.css">\n'
        '<script src="assets/site.js" defer></script>\n</head>\n<body>\n'
        f"<header><nav>{nav}</nav><h1>{esc(title)}</h1></header>\n<main>\n{body}</main>\n"
        "</body>\n</html>\n"
    )


def table(
    ident: str,
    headers: Sequence[tuple[str, str]],
    rows: Iterable[tuple[dict[str, str], Sequence[tuple[str, object]]]],
) -> str:
    """A sortable table: `headers` (text, "num" or "text"); each row's attributes and
    its cells as (HTML, sort value)."""
    head = "".join(
        f'<th data-type="{kind}" tabindex="0" title="sort by {esc(text)}">{esc(text)}</th>'
        for text, kind in headers
    )
    body = []
    for attrs, cells in rows:
        extra = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
        # The sort value, where the cell's text is not it.
        tds = "".join(
            f"<td>{cell}</td>" if str(v) == cell else f'<td data-v="{esc(v)}">{cell}</td>'
            for cell, v in cells
        )
        body.append(f"<tr{extra}>{tds}</tr>")
    return (
        f'<table class="sortable" id="{ident}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>\n"
    )


# ---------------------------------------------------------------- index


def _standings(league: League) -> str:
    headers = [(c.header, "text" if c.header == "bot" else "num") for c in COLUMNS]
    rows = []
    for i, b in enumerate(league.standings.bots, start=1):
        cells: list[tuple[str, object]] = []
        for col in COLUMNS:
            if col.header == "bot":
                cells.append((f'<a href="{esc(bot_file(b.name))}">{esc(b.name)}</a>', b.name))
                continue
            text = col.markdown(i, b) if col.header == "faults" else col.terminal(i, b)
            key = _SORT_KEYS.get(col.header)
            cells.append((esc(text), key(b) if key else (i if col.header == "#" else text)))
        rows.append(({"data-bot": b.name}, cells))
    items = "".join(f"<li>{esc(line)}</li>" for line in legend(COLUMNS))
    return (
        "<section><h2>Standings</h2>"
        '<p class="hint">Click a column\'s header to sort by it; click again to reverse.</p>'
        + f'<div class="scroll">{table("standings", headers, rows)}</div>'
        + f'<ul class="legend">{items}</ul></section>\n'
    )


def rating_chart(bots: Sequence[BotStanding]) -> str:
    """One row per bot: μ ± 3σ as a thin line, μ ± σ as a band, μ as a dot and the
    rating (μ − 3σ) as a diamond, on one shared axis."""
    if not bots:
        return ""
    lo = min(b.mu - 3 * b.sigma for b in bots)
    hi = max(b.mu + 3 * b.sigma for b in bots)
    lo, hi = math.floor(lo / 5) * 5, math.ceil(hi / 5) * 5
    left, width, row = 180, 520, 26
    height = row * len(bots) + 40

    def x(v: float) -> float:
        return left + (v - lo) / max(hi - lo, 1e-9) * width

    parts = []
    step = 5 if hi - lo <= 60 else 10
    for tick in range(int(lo), int(hi) + 1, step):
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="10" x2="{x(tick):.1f}" y2="{height - 24}" class="grid"/>'
            f'<text x="{x(tick):.1f}" y="{height - 8}" class="tick">{tick}</text>'
        )
    for k, b in enumerate(bots):
        y = 20 + k * row
        parts.append(
            f'<g class="bot" data-bot="{esc(b.name)}"><title>{esc(b.name)}: μ {b.mu:.2f}, '
            f"σ {b.sigma:.2f}, rating {b.rating:.2f}</title>"
            f'<text x="{left - 8}" y="{y + 4}" class="name">{esc(_short(b.name, 24))}</text>'
            f'<line x1="{x(b.mu - 3 * b.sigma):.1f}" y1="{y}" x2="{x(b.mu + 3 * b.sigma):.1f}" '
            f'y2="{y}" class="wide"/>'
            f'<line x1="{x(b.mu - b.sigma):.1f}" y1="{y}" x2="{x(b.mu + b.sigma):.1f}" y2="{y}" '
            'class="band"/>'
            f'<circle cx="{x(b.mu):.1f}" cy="{y}" r="4" class="mu"/>'
            f'<path d="M{x(b.rating):.1f} {y - 6}l6 6l-6 6l-6 -6z" class="rating"/></g>'
        )
    return (
        f'<svg class="chart" id="rating-chart" viewBox="0 0 {left + width + 20} {height}" '
        f'role="img" aria-label="ratings">{"".join(parts)}</svg>'
    )


def _short(name: str, n: int) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def _head_to_head(league: League) -> str:
    names = [b.name for b in league.standings.bots]
    head = "".join(f'<th title="{esc(n)}">{esc(_short(n, 14))}</th>' for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append('<td class="self">–</td>')
                continue
            ahead, met = league.standings.head[a][b]
            if not met:
                cells.append("<td></td>")
                continue
            share = ahead / met
            hue = 120 * share  # red (behind) to green (ahead)
            cells.append(
                f'<td style="background:hsl({hue:.0f} 45% 24%)" title="{esc(a)} finished ahead '
                f'of {esc(b)} in {ahead} of {met} games">{ahead}/{met}</td>'
            )
        rows.append(f'<tr><th title="{esc(a)}">{esc(_short(a, 24))}</th>{"".join(cells)}</tr>')
    return (
        '<section><h2>Head to head</h2><p class="hint">The row\'s bot finished ahead of the '
        "column's in this many of the games they played together.</p>"
        f'<div class="scroll"><table class="matrix" id="head"><thead><tr><th></th>{head}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div></section>\n"
    )


def _rules(league: League) -> str:
    header = league.header
    if header is None:
        return ""
    rules = msgspec.structs.asdict(header.rules)
    cells = "".join(
        f"<tr><th>{esc(k)}</th><td>{esc(_value(v))}</td></tr>" for k, v in rules.items()
    )
    clock = msgspec.structs.asdict(header.time)
    clocks = ", ".join(f"{k} {v}" for k, v in clock.items())
    odds = [
        f"<li>{esc(b.name)}: "
        + esc(", ".join(f"{k} {v}" for k, v in msgspec.structs.asdict(b.time).items()))
        + "</li>"
        for b in header.bots
        if b.time is not None
    ]
    extra = f"<p>Clocks of their own:</p><ul>{''.join(odds)}</ul>" if odds else ""
    policy = f"fault policy {esc(header.policy)}, at most {header.max_faults} faults"
    return (
        "<section><h2>Rules and clocks</h2>"
        f"<p>Clocks (ms): {esc(clocks)}; {policy}.</p>{extra}"
        f'<details><summary>Every rules option</summary><table class="rules">{cells}</table>'
        "</details></section>\n"
    )


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _progress(league: League) -> str:
    done = len(league.records)
    total = league.scheduled
    if total:
        bar = f'<progress value="{done}" max="{total}"></progress>'
        text = f"{done} of {total} games played" + (
            " — the league is over." if done >= total else "."
        )
    else:
        bar, text = "", f"{done} games played."
    published = len(league.published)
    return (
        f'<section id="progress"><h2>Progress</h2><p>{bar} <span id="done">{esc(text)}</span> '
        f"{published} replays published: a game's replay, its faults' evidence and its "
        "latencies are published once every game of its deal at its table is played (the "
        "same deal is played again with the seats rotated).</p></section>\n"
    )


def _games_table(league: League, records: Sequence[Record], ident: str, bot: str | None) -> str:
    headers = [("game", "text"), ("seats", "text"), ("points", "text"), ("decisions", "num")]
    if bot is not None:
        headers = [
            ("game", "text"),
            ("seat", "num"),
            ("opponents", "text"),
            ("place", "num"),
            ("points", "num"),
            ("faults", "num"),
            ("decisions", "num"),
        ]
    rows: list[tuple[dict[str, str], Sequence[tuple[str, object]]]] = []
    for rec in records:
        link = (
            f'<a href="{esc(replay_link(rec))}">{esc(rec.game_id)}</a>'
            if rec.idx in league.published
            else f'{esc(rec.game_id)} <span class="dim">(replay later)</span>'
        )
        if bot is None:
            seats = ", ".join(
                f'<a href="{esc(bot_file(n))}">{esc(n)}</a> {rec.ranks[s]}.'
                for s, n in enumerate(rec.seats)
            )
            points = " / ".join(str(p) for p in rec.scores)
            cells: list[tuple[str, object]] = [
                (link, rec.idx),
                (seats, " ".join(rec.seats)),
                (points, ""),
                (str(rec.decisions), rec.decisions),
            ]
            rows.append(({}, cells))
            continue
        s = rec.seats.index(bot)
        others = [n for n in rec.seats if n != bot]
        faults = sum(1 for f in rec.faults if f["seat"] == s)
        place = f"{rec.ranks[s]}" + (" (forfeit)" if rec.forfeited[s] else "")
        opponents = ", ".join(f'<a href="{esc(bot_file(n))}">{esc(n)}</a>' for n in others)
        attrs = {
            "data-opponents": " ".join(others),
            "data-result": "forfeit" if rec.forfeited[s] else str(rec.ranks[s]),
        }
        rows.append(
            (
                attrs,
                [
                    (link, rec.idx),
                    (str(s), s),
                    (opponents, " ".join(others)),
                    (esc(place), rec.ranks[s]),
                    (str(rec.scores[s]), rec.scores[s]),
                    (str(faults), faults),
                    (str(rec.decisions), rec.decisions),
                ],
            )
        )
    return table(ident, headers, rows)


def index(league: League) -> str:
    s = league.standings
    sandbox = f"<p>{esc(s.sandbox.line())}.</p>" if s.sandbox is not None else ""
    said = esc(s.clocks.sentence())
    clocks = (
        ""
        if not s.clocks.measured
        else f'<p class="warn" id="clocks"><strong>{said}</strong></p>'
        if s.clocks.overloaded
        else f'<p id="clocks">{said}</p>'
    )
    latest = list(reversed(league.records[-10:]))
    body = (
        _progress(league)
        + _standings(league)
        + sandbox
        + clocks
        + '<section><h2>Ratings</h2><p class="hint">Each bot\'s openskill skill μ (dot), '
        "μ ± σ (band) and μ ± 3σ (line); the diamond is its rating μ − 3σ, the standings' "
        "order.</p>"
        + rating_chart(s.bots)
        + "</section>\n"
        + _head_to_head(league)
        + _rules(league)
        + "<section><h2>Latest games</h2>"
        + f'<div class="scroll">{_games_table(league, latest, "latest", None)}</div>'
        + "</section>\n"
    )
    return page(league.title, body)


# ---------------------------------------------------------------- a bot's page


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of sorted `values`, by the nearest rank."""
    k = max(0, math.ceil(q * len(values)) - 1)
    return values[k]


def histogram(values: Sequence[float]) -> str:
    """Decision latencies on a log scale: bins 1-2-5 per decade, as SVG bars."""
    edges = [0.0]
    decade = 0.01
    while edges[-1] < max(values):
        edges += [decade, 2 * decade, 5 * decade]
        decade *= 10
    edges = edges[: next(i for i, e in enumerate(edges) if e >= max(values)) + 1]
    counts = [0] * (len(edges) - 1)
    for v in values:
        i = next((k for k in range(1, len(edges)) if v <= edges[k]), len(edges) - 1)
        counts[i - 1] += 1
    while len(counts) > 1 and counts[0] == 0:
        counts.pop(0)
        edges.pop(0)
    width, height, left, bottom = 640, 196, 44, 150
    bar = (width - left) / len(counts)
    top = max(counts)
    parts = [f'<line x1="{left}" y1="{bottom}" x2="{width}" y2="{bottom}" class="axis"/>']
    for k, c in enumerate(counts):
        h = (bottom - 12) * c / top
        x = left + k * bar
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{bottom - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
            f'class="bar"><title>{_ms(edges[k])}–{_ms(edges[k + 1])} ms: {c}</title></rect>'
        )
        parts.append(
            f'<text x="{x + bar / 2:.1f}" y="{bottom + 14}" class="tick">≤{_ms(edges[k + 1])}'
            "</text>"
        )
    parts.append(f'<text x="{left - 6}" y="20" class="tick end">{top}</text>')
    parts.append(
        f'<text x="{width - 4}" y="{height - 4}" class="tick end">decision time, ms</text>'
    )
    return (
        f'<svg class="chart" id="latency-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="latency histogram">{"".join(parts)}</svg>'
    )


def _ms(v: float) -> str:
    return f"{v:g}"


def _latency(values: list[float]) -> str:
    if not values:
        return "<p>No published decision yet.</p>"
    ordered = sorted(values)
    median = statistics.median(ordered)
    p95 = percentile(ordered, 0.95)
    return (
        f'<p id="latency">{len(values)} decisions: median <b>{median:.3f} ms</b>, '
        f"95th percentile <b>{p95:.3f} ms</b>, worst <b>{ordered[-1]:.3f} ms</b>.</p>"
        + histogram(ordered)
    )


def _rounds(points: dict[int, list[int]], engines: dict[int, int]) -> str:
    if not points:
        return "<p>No published round yet.</p>"
    means = {r: sum(v) / len(v) for r, v in points.items()}
    top = max(max(means.values()), 1)
    rows = []
    for r in sorted(points):
        width = 100 * means[r] / top
        rows.append(
            f"<tr><td>{r + 1}</td><td>{engines.get(r, '')}</td><td>{len(points[r])}</td>"
            f'<td>{means[r]:.1f}</td><td class="barcell"><span class="hbar" '
            f'style="width:{width:.0f}%"></span></td></tr>'
        )
    return (
        '<table class="rounds" id="rounds"><thead><tr><th>round</th><th>engine</th>'
        "<th>games</th><th>mean points</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _faults(league: League, bot: str, records: Sequence[Record]) -> str:
    rows = []
    for rec in records:
        s = rec.seats.index(bot)
        summary = league.summaries.get(rec.idx)
        if summary is None:
            for f in rec.faults:
                if f["seat"] == s:
                    rows.append(
                        f"<tr><td>{esc(rec.game_id)}</td><td></td><td>{esc(f['kind'])}</td>"
                        '<td class="dim">evidence published once every game of this deal is '
                        "played</td></tr>"
                    )
            continue
        for f in summary.faults:
            if f["seat"] != s:
                continue
            n = f["n"]
            where = (
                f'<a href="{esc(replay_link(rec, f"move={n}&view=shown"))}">move {n}</a>'
                if n is not None
                else "start"
            )
            rows.append(
                f'<tr><td><a href="{esc(replay_link(rec))}">{esc(rec.game_id)}</a></td>'
                f"<td>{where}</td><td>{esc(f['kind'])}</td>"
                f'<td class="evidence"><code>{esc(f["detail"])}</code></td></tr>'
            )
    if not rows:
        return "<p>No fault.</p>"
    return (
        '<table class="faults" id="faults"><thead><tr><th>game</th><th>where</th><th>kind</th>'
        f"<th>evidence</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def bot_page(league: League, b: BotStanding, place: int) -> str:
    name = b.name
    records = [r for r in league.records if name in r.seats]
    latencies: list[float] = []
    points: dict[int, list[int]] = {}
    engines: dict[int, int] = {}
    for rec in records:
        summary = league.summaries.get(rec.idx)
        if summary is None:
            continue
        s = rec.seats.index(name)
        latencies += summary.latencies[s]
        for r, score in enumerate(summary.rounds[s]):
            points.setdefault(r, []).append(score)
            engines.setdefault(r, summary.engines[r])
    opponents = sorted({n for r in records for n in r.seats if n != name})
    places = sorted({str(r.ranks[r.seats.index(name)]) for r in records})
    options = "".join(f'<option value="{esc(n)}">{esc(n)}</option>' for n in opponents)
    results = "".join(f'<option value="{p}">place {p}</option>' for p in places)
    if any(r.forfeited[r.seats.index(name)] for r in records):
        results += '<option value="forfeit">forfeited</option>'
    filters = (
        '<div class="filters" data-table="games">'
        f'<label>Opponent <select data-filter="opponents" id="f-opponent"><option value="">any'
        f"</option>{options}</select></label> "
        f'<label>Result <select data-filter="result" id="f-result"><option value="">any'
        f'</option>{results}</select></label> <span class="count"></span></div>'
    )
    line = (
        f'<p class="summary">Place <b>{place}</b> of {len(league.standings.bots)} · rating '
        f"<b>{b.rating:.2f}</b> (μ {b.mu:.2f} ± σ {b.sigma:.2f}) · {b.games} games · "
        f"{b.wins:g} wins · {b.mean_points:.1f} points/game · {b.fault_count} faults · "
        f"{b.forfeits} forfeits</p>"
    )
    stderr = ""
    files = league.stderr.get(name, [])
    if files:
        links = "".join(f'<li><a href="stderr/{esc(f)}">{esc(f)}</a></li>' for f in files)
        stderr = f"<section><h2>Standard error</h2><ul>{links}</ul></section>\n"
    body = (
        line
        + "<section><h2>Games</h2>"
        + filters
        + f'<div class="scroll">{_games_table(league, records, "games", name)}</div>'
        + "</section>\n<section><h2>Faults</h2>"
        + _faults(league, name, records)
        + "</section>\n<section><h2>Decision latency</h2>"
        + _latency(latencies)
        + "</section>\n<section><h2>Points by round</h2>"
        + _rounds(points, engines)
        + "</section>\n"
        + stderr
    )
    nav = f'<a href="index.html">← {esc(league.title)}</a>'
    return page(name, body, nav)


# ---------------------------------------------------------------- the replay page


def replay_page(league: League) -> str:
    """The one replay page: the viewer's markup, its CSS and script as site files, and
    the loader that brings in a game's data (`assets/game.js`)."""
    _, body, _ = viewer_parts()
    home = f'<a class="home" href="index.html">← {esc(league.title)}</a>'
    body = body.replace("<header>", f"<header>\n  {home}", 1)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(league.title)}: replay</title>\n"
        '<link rel="stylesheet" href="assets/replay.css">\n'
        "<style>header a.home { color: var(--accent); text-decoration: none; }</style>\n"
        f"</head>\n<body>{body}"
        '<script src="assets/game.js"></script>\n</body>\n</html>\n'
    )


def write_pages(site: Path, league: League) -> None:
    """The replay page and the bot pages, then the index (which links them)."""
    write_atomic(site / "replay.html", replay_page(league))
    for place, b in enumerate(league.standings.bots, start=1):
        write_atomic(site / bot_file(b.name), bot_page(league, b, place))
    write_atomic(site / "index.html", index(league))
