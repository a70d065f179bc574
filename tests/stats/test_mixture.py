"""The mixture test beside the GSPRT: its statistic against direct computations, its
error bound under H0, the sweep it stops in a handful of units, the bounds shown when
every unit went one way, and the units-to-go estimate."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.stats import (
    Sprt,
    SprtState,
    StatsError,
    Unit,
    Verdict,
    elo_of_score,
    run,
    score_of_elo,
    unanimous_bounds,
)
from referee.stats.mixture import SHARE, bets, distances, grow, statistic, to_go

PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)


def _unit(x: float) -> Unit:
    """A unit whose raw paired result is exactly x (NEW scored x, BASE 1 − x)."""
    return Unit(new=x, base=1.0 - x)


def _direct(xs: list[float], elo0: float, elo1: float) -> tuple[float, float]:
    """log of the mean over the bets of the plain product of factors, each side."""
    s0, s1 = score_of_elo(elo0), score_of_elo(elo1)
    up, down = bets(elo0, elo1)
    h1 = [math.prod(1.0 + lam * (x - s0) for x in xs) for lam in up]
    h0 = [math.prod(1.0 + lam * (s1 - x) for x in xs) for lam in down]
    return math.log(sum(h1) / len(h1)), math.log(sum(h0) / len(h0))


def test_the_alternatives_double_from_twice_the_tested_difference() -> None:
    assert distances(0, 5) == [10, 20, 40, 80, 160, 320, 640, 1280]
    assert distances(-1, 1) == [4 * 2**k for k in range(9)]  # 4 ... 1024
    assert distances(0, 500) == [1000]  # one alternative, already beyond 800
    up, down = bets(0, 5)
    s0, s1 = score_of_elo(0), score_of_elo(5)
    # A bet is Wald's ratio of its alternative q at a win: 1 + λ(1 − s0) = q / s0.
    assert 1 + up[0] * (1 - s0) == pytest.approx(score_of_elo(10) / s0, rel=1e-12)
    assert 1 + down[-1] * s1 == pytest.approx((1 - score_of_elo(5 - 1280)) / (1 - s1))
    assert all(lam > 0 for lam in up + down) and up == sorted(up)


@given(
    st.lists(st.sampled_from(PENTANOMIAL) | st.floats(0.0, 1.0), min_size=1, max_size=40),
    st.floats(-300.0, 300.0),
    st.floats(0.5, 200.0),
)
def test_the_statistic_is_the_mean_likelihood_ratio_computed_directly(
    xs: list[float], elo0: float, width: float
) -> None:
    # Tiny error rates, so it mostly goes on to the end; a run extreme enough to reach
    # even those bounds (twelve losses at elo0 = 248) stops there, and the statistic is
    # then that of the units it took.
    sprt = Sprt(elo0, elo0 + width, 1e-9, 1e-9)
    fed: list[float] = []
    for x in xs:
        fed.append(x)
        if sprt.add(_unit(x)) is not None:
            break
    summary = sprt.summary()
    h1, h0 = _direct(fed, elo0, elo0 + width)
    assert summary.mixture_h1 == pytest.approx(h1, rel=1e-9, abs=1e-9)
    assert summary.mixture_h0 == pytest.approx(h0, rel=1e-9, abs=1e-9)
    side = max(h1, 0.0) if h1 >= h0 else -max(h0, 0.0)
    assert summary.mixture_llr == pytest.approx(side, rel=1e-9, abs=1e-9)


def test_with_wins_and_losses_only_it_averages_walds_binomial_ratios() -> None:
    wins, losses = 14, 3
    sprt = Sprt(0, 5, 1e-9, 1e-9)
    for x in [1.0] * wins + [0.0] * losses:
        sprt.add(_unit(x))
    s0 = score_of_elo(0)
    ratios = [
        (q / s0) ** wins * ((1 - q) / (1 - s0)) ** losses
        for q in (score_of_elo(d) for d in distances(0, 5))
    ]
    assert sprt.summary().mixture_h1 == pytest.approx(math.log(sum(ratios) / len(ratios)))


@given(
    st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.01, 1.0)), min_size=1, max_size=6),
    st.floats(-900.0, 900.0),
    st.floats(0.5, 90.0),
)
def test_every_factor_is_positive_and_fair_or_worse_under_its_null(
    support: list[tuple[float, float]], elo0: float, width: float
) -> None:
    # Any distribution on [0, 1] whose mean is at most s0 (against H0), or at least s1
    # (against H1): each bet's factor has expectation at most 1, so the mean wealth is
    # a nonnegative supermartingale and Ville's inequality bounds its error.
    elo1 = elo0 + width
    s0, s1 = score_of_elo(elo0), score_of_elo(elo1)
    up, down = bets(elo0, elo1)
    total = sum(w for _, w in support)
    mean = sum(a * w for a, w in support) / total
    for target, lambdas, sign in ((s0, up, 1.0), (s1, down, -1.0)):
        # Mix in mass at 0 (against H0) or 1 (against H1) until the mean is on the null.
        end = 0.0 if sign > 0 else 1.0
        beyond = sign * (mean - target) > 0
        share = (mean - target) / (mean - end) if beyond else 0.0
        points = [(a, (1 - share) * w / total) for a, w in support] + [(end, share)]
        assert sign * (sum(a * p for a, p in points) - target) <= 1e-12
        for lam in lambdas:
            expected = sum(p * (1 + lam * sign * (a - target)) for a, p in points)
            assert expected <= 1 + 1e-9
            assert min(1 + lam * sign * (a - target) for a in (0.0, 1.0)) > 0


@given(
    st.lists(st.sampled_from(PENTANOMIAL), min_size=1, max_size=30),
    st.integers(0, 29),
    st.sampled_from(PENTANOMIAL[1:]),
)
def test_a_better_result_moves_the_statistic_toward_h1(
    xs: list[float], where: int, more: float
) -> None:
    where %= len(xs)
    better = list(xs)
    better[where] = min(1.0, better[where] + more)
    if better[where] == xs[where]:
        return
    h1, h0 = _direct(xs, 0, 5)
    b1, b0 = _direct(better, 0, 5)
    assert b1 > h1 and b0 < h0


@pytest.mark.parametrize(("elo0", "elo1"), [(0, 5), (0, 1), (-10, 10), (0, 20), (5, 10), (-3, 1)])
def test_a_clean_sweep_stops_within_a_handful_of_units(elo0: float, elo1: float) -> None:
    for x, verdict in ((1.0, Verdict.H1), (0.0, Verdict.H0)):
        sprt = Sprt(elo0, elo1)
        assert run(sprt, (_unit(x) for _ in range(10_000))) is verdict
        assert sprt.state.decided_by == "mixture" and sprt.state.units <= 10
    # The GSPRT alone needs a couple of hundred straight wins for 0 against 5.
    plain = Sprt(0, 5, mixture=False)
    assert run(plain, (_unit(1.0) for _ in range(10_000))) is Verdict.H1
    assert plain.state.units > 200


def test_the_units_still_needed_are_exact_for_a_sweep() -> None:
    sprt = Sprt(0, 5)
    estimates = []
    while sprt.add(_unit(1.0)) is None:
        summary = sprt.summary()
        estimates.append((summary.units, summary.to_go, summary.to_go_by))
    stop = sprt.state.units
    assert stop == 9
    assert estimates == [(k, stop - k, "mixture") for k in range(1, stop)]
    assert sprt.summary().to_go is None  # decided


def test_the_units_still_needed_follow_the_llr_where_it_is_nearer() -> None:
    # Hypotheses far apart: the LLR's steps are large, and its projection wins.
    sprt = Sprt(-200, 200)
    sprt.add(_unit(0.75))
    summary = sprt.summary()
    rate = summary.llr / summary.units
    assert summary.to_go_by == "llr"
    assert summary.to_go == math.ceil((summary.upper - summary.llr) / rate)
    assert to_go([0.0, -1.0], 3, 4.0) is None  # no bet has gained: no trend
    wealth = [0.5, 2.0]
    grow(wealth, [0.0, 0.0], 1.0)
    assert wealth == [0.5, 2.0] and statistic(wealth) == pytest.approx(
        math.log((math.exp(0.5) + math.exp(2.0)) / 2)
    )


def _h0_runs(draw: list[float], weights: list[float], runs: int, units: int) -> int:
    """Runs, out of `runs` of `units` results drawn with mean exactly ½ = s0, in which
    the mixture's statistic against H0 ever reached its bound (0 against 5 Elo)."""
    s0 = score_of_elo(0)
    up, _ = bets(0, 5)
    bound = -math.log(SHARE * 0.05)
    rng = random.Random(20240624)
    crossed = 0
    for _ in range(runs):
        wealth = [0.0] * len(up)
        for x in rng.choices(draw, weights, k=units):
            grow(wealth, up, x - s0)
            if statistic(wealth) >= bound:
                crossed += 1
                break
    return crossed


def test_under_exact_h0_the_mixture_claims_h1_rarely() -> None:
    # Its bound is 1/(SHARE·α) = 100: the chance that a run ever crosses is at most 1%,
    # whatever the distribution. Wins and losses only and a pentanomial, both with mean
    # exactly ½; seeded, so the counts are fixed: 1% of 300 runs is 3, and three
    # standard errors above it 8.
    coin = _h0_runs([0.0, 1.0], [1, 1], 300, 1000)
    penta = _h0_runs(list(PENTANOMIAL), [1, 4, 10, 4, 1], 300, 1000)
    assert coin <= 8 and penta <= 8, (coin, penta)


def test_under_exact_h0_the_combined_test_keeps_alpha() -> None:
    # The whole test (GSPRT at 4/5 of α, mixture at 1/5) on results of mean exactly s0,
    # with hypotheses far enough apart that each run decides in a few dozen units.
    rng = random.Random(7)
    h1 = by_mixture = 0
    runs = 400
    for _ in range(runs):
        sprt = Sprt(0, 100)
        verdict = run(sprt, (_unit(x) for x in rng.choices(PENTANOMIAL, [1, 4, 10, 4, 1], k=5000)))
        assert verdict is not None
        if verdict is Verdict.H1:
            h1 += 1
            by_mixture += sprt.state.decided_by == "mixture"
    # α = 5%: 20 of 400 at most, 33 three standard errors above; the mixture's own 1%:
    # 4 of 400, 10 three standard errors above.
    assert h1 <= 33 and by_mixture <= 10, (h1, by_mixture)


def test_every_unit_won_gives_a_one_sided_bound_not_plus_or_minus_zero() -> None:
    sprt = Sprt(0, 5)
    sprt.add(_unit(1.0))
    one = sprt.summary()
    assert one.unanimous == "won"
    assert one.elo_low == pytest.approx(elo_of_score(0.05))  # P(1 win) = μ: μ ≥ 0.05
    assert one.elo_high == pytest.approx(elo_of_score(1.0)) and one.elo_ci95 > 500
    for x in (0.75, 1.0, 0.75):
        sprt.add(_unit(x))
    four = sprt.summary()
    assert four.elo_low == pytest.approx(elo_of_score(0.75 * 0.05 ** (1 / 4)))
    sprt.add(_unit(0.5))
    assert sprt.summary().unanimous is None  # a draw: the normal interval again
    lost = Sprt(0, 5)
    for x in (0.0, 0.25):
        lost.add(_unit(x))
    summary = lost.summary()
    assert summary.unanimous == "lost"
    assert summary.elo_high == pytest.approx(elo_of_score(1 - 0.75 * 0.05**0.5))
    drawn = Sprt(0, 5)
    for _ in range(3):
        drawn.add(_unit(0.5))
    summary = drawn.summary()
    c = 0.025 ** (1 / 3)
    assert summary.unanimous == "drawn"
    assert (summary.elo_low, summary.elo_high) == pytest.approx(
        (elo_of_score(0.5 * c), elo_of_score(1 - 0.5 * c))
    )


@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_the_unanimous_bound_is_exact_for_the_worst_distribution(n: int) -> None:
    # Results 1 with probability μ and 0 otherwise: n straight wins have probability
    # μⁿ, which is 5% at the bound itself, so the bound cannot be raised.
    low, high = unanimous_bounds("won", n, 1.0, 1.0)
    assert high == 1.0 and low**n == pytest.approx(0.05)
    low, high = unanimous_bounds("lost", n, 0.0, 0.0)
    assert low == 0.0 and (1 - high) ** n == pytest.approx(0.05)


def test_the_mixture_needs_raw_results_in_zero_to_one() -> None:
    with pytest.raises(StatsError, match=r"outside \[0, 1\]"):
        Sprt(0, 5).add(Unit(new=1.0, base=-0.5))
    Sprt(0, 5, mixture=False).add(Unit(new=1.0, base=-0.5))  # the GSPRT alone takes it


def test_a_saved_mixture_resumes_and_a_bad_one_is_refused() -> None:
    rng = random.Random(3)
    units = [_unit(rng.choice(PENTANOMIAL)) for _ in range(4000)]
    whole = Sprt(0, 30)
    verdict = run(whole, units)
    assert verdict is not None
    for cut in (1, whole.state.units // 2):
        first = Sprt(0, 30)
        run(first, units[:cut])
        resumed = Sprt.resume(json.loads(json.dumps(first.state.to_dict())))
        assert run(resumed, units[cut:]) is verdict
        assert resumed.state.to_dict() == whole.state.to_dict()
    good = whole.state.to_dict()
    with pytest.raises(StatsError, match="version 1, expected 2"):
        Sprt.resume({**good, "version": 1})
    with pytest.raises(StatsError, match="mixture bets do not fit"):
        Sprt.resume({**good, "mix_h1": good["mix_h1"][:-1]})
    with pytest.raises(StatsError, match="mix_h0 must be a list"):
        Sprt.resume({**good, "mix_h0": "rich"})
    with pytest.raises(StatsError, match="decided_by"):
        Sprt.resume({**good, "decided_by": None})
    with pytest.raises(StatsError, match="raw_low and raw_high must be null"):
        Sprt.resume({**Sprt(0, 30).state.to_dict(), "raw_low": 0.5})
    with pytest.raises(StatsError, match="other parameters"):
        Sprt(0, 30, mixture=False, state=SprtState.from_dict(good))


def test_the_llr_is_the_same_with_or_without_the_mixture() -> None:
    # The mixture changes the GSPRT's bounds, never its statistic: the bench reads the
    # GSPRT-alone verdict off the combined test's LLR.
    rng = random.Random(11)
    both, alone = Sprt(0, 5), Sprt(0, 5, mixture=False)
    for _ in range(3000):
        unit = _unit(rng.choices(PENTANOMIAL, [2, 5, 10, 5, 2])[0])
        both.add(unit)
        alone.add(unit)
        assert both.state.llr == alone.state.llr
        if both.verdict is not None or alone.verdict is not None:
            break
    assert alone.summary().lower == pytest.approx(math.log(0.05 / 0.95))
