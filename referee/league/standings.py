"""Standings from the ledger: wins, ranks, points with confidence intervals, ratings,
faults, latencies, head to head; as a rich table, JSON, CSV, Markdown and a chart.

Everything is computed from the recorded games in schedule order, never in the
order they finished, so the same seeds and deterministic bots give the same
standings with one job or many, interrupted or not.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from rich.table import Table

from .ledger import Record, SandboxRecord

Z95 = 1.959963984540054


@dataclass
class BotStanding:
    """One bot's line of the standings."""

    name: str
    games: int = 0
    wins: float = 0.0  # a shared first place counts 1/k
    rank_sum: int = 0
    points: int = 0
    units: dict[int, list[int]] = field(default_factory=dict)
    mu: float = 25.0
    sigma: float = 25.0 / 3
    faults: dict[str, int] = field(default_factory=dict)
    # What the referee ignored (stale replies), by kind: shown in the JSON, never a fault.
    notices: dict[str, int] = field(default_factory=dict)
    forfeits: int = 0
    latency_sum: float = 0.0
    latency_n: int = 0
    latency_worst: float = 0.0
    history: list[tuple[int, float, float]] = field(default_factory=list)  # game, rating, mean pts

    @property
    def avg_rank(self) -> float:
        """Average finishing rank."""
        return self.rank_sum / self.games if self.games else 0.0

    @property
    def mean_points(self) -> float:
        """Mean points per game (lower is better)."""
        return self.points / self.games if self.games else 0.0

    @property
    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of mean points, over duplicate units."""
        means = [sum(v) / len(v) for v in self.units.values() if v]
        if len(means) < 2:
            return math.inf if self.games else 0.0
        avg = sum(means) / len(means)
        var = sum((x - avg) ** 2 for x in means) / (len(means) - 1)
        return Z95 * math.sqrt(var / len(means))

    @property
    def rating(self) -> float:
        """The conservative OpenSkill rating: mu - 3 sigma."""
        return self.mu - 3 * self.sigma

    @property
    def latency_mean(self) -> float:
        """Mean decision latency in ms."""
        return self.latency_sum / self.latency_n if self.latency_n else 0.0


@dataclass
class Standings:
    """The whole standings: bots ordered best first, and head to head counts."""

    bots: list[BotStanding]
    head: dict[str, dict[str, tuple[int, int]]]  # a -> b -> (a ahead of b, meetings)
    games: int
    sandbox: SandboxRecord | None = None  # None: not recorded (a league from before)

    def to_json(self) -> dict[str, Any]:
        """A plain, JSON-ready form."""
        out = []
        for b in self.bots:
            row = asdict(b)
            row.pop("units")
            row.pop("history")
            row.update(
                avg_rank=round(b.avg_rank, 4),
                mean_points=round(b.mean_points, 4),
                ci95=None if math.isinf(b.ci95) else round(b.ci95, 4),
                rating=round(b.rating, 4),
                latency_mean=round(b.latency_mean, 3),
            )
            out.append(row)
        head = {a: {b: list(v) for b, v in row.items()} for a, row in self.head.items()}
        sandbox = self.sandbox.to_json() if self.sandbox is not None else None
        return {"games": self.games, "bots": out, "head_to_head": head, "sandbox": sandbox}


def compute(
    names: list[str], records: list[Record], sandbox: SandboxRecord | None = None
) -> Standings:
    """Standings from recorded games, walked in schedule order; `sandbox` is passed on."""
    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in names}
    table = {n: BotStanding(name=n) for n in names}
    head: dict[str, dict[str, list[int]]] = {a: {b: [0, 0] for b in names if b != a} for a in names}
    for rec in sorted(records, key=lambda r: r.idx):
        seats = rec.seats
        first = sum(1 for r in rec.ranks if r == 1)
        for s, name in enumerate(seats):
            b = table[name]
            b.games += 1
            b.rank_sum += rec.ranks[s]
            b.points += rec.scores[s]
            b.units.setdefault(rec.unit, []).append(rec.scores[s])
            if rec.ranks[s] == 1:
                b.wins += 1 / first
            if rec.forfeited[s]:
                b.forfeits += 1
            mean, worst = rec.latency_mean[s], rec.latency_max[s]
            if mean is not None and worst is not None:
                b.latency_sum += mean
                b.latency_n += 1
                b.latency_worst = max(b.latency_worst, worst)
        for fault in rec.faults:
            name = seats[fault["seat"]]
            kind = fault["kind"]
            table[name].faults[kind] = table[name].faults.get(kind, 0) + 1
        for notice in rec.notices:
            name = seats[notice["seat"]]
            kind = notice["kind"]
            table[name].notices[kind] = table[name].notices.get(kind, 0) + 1
        for i, x in enumerate(seats):
            for j, y in enumerate(seats):
                if x != y:
                    head[x][y][1] += 1
                    if rec.ranks[i] < rec.ranks[j]:
                        head[x][y][0] += 1
        teams = [[ratings[n]] for n in seats]
        new = model.rate(teams, ranks=[float(r) for r in rec.ranks])
        for n, team in zip(seats, new, strict=True):
            ratings[n] = team[0]
            b = table[n]
            b.mu, b.sigma = team[0].mu, team[0].sigma
            b.history.append((rec.idx, b.rating, b.mean_points))
    order = sorted(table.values(), key=lambda b: (-b.rating, b.mean_points, b.name))
    frozen = {a: {b: (v[0], v[1]) for b, v in row.items()} for a, row in head.items()}
    return Standings(order, frozen, len(records), sandbox)


def rich_table(standings: Standings, title: str) -> Table:
    """The standings as a rich table."""
    t = Table(title=title)
    for col, just in (
        ("#", "right"),
        ("bot", "left"),
        ("games", "right"),
        ("wins", "right"),
        ("avg rank", "right"),
        ("points/game", "right"),
        ("±95%", "right"),
        ("rating", "right"),
        ("μ ± σ", "right"),
        ("faults", "left"),
        ("latency ms", "right"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for i, b in enumerate(standings.bots, start=1):
        faults = ", ".join(f"{k} {v}" for k, v in sorted(b.faults.items())) or "-"
        ci = "-" if math.isinf(b.ci95) else f"{b.ci95:.1f}"
        t.add_row(
            str(i),
            b.name,
            str(b.games),
            f"{b.wins:g}",
            f"{b.avg_rank:.2f}",
            f"{b.mean_points:.1f}",
            ci,
            f"{b.rating:.2f}",
            f"{b.mu:.1f} ± {b.sigma:.1f}",
            faults,
            f"{b.latency_mean:.1f} / {b.latency_worst:.0f}",
        )
    return t


def head_table(standings: Standings) -> Table:
    """How often the row's bot finished ahead of the column's, when they met."""
    names = [b.name for b in standings.bots]
    t = Table(title="Head to head: row ahead of column")
    t.add_column("")
    for n in names:
        t.add_column(n, justify="right")
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("-")
            else:
                ahead, met = standings.head[a][b]
                cells.append(f"{ahead}/{met}" if met else "")
        t.add_row(a, *cells)
    return t


def markdown(standings: Standings, title: str) -> str:
    """The standings and head to head as Markdown tables."""
    lines = [f"# {title}", "", f"{standings.games} games.", ""]
    if standings.sandbox is not None:
        said = standings.sandbox.line()
        lines += [said[:1].upper() + said[1:] + ".", ""]
    lines.append(
        "| # | bot | games | wins | avg rank | points/game | ±95% | rating | μ | σ | faults "
        "| latency mean ms | latency worst ms |"
    )
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for i, b in enumerate(standings.bots, start=1):
        faults = ", ".join(f"{k} {v}" for k, v in sorted(b.faults.items())) or "-"
        ci = "-" if math.isinf(b.ci95) else f"{b.ci95:.1f}"
        lines.append(
            f"| {i} | {b.name} | {b.games} | {b.wins:g} | {b.avg_rank:.2f} | {b.mean_points:.1f} "
            f"| {ci} | {b.rating:.2f} | {b.mu:.2f} | {b.sigma:.2f} | {faults} "
            f"| {b.latency_mean:.1f} | {b.latency_worst:.0f} |"
        )
    names = [b.name for b in standings.bots]
    lines += ["", "## Head to head (row finished ahead of column / games together)", ""]
    lines.append("| | " + " | ".join(names) + " |")
    lines.append("|---|" + "---:|" * len(names))
    for x in names:
        cells = []
        for y in names:
            if x == y:
                cells.append("-")
            else:
                ahead, met = standings.head[x][y]
                cells.append(f"{ahead}/{met}" if met else "")
        lines.append(f"| {x} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def csv_text(standings: Standings) -> str:
    """One CSV row per bot."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "rank",
            "bot",
            "games",
            "wins",
            "avg_rank",
            "mean_points",
            "ci95",
            "rating",
            "mu",
            "sigma",
            "forfeits",
            "faults",
            "latency_mean_ms",
            "latency_worst_ms",
        ]
    )
    for i, b in enumerate(standings.bots, start=1):
        w.writerow(
            [
                i,
                b.name,
                b.games,
                f"{b.wins:g}",
                f"{b.avg_rank:.4f}",
                f"{b.mean_points:.4f}",
                "" if math.isinf(b.ci95) else f"{b.ci95:.4f}",
                f"{b.rating:.4f}",
                f"{b.mu:.4f}",
                f"{b.sigma:.4f}",
                b.forfeits,
                json.dumps(b.faults, sort_keys=True),
                f"{b.latency_mean:.3f}",
                f"{b.latency_worst:.3f}",
            ]
        )
    return buf.getvalue()


def write_files(standings: Standings, out: Path, title: str) -> list[Path]:
    """standings.json, .csv, .md and (with matplotlib) standings.png in `out`."""
    paths = [out / "standings.json", out / "standings.csv", out / "standings.md"]
    texts = [
        json.dumps(standings.to_json(), indent=2) + "\n",
        csv_text(standings),
        markdown(standings, title),
    ]
    for path, text in zip(paths, texts, strict=True):
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # readers never see half a file
    chart = write_chart(standings, out / "standings.png", title)
    return paths + ([chart] if chart else [])


def write_chart(standings: Standings, path: Path, title: str) -> Path | None:
    """Each bot's rating and mean points over the games; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for b in standings.bots:
        xs = [h[0] + 1 for h in b.history]
        top.plot(xs, [h[1] for h in b.history], label=b.name)
        bottom.plot(xs, [h[2] for h in b.history], label=b.name)
    top.set_ylabel("rating (μ − 3σ)")
    bottom.set_ylabel("mean points per game")
    bottom.set_xlabel("game (schedule order)")
    top.set_title(title)
    top.legend(loc="best", fontsize="small")
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
