"""Standings from the ledger: wins, ranks, points with confidence intervals, ratings,
faults, latencies, head to head, and their JSON form (the tables, the other files and
the chart are made in `output`).

Everything is computed from the recorded games in schedule order, never in the
order they finished, so the same seeds and deterministic bots give the same
standings with one job or many, interrupted or not.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from .ledger import Record, SandboxRecord
from .stats import t_quantile


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
        """Half-width of the 95% confidence interval of mean points, over duplicate units.

        Each unit's mean points is one sample; with n of them the interval is Student's
        t with n - 1 degrees of freedom (a normal quantile, 1.96, would be 6.5 times too
        narrow with two units and a quarter too narrow with six)."""
        means = [sum(v) / len(v) for v in self.units.values() if v]
        n = len(means)
        if n < 2:
            return math.inf if self.games else 0.0
        avg = sum(means) / n
        var = sum((x - avg) ** 2 for x in means) / (n - 1)
        return t_quantile(0.975, n - 1) * math.sqrt(var / n)

    @property
    def fault_count(self) -> int:
        """Faults of every kind."""
        return sum(self.faults.values())

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
    match: dict[str, Any] | None = None  # a match's test: new, base and `--json`'s keys

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
        shown = {"games": self.games, "bots": out, "head_to_head": head, "sandbox": sandbox}
        if self.match is not None:
            shown["match"] = self.match
        return shown


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
