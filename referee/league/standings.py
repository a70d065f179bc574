"""Standings from the ledger: wins, ranks, points with confidence intervals, ratings,
faults, latencies, head to head, and their JSON form (the tables, the other files and
the chart are made in `output`).

Everything is computed from the recorded games in schedule order, never in the
order they finished, so the same seeds and deterministic bots give the same
standings with one job or many, interrupted or not. The ledger keeps the running
totals as it records each game (`Ledger.standings` reads them in constant time);
`compute` walks every record, and both add a game with the same functions here
(`advance`, `count`, `meetings`), so they agree to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..bots.faults import FaultKind
from .stats import t_quantile

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

    from .records import Record, SandboxRecord
    from .transport import Transport

Rated = tuple[float, float]  # a bot's (mu, sigma)


@dataclass
class BotStanding:
    """One bot's line of the standings."""

    name: str
    games: int = 0
    wins: float = 0.0  # a shared first place counts 1/k
    rank_sum: int = 0
    points: int = 0
    units: dict[int, tuple[int, int]] = field(default_factory=dict)  # unit -> (points, games)
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
        means = [points / games for points, games in self.units.values()]
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


LAG_WARNING = 0.10  # `league.lag_warning`'s default


@dataclass
class Clocks:
    """The bots' decision time over the recorded games: what their clocks were charged
    and what was excused because the referee's own loop was late (`referee.game.lag`). A
    large excused share means the clocks were barely enforced: the machine was too
    loaded to tell a slow bot from a slow referee."""

    charged_us: int = 0  # whole microseconds: sums that are the same in any order
    excused_us: int = 0
    warn_at: float = LAG_WARNING  # the share above which the standings say so

    def add(self, rec: Record) -> None:
        """Count one game's decision time."""
        self.charged_us += round(rec.charged_ms * 1000)
        self.excused_us += round(rec.excused_ms * 1000)

    @property
    def measured(self) -> bool:
        """Some decision time was recorded (none in a ledger from before it was kept)."""
        return self.charged_us + self.excused_us > 0

    @property
    def share(self) -> float:
        """The excused share of the decision time (0 without any)."""
        total = self.charged_us + self.excused_us
        return self.excused_us / total if total else 0.0

    @property
    def overloaded(self) -> bool:
        """More of the decision time was excused than `warn_at` allows."""
        return self.share > self.warn_at

    def line(self) -> str:
        """One line for the standings."""
        if self.overloaded:
            return (
                f"clocks barely enforced: {self.share:.0%} of decision time was excused "
                "for referee lag (machine overloaded)"
            )
        return f"clocks: {self.share:.1%} of decision time was excused for referee lag"

    def sentence(self) -> str:
        """`line`, as a sentence of standings.md and the site."""
        said = self.line()
        return f"{said[:1].upper()}{said[1:]}."

    def to_json(self) -> dict[str, Any]:
        """A plain, JSON-ready form."""
        return {
            "charged_ms": self.charged_us / 1000,
            "excused_ms": self.excused_us / 1000,
            "excused_share": round(self.share, 4),
            "warn_at": self.warn_at,
            "overloaded": self.overloaded,
        }


@dataclass(frozen=True)
class FailedStart:
    """A seat of a recorded game whose bot did not start: the game, the bot, and why
    (the command, its folder, its stderr file and last line, as the referee saw it)."""

    game_id: str
    bot: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"game": self.game_id, "bot": self.bot, "detail": self.detail}


def failed_starts(
    games: Iterable[tuple[str, list[str], list[dict[str, Any]]]],
) -> list[FailedStart]:
    """Every failed start in `games` (game id, seats, faults), in the order given."""
    return [
        FailedStart(game_id, seats[f["seat"]], str(f["detail"]))
        for game_id, seats, faults in games
        for f in faults
        if f["kind"] == FaultKind.STARTUP_FAILURE.value
    ]


@dataclass
class Standings:
    """The whole standings: bots ordered best first, and head to head counts."""

    bots: list[BotStanding]
    head: dict[str, dict[str, tuple[int, int]]]  # a -> b -> (a ahead of b, meetings)
    games: int
    sandbox: SandboxRecord | None = None  # None: not recorded (a league from before)
    match: dict[str, Any] | None = None  # a match's test: new, base and `--json`'s keys
    clocks: Clocks = field(default_factory=Clocks)
    failed_starts: list[FailedStart] = field(default_factory=list)  # in schedule order
    commitment: str | None = None  # the league's commitment (referee.proof.commitment)
    transport: Transport | None = None  # a served league's: TLS or plain TCP (see .transport)

    def to_json(self) -> dict[str, Any]:
        """A plain, JSON-ready form."""
        out = []
        for b in self.bots:
            # Not asdict, which would copy the units and the history (they grow with the
            # league) only for them to be dropped.
            row: dict[str, Any] = {
                f.name: dict(v) if isinstance(v := getattr(b, f.name), dict) else v
                for f in fields(b)
                if f.name not in ("units", "history")
            }
            row.update(
                avg_rank=round(b.avg_rank, 4),
                mean_points=round(b.mean_points, 4),
                ci95=None if math.isinf(ci95 := b.ci95) else round(ci95, 4),
                rating=round(b.rating, 4),
                latency_mean=round(b.latency_mean, 3),
            )
            out.append(row)
        head = {a: {b: list(v) for b, v in row.items()} for a, row in self.head.items()}
        sandbox = self.sandbox.to_json() if self.sandbox is not None else None
        shown = {
            "games": self.games,
            "bots": out,
            "head_to_head": head,
            "sandbox": sandbox,
            "clocks": self.clocks.to_json(),
            "failed_starts": [f.to_json() for f in self.failed_starts],
        }
        if self.match is not None:
            shown["match"] = self.match
        if self.commitment is not None:
            shown["commitment"] = self.commitment
        if self.transport is not None:
            shown["transport"] = self.transport.to_json()
        return shown


@dataclass(frozen=True)
class Outcome:
    """What the running totals and the ratings need of one recorded game."""

    idx: int
    seats: list[str]
    scores: list[int]
    ranks: list[int]
    forfeited: list[bool]
    latency_mean: list[float | None]
    latency_max: list[float | None]

    @classmethod
    def of(cls, rec: Record) -> Outcome:
        """A recorded game's outcome."""
        return cls(
            rec.idx,
            rec.seats,
            rec.scores,
            rec.ranks,
            rec.forfeited,
            rec.latency_mean,
            rec.latency_max,
        )


def rating_model() -> PlackettLuce:
    """The ratings' model (imported here: reading stored standings needs no openskill)."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


def advance(bots: dict[str, BotStanding], game: Outcome, model: PlackettLuce) -> list[Rated]:
    """Add one game to its bots' running totals and ratings, which depend on the order of
    the games (floating-point sums, and openskill updates one game after the other): the
    games must come in schedule order. Returns each seat's (mu, sigma) after the game,
    for the history. The same code serves the full computation and the ledger's stored
    totals, so that both give the same numbers to the last bit."""
    first = sum(1 for r in game.ranks if r == 1)
    for s, name in enumerate(game.seats):
        b = bots[name]
        b.games += 1
        b.rank_sum += game.ranks[s]
        b.points += game.scores[s]
        if game.ranks[s] == 1:
            b.wins += 1 / first
        if game.forfeited[s]:
            b.forfeits += 1
        mean, worst = game.latency_mean[s], game.latency_max[s]
        if mean is not None and worst is not None:
            b.latency_sum += mean
            b.latency_n += 1
            b.latency_worst = max(b.latency_worst, worst)
    teams = [[model.rating(mu=bots[n].mu, sigma=bots[n].sigma, name=n)] for n in game.seats]
    new = model.rate(teams, ranks=[float(r) for r in game.ranks])
    after = []
    for n, team in zip(game.seats, new, strict=True):
        b = bots[n]
        b.mu, b.sigma = team[0].mu, team[0].sigma
        after.append((b.mu, b.sigma))
    return after


def count(bots: dict[str, BotStanding], rec: Record) -> None:
    """Add one game's points per duplicate unit, faults and notices: sums of integers,
    the same in any order (the ledger keeps them per bot and unit, or kind)."""
    for s, name in enumerate(rec.seats):
        points, games = bots[name].units.get(rec.unit, (0, 0))
        bots[name].units[rec.unit] = (points + rec.scores[s], games + 1)
    for fault in rec.faults:
        b = bots[rec.seats[fault["seat"]]]
        b.faults[fault["kind"]] = b.faults.get(fault["kind"], 0) + 1
    for notice in rec.notices:
        b = bots[rec.seats[notice["seat"]]]
        b.notices[notice["kind"]] = b.notices.get(notice["kind"], 0) + 1


def meetings(rec: Record) -> list[tuple[str, str, bool]]:
    """Each ordered pair of bots that met in a game, and whether the first finished ahead."""
    return [
        (x, y, rec.ranks[i] < rec.ranks[j])
        for i, x in enumerate(rec.seats)
        for j, y in enumerate(rec.seats)
        if x != y
    ]


def ranked(
    bots: list[BotStanding],
    head: dict[str, dict[str, tuple[int, int]]],
    games: int,
    sandbox: SandboxRecord | None,
    clocks: Clocks | None = None,
    failed: list[FailedStart] | None = None,
) -> Standings:
    """The standings in their order: best rating first, then fewer points, then the name."""
    order = sorted(bots, key=lambda b: (-b.rating, b.mean_points, b.name))
    return Standings(
        order, head, games, sandbox, clocks=clocks or Clocks(), failed_starts=failed or []
    )


def compute(
    names: list[str],
    records: list[Record],
    sandbox: SandboxRecord | None = None,
    lag_warning: float = LAG_WARNING,
) -> Standings:
    """Standings from recorded games, walked in schedule order; `sandbox` is passed on,
    and `lag_warning` is the excused share of decision time the standings warn above.

    The full computation: the ledger keeps the same numbers as running totals
    (`Ledger.standings`), and this is what they are checked against."""
    model = rating_model()
    table = {n: BotStanding(name=n) for n in names}
    head: dict[str, dict[str, list[int]]] = {a: {b: [0, 0] for b in names if b != a} for a in names}
    clocks = Clocks(warn_at=lag_warning)
    for rec in sorted(records, key=lambda r: r.idx):
        count(table, rec)
        clocks.add(rec)
        for x, y, ahead in meetings(rec):
            head[x][y][1] += 1
            head[x][y][0] += ahead
        after = advance(table, Outcome.of(rec), model)
        for n, (mu, sigma) in zip(rec.seats, after, strict=True):
            table[n].history.append((rec.idx, mu - 3 * sigma, table[n].mean_points))
    frozen = {a: {b: (v[0], v[1]) for b, v in row.items()} for a, row in head.items()}
    failed = failed_starts(
        (r.game_id, r.seats, r.faults) for r in sorted(records, key=lambda r: r.idx)
    )
    return ranked(list(table.values()), frozen, len(records), sandbox, clocks, failed)
