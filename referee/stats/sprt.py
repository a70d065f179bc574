"""The sequential test: a GSPRT on categorised paired results, fed unit by unit in schedule order.

The model is fishtest's and fastchess's pentanomial GSPRT, generalised: unit
results are put into categories, and the log-likelihood ratio compares the
most likely category distributions whose mean is the score of elo1 and of
elo0 (van den Bergh's multinomial MLE under a mean constraint). Raw paired
results of a two-seat pair fall on 0, ¼, ½, ¾, 1 and the test is then the
pentanomial test itself; luck-corrected results are real numbers, and the
categories are fine bins that keep each bin's mean. Wald's bounds decide; the
test stops at the first unit whose LLR crosses one, and its state is a plain
dictionary so that a resumed run continues exactly (spec/STATS.md).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from .elo import elo_of_score, interval, los, score_of_elo
from .score import Unit

RESOLUTION = 48  # bins per unit of score: every raw result of tables 2..8 gets a bin of its own
FIT_AFTER = 32  # units with luck before a fitted luck factor replaces the given one
FIT_RANGE = (0.0, 2.0)  # a fitted luck factor is kept within these bounds
PSEUDOCOUNT = 1e-3  # fishtest's and fastchess's regularisation of an empty end category
STATE_VERSION = 1


class StatsError(ValueError):
    """A test's parameters, or a saved state, that cannot be used; the message says which."""


class Verdict(enum.Enum):
    """Which hypothesis the test accepted."""

    H0 = "H0"  # the Elo difference is elo0 (or less): NEW is not the improvement hoped for
    H1 = "H1"  # the Elo difference is elo1 (or more)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the LLR: (log(β / (1 − α)), log((1 − β) / α))."""
    check_errors(alpha, beta)
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


def check_errors(alpha: float, beta: float) -> None:
    """Raise `StatsError` unless 0 < α, β < 1 and α + β < 1."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 1.0:
            raise StatsError(f"{name}={value}: must lie strictly between 0 and 1")
    if alpha + beta >= 1.0:
        raise StatsError(f"alpha={alpha}, beta={beta}: alpha + beta must be below 1")


def _theta(points: Sequence[tuple[float, float]], s: float) -> float:
    """The root θ of Σ wᵢ(aᵢ − s) / (1 + θ(aᵢ − s)) = 0 (the secular equation), all wᵢ > 0.

    The left side falls strictly on the open interval where every 1 + θ(aᵢ − s)
    is positive, from +∞ to −∞, so the root is unique; Newton steps that leave
    the bracket are replaced by bisection. The step sequence depends on the
    inputs alone, so equal inputs give bit-equal roots.
    """
    ds = [a - s for a, _ in points]
    ws = [w for _, w in points]
    low = -1.0 / max(ds)
    high = -1.0 / min(ds)
    theta = 0.0
    for _ in range(200):
        f = 0.0
        slope = 0.0
        for d, w in zip(ds, ws, strict=True):
            q = d / (1.0 + theta * d)
            f += w * q
            slope -= w * q * q
        if f > 0.0:
            low = theta
        elif f < 0.0:
            high = theta
        else:
            return theta
        step = theta - f / slope
        nxt = step if low < step < high else (low + high) / 2.0
        if abs(nxt - theta) <= 1e-13 * (1.0 + abs(theta)):
            return nxt
        theta = nxt
    return theta


def mle(points: Sequence[tuple[float, float]], s: float) -> list[float]:
    """The most likely probabilities of the categories given their mean is `s`.

    `points` are (value, count) pairs; the answer is pᵢ = p̂ᵢ / (1 + θ(aᵢ − s))
    (van den Bergh, "Comments on normalized Elo", Proposition 1.1; fishtest's
    `LLRcalc.MLE_expected`). `s` must lie strictly between the smallest and the
    largest value with a positive count.
    """
    _check_support(points, s)
    total = sum(w for _, w in points)
    theta = _theta([(a, w) for a, w in points if w > 0.0], s)
    return [w / total / (1.0 + theta * (a - s)) for a, w in points]


def llr(points: Sequence[tuple[float, float]], s0: float, s1: float) -> float:
    """The generalised log-likelihood ratio of mean score s1 against s0 for these counts.

    Σ nᵢ·log(p1ᵢ / p0ᵢ), each p the `mle` for its mean: fishtest's
    `LLRcalc.LLR_logistic` with `statistic="expectation"`, fastchess's
    `getLLR_logistic`, on any finite set of categories.
    """
    _check_support(points, s0)
    _check_support(points, s1)
    seen = [(a, w) for a, w in points if w > 0.0]
    t0 = _theta(seen, s0)
    t1 = _theta(seen, s1)
    return sum(w * (math.log1p(t0 * (a - s0)) - math.log1p(t1 * (a - s1))) for a, w in seen)


def _check_support(points: Sequence[tuple[float, float]], s: float) -> None:
    values = [a for a, w in points if w > 0.0]
    if not values or not min(values) < s < max(values):
        raise StatsError(f"score {s} is not strictly inside the observed results; regularise first")


def regularised(points: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The counts with a pseudocount of 0.001 at 0 and at 1 where nothing lies at or beyond.

    This is fishtest's and fastchess's regularisation (1e-3 for an empty
    category) applied to the two ends only: it is what makes every score in
    (0, 1) a possible mean, and it leaves counts that already span [0, 1] alone.
    """
    out = sorted(points)
    if not out or out[0][0] > 0.0:
        out.insert(0, (0.0, PSEUDOCOUNT))
    if out[-1][0] < 1.0:
        out.append((1.0, PSEUDOCOUNT))
    return out


@dataclass
class SprtState:
    """Everything a running test knows; `to_dict`/`from_dict` give a JSON-ready copy.

    `bins` maps a bin (round(value × RESOLUTION)) to [count, sum of values];
    `total`/`total_sq` are the sums of the counted (luck-corrected) values and
    of their squares, `raw_total`/`raw_total_sq` the same before correction;
    `luck_total`, `luck_sq`, `luck_cross` sum each unit's luck ℓ, ℓ² and raw·ℓ
    (for the fitted luck factor).
    """

    elo0: float
    elo1: float
    alpha: float
    beta: float
    luck_scale: float = 1.0
    fit_luck: bool = False
    units: int = 0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    bins: dict[int, list[float]] = field(default_factory=dict)
    total: float = 0.0
    total_sq: float = 0.0
    raw_total: float = 0.0
    raw_total_sq: float = 0.0
    luck_total: float = 0.0
    luck_sq: float = 0.0
    luck_cross: float = 0.0
    llr: float = 0.0
    verdict: Verdict | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values; floats keep every bit through JSON."""
        return {
            "version": STATE_VERSION,
            "elo0": self.elo0,
            "elo1": self.elo1,
            "alpha": self.alpha,
            "beta": self.beta,
            "luck_scale": self.luck_scale,
            "fit_luck": self.fit_luck,
            "units": self.units,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "bins": [[k, int(c), s] for k, (c, s) in sorted(self.bins.items())],
            "total": self.total,
            "total_sq": self.total_sq,
            "raw_total": self.raw_total,
            "raw_total_sq": self.raw_total_sq,
            "luck_total": self.luck_total,
            "luck_sq": self.luck_sq,
            "luck_cross": self.luck_cross,
            "llr": self.llr,
            "verdict": None if self.verdict is None else self.verdict.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SprtState:
        """The inverse of `to_dict`; anything malformed raises `StatsError` naming the field."""
        if data.get("version") != STATE_VERSION:
            raise StatsError(f"sprt state: version {data.get('version')!r}, expected 1")
        bins: dict[int, list[float]] = {}
        raw_bins = data.get("bins")
        if not isinstance(raw_bins, list):
            raise StatsError("sprt state: bins must be a list of [bin, count, sum]")
        for item in raw_bins:
            if (
                not isinstance(item, list)
                or len(item) != 3
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in item[:2])
                or not isinstance(item[2], int | float)
                or item[1] < 1
            ):
                raise StatsError(f"sprt state: bad bin {item!r}, expected [bin, count, sum]")
            bins[item[0]] = [float(item[1]), float(item[2])]
        units, wins, draws, losses = (_count(data, n) for n in ("units", "wins", "draws", "losses"))
        if sum(c for c, _ in bins.values()) != units:
            raise StatsError("sprt state: the bins do not hold `units` results")
        if wins + draws + losses != units:
            raise StatsError("sprt state: wins + draws + losses differ from units")
        verdict_text = data.get("verdict")
        verdict = None
        if verdict_text is not None:
            try:
                verdict = Verdict(verdict_text)
            except ValueError:
                message = f"sprt state: verdict {verdict_text!r}, expected H0, H1 or null"
                raise StatsError(message) from None
        fit_luck = data.get("fit_luck")
        if not isinstance(fit_luck, bool):
            raise StatsError(f"sprt state: fit_luck must be true or false, not {fit_luck!r}")
        state = cls(
            elo0=_number(data, "elo0"),
            elo1=_number(data, "elo1"),
            alpha=_number(data, "alpha"),
            beta=_number(data, "beta"),
            luck_scale=_number(data, "luck_scale"),
            fit_luck=fit_luck,
            units=units,
            games=_count(data, "games"),
            wins=wins,
            draws=draws,
            losses=losses,
            bins=bins,
            total=_number(data, "total"),
            total_sq=_number(data, "total_sq"),
            raw_total=_number(data, "raw_total"),
            raw_total_sq=_number(data, "raw_total_sq"),
            luck_total=_number(data, "luck_total"),
            luck_sq=_number(data, "luck_sq"),
            luck_cross=_number(data, "luck_cross"),
            llr=_number(data, "llr"),
            verdict=verdict,
        )
        Sprt.resume(state)  # checks the parameters
        return state


def _number(data: Mapping[str, Any], name: str) -> float:
    value = data.get(name)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise StatsError(f"sprt state: {name} must be a finite number, not {value!r}")
    return float(value)


def _count(data: Mapping[str, Any], name: str) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise StatsError(f"sprt state: {name} must be a whole number ≥ 0, not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Summary:
    """The report of a test so far, in the chess testers' shape."""

    units: int
    games: int
    wins: int  # units NEW won (paired result above ½, before luck correction)
    draws: int
    losses: int
    score: float  # mean counted result (luck-corrected when the units carry luck)
    raw_score: float  # mean paired result before correction
    elo: float
    elo_ci95: float  # half the width of the 95% interval, as "elo ± elo_ci95"
    elo_low: float
    elo_high: float
    los: float
    llr: float
    lower: float
    upper: float
    verdict: Verdict | None
    luck_scale: float  # the factor the next unit's luck gets (fitted or as given)
    elo0: float
    elo1: float
    alpha: float
    beta: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values; `verdict` is "H0", "H1" or None."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["verdict"] = None if self.verdict is None else self.verdict.value
        return out


class Sprt:
    """A GSPRT of H0: Elo = elo0 against H1: Elo = elo1 (logistic Elo of the paired result).

    Feed units with `add` in schedule order; it returns the verdict at the first
    unit whose LLR crosses a bound, and refuses units after that. `state` is
    what to save; `Sprt.resume(state)` continues exactly where it stood.

    A unit counts as raw − c·luck. c is `luck_scale`; with `fit_luck`, once
    FIT_AFTER units have come, c is the least-squares factor fitted on the units
    before the one being counted (clamped to FIT_RANGE), which keeps the counted
    mean equal to the raw one (spec/STATS.md, "Scaling the luck").
    """

    def __init__(
        self,
        elo0: float,
        elo1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        *,
        luck_scale: float = 1.0,
        fit_luck: bool = False,
        state: SprtState | None = None,
    ) -> None:
        for name, value in (("elo0", elo0), ("elo1", elo1)):
            if not math.isfinite(value) or abs(value) >= 1000.0:
                raise StatsError(f"{name}={value}: must be a number between -1000 and 1000")
        if elo0 >= elo1:
            raise StatsError(f"elo0={elo0}, elo1={elo1}: elo0 must be below elo1")
        if not math.isfinite(luck_scale):
            raise StatsError(f"luck_scale={luck_scale}: must be a finite number")
        self.lower, self.upper = bounds(alpha, beta)
        self.s0 = score_of_elo(elo0)
        self.s1 = score_of_elo(elo1)
        params = (elo0, elo1, alpha, beta, luck_scale, fit_luck)
        if state is None:
            state = SprtState(*params)
        elif (
            state.elo0,
            state.elo1,
            state.alpha,
            state.beta,
            state.luck_scale,
            state.fit_luck,
        ) != params:
            raise StatsError("the saved state belongs to a test with other parameters")
        self.state = state

    @classmethod
    def resume(cls, state: SprtState | Mapping[str, Any]) -> Sprt:
        """The test a saved state (or its `to_dict`) describes."""
        if not isinstance(state, SprtState):
            state = SprtState.from_dict(state)
        return cls(
            state.elo0,
            state.elo1,
            state.alpha,
            state.beta,
            luck_scale=state.luck_scale,
            fit_luck=state.fit_luck,
            state=state,
        )

    def scale(self) -> float:
        """The factor the next unit's luck gets: fitted on the units so far, or as given."""
        st = self.state
        n = st.units
        if not st.fit_luck or n < FIT_AFTER:
            return st.luck_scale
        var = st.luck_sq - st.luck_total * st.luck_total / n
        if var <= 0.0:
            return st.luck_scale
        cov = st.luck_cross - st.raw_total * st.luck_total / n
        return min(max(cov / var, FIT_RANGE[0]), FIT_RANGE[1])

    @property
    def verdict(self) -> Verdict | None:
        """The accepted hypothesis, or None while the test goes on."""
        return self.state.verdict

    def add(self, unit: Unit) -> Verdict | None:
        """Counts the next unit in schedule order; the verdict if this unit decided the test."""
        st = self.state
        if st.verdict is not None:
            raise StatsError(f"the test already accepted {st.verdict.value}; stop feeding units")
        raw = unit.raw
        luck = unit.luck
        value = raw - self.scale() * luck  # the factor comes from earlier units only
        if not (math.isfinite(value) and math.isfinite(raw) and math.isfinite(luck)):
            raise StatsError(f"unit {st.units + 1}: its result is not a finite number")
        if unit.games < 1:
            raise StatsError(f"unit {st.units + 1}: games={unit.games}, expected at least 1")
        st.units += 1
        st.games += unit.games
        if abs(raw - 0.5) <= 1e-9:
            st.draws += 1
        elif raw > 0.5:
            st.wins += 1
        else:
            st.losses += 1
        slot = st.bins.setdefault(math.floor(value * RESOLUTION + 0.5), [0.0, 0.0])
        slot[0] += 1.0
        slot[1] += value
        st.total += value
        st.total_sq += value * value
        st.raw_total += raw
        st.raw_total_sq += raw * raw
        st.luck_total += luck
        st.luck_sq += luck * luck
        st.luck_cross += raw * luck
        st.llr = llr(self.points(), self.s0, self.s1)
        if st.llr >= self.upper:
            st.verdict = Verdict.H1
        elif st.llr <= self.lower:
            st.verdict = Verdict.H0
        return st.verdict

    def points(self) -> list[tuple[float, float]]:
        """The categories as (mean value, count), regularised at the ends as the LLR sees them."""
        return regularised((s / c, c) for c, s in self.state.bins.values())

    def summary(self) -> Summary:
        """Units, games, pair results, score, Elo ± 95%, LOS, LLR, bounds and verdict."""
        st = self.state
        n = st.units
        mean = st.total / n if n else 0.5
        var = st.total_sq / n - mean * mean if n else 0.0
        low, high = interval(mean, var, n)
        elo_low, elo_high = elo_of_score(low), elo_of_score(high)
        return Summary(
            units=n,
            games=st.games,
            wins=st.wins,
            draws=st.draws,
            losses=st.losses,
            score=mean,
            raw_score=st.raw_total / n if n else 0.5,
            elo=elo_of_score(mean),
            elo_ci95=(elo_high - elo_low) / 2.0,
            elo_low=elo_low,
            elo_high=elo_high,
            los=los(mean, var, n),
            llr=st.llr,
            lower=self.lower,
            upper=self.upper,
            verdict=st.verdict,
            luck_scale=self.scale(),
            elo0=st.elo0,
            elo1=st.elo1,
            alpha=st.alpha,
            beta=st.beta,
        )


def run(sprt: Sprt, units: Iterable[Unit]) -> Verdict | None:
    """Feeds units in order until a verdict; the units after the deciding one are not read."""
    for unit in units:
        verdict = sprt.add(unit)
        if verdict is not None:
            return verdict
    return sprt.verdict


class InOrder:
    """Counts units in schedule order though their games finish in any order.

    `put(index, unit)` holds a unit until every earlier one has arrived; the
    verdict comes back from the `put` that completes the deciding unit, and
    units scheduled after it are never counted (their games are abandoned).
    Start it at `sprt.state.units` when resuming.
    """

    def __init__(self, sprt: Sprt, next_index: int | None = None) -> None:
        self.sprt = sprt
        self.next = sprt.state.units if next_index is None else next_index
        self.pending: dict[int, Unit] = {}

    def put(self, index: int, unit: Unit) -> Verdict | None:
        """Adds unit `index` (0-based in schedule order); the verdict once decided."""
        if self.sprt.verdict is not None:
            return self.sprt.verdict
        if index < self.next or index in self.pending:
            raise StatsError(f"unit {index} was already counted")
        self.pending[index] = unit
        while self.next in self.pending:
            verdict = self.sprt.add(self.pending.pop(self.next))
            self.next += 1
            if verdict is not None:
                self.pending.clear()
                return verdict
        return None
