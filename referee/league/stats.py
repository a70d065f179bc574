"""Student's t distribution from the standard library: its CDF and its quantile.

The standings' interval of mean points is computed over a handful of duplicate
units per bot, where the normal quantile (1.96) is far too small: with two units
the right factor is 12.71. scipy would be a heavy dependency for one number, so
the quantile is found here by inverting the CDF, which is the regularized
incomplete beta function evaluated by its continued fraction (Numerical
Recipes, 6.4; Lentz's method). Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import math

_TINY = 1e-300  # keeps Lentz's method away from a division by zero
_EPS = 1e-15


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), which converges fast for x < (a+1)/(a+b+2)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The fraction converges on one side of the mean; the symmetry I_x(a,b) = 1 - I_1-x(b,a)
    # covers the other.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    t2 = t * t
    if t2 < df:
        # Near the centre df / (df + t^2) rounds towards 1 and loses the digits that
        # matter; the same probability from t^2 / (df + t^2) keeps them.
        centre = 0.5 * incomplete_beta(0.5, df / 2.0, t2 / (df + t2))  # P(0 < T <= |t|)
        return 0.5 + centre if t >= 0 else 0.5 - centre
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t2))  # P(T > |t|)
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p for Student's t with `df` degrees of freedom.

    Bisection on the CDF to within a few units of the last place: slow next to a
    closed form, but the standings ask for a few values of df, and those are cached."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, not {p}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:  # the quantile lies below the first power of 2 past it
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):  # no float left between them
            break
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0
