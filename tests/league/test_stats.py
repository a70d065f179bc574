"""Student's t quantile from the standard library, against published values, closed
forms and its own CDF; and the standings' interval that uses it.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from referee.league.standings import compute
from referee.league.stats import incomplete_beta, t_cdf, t_quantile
from tests.league.test_standings import rec

# Two-sided 95% (p = 0.975) and 99% (p = 0.995) critical values, as printed in t tables.
TABLE = [
    (0.975, 1, 12.706),
    (0.975, 2, 4.303),
    (0.975, 3, 3.182),
    (0.975, 5, 2.571),
    (0.975, 10, 2.228),
    (0.975, 30, 2.042),
    (0.975, 120, 1.980),
    (0.995, 1, 63.657),
    (0.995, 5, 4.032),
    (0.995, 30, 2.750),
    (0.95, 7, 1.895),
]


@pytest.mark.parametrize(("p", "df", "value"), TABLE)
def test_the_quantile_matches_printed_tables(p: float, df: int, value: float) -> None:
    assert t_quantile(p, df) == pytest.approx(value, abs=5e-4)


def test_closed_forms_and_the_normal_limit() -> None:
    # df = 1 is Cauchy: tan(pi (p - 1/2)); df = 2: (2p - 1) / sqrt(2 p (1 - p)).
    for p in (0.6, 0.9, 0.975, 0.9995):
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)
        assert t_quantile(p, 2) == pytest.approx(
            (2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12
        )
    # Many degrees of freedom: the normal quantile, 1.959964.
    assert t_quantile(0.975, 10**7) == pytest.approx(1.959964, abs=1e-5)
    assert t_quantile(0.5, 4) == 0.0
    assert t_quantile(0.025, 5) == -t_quantile(0.975, 5)


def test_the_incomplete_beta_at_known_points() -> None:
    assert incomplete_beta(1, 1, 0.3) == pytest.approx(0.3)  # uniform
    assert incomplete_beta(2, 3, 0.4) == pytest.approx(0.5248)  # 1 - binomial(4, 0.4) <= 1
    assert incomplete_beta(0.5, 0.5, 0.5) == pytest.approx(0.5)
    assert (incomplete_beta(3, 2, 0.0), incomplete_beta(3, 2, 1.0)) == (0.0, 1.0)


@given(
    p=st.floats(min_value=0.001, max_value=0.999),
    df=st.one_of(st.integers(min_value=1, max_value=500), st.floats(min_value=0.5, max_value=1e4)),
)
@example(p=0.5000000000000001, df=0.5)  # near the centre, where df / (df + t^2) rounds to 1
def test_the_quantile_inverts_the_cdf(p: float, df: float) -> None:
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-9)


def test_bad_arguments_are_refused() -> None:
    for p in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="strictly between"):
            t_quantile(p, 3)
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile(0.9, 0)


def test_six_units_use_five_degrees_of_freedom() -> None:
    # One bot's unit means 0, 10, ..., 50: standard deviation sqrt(350), six units.
    records = [rec(u, ["a", "b"], [10 * u, 0], [2 if u else 1, 1], unit=u) for u in range(6)]
    a = next(b for b in compute(["a", "b"], records).bots if b.name == "a")
    assert a.ci95 == pytest.approx(2.5706 * math.sqrt(350 / 6), rel=1e-4)
