"""The logistic Elo scale and the estimates reported with a test: Elo, its 95% interval, LOS.

An expected score s in (0, 1) is the logistic Elo difference
400·log10(s / (1 − s)), as in fishtest's `stat_util.elo` and fastchess's
`EloPentanomial`; scores are clamped to [0.001, 0.999] first (fishtest's
clamp), so the scale ends at about ±1200. The interval and LOS use the normal
approximation of the mean of independent units (spec/STATS.md, "Estimates").
"""

from __future__ import annotations

import math
from statistics import NormalDist

CLAMP = 1e-3  # fishtest clamps scores to [CLAMP, 1 - CLAMP] before taking the Elo
Z95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054


def score_of_elo(elo: float) -> float:
    """The expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference of an expected score (clamped to [0.001, 0.999])."""
    s = min(max(score, CLAMP), 1.0 - CLAMP)
    return -400.0 * math.log10(1.0 / s - 1.0)


def interval(mean: float, variance: float, n: int) -> tuple[float, float]:
    """The 95% normal interval of the mean score of `n` units with this variance per unit."""
    if n <= 0:
        return (-math.inf, math.inf)
    half = Z95 * math.sqrt(max(variance, 0.0) / n)
    return (mean - half, mean + half)


def los(mean: float, variance: float, n: int) -> float:
    """Likelihood of superiority: the normal probability that the true score exceeds ½."""
    if n <= 0:
        return 0.5
    stderr = math.sqrt(max(variance, 0.0) / n)
    if stderr == 0.0:
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return NormalDist().cdf((mean - 0.5) / stderr)
