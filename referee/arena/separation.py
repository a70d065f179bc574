"""Has the final separated every adjacent pair of its ranking? Paired results and repeated looks.

The final is a duplicate round-robin: a unit is one deal played under every
rotation of the seats of one table, and it gives, for every pair of bots at
the table, a paired result in [0, 1] (`pair_units`): the mean over the unit's
games of 1 if the first ranked ahead of the second, ½ if they tied, 0 if
behind. ½ is even.

`Separation` collects the units and looks after each round. At look j, for
each adjacent pair of the ranking it is given, the interval of the pair's mean
unit result is mean ± t·s/√n at the two-sided level 1 − α_j, clipped to
[0, 1]: s is the sample standard deviation of the n unit results and t the
Student-t quantile at n − 1 degrees of freedom (`t_quantile`: exact, from the
incomplete beta function, up to 1e5 degrees of freedom; the Cornish-Fisher
expansion beyond). The pair is separated when n ≥ `min_units` and the interval
lies above ½, so n results all on one side count once there are `min_units` of
them, and n results all ½ never do.

The error is spent over looks: α_j = (1 − confidence)·6/(π²j²), and the α_j
sum to 1 − confidence, so an even pair is ever separated, in either order and
by a ranking chosen from the data, with a chance of at most 1 − confidence (as
far as the t interval is right for n unit results). That bound is for each
pair, not for all pairs of a ranking at once. A separation, once found, is
kept for the later looks that rank the pair the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from statistics import NormalDist

MAX_SEATS = 8
CORNISH_FISHER = 1e5  # beyond these degrees of freedom, t quantiles are Cornish-Fisher's


@dataclass(frozen=True)
class PairResult:
    """One adjacent pair of a ranking at one look."""

    ahead: str  # the bot placed higher in the ranking given
    behind: str
    units: int
    mean: float  # mean paired result of `ahead` over `behind` (0.5 = even)
    low: float  # the interval of the mean at this look's level, within [0, 1]
    high: float
    separated: bool  # `ahead` is ahead at the family-wise level (now, or at an earlier look)


def pair_units(unit_ranks: Sequence[Sequence[tuple[str, int]]]) -> dict[tuple[str, str], float]:
    """The paired results of one unit: {(a, b): result of a over b} for a < b by name.

    The unit is its games, each a sequence of (bot, rank), rank 1 best; every game
    must seat the same 2 to 8 bots (`ValueError` otherwise).
    """
    if not unit_ranks:
        raise ValueError("a unit has at least one game")
    bots: list[str] | None = None
    totals: dict[tuple[str, str], float] = {}
    for game in unit_ranks:
        ranks = dict(game)
        if len(ranks) != len(game):
            raise ValueError(f"a bot holds two seats of one game: {list(game)!r}")
        if not 2 <= len(ranks) <= MAX_SEATS:
            raise ValueError(f"a game has 2 to {MAX_SEATS} seats, not {len(ranks)}")
        if bots is None:
            bots = sorted(ranks)
            totals = {(a, b): 0.0 for i, a in enumerate(bots) for b in bots[i + 1 :]}
        elif sorted(ranks) != bots:
            raise ValueError(f"the games of a unit seat different bots: {bots} and {sorted(ranks)}")
        for a, b in totals:
            if ranks[a] < ranks[b]:
                totals[a, b] += 1.0
            elif ranks[a] == ranks[b]:
                totals[a, b] += 0.5
    return {pair: total / len(unit_ranks) for pair, total in totals.items()}


def look_alpha(look: int, confidence: float = 0.95) -> float:
    """The error spent at look `look` (1, 2, ...): (1 − confidence)·6/(π²·look²)."""
    if look < 1:
        raise ValueError(f"looks are counted from 1, not {look}")
    return (1.0 - confidence) * 6.0 / (math.pi**2 * look**2)


@dataclass
class _Tally:
    """The unit results of one pair, as the first bot's (by name) over the second's."""

    units: int = 0
    mean: float = 0.0
    squares: float = 0.0  # Σ (x − mean)², kept by Welford's update

    def add(self, x: float) -> None:
        self.units += 1
        delta = x - self.mean
        self.mean += delta / self.units
        self.squares += delta * (x - self.mean)


class Separation:
    """The unit results of a final so far, and its looks (see the module's docstring)."""

    def __init__(self, confidence: float = 0.95, min_units: int = 6) -> None:
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence is between 0 and 1, not {confidence!r}")
        if min_units < 2:
            raise ValueError(f"min_units is at least 2, not {min_units!r}")
        self.confidence = confidence
        self.min_units = min_units
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._separated: set[tuple[str, str]] = set()  # (ahead, behind), once found
        self._looks = 0

    @property
    def looks(self) -> int:
        """How many looks have been taken."""
        return self._looks

    def add(self, results: Mapping[tuple[str, str], float]) -> None:
        """Add one unit's pair results (as `pair_units` gives them; (b, a) is read as 1 − x).

        Raises `ValueError`, adding nothing, for a result outside [0, 1], a pair of
        one bot, or a pair given twice.
        """
        ordered: dict[tuple[str, str], float] = {}
        for (a, b), x in results.items():
            if a == b:
                raise ValueError(f"a pair of two bots, not {a!r} twice")
            if not 0.0 <= x <= 1.0:
                raise ValueError(f"a paired result is within [0, 1], not {x!r}")
            key, value = ((a, b), x) if a < b else ((b, a), 1.0 - x)
            if key in ordered:
                raise ValueError(f"the pair {key} is given twice in one unit")
            ordered[key] = value
        for key, value in ordered.items():
            self._tallies.setdefault(key, _Tally()).add(value)

    def look(self, ranking: Sequence[str]) -> list[PairResult]:
        """One look: each adjacent pair of `ranking` (best first), at the next look's level."""
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"a ranking names each bot once: {list(ranking)!r}")
        self._looks += 1
        alpha = look_alpha(self._looks, self.confidence)
        out: list[PairResult] = []
        for ahead, behind in pairwise(ranking):
            tally = self._tallies.get((min(ahead, behind), max(ahead, behind)), _Tally())
            n = tally.units
            mean = tally.mean if ahead < behind else 1.0 - tally.mean
            if n == 0:
                mean = 0.5
            low, high = 0.0, 1.0
            if n >= 2:
                half = t_quantile(1.0 - alpha / 2.0, n - 1) * math.sqrt(tally.squares / (n - 1) / n)
                low, high = max(0.0, mean - half), min(1.0, mean + half)
            if n >= self.min_units and low > 0.5:
                self._separated.add((ahead, behind))
            separated = (ahead, behind) in self._separated
            out.append(PairResult(ahead, behind, n, mean, low, high, separated))
        return out


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t distribution with `df` degrees of freedom.

    Up to `CORNISH_FISHER` degrees of freedom, solves P(|T| > t) =
    I_{df/(df+t²)}(df/2, ½) = 2(1 − p) for t by Newton's method kept within a
    bracket, with the regularised incomplete beta function I from its continued
    fraction (Numerical Recipes, §6.4); beyond, the Cornish-Fisher expansion to
    1/df⁴. Accurate to about 1e-10 relative or better, far into the tails.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p is between 0 and 1, not {p!r}")
    if not df > 0.0:
        raise ValueError(f"df is positive, not {df!r}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    tail = 2.0 * (1.0 - p)
    # |T| is stochastically larger than |Z|: the normal quantile is a lower bound.
    low = NormalDist().inv_cdf(p)
    if df > CORNISH_FISHER:
        return _cornish_fisher(low, df)
    high = 2.0 * low if low > 0.0 else 1.0
    while _two_sided_tail(high, df) > tail:
        low, high = high, 2.0 * high
    log_density = (
        math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    )
    t = (low + high) / 2.0
    for _ in range(200):
        excess = _two_sided_tail(t, df) - tail
        if excess > 0.0:
            low = t
        else:
            high = t
        density = math.exp(log_density - (df + 1.0) / 2.0 * math.log1p(t * t / df))
        step = excess / (2.0 * density) if density > 0.0 else math.inf
        guess = t + step
        if not low < guess < high:
            guess = (low + high) / 2.0
        if abs(guess - t) <= 1e-14 * t or high - low <= 1e-14 * high:
            return guess
        t = guess
    return t


def _two_sided_tail(t: float, df: float) -> float:
    """P(|T| > t) for t ≥ 0."""
    return _incomplete_beta(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))


def _incomplete_beta(a: float, b: float, x: float, y: float) -> float:
    """The regularised incomplete beta function I_x(a, b), given y = 1 − x as well."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, y) / b


def _cornish_fisher(z: float, df: float) -> float:
    """The t quantile from the normal one, z, by Cornish and Fisher's expansion in 1/df
    (Abramowitz and Stegun 26.7.5)."""
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), by the modified Lentz method."""
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h
