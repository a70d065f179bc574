"""The sequential test: a GSPRT on categorised paired results, fed unit by unit in schedule order.

The model is fishtest's and fastchess's pentanomial GSPRT, generalised: unit
results are put into categories, and the log-likelihood ratio compares the
most likely category distributions whose mean is the score of elo1 and of
elo0 (van den Bergh's multinomial MLE under a mean constraint). Raw paired
results of a two-seat pair fall on 0, ¼, ½, ¾, 1 and the test is then the
pentanomial test itself; luck-corrected results are real numbers, and the
categories are fine bins that keep each bin's mean. Wald's bounds decide.

Beside it runs the mixture test (`referee.stats.mixture`), which decides a big
difference in a handful of units; the two share the error rates (alpha
spending: the GSPRT gets 1 − SHARE of α and of β, the mixture SHARE), so the
combined test keeps α and β. It stops at the first unit where either crosses a
bound, and its state is a plain dictionary so that a resumed run continues
exactly (spec/STATS.md).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from . import mixture as mix
from .elo import elo_of_score, interval, los, score_of_elo
from .score import Unit

RESOLUTION = 48  # bins per unit of score: every raw result of tables 2..8 gets a bin of its own
FIT_AFTER = 32  # units with luck before a fitted luck factor replaces the given one
FIT_RANGE = (0.0, 2.0)  # a fitted luck factor is kept within these bounds
PSEUDOCOUNT = 1e-3  # fishtest's and fastchess's regularisation of an empty end category
STATE_VERSION = 2
LEVEL = 0.95  # the confidence of the intervals and bounds reported
DECIDERS = ("llr", "mixture")  # which test crossed its bound: the GSPRT's LLR or the mixture


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
    (for the fitted luck factor). `mix_h1` and `mix_h0` hold the log wealth of
    each bet of the mixture test against H0 and against H1 (empty without it);
    `raw_low`/`raw_high` are the smallest and largest raw result (None before
    the first unit), for the bounds of a unanimous test; `decided_by` names the
    test that crossed its bound ("llr" or "mixture").
    """

    elo0: float
    elo1: float
    alpha: float
    beta: float
    luck_scale: float = 1.0
    fit_luck: bool = False
    mixture: bool = True
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
    mix_h1: list[float] = field(default_factory=list)
    mix_h0: list[float] = field(default_factory=list)
    raw_low: float | None = None
    raw_high: float | None = None
    llr: float = 0.0
    verdict: Verdict | None = None
    decided_by: str | None = None

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
            "mixture": self.mixture,
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
            "mix_h1": list(self.mix_h1),
            "mix_h0": list(self.mix_h0),
            "raw_low": self.raw_low,
            "raw_high": self.raw_high,
            "llr": self.llr,
            "verdict": None if self.verdict is None else self.verdict.value,
            "decided_by": self.decided_by,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SprtState:
        """The inverse of `to_dict`; anything malformed raises `StatsError` naming the field."""
        if data.get("version") != STATE_VERSION:
            raise StatsError(
                f"sprt state: version {data.get('version')!r}, expected {STATE_VERSION}"
            )
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
        decided_by = data.get("decided_by")
        if (decided_by is None) != (verdict is None) or (
            decided_by is not None and decided_by not in DECIDERS
        ):
            raise StatsError(
                f"sprt state: decided_by {decided_by!r}, expected 'llr' or 'mixture' with a "
                "verdict and null without"
            )
        flags = {}
        for name in ("fit_luck", "mixture"):
            flag = data.get(name)
            if not isinstance(flag, bool):
                raise StatsError(f"sprt state: {name} must be true or false, not {flag!r}")
            flags[name] = flag
        extremes = [data.get(name) for name in ("raw_low", "raw_high")]
        if units == 0:
            if extremes != [None, None]:
                raise StatsError("sprt state: raw_low and raw_high must be null before a unit")
            low = high = None
        else:
            low, high = (_number(data, name) for name in ("raw_low", "raw_high"))
        state = cls(
            elo0=_number(data, "elo0"),
            elo1=_number(data, "elo1"),
            alpha=_number(data, "alpha"),
            beta=_number(data, "beta"),
            luck_scale=_number(data, "luck_scale"),
            fit_luck=flags["fit_luck"],
            mixture=flags["mixture"],
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
            mix_h1=_numbers(data, "mix_h1"),
            mix_h0=_numbers(data, "mix_h0"),
            raw_low=low,
            raw_high=high,
            llr=_number(data, "llr"),
            verdict=verdict,
            decided_by=decided_by,
        )
        Sprt.resume(state)  # checks the parameters
        return state


def _number(data: Mapping[str, Any], name: str) -> float:
    value = data.get(name)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise StatsError(f"sprt state: {name} must be a finite number, not {value!r}")
    return float(value)


def _numbers(data: Mapping[str, Any], name: str) -> list[float]:
    values = data.get(name)
    if not isinstance(values, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        raise StatsError(f"sprt state: {name} must be a list of finite numbers, not {values!r}")
    return [float(v) for v in values]


def _count(data: Mapping[str, Any], name: str) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise StatsError(f"sprt state: {name} must be a whole number ≥ 0, not {value!r}")
    return value


def unanimous_bounds(
    kind: str, units: int, low: float, high: float, level: float = LEVEL
) -> tuple[float, float]:
    """Bounds on the expected result of units that all went one way, where the normal
    interval (zero spread) says nothing: (lower, upper), on the score scale.

    `low`/`high` are the smallest and largest raw result. "won" gives the one-sided
    lower bound low·c, cⁿ = 1 − level: it fails only if μ < low·c, that is if all n
    results exceed μ/c, and for X in [0, 1] with mean μ Markov's inequality gives
    P(X > μ/c) ≤ c, so that has probability at most cⁿ. "lost" gives the mirror
    upper bound 1 − (1 − high)·c, "drawn" both at (1 − level)/2 each. With every
    result 1 the bound is (1 − level)^(1/n), the exact binomial (Clopper-Pearson) one.
    """
    if kind == "drawn":
        c = ((1.0 - level) / 2.0) ** (1.0 / units)
        return (low * c, 1.0 - (1.0 - high) * c)
    c = (1.0 - level) ** (1.0 / units)
    if kind == "won":
        return (low * c, 1.0)
    return (0.0, 1.0 - (1.0 - high) * c)


@dataclass(frozen=True, slots=True)
class Summary:
    """The report of a test so far, in the chess testers' shape.

    The fields after `beta` have defaults, so that a report saved before they
    existed (a match's standings) still reads.
    """

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
    lower: float  # the GSPRT's bounds on `llr`
    upper: float
    verdict: Verdict | None
    luck_scale: float  # the factor the next unit's luck gets (fitted or as given)
    elo0: float
    elo1: float
    alpha: float
    beta: float
    mixture: bool = False  # whether the mixture test runs beside the GSPRT
    mixture_llr: float = 0.0  # its statistic, signed: + against H0, − against H1
    mixture_lower: float = 0.0  # its bounds on `mixture_llr`
    mixture_upper: float = 0.0
    mixture_h1: float = 0.0  # log of the mean wealth of its bets against H0 (for H1)
    mixture_h0: float = 0.0  # and against H1 (for H0)
    decided_by: str | None = None  # "llr" or "mixture" once decided
    to_go: int | None = None  # units still needed at the current rates (None: no trend)
    to_go_by: str | None = None  # the test that estimate is for
    unanimous: str | None = None  # "won", "lost" or "drawn" when every unit went so

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values; `verdict` is "H0", "H1" or None."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["verdict"] = None if self.verdict is None else self.verdict.value
        return out


class Sprt:
    """A GSPRT of H0: Elo = elo0 against H1: Elo = elo1 (logistic Elo of the paired
    result), with the mixture test beside it (`mixture=False`: the GSPRT alone, with
    Wald's bounds of α and β themselves).

    Feed units with `add` in schedule order; it returns the verdict at the first
    unit where the LLR or the mixture statistic crosses a bound, and refuses
    units after that. `state` is what to save; `Sprt.resume(state)` continues
    exactly where it stood.

    A unit counts as raw − c·luck. c is `luck_scale`; with `fit_luck`, once
    FIT_AFTER units have come, c is the least-squares factor fitted on the units
    before the one being counted (clamped to FIT_RANGE), which keeps the counted
    mean equal to the raw one (spec/STATS.md, "Scaling the luck"). The mixture
    test counts the raw result, which must lie in [0, 1].
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
        mixture: bool = True,
        state: SprtState | None = None,
    ) -> None:
        for name, value in (("elo0", elo0), ("elo1", elo1)):
            if not math.isfinite(value) or abs(value) >= 1000.0:
                raise StatsError(f"{name}={value}: must be a number between -1000 and 1000")
        if elo0 >= elo1:
            raise StatsError(f"elo0={elo0}, elo1={elo1}: elo0 must be below elo1")
        if not math.isfinite(luck_scale):
            raise StatsError(f"luck_scale={luck_scale}: must be a finite number")
        check_errors(alpha, beta)
        share = mix.SHARE if mixture else 0.0
        self.lower, self.upper = bounds(alpha * (1.0 - share), beta * (1.0 - share))
        if mixture:
            self.mix_lower = math.log(share * beta)
            self.mix_upper = -math.log(share * alpha)
            self.bets_h1, self.bets_h0 = mix.bets(elo0, elo1)
        else:
            self.mix_lower = self.mix_upper = 0.0
            self.bets_h1 = self.bets_h0 = []
        self.s0 = score_of_elo(elo0)
        self.s1 = score_of_elo(elo1)
        params = (elo0, elo1, alpha, beta, luck_scale, fit_luck, mixture)
        if state is None:
            state = SprtState(*params)
            state.mix_h1 = [0.0] * len(self.bets_h1)
            state.mix_h0 = [0.0] * len(self.bets_h0)
        elif (
            state.elo0,
            state.elo1,
            state.alpha,
            state.beta,
            state.luck_scale,
            state.fit_luck,
            state.mixture,
        ) != params:
            raise StatsError("the saved state belongs to a test with other parameters")
        elif (len(state.mix_h1), len(state.mix_h0)) != (len(self.bets_h1), len(self.bets_h0)):
            raise StatsError("the saved state's mixture bets do not fit its hypotheses")
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
            mixture=state.mixture,
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

    def mixture_llr(self) -> float:
        """The mixture test's statistic: the log mean wealth of the side that has more,
        + against H0 and − against H1, and 0 while neither has gained."""
        st = self.state
        if not st.mixture:
            return 0.0
        h1, h0 = mix.statistic(st.mix_h1), mix.statistic(st.mix_h0)
        return max(h1, 0.0) if h1 >= h0 else -max(h0, 0.0)

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
        if st.mixture and not 0.0 <= raw <= 1.0:
            raise StatsError(
                f"unit {st.units + 1}: paired result {raw} is outside [0, 1], "
                "which the mixture test needs"
            )
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
        st.raw_low = raw if st.raw_low is None else min(st.raw_low, raw)
        st.raw_high = raw if st.raw_high is None else max(st.raw_high, raw)
        mix.grow(st.mix_h1, self.bets_h1, raw - self.s0)
        mix.grow(st.mix_h0, self.bets_h0, self.s1 - raw)
        st.llr = llr(self.points(), self.s0, self.s1)
        mixed = self.mixture_llr()
        if st.llr >= self.upper:
            st.verdict, st.decided_by = Verdict.H1, "llr"
        elif st.llr <= self.lower:
            st.verdict, st.decided_by = Verdict.H0, "llr"
        elif st.mixture and mixed >= self.mix_upper:
            st.verdict, st.decided_by = Verdict.H1, "mixture"
        elif st.mixture and mixed <= self.mix_lower:
            st.verdict, st.decided_by = Verdict.H0, "mixture"
        return st.verdict

    def points(self) -> list[tuple[float, float]]:
        """The categories as (mean value, count), regularised at the ends as the LLR sees them."""
        return regularised((s / c, c) for c, s in self.state.bins.values())

    def unanimous(self) -> str | None:
        """ "won", "lost" or "drawn" when every unit so far went that way (None before one)."""
        st = self.state
        if st.units == 0:
            return None
        for kind, count in (("won", st.wins), ("lost", st.losses), ("drawn", st.draws)):
            if count == st.units:
                return kind
        return None

    def to_go(self) -> tuple[int | None, str | None]:
        """Units still needed, at the current rates, for the first bound to be crossed, and
        the test ("llr" or "mixture") it would be; (None, None) when decided or no trend.

        The LLR's rate is LLR / units toward the bound on its side; the mixture's, each
        bet's own log wealth per unit (`referee.stats.mixture.to_go`).
        """
        st = self.state
        n = st.units
        if st.verdict is not None or n == 0:
            return (None, None)
        found: list[tuple[int, str]] = []
        if st.llr != 0.0:
            bound = self.upper if st.llr > 0.0 else self.lower
            needed = (bound - st.llr) / (st.llr / n)
            if needed <= mix.TO_GO_CAP:
                found.append((max(1, math.ceil(needed)), "llr"))
        if st.mixture:
            for wealth, threshold in ((st.mix_h1, self.mix_upper), (st.mix_h0, -self.mix_lower)):
                t = mix.to_go(wealth, n, threshold)
                if t is not None:
                    found.append((t, "mixture"))
        if not found:
            return (None, None)
        t, by = min(found)
        return (t, by)

    def summary(self) -> Summary:
        """Units, games, pair results, score, Elo ± 95%, LOS, both tests' statistics and
        bounds, the verdict, and the units still needed at the current rates.

        When every unit was won (lost, drawn) the normal interval has no spread; the
        Elo bounds are then `unanimous_bounds` of the raw results."""
        st = self.state
        n = st.units
        mean = st.total / n if n else 0.5
        var = st.total_sq / n - mean * mean if n else 0.0
        kind = self.unanimous()
        if kind is not None and st.raw_low is not None and st.raw_high is not None:
            low, high = unanimous_bounds(kind, n, st.raw_low, st.raw_high)
        else:
            low, high = interval(mean, var, n)
        elo_low, elo_high = elo_of_score(low), elo_of_score(high)
        to_go, to_go_by = self.to_go()
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
            mixture=st.mixture,
            mixture_llr=self.mixture_llr(),
            mixture_lower=self.mix_lower,
            mixture_upper=self.mix_upper,
            mixture_h1=mix.statistic(st.mix_h1) if st.mixture else 0.0,
            mixture_h0=mix.statistic(st.mix_h0) if st.mixture else 0.0,
            decided_by=st.decided_by,
            to_go=to_go,
            to_go_by=to_go_by,
            unanimous=kind,
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
