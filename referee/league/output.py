"""The standings as people and programs read them: the terminal table, standings.md
and standings.csv all come from one list of columns, each saying its headers, how
much it matters when a terminal is narrow, how it is written for each of the three,
and what it means (the legend).

A terminal table keeps one line per bot and every bot's whole name: when the full
table is wider than the terminal, the headers are shortened and the least important
columns left out until it fits; the files always hold every column. Also here: the
head-to-head table, the final print with its legend, the files and the rating chart.
What the terminal shows of a name (a bot's, the league's) is shown escaped
(`referee.text.shown`); the files keep names as they are.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ..bots.faults import FaultKind
from ..logs.outputs import write_atomic
from ..text import shown
from .standings import BotStanding, Standings

Cell = Callable[[int, BotStanding], str]  # (place from 1, the bot's line) -> text


@dataclass(frozen=True)
class Column:
    """One column of every standings table."""

    header: str  # wide terminals and standings.md
    short: str  # a narrow terminal
    priority: int  # 0: always shown; the highest is the first left out of a narrow terminal
    terminal: Cell
    csv: tuple[tuple[str, Cell], ...]  # plain CSV fields: a pair of numbers is two fields
    meaning: str = ""  # its line of the legend; "" for the obvious ones
    justify: Literal["left", "right"] = "right"
    md: Cell | None = None  # standings.md, when it differs from the terminal

    def markdown(self, place: int, b: BotStanding) -> str:
        """The Markdown cell."""
        return (self.md or self.terminal)(place, b)


def _fixed(x: float, digits: int) -> str:
    text = f"{x:.{digits}f}"
    return text[1:] if text.lstrip("-0.") == "" else text  # no "-0.00"


def _interval(b: BotStanding, digits: int) -> str:
    return "" if math.isinf(b.ci95) else f"{b.ci95:.{digits}f}"


def _fault_kinds(place: int, b: BotStanding) -> str:
    total = b.fault_count
    if not total:
        return "0"
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(b.faults.items()))
    return f"{total} ({kinds})"


def _kind_count(kind: FaultKind) -> Cell:
    return lambda i, b: str(b.faults.get(kind.value, 0))


def _one(name: str, cell: Cell) -> tuple[tuple[str, Cell]]:
    return ((name, cell),)


COLUMNS: tuple[Column, ...] = (
    Column("#", "#", 0, lambda i, b: str(i), _one("rank", lambda i, b: str(i))),
    Column(
        "bot",
        "bot",
        0,
        lambda i, b: shown(b.name),
        _one("bot", lambda i, b: b.name),
        justify="left",
        md=lambda i, b: b.name.replace("|", "\\|"),
    ),
    Column("games", "gms", 3, lambda i, b: str(b.games), _one("games", lambda i, b: str(b.games))),
    Column(
        "wins",
        "wins",
        2,
        lambda i, b: f"{b.wins:g}",
        _one("wins", lambda i, b: f"{b.wins:g}"),
        "first places (one shared by k bots counts 1/k)",
    ),
    Column(
        "avg rank",
        "rank",
        5,
        lambda i, b: f"{b.avg_rank:.2f}",
        _one("avg_rank", lambda i, b: f"{b.avg_rank:.4f}"),
        "mean finishing place",
    ),
    Column(
        "points/game",
        "pts",
        0,
        lambda i, b: f"{b.mean_points:.1f}",
        _one("mean_points", lambda i, b: f"{b.mean_points:.4f}"),
        "mean points per game; fewer points are better",
    ),
    Column(
        "±95%",
        "±",
        1,
        lambda i, b: _interval(b, 1) or "-",
        _one("ci95", lambda i, b: _interval(b, 4)),
        "95% interval of points/game, Student's t over the bot's n duplicate units (a unit: "
        "the games of one deal at one table): ± t(0.975, n − 1) × s / √n, s the standard "
        "deviation of the unit means; - below two units",
    ),
    Column(
        "rating",
        "rating",
        0,
        lambda i, b: _fixed(b.rating, 2),
        _one("rating", lambda i, b: _fixed(b.rating, 4)),
        "μ − 3σ (openskill, Plackett-Luce): a skill the bot very likely has; the table's order",
    ),
    Column(
        "μ ± σ",
        "μ±σ",
        7,
        lambda i, b: f"{b.mu:.1f} ± {b.sigma:.1f}",
        (("mu", lambda i, b: f"{b.mu:.4f}"), ("sigma", lambda i, b: f"{b.sigma:.4f}")),
        "openskill's skill estimate ± its uncertainty",
        md=lambda i, b: f"{b.mu:.2f} ± {b.sigma:.2f}",
    ),
    Column(
        "forfeits",
        "ff",
        4,
        lambda i, b: str(b.forfeits),
        _one("forfeits", lambda i, b: str(b.forfeits)),
        "games forfeited",
    ),
    Column(
        "faults",
        "flt",
        4,
        lambda i, b: str(b.fault_count),
        (
            ("faults", lambda i, b: str(b.fault_count)),
            *((f"faults_{kind.value}", _kind_count(kind)) for kind in FaultKind),
        ),
        "faults of every kind (by kind in standings.md and .csv)",
        md=_fault_kinds,
    ),
    Column(
        "latency ms",
        "ms",
        6,
        lambda i, b: f"{b.latency_mean:.1f} / {b.latency_worst:.0f}",
        (
            ("latency_mean_ms", lambda i, b: f"{b.latency_mean:.3f}"),
            ("latency_worst_ms", lambda i, b: f"{b.latency_worst:.3f}"),
        ),
        "decision time in ms, mean / worst",
    ),
)

_NO_LIMIT = 1_000_000  # wide enough to measure any table at its natural width


def natural_width(renderable: Table) -> int:
    """Columns `renderable` takes when nothing has to wrap."""
    console = Console(file=io.StringIO(), width=_NO_LIMIT)
    return Measurement.get(console, console.options, renderable).maximum


def _table(standings: Standings, title: str, columns: Sequence[Column], short: bool) -> Table:
    t = Table(title=Text(shown(title)))
    for col in columns:
        # Whole cells or nothing: a table that does not fit loses columns, never wraps.
        t.add_column(col.short if short else col.header, justify=col.justify, no_wrap=True)
    for i, b in enumerate(standings.bots, start=1):
        t.add_row(*(Text(col.terminal(i, b)) for col in columns))  # Text: names are not markup
    return t


@dataclass(frozen=True)
class Fitted:
    """A terminal table and what it shows."""

    table: Table
    columns: tuple[Column, ...]
    short: bool  # the short headers

    @property
    def left_out(self) -> tuple[Column, ...]:
        """The columns of the files that this table leaves out."""
        return tuple(c for c in COLUMNS if c not in self.columns)


def fitted_table(standings: Standings, title: str, width: int) -> Fitted:
    """The standings in at most `width` columns if they can be: all columns with full
    headers if they fit, else short headers and the least important columns left out,
    one at a time, down to place, bot, points and rating."""
    full = _table(standings, title, COLUMNS, short=False)
    if natural_width(full) <= width:
        return Fitted(full, COLUMNS, False)
    shown = list(COLUMNS)
    # Highest priority number first; among equals, the rightmost first.
    order = sorted(
        (c for c in COLUMNS if c.priority), key=lambda c: (-c.priority, -COLUMNS.index(c))
    )
    while True:
        table = _table(standings, title, shown, short=True)
        if not order or natural_width(table) <= width:
            return Fitted(table, tuple(shown), True)
        shown.remove(order.pop(0))


def _named(col: Column, short: bool) -> str:
    if short and col.short != col.header:
        return f"{col.short} ({col.header})"
    return col.header


def legend(columns: Sequence[Column], short: bool = False) -> list[str]:
    """One line per column that needs explaining: its header, then what it means."""
    return [f"{_named(c, short)}: {c.meaning}" for c in columns if c.meaning]


def print_table(console: Console, standings: Standings, title: str, *, explain: bool) -> None:
    """The standings table fitted to the console's width; with `explain`, its legend and
    which columns were left out (they are in standings.md)."""
    fit = fitted_table(standings, title, console.width)
    console.print(fit.table)
    if not explain:
        return
    for line in legend(fit.columns, fit.short):
        console.print(line, style="dim", markup=False, highlight=False)
    if fit.left_out:
        names = ", ".join(c.header for c in fit.left_out)
        console.print(
            f"left out at {console.width} columns: {names} (all in standings.md)",
            style="dim",
            markup=False,
            highlight=False,
        )


def head_table(standings: Standings) -> Table:
    """How often the row's bot finished ahead of the column's, when they met."""
    names = [b.name for b in standings.bots]
    t = Table(title="Head to head: row ahead of column")
    t.add_column("")
    for n in names:
        t.add_column(Text(shown(n)), justify="right")
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("-")
            else:
                ahead, met = standings.head[a][b]
                cells.append(f"{ahead}/{met}" if met else "")
        t.add_row(Text(shown(a)), *cells)
    return t


def markdown(standings: Standings, title: str) -> str:
    """The standings, their legend and head to head as Markdown."""
    lines = [f"# {title}", "", f"{standings.games} games.", ""]
    if standings.match is not None:
        from .judge import match_lines

        lines += ["## Match", "", *(f"    {line}" for line in match_lines(standings.match)), ""]
    if standings.sandbox is not None:
        said = standings.sandbox.line()
        lines += [said[:1].upper() + said[1:] + ".", ""]
    if standings.transport is not None:
        said = standings.transport.line()
        said = said[:1].upper() + said[1:] + "."
        lines += [f"**{said}**" if standings.transport.insecure else said, ""]
    if standings.clocks.measured:
        said = standings.clocks.sentence()
        lines += [f"**{said}**" if standings.clocks.overloaded else said, ""]
    lines.append("| " + " | ".join(c.header for c in COLUMNS) + " |")
    lines.append("|" + "|".join("---" if c.justify == "left" else "---:" for c in COLUMNS) + "|")
    for i, b in enumerate(standings.bots, start=1):
        lines.append("| " + " | ".join(c.markdown(i, b) for c in COLUMNS) + " |")
    lines.append("")
    lines += [f"- {line}" for line in legend(COLUMNS)]
    names = [b.name for b in standings.bots]
    cells_of = [n.replace("|", "\\|") for n in names]
    lines += ["", "## Head to head (row finished ahead of column / games together)", ""]
    lines.append("| | " + " | ".join(cells_of) + " |")
    lines.append("|---|" + "---:|" * len(names))
    for x, cell in zip(names, cells_of, strict=True):
        cells = []
        for y in names:
            if x == y:
                cells.append("-")
            else:
                ahead, met = standings.head[x][y]
                cells.append(f"{ahead}/{met}" if met else "")
        lines.append(f"| {cell} | " + " | ".join(cells) + " |")
    if standings.failed_starts:
        lines += ["", "## Failed starts", "", shown(failed_line(standings)), ""]
        lines += ["| game | bot | why |", "|---|---|---|"]
        for f in standings.failed_starts:
            lines.append("| " + " | ".join(_cell(c) for c in (f.game_id, f.bot, f.detail)) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text from a bot or a league file as one Markdown table cell: escaped, pipes too."""
    return shown(text).replace("|", "\\|")


def failed_line(standings: Standings) -> str:
    """How many games had a seat whose bot did not start, and whose; "" when none."""
    failed = standings.failed_starts
    if not failed:
        return ""
    games = len({f.game_id for f in failed})
    by_bot = Counter(f.bot for f in failed)
    who = ", ".join(f"{bot} in {n}" for bot, n in by_bot.most_common())
    first = failed[0]
    return (
        f"{games} game{'' if games == 1 else 's'} had a bot that failed to start ({who}); "
        f"the first: {first.bot} in {first.game_id}: {first.detail}"
    )


def csv_text(standings: Standings) -> str:
    """One CSV row per bot, every column as plain fields."""
    fields = [field for col in COLUMNS for field in col.csv]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([name for name, _ in fields])
    for i, b in enumerate(standings.bots, start=1):
        w.writerow([cell(i, b) for _, cell in fields])
    return buf.getvalue()


def json_text(standings: Standings) -> str:
    """standings.json."""
    return json.dumps(standings.to_json(), indent=2) + "\n"


def write_files(standings: Standings, out: Path, title: str) -> list[Path]:
    """standings.json, .csv, .md and .svg (the chart) in `out`, each written whole or
    not at all (`WriteError` when the disk is full)."""
    paths = [
        out / "standings.json",
        out / "standings.csv",
        out / "standings.md",
        out / "standings.svg",
    ]
    texts = [
        json_text(standings),
        csv_text(standings),
        markdown(standings, title),
        chart_svg(standings, title),
    ]
    for path, text in zip(paths, texts, strict=True):
        write_atomic(path, text.encode("utf-8"))  # readers never see half a file
    return paths


# A bot's line in the chart, by its place in the standings; past these, hues apart.
CHART_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def chart_svg(standings: Standings, title: str) -> str:
    """The standings chart as a standalone SVG: each bot's rating (μ − 3σ) and its mean
    points per game after each of its games, against the game's place in the schedule,
    a line per bot in the standings' order, with a legend. Drawn here (no plotting
    library, so writing it costs nothing next to a game); any name is text, escaped."""
    width, left, right, panel, gap, top = 900, 64, 200, 250, 56, 40
    plot_w = width - left - right
    height = top + 2 * panel + gap + 44
    last = max((h[0] + 1 for b in standings.bots for h in b.history), default=1)

    def x(game: int) -> float:
        return left + (game - 1) / max(last - 1, 1) * plot_w

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15">{_xml(title)}</text>',
    ]
    panels = (("rating (μ − 3σ)", 1), ("mean points per game", 2))
    for k, (label, field_at) in enumerate(panels):
        y0 = top + k * (panel + gap)
        values = [h[field_at] for b in standings.bots for h in b.history] or [0.0]
        lo, hi = min(values), max(values)
        if hi - lo < 1e-9:
            lo, hi = lo - 1, hi + 1

        def y(v: float, y0: float = y0, lo: float = lo, hi: float = hi) -> float:
            return y0 + (hi - v) / (hi - lo) * panel

        out.append(
            f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel}" fill="none" '
            'stroke="#888"/>'
        )
        for i in range(5):
            v = lo + (hi - lo) * i / 4
            out.append(
                f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" '
                f'stroke="#ddd"/><text x="{left - 6}" y="{y(v) + 4:.1f}" '
                f'text-anchor="end">{v:.3g}</text>'
            )
        out.append(
            f'<text transform="translate(16 {y0 + panel / 2:.0f}) rotate(-90)" '
            f'text-anchor="middle">{_xml(label)}</text>'
        )
        for place, b in enumerate(standings.bots):
            points = " ".join(f"{x(h[0] + 1):.1f},{y(h[field_at]):.1f}" for h in b.history)
            if points:
                out.append(
                    f'<polyline points="{points}" fill="none" stroke="{_color(place)}" '
                    'stroke-width="1.6"/>'
                )
    bottom = top + 2 * panel + gap
    for i in range(5):
        game = round(1 + (last - 1) * i / 4)
        out.append(f'<text x="{x(game):.1f}" y="{bottom + 16}" text-anchor="middle">{game}</text>')
    out.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{bottom + 36}" text-anchor="middle">'
        "game (schedule order)</text>"
    )
    for place, b in enumerate(standings.bots):
        ly = top + 10 + place * 18
        out.append(
            f'<line x1="{left + plot_w + 14}" y1="{ly}" x2="{left + plot_w + 34}" y2="{ly}" '
            f'stroke="{_color(place)}" stroke-width="3"/><text x="{left + plot_w + 40}" '
            f'y="{ly + 4}">{_xml(b.name)}</text>'
        )  # a long name runs past the edge: the SVG is read in a browser, which scrolls
    out.append("</svg>\n")
    return "\n".join(out)


def _color(place: int) -> str:
    if place < len(CHART_COLORS):
        return CHART_COLORS[place]
    return f"hsl({place * 137 % 360}, 60%, 45%)"


def _xml(text: str) -> str:
    """`text` as SVG text: markup characters escaped, and control characters (which
    XML cannot hold) shown as `shown` shows them elsewhere."""
    return shown(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def print_standings(console: Console, standings: Standings, title: str) -> None:
    """The final tables with the legend, whether the bots ran in the sandbox, how a
    served league's tcp bots connected, and how much of their decision time was
    excused for the referee's own lag."""
    print_table(console, standings, title, explain=True)
    head = head_table(standings)
    if natural_width(head) <= console.width:
        console.print(head)
    else:  # a wrapped head-to-head table cannot be read
        console.print(
            f"head to head: too wide for {console.width} columns (it is in standings.md)",
            style="dim",
        )
    if standings.sandbox is not None:
        bare = bool(standings.sandbox.unsandboxed)
        console.print(
            shown(standings.sandbox.line()),
            style="bold yellow" if bare else None,
            markup=False,  # it names bots
            highlight=False,
            soft_wrap=True,  # one line: what an unsandboxed bot could read, whole
        )
    if standings.transport is not None:
        console.print(
            standings.transport.line(),
            style="bold yellow" if standings.transport.insecure else None,
            markup=False,
            highlight=False,
        )
    if standings.failed_starts:
        console.print(
            shown(failed_line(standings)),
            style="bold red",
            markup=False,
            highlight=False,
            soft_wrap=True,  # one line, as the failed start was named while it ran
        )
    if standings.clocks.measured:
        console.print(
            standings.clocks.line(),
            style="bold yellow" if standings.clocks.overloaded else None,
            markup=False,
            highlight=False,
        )
