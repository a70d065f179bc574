"""The mixture test run beside the GSPRT: a big difference is decided in a handful of units.

The GSPRT's bounds are set for the difference elo0 against elo1; when the truth
is far beyond them each unit adds little to its LLR (a clean sweep adds
log(s1/s0), 0.014 for 0 against 5 Elo: 206 units to cross 2.94). The mixture
test asks each side's question without a fixed alternative. Against H0 (the
mean paired result is s0 or less), unit i multiplies the wealth of bet k by

    1 + λₖ·(xᵢ − s0),   λₖ = (qₖ − s0) / (s0·(1 − s0))

where xᵢ ∈ [0, 1] is the unit's raw paired result and qₖ = L(elo0 + dₖ) an
alternative score. For results of 0 and 1 only this is Wald's likelihood ratio
of score qₖ against s0; for results in between it is its linear interpolation.
The statistic is the log of the mean over k of the wealths: the likelihood
ratio averaged over a prior (uniform on the dₖ) on the difference. Whatever the
distribution of the results, as long as each unit's expected result given the
units before it is at most s0, every factor has expectation at most 1 and is
positive, so the mean wealth is a nonnegative supermartingale that starts at 1,
and by Ville's inequality it ever reaches 1/a with probability at most a: the
error bound holds exactly, at every unit, with no approximation (Robbins'
method of mixtures; Waudby-Smith and Ramdas, "Estimating means of bounded random
variables by betting"). Against H1 (mean s1 or more) the factors are
1 + λₖ·(s1 − xᵢ) with qₖ = L(elo1 − dₖ).

The distances dₖ double from twice the tested difference, 2Δ, 4Δ, 8Δ, ... with
Δ = elo1 − elo0, up to the first at or beyond TOP Elo. spec/STATS.md, "The
mixture test", gives the alpha spending that joins it to the GSPRT.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .elo import score_of_elo

SHARE = 0.2  # the part of alpha and of beta the mixture test spends; the GSPRT gets the rest
TOP = 800.0  # the alternatives double until one lies at least this far from the hypothesis
TO_GO_CAP = 10**9  # no estimate of the units still needed goes beyond this


def distances(elo0: float, elo1: float) -> list[float]:
    """The mixture's alternatives, in Elo from the hypothesis tested: 2Δ, 4Δ, ... to ≥ TOP."""
    delta = elo1 - elo0
    out = [2.0 * delta]
    while out[-1] < TOP:
        out.append(2.0 * out[-1])
    return out


def bets(elo0: float, elo1: float) -> tuple[list[float], list[float]]:
    """(λ against H0, λ against H1): each side's bet per alternative, all positive.

    Against H0 the alternative scores lie above s0, against H1 below s1; every
    factor 1 + λ·(x − s0) (1 + λ·(s1 − x)) is then positive for x in [0, 1].
    """
    s0, s1 = score_of_elo(elo0), score_of_elo(elo1)
    ds = distances(elo0, elo1)
    up = [(score_of_elo(elo0 + d) - s0) / (s0 * (1.0 - s0)) for d in ds]
    down = [(s1 - score_of_elo(elo1 - d)) / (s1 * (1.0 - s1)) for d in ds]
    return up, down


def grow(wealth: list[float], lambdas: Sequence[float], excess: float) -> None:
    """Adds one unit to each bet's log wealth in place: log(1 + λ·excess), in order."""
    for k, lam in enumerate(lambdas):
        wealth[k] += math.log1p(lam * excess)


def statistic(wealth: Sequence[float]) -> float:
    """The log of the mean wealth: log((1/K)·Σₖ exp(Wₖ)), computed without overflow."""
    top = max(wealth)
    return top + math.log(sum(math.exp(w - top) for w in wealth) / len(wealth))


def to_go(wealth: Sequence[float], units: int, threshold: float) -> int | None:
    """Units still needed for the statistic to reach `threshold` if each bet's log wealth
    kept growing at its own rate so far (Wₖ / units per unit); None when none grows.

    For a sweep (every unit the same result) the rates are exact, and so is the answer.
    """
    if units <= 0 or max(wealth) <= 0.0:
        return None

    def reached(t: int) -> bool:
        scale = 1.0 + t / units
        return statistic([w * scale for w in wealth]) >= threshold

    # The projected statistic is convex in t and below the threshold at t = 0, so the
    # units at which it is reached form an interval [t*, ∞): double, then halve.
    high = 1
    while not reached(high):
        if high >= TO_GO_CAP:
            return None
        high *= 2
    low = high // 2  # not reached (or 0)
    while high - low > 1:
        mid = (low + high) // 2
        if reached(mid):
            high = mid
        else:
            low = mid
    return high
