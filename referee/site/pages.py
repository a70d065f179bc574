"""The site's pages: the index (when the league ran, its rule set, standings, rating
charts, head to head, rules and clocks, progress, the latest games, the files), every
game in a paged list (`games-N.html`), one page per bot (its rating game by game, games,
faults, latency, points by round) and the replay page. Plain HTML with inline SVG
charts; the only scripts are `assets/site.js` (sorting and filtering tables, and a hint
where a table is wider than the window) and the replay's. Every name and every bot's
text (names, fault evidence) is escaped, and a game's evidence is shown only once the
game is published (`League.published`).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..bots.faults import FaultKind
from ..league.ledger import Record
from ..league.output import COLUMNS, legend
from ..league.standings import BotStanding
from ..logs.gamelog import header_rules
from ..rules import PRESET_SOURCES, PRESETS, Rules, RulesError, preset
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
STARTUP = FaultKind.STARTUP_FAILURE.value
GAMES_PER_PAGE = 100
WITHHELD = "evidence published once every game of this deal is played"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def bot_file(name: str) -> str:
    """A bot's page: `bot-STEM.html`, STEM the name as a file name (`file_stem`: the
    name itself when it is plain ASCII and short, else a slug and a hash), so that
    every name is one short, safe file name of its own."""
    return f"bot-{file_stem(name)}.html"


def replay_link(rec: Record, fragment: str = "") -> str:
    return f"replay.html?game={rec.game_id}" + (f"#{fragment}" if fragment else "")


def log_link(rec: Record) -> str:
    """A published game's log on the site (`build.public_log`)."""
    return f"logs/{rec.game_id}.jsonl.gz"


def games_file(page_index: int) -> str:
    """Page `page_index` (from 0) of the list of every game."""
    return f"games-{page_index + 1}.html"


def when(iso: str) -> str:
    """A recorded time (ISO 8601) as the pages show it, in UTC, in a <time> element."""
    try:
        moment = dt.datetime.fromisoformat(iso)
    except ValueError:
        return esc(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo is not None else "")
    return f'<time datetime="{esc(moment.isoformat())}">{shown}</time>'


def page(title: str, body: str, nav: str = "", updated: str = "") -> str:
    stamp = f'<footer class="updated">Site updated {when(updated)}.</footer>\n' if updated else ""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n"
        '<link rel="stylesheet" href="assets/site.css">\n'
        '<script src="assets/site.js" defer></script>\n</head>\n<body>\n'
        f"<header><nav>{nav}</nav><h1>{esc(title)}</h1></header>\n<main>\n{body}</main>\n"
        f"{stamp}</body>\n</html>\n"
    )


def table(
    ident: str,
    headers: Sequence[tuple[str, str]],
    rows: Iterable[tuple[dict[str, str], Sequence[tuple[str, object]]]],
    brief: Sequence[str] = (),
) -> str:
    """A sortable table: `headers` (text, "num" or "text"); each row's attributes and
    its cells as (HTML, sort value). On a narrow screen each row is a card of
    "header: value" lines (`site.css`), the headers staying on top to sort by; a table
    with `brief` headers shows there only those columns, still a table (a row a line),
    with a button that turns it into the cards of every column and back (`site.js`)."""
    head = "".join(
        f'<th data-type="{kind}" tabindex="0" title="sort by {esc(text)}">'
        f"{esc(text).replace('/', '/<wbr>')}</th>"
        for text, kind in headers
    )
    # The card's labels: the headers, by column (our own words, never a bot's).
    labels = "".join(
        f"#{ident}:not(.brief) td:nth-child({k})::before{{content:{_css_string(text)}}}"
        for k, (text, _) in enumerate(headers, start=1)
    )
    button = ""
    if brief:
        names = [text for text, _ in headers]
        unknown = [b for b in brief if b not in names]
        assert not unknown, f"brief columns not in {ident}: {unknown}"
        hidden = "".join(f":not(:nth-child({names.index(b) + 1}))" for b in brief)
        labels += f"#{ident}.brief :is(td, th){hidden}{{display:none}}"
        button = (
            f'<button type="button" class="columns" data-table="{ident}" '
            f'aria-controls="{ident}">every column</button>'
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
        f"<style>@media (max-width: 640px) {{ {labels} }}</style>{button}"
        f'<table class="sortable cards{" brief" if brief else ""}" id="{ident}">'
        f"<thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>\n"
    )


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scroll(inner: str) -> str:
    """A box that scrolls sideways when `inner` is wider than the window, with a hint
    shown then (`site.js`)."""
    return (
        '<p class="scroll-hint hint" hidden>Wider than the window: scroll sideways for the '
        f'rest →</p><div class="scroll">{inner}</div>'
    )


# ---------------------------------------------------------------- what the lists flag


def startup_failures(league: League, rec: Record) -> list[tuple[int, str | None]]:
    """The seats of `rec` that failed to start, each with its evidence: None until the
    game is published (a kept bot process may have played the deal's other games)."""
    public = rec.idx in league.published
    return [
        (f["seat"], f["detail"] if public else None) for f in rec.faults if f["kind"] == STARTUP
    ]


def never_started(league: League) -> dict[str, Counter[str]]:
    """The bots that failed to start in every game they were in, each with the evidence
    of its published games, counted."""
    out: dict[str, Counter[str]] = {}
    for name in league.names:
        games = [r for r in league.records if name in r.seats]
        failed = [startup_failures(league, r) for r in games]
        seat_of = [r.seats.index(name) for r in games]
        if games and all(any(s == k for s, _ in f) for f, k in zip(failed, seat_of, strict=True)):
            out[name] = Counter(
                d for f, k in zip(failed, seat_of, strict=True) for s, d in f if s == k and d
            )
    return out


def _reasons(reasons: Counter[str]) -> str:
    if not reasons:
        return f'<span class="dim">({WITHHELD})</span>'
    items = "".join(
        f"<li><code>{esc(detail)}</code>" + (f" ({n} games)" if n > 1 else "") + "</li>"
        for detail, n in reasons.most_common()
    )
    return f'<ul class="reasons">{items}</ul>'


def _startup_flag(league: League, rec: Record) -> str:
    failed = startup_failures(league, rec)
    if not failed:
        return ""
    who = ", ".join(esc(rec.seats[s]) for s, _ in failed)
    why = "; ".join(f"{rec.seats[s]}: {d if d is not None else WITHHELD}" for s, d in failed)
    return f'<span class="flag-startup" title="{esc(why)}">⚠ failed to start: {who}</span>'


# ---------------------------------------------------------------- index


# The standings' columns a phone shows (each bot's page has the rest, as does the button).
PHONE_STANDINGS = ("#", "bot", "games", "avg rank", "rating")


def _standings(league: League, failed: dict[str, Counter[str]]) -> str:
    headers = [(c.header, "text" if c.header == "bot" else "num") for c in COLUMNS]
    rows = []
    for i, b in enumerate(league.standings.bots, start=1):
        cells: list[tuple[str, object]] = []
        for col in COLUMNS:
            if col.header == "bot":
                flag = (
                    ' <span class="flag-startup tag" title="failed to start in every game">'
                    "never started</span>"
                    if b.name in failed
                    else ""
                )
                link = f'<a href="{esc(bot_file(b.name))}">{esc(b.name)}</a>{flag}'
                cells.append((link, b.name))
                continue
            text = col.terminal(i, b)
            key = _SORT_KEYS.get(col.header)
            shown = esc(text)
            if col.header == "faults" and b.faults:  # by kind, under the count
                kinds = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in sorted(b.faults.items()))
                shown += f'<span class="kinds">{esc(kinds)}</span>'
            cells.append((shown, key(b) if key else (i if col.header == "#" else text)))
        rows.append(({"data-bot": b.name}, cells))
    items = "".join(f"<li>{esc(line)}</li>" for line in legend(COLUMNS))
    return (
        "<section><h2>Standings</h2>"
        '<p class="hint">Click a column\'s header to sort by it; click again to reverse.</p>'
        + scroll(table("standings", headers, rows, brief=PHONE_STANDINGS))
        + f'<ul class="legend">{items}</ul></section>\n'
    )


def _never_started(failed: dict[str, Counter[str]]) -> str:
    if not failed:
        return ""
    items = "".join(
        f'<li><a href="{esc(bot_file(name))}">{esc(name)}</a> failed to start in every game it '
        f"was in: {_reasons(reasons)}</li>"
        for name, reasons in failed.items()
    )
    return (
        '<section id="never-started" class="warn-box"><h2>Bots that never started</h2>'
        f"<ul>{items}</ul></section>\n"
    )


def rating_chart(bots: Sequence[BotStanding]) -> str:
    """One row per bot: μ ± 3σ as a thin line, μ ± σ as a band, μ as a dot and the
    rating (μ − 3σ) as a diamond, on one shared axis. Drawn twice, and a screen shows
    one (`site.css`): names on the left of their rows for a wide screen, and for a phone
    names above their rows, so that the words keep their size at 400 px."""
    if not bots:
        return ""
    return _rating_svg(bots, narrow=False) + _rating_svg(bots, narrow=True)


def _rating_svg(bots: Sequence[BotStanding], narrow: bool) -> str:
    lo = min(b.mu - 3 * b.sigma for b in bots)
    hi = max(b.mu + 3 * b.sigma for b in bots)
    lo, hi = math.floor(lo / 5) * 5, math.ceil(hi / 5) * 5
    # narrow: the row's name on a line of its own, the axis across the whole drawing
    left, width, row, top, chars = (14, 352, 40, 34, 44) if narrow else (180, 520, 26, 20, 24)
    height = row * len(bots) + top + 20

    def x(v: float) -> float:
        return left + (v - lo) / max(hi - lo, 1e-9) * width

    parts = []
    step = (10 if narrow else 5) if hi - lo <= 60 else (20 if narrow else 10)
    for tick in range(int(lo), int(hi) + 1, step):
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="10" x2="{x(tick):.1f}" y2="{height - 24}" class="grid"/>'
            f'<text x="{x(tick):.1f}" y="{height - 8}" class="tick">{tick}</text>'
        )
    for k, b in enumerate(bots):
        y = top + k * row
        name = esc(_short(b.name, chars))
        label = (
            f'<text x="{left - 6}" y="{y - 10}" class="name start">{name}</text>'
            if narrow
            else f'<text x="{left - 8}" y="{y + 4}" class="name">{name}</text>'
        )
        parts.append(
            f'<g class="bot" data-bot="{esc(b.name)}"><title>{esc(b.name)}: μ {b.mu:.2f}, '
            f"σ {b.sigma:.2f}, rating {b.rating:.2f}</title>{label}"
            f'<line x1="{x(b.mu - 3 * b.sigma):.1f}" y1="{y}" x2="{x(b.mu + 3 * b.sigma):.1f}" '
            f'y2="{y}" class="wide"/>'
            f'<line x1="{x(b.mu - b.sigma):.1f}" y1="{y}" x2="{x(b.mu + b.sigma):.1f}" y2="{y}" '
            'class="band"/>'
            f'<circle cx="{x(b.mu):.1f}" cy="{y}" r="4" class="mu"/>'
            f'<path d="M{x(b.rating):.1f} {y - 6}l6 6l-6 6l-6 -6z" class="rating"/></g>'
        )
    ident, shown = "rating-chart", "wide-only"
    if narrow:
        ident, shown = "rating-chart-narrow", "narrow-only"
    total = left + width + (14 if narrow else 20)
    return (
        f'<svg class="chart {shown}" id="{ident}" viewBox="0 0 {total} {height}" '
        f'role="img" aria-label="ratings">{"".join(parts)}</svg>'
    )


# A line's colour in the rating-over-time chart, by the bot's place.
LINE_COLORS = (
    "#4fc3f7",
    "#f2b632",
    "#ef6461",
    "#8bc34a",
    "#b388ff",
    "#ff9f43",
    "#2ec4b6",
    "#f06ab0",
)


def line_color(place: int) -> str:
    """The colour of the bot in `place` (from 0); past the palette, hues apart."""
    if place < len(LINE_COLORS):
        return LINE_COLORS[place]
    return f"hsl({place * 137 % 360} 60% 62%)"


def rating_steps(b: BotStanding) -> list[tuple[int, float, float]]:
    """The bot's rating after each of its games, in schedule order, and its change by
    that game: (game index, rating, change). The standings' own history
    (`standings.compute`, which rates one game after the other with `advance`)."""
    before = BotStanding(name=b.name).rating  # where every bot starts
    out = []
    for idx, rating, _ in b.history:
        out.append((idx, rating, rating - before))
        before = rating
    return out


def history_chart(
    lines: Sequence[tuple[BotStanding, str]], games: int, ident: str, points: bool
) -> str:
    """Each bot's rating (μ − 3σ) after each game, against the game's number in the
    league: a line per bot in its colour, and with `points` a dot per game, with the
    game, the rating and its change in a tooltip."""
    steps = [(b, color, rating_steps(b)) for b, color in lines]
    values = [r for _, _, s in steps for _, r, _ in s] + [BotStanding(name="").rating]
    lo, hi = math.floor(min(values)), math.ceil(max(values))
    if hi - lo < 2:
        lo, hi = lo - 1, hi + 1
    # The margins and the numbers on the axes leave room for the numbers at the size a
    # phone draws them (PHONE_TICK), so that they stay whole and apart.
    top, bottom, width, height = 16, 36, 700, 250
    span = max(games, 1)
    tick = _tick(hi - lo, most=int((height - top - bottom) // (PHONE_TICK * 1.4)))
    ys = range(math.ceil(lo / tick) * tick, hi + 1, tick)
    left = max(44.0, max((_text_width(str(v), PHONE_TICK) for v in ys), default=0) + 10)
    number = _text_width(str(span), PHONE_TICK)  # the widest number across
    right = max(12.0, number / 2 + 4)

    def x(game: int) -> float:  # game: 0 before the first, then its number from 1
        return left + game / span * (width - left - right)

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * (height - top - bottom)

    parts = []
    for v in ys:
        parts.append(
            f'<line x1="{left:.1f}" y1="{y(v):.1f}" x2="{width - right:.1f}" y2="{y(v):.1f}" '
            f'class="grid"/><text x="{left - 6:.1f}" y="{y(v) + 4:.1f}" class="tick end">{v}</text>'
        )
    step = _tick(span, most=int((width - left - right) // (number + 10)))
    for g in range(0, span + 1, step):
        parts.append(f'<text x="{x(g):.1f}" y="{height - 12}" class="tick">{g}</text>')
    for b, color, s in steps:
        path = [(x(0), y(BotStanding(name="").rating))] + [(x(i + 1), y(r)) for i, r, _ in s]
        drawn = " ".join(f"{px:.1f},{py:.1f}" for px, py in path)
        dots = ""
        if points:
            dots = "".join(
                f'<circle class="pt" cx="{x(i + 1):.1f}" cy="{y(r):.1f}" r="2.6">'
                f"<title>game {i + 1}: rating {r:.2f} ({d:+.2f})</title></circle>"
                for i, r, d in s
            )
        parts.append(
            f'<g class="bot" data-bot="{esc(b.name)}" fill="{color}"><title>{esc(b.name)}</title>'
            f'<polyline points="{drawn}" fill="none" stroke="{color}" stroke-width="2"/>'
            f"{dots}</g>"
        )
    return (
        f'<svg class="chart" id="{ident}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="rating after each game">{"".join(parts)}</svg>'
    )


def _tick(span: float, most: int = 10) -> int:
    """A round step (1, 2 or 5 times a power of ten) for at most `most` ticks over
    `span`."""
    most = max(most, 1)
    power = 1
    while True:
        for step in (power, 2 * power, 5 * power):
            if span / step <= most:
                return step
        power *= 10


def _history(league: League) -> str:
    bots = league.standings.bots
    if not league.records:
        return ""
    lines = [(b, line_color(k)) for k, b in enumerate(bots)]
    key = "".join(
        f'<li><span class="swatch" style="background:{color}"></span>'
        f'<a href="{esc(bot_file(b.name))}">{esc(b.name)}</a></li>'
        for b, color in lines
    )
    return (
        '<section><h2>Rating over time</h2><p class="hint">Each bot\'s rating μ − 3σ after '
        "each game of the league (across: the game's number, in schedule order), as the "
        "standings compute it; each bot's page has it game by game.</p>"
        + history_chart(lines, len(league.records), "rating-history", points=False)
        + f'<ul class="key">{key}</ul></section>\n'
    )


def _short(name: str, n: int) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def _head_to_head(league: League) -> str:
    names = [b.name for b in league.standings.bots]
    # A column is headed by the bot's name, or on a narrow screen by its place.
    head = "".join(
        f'<th title="{esc(n)}"><span class="long">{esc(_short(n, 14))}</span>'
        f'<span class="short">{k}</span></th>'
        for k, n in enumerate(names, start=1)
    )
    rows = []
    for place, a in enumerate(names, start=1):
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
        rows.append(
            f'<tr><th title="{esc(a)}"><span class="short">{place}. </span>'
            f"{esc(_short(a, 24))}</th>{''.join(cells)}</tr>"
        )
    return (
        '<section><h2>Head to head</h2><p class="hint">The row\'s bot finished ahead of the '
        "column's in this many of the games they played together.</p>"
        + scroll(
            f'<table class="matrix" id="head"><thead><tr><th></th>{head}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>"
        )
        + "</section>\n"
    )


def rule_set(rules: Rules, recorded: str | None) -> tuple[str, bool, list[str]]:
    """The preset the rules are made from, whether it is guessed, and the options that
    differ from it (`key = value`): the preset the league file named, or for a ledger
    that did not keep it, the base preset with the fewest options apart from the rules."""

    def apart(name: str) -> list[str] | None:
        try:
            base = preset(name, players=rules.players, max_pip=rules.max_pip).to_dict()
        except RulesError:
            return None
        return [f"{k} = {_value(v)}" for k, v in rules.to_dict().items() if base.get(k) != v]

    if recorded is not None and (changed := apart(recorded)) is not None:
        return recorded, False, changed
    nearest = min(
        ((len(d), name, d) for name in PRESETS if (d := apart(name)) is not None),
        default=(0, "standard", []),
    )
    return nearest[1], True, nearest[2]


def _rule_set_line(league: League, ident: str) -> str:
    header = league.header
    if header is None:
        return ""
    rules = header_rules(header)
    name, guessed, changed = rule_set(rules, league.preset)
    source = PRESET_SOURCES.get(name.split("+", 1)[0], "")
    what = f"closest preset <b>{esc(name)}</b>" if guessed else f"preset <b>{esc(name)}</b>"
    said = f"{what}" + (f" ({esc(source)})" if source else "")
    table_of = f"double-{rules.max_pip}, {rules.players} players, {rules.hand} tiles each"
    extra = "; changed from the preset: " + esc(", ".join(changed)) if changed else ""
    return f'<span id="{ident}">Rule set: {said}; {esc(table_of)}{extra}.</span>'


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
        f"<p>{_rule_set_line(league, 'rules-set')}</p>"
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
        f"{published} replays published: a game's replay, its log, its faults' evidence and "
        "its latencies are published once every game of its deal at its table is played (the "
        "same deal is played again with the seats rotated).</p></section>\n"
    )


def _facts(league: League) -> str:
    """When the league ran (its first and last recorded game), its rule set, and when
    the site was made."""
    finished = sorted(r.finished for r in league.records)
    ran = (
        f'<span id="ran">Games recorded from {when(finished[0])} to {when(finished[-1])}.</span>'
        if finished
        else '<span id="ran">No game recorded yet.</span>'
    )
    made = f"Site updated {when(league.built)}."
    return f'<p class="facts" id="facts">{_rule_set_line(league, "rule-set")} {ran} {made}</p>\n'


def _game_cell(league: League, rec: Record) -> str:
    if rec.idx not in league.published:
        return f'{esc(rec.game_id)} <span class="dim">(replay later)</span>'
    return (
        f'<a href="{esc(replay_link(rec))}">{esc(rec.game_id)}</a> '
        f'<a class="log" href="{esc(log_link(rec))}" download>log</a>'
    )


def _games_table(
    league: League,
    records: Sequence[Record],
    ident: str,
    bot: BotStanding | None,
) -> str:
    headers = [
        ("game", "text"),
        ("finished", "text"),
        ("seats", "text"),
        ("points", "text"),
        ("decisions", "num"),
        ("notes", "text"),
    ]
    if bot is not None:
        headers = [
            ("game", "text"),
            ("seat", "num"),
            ("opponents", "text"),
            ("place", "num"),
            ("points", "num"),
            ("rating", "num"),
            ("change", "num"),
            ("faults", "num"),
            ("decisions", "num"),
            ("notes", "text"),
        ]
    steps = {idx: (rating, change) for idx, rating, change in rating_steps(bot)} if bot else {}
    rows: list[tuple[dict[str, str], Sequence[tuple[str, object]]]] = []
    for rec in records:
        link = _game_cell(league, rec)
        flag = _startup_flag(league, rec)
        attrs = {"data-startup": "1"} if flag else {}
        if bot is None:
            seats = ", ".join(
                f'<span class="seat"><a href="{esc(bot_file(n))}">{esc(n)}</a> '
                f"{rec.ranks[s]}.</span>"
                for s, n in enumerate(rec.seats)
            )
            points = " / ".join(str(p) for p in rec.scores)
            cells: list[tuple[str, object]] = [
                (link, rec.idx),
                (when(rec.finished), rec.finished),
                (seats, " ".join(rec.seats)),
                (points, ""),
                (str(rec.decisions), rec.decisions),
                (flag, flag),
            ]
            rows.append((attrs, cells))
            continue
        name = bot.name
        s = rec.seats.index(name)
        others = [n for n in rec.seats if n != name]
        faults = sum(1 for f in rec.faults if f["seat"] == s)
        place = f"{rec.ranks[s]}" + (" (forfeit)" if rec.forfeited[s] else "")
        opponents = ", ".join(f'<a href="{esc(bot_file(n))}">{esc(n)}</a>' for n in others)
        rating, change = steps.get(rec.idx, (math.nan, math.nan))
        attrs |= {
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
                    (f"{rating:.2f}", f"{rating:.2f}"),  # sorted by what it says
                    (f"{change:+.2f}", f"{change:+.2f}"),
                    (str(faults), faults),
                    (str(rec.decisions), rec.decisions),
                    (flag, flag),
                ],
            )
        )
    # A phone shows a row a line or two: the game and how it ended (its seats' places;
    # for a bot, its place and what the game did to its rating); the button shows every
    # column.
    brief = ("game", "seats") if bot is None else ("game", "place", "points", "change")
    return table(ident, headers, rows, brief)


def _pager(current: int, pages: int) -> str:
    """Links to every page of the list of games, `current` (from 0) marked."""
    links = []
    if current > 0:
        links.append(f'<a href="{games_file(current - 1)}" rel="prev">← previous</a>')
    for k in range(pages):
        if k == current:
            links.append(f'<b aria-current="page">{k + 1}</b>')
        else:
            links.append(f'<a href="{games_file(k)}">{k + 1}</a>')
    if current < pages - 1:
        links.append(f'<a href="{games_file(current + 1)}" rel="next">next →</a>')
    return f'<nav class="pager" aria-label="pages of games">{" ".join(links)}</nav>'


def game_pages(league: League) -> list[tuple[str, str]]:
    """Every game, GAMES_PER_PAGE a page in schedule order: (file name, page)."""
    records = league.records
    pages = max(1, math.ceil(len(records) / GAMES_PER_PAGE))
    out = []
    for k in range(pages):
        chunk = records[k * GAMES_PER_PAGE : (k + 1) * GAMES_PER_PAGE]
        first, last = k * GAMES_PER_PAGE + 1, k * GAMES_PER_PAGE + len(chunk)
        said = f"games {first} to {last} of {len(records)}" if chunk else "no game yet"
        body = (
            f'<p class="hint">Every game of the league in schedule order, {said}; a game '
            'flagged ⚠ had a bot that failed to start. A game\'s log is its "log" link: the '
            "referee's log of it, but for the seed and bot-seed key (null).</p>"
            + _pager(k, pages)
            + scroll(_games_table(league, chunk, "games-list", None))
            + _pager(k, pages)
        )
        nav = f'<a href="index.html">← {esc(league.title)}</a>'
        title = f"{league.title}: games, page {k + 1} of {pages}"
        out.append((games_file(k), page(title, body, nav, league.built)))
    return out


def _files(league: League) -> str:
    pages = max(1, math.ceil(len(league.records) / GAMES_PER_PAGE))
    return (
        '<section id="files"><h2>Files</h2><ul>'
        '<li><a href="standings.csv" download>standings.csv</a>: one row per bot, every '
        "column of the standings, faults by kind.</li>"
        '<li><a href="standings.json" download>standings.json</a>: the standings, head to '
        "head, the sandbox, the transport of a served league and the clocks.</li>"
        f'<li>Each game\'s log (spec/LOGS.md): the "log" link of its line in <a href="'
        f'{games_file(0)}">the list of every game</a> ({pages} page{"s" if pages > 1 else ""}), '
        "once its replay is published. It is the referee's log but for its seed and bot-seed "
        "key (which deal the boneyard's order, never published): null.</li>"
        "</ul></section>\n"
    )


def _proof(league: League) -> str:
    """What lets anyone check the results: the commitment and the files of docs/proof.md."""
    digest = league.standings.commitment
    if digest is None:
        return ""
    have = set(league.proof)
    links = [
        f'<li><a href="{esc(name)}" download>{esc(name)}</a>: {what}</li>'
        for name, what in (
            (
                "commitment.json",
                "the league's terms and the SHA-256 of its deal key, made before the first game.",
            ),
            ("contributions.json", "the public values mixed into the deals."),
            ("results.json", "every game's result and log digest, the chain and the standings."),
            (
                "results.json.minisig",
                "the organiser's signature of results.json "
                "(<code>minisign -Vm results.json -P KEY</code>).",
            ),
            ("reveal.json", "the deal key, revealed once every game was recorded."),
        )
        if name in have
    ]
    checkpoints = sum(1 for n in have if n.startswith("checkpoints/"))
    if checkpoints:
        links.append(f"<li>checkpoints/: {checkpoints} checkpoints of the results so far.</li>")
    return (
        '<section id="proof"><h2>Proof</h2>'
        f'<p>Commitment <code id="commitment">{esc(digest)}</code>. Check this site with '
        "<code>referee verify FOLDER --commitment DIGEST</code> once the key is revealed "
        "(docs/proof.md).</p>" + (f"<ul>{''.join(links)}</ul>" if links else "") + "</section>\n"
    )


def index(league: League) -> str:
    s = league.standings
    sandbox = f"<p>{esc(s.sandbox.line())}.</p>" if s.sandbox is not None else ""
    served = "" if s.transport is None else esc(s.transport.line())
    transport = (
        ""
        if s.transport is None
        else f'<p class="warn" id="transport"><strong>{served}</strong>.</p>'
        if s.transport.insecure
        else f'<p id="transport">{served}.</p>'
    )
    said = esc(s.clocks.sentence())
    clocks = (
        ""
        if not s.clocks.measured
        else f'<p class="warn" id="clocks"><strong>{said}</strong></p>'
        if s.clocks.overloaded
        else f'<p id="clocks">{said}</p>'
    )
    updates = (
        '<p class="warn" id="updates"><strong>The bots could be updated during this league'
        "</strong> (<code>[league] allow_updates</code>, in its commitment): a game may have "
        "been played with other files than the commitment names. Each game's log names the "
        "files its bots played with, and <code>referee verify</code> lists the games played "
        "with other files.</p>"
        if league.updates_allowed
        else ""
    )
    failed = never_started(league)
    latest = list(reversed(league.records[-10:]))
    every = (
        f'<p><a href="{games_file(0)}" id="all-games">Every game ({len(league.records)}), '
        f"{GAMES_PER_PAGE} a page →</a></p>"
    )
    body = (
        _facts(league)
        + _never_started(failed)
        + _progress(league)
        + _standings(league, failed)
        + sandbox
        + updates
        + transport
        + clocks
        + '<section><h2>Ratings</h2><p class="hint">Each bot\'s openskill skill μ (dot), '
        "μ ± σ (band) and μ ± 3σ (line); the diamond is its rating μ − 3σ, the standings' "
        "order.</p>"
        + rating_chart(s.bots)
        + "</section>\n"
        + _history(league)
        + _head_to_head(league)
        + _rules(league)
        + "<section><h2>Latest games</h2>"
        + scroll(_games_table(league, latest, "latest", None))
        + every
        + "</section>\n"
        + _files(league)
        + _proof(league)
    )
    return page(league.title, body, updated=league.built)


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
    width, height, left, right, bottom = 640, 214, 60, 8, 150
    bar = (width - left - right) / len(counts)
    top = max(counts)
    parts = [f'<line x1="{left}" y1="{bottom}" x2="{width - right}" y2="{bottom}" class="axis"/>']
    for k, c in enumerate(counts):
        h = (bottom - 12) * c / top
        x = left + k * bar
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{bottom - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
            f'class="bar"><title>{_ms(edges[k])}–{_ms(edges[k + 1])} ms: {c}</title></rect>'
        )
    # Each bar's upper edge under it, from the last bar back, as many as fit side by side
    # at the largest size a phone draws them (site.css); the last ends at the drawing's edge.
    room: float = width - right
    for k in reversed(range(len(counts))):
        label = f"≤{_ms(edges[k + 1])}"
        wide = _text_width(label, PHONE_TICK)
        centre = left + (k + 0.5) * bar
        if k == len(counts) - 1:
            parts.append(f'<text x="{room}" y="{bottom + 22}" class="tick end">{label}</text>')
            room -= wide + 8
        elif centre + wide / 2 <= room:
            parts.append(f'<text x="{centre:.1f}" y="{bottom + 22}" class="tick">{label}</text>')
            room = centre - wide / 2 - 8
    parts.append(f'<text x="{left - 6}" y="20" class="tick end">{top}</text>')
    parts.append(
        f'<text x="{width - 4}" y="{height - 4}" class="tick end">decision time, ms</text>'
    )
    return (
        f'<svg class="chart" id="latency-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="latency histogram">{"".join(parts)}</svg>'
    )


# The size a phone draws a chart's numbers at, in the drawing's units (site.css), and a
# word's width at a size: what a chart leaves room for, so that its words never meet.
PHONE_TICK = 21


def _text_width(text: str, size: float) -> float:
    return len(text) * size * 0.62


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
                        f'<td class="dim">{WITHHELD}</td></tr>'
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


def bot_page(league: League, b: BotStanding, place: int, failed: dict[str, Counter[str]]) -> str:
    """Bot `b`'s page; `failed`, the bots that never started (`never_started`)."""
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
    reasons = failed.get(name)
    if reasons is not None:
        line += (
            '<section id="never-started" class="warn-box"><h2>Never started</h2>'
            f"<p>{esc(name)} failed to start in every one of its {len(records)} games "
            f"(faults of kind {STARTUP}); what the referee saw:</p>{_reasons(reasons)}</section>\n"
        )
    history = ""
    if records:
        history = (
            '<section><h2>Rating over time</h2><p class="hint">The rating μ − 3σ after each '
            "of its games (a dot each, the change in its tooltip and in the games' table), "
            "against the game's number in the league, as the standings compute it.</p>"
            + history_chart(
                [(b, line_color(place - 1))], len(league.records), "bot-rating", points=True
            )
            + "</section>\n"
        )
    stderr = ""
    files = league.stderr.get(name, [])
    if files:
        links = "".join(f'<li><a href="stderr/{esc(f)}">{esc(f)}</a></li>' for f in files)
        stderr = f"<section><h2>Standard error</h2><ul>{links}</ul></section>\n"
    body = (
        line
        + history
        + "<section><h2>Games</h2>"
        + filters
        + scroll(_games_table(league, records, "games", b))
        + "</section>\n<section><h2>Faults</h2>"
        + _faults(league, name, records)
        + "</section>\n<section><h2>Decision latency</h2>"
        + _latency(latencies)
        + "</section>\n<section><h2>Points by round</h2>"
        + _rounds(points, engines)
        + "</section>\n"
        + stderr
    )
    nav = (
        f'<a href="index.html">← {esc(league.title)}</a> · <a href="{games_file(0)}">every game</a>'
    )
    return page(name, body, nav, league.built)


# ---------------------------------------------------------------- the replay page


def replay_page(league: League) -> str:
    """The one replay page of a league's site (`replay_html`)."""
    return replay_html(league.title, league.names)


def replay_html(title: str, names: Sequence[str], pages: dict[str, str] | None = None) -> str:
    """The one replay page: the viewer's markup, its CSS and script as site files, and
    the loader that brings in a game's data (`assets/game.js`). `pages` maps each bot's
    name to its page (default `bot_file`), for the seats' names to link to."""
    _, body, _ = viewer_parts()
    home = f'<a class="home" href="index.html">← {esc(title)}</a>'
    body = body.replace("<header>", f"<header>\n  {home}", 1)
    # Each bot's page, for the seats' names to link to (`assets/game.js`): data, not a
    # script (the page runs only the site's own files).
    links = pages if pages is not None else {n: bot_file(n) for n in names}
    data = json.dumps(links, ensure_ascii=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    body += f'<script id="site-bots" type="application/json">{data}</script>\n'
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}: replay</title>\n"
        '<link rel="stylesheet" href="assets/replay.css">\n'
        "<style>header a.home { color: var(--accent); text-decoration: none; }</style>\n"
        f"</head>\n<body>{body}"
        '<script src="assets/game.js"></script>\n</body>\n</html>\n'
    )


def write_pages(site: Path, league: League) -> None:
    """The replay page, the bot pages and the list of games, then the index (which
    links them); pages of the list beyond its end (from another league) are removed."""
    write_atomic(site / "replay.html", replay_page(league))
    failed = never_started(league)
    for place, b in enumerate(league.standings.bots, start=1):
        write_atomic(site / bot_file(b.name), bot_page(league, b, place, failed))
    pages = game_pages(league)
    for name, text in pages:
        write_atomic(site / name, text)
    keep = {name for name, _ in pages}
    for old in site.glob("games-*.html"):
        if old.name not in keep:
            old.unlink()
    write_atomic(site / "index.html", index(league))
