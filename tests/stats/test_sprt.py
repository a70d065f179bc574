"""The sequential test: Wald's bounds, the LLR against hand computations, exact stopping, resume."""

from __future__ import annotations

import json
import math
import random
import re

import pytest

from referee.stats import (
    InOrder,
    Sprt,
    StatsError,
    Unit,
    Verdict,
    bounds,
    llr,
    mle,
    regularised,
    run,
    score_of_elo,
    single_game,
)


def test_bounds_are_walds() -> None:
    assert bounds(0.05, 0.05) == (math.log(0.05 / 0.95), math.log(0.95 / 0.05))
    lower, upper = bounds(0.05, 0.05)
    assert round(lower, 2) == -2.94 and round(upper, 2) == 2.94  # fastchess's "-2.94, 2.94"
    lower, upper = bounds(0.05, 0.10)
    assert lower == pytest.approx(-2.251291799)  # log(0.10 / 0.95)
    assert upper == pytest.approx(2.890371758)  # log(0.90 / 0.05)
    sprt = Sprt(0, 5, 0.01, 0.2, mixture=False)
    assert (sprt.lower, sprt.upper) == (math.log(0.2 / 0.99), math.log(0.8 / 0.01))
    # With the mixture beside it the GSPRT spends 4/5 of each error rate, the mixture 1/5.
    sprt = Sprt(0, 5, 0.01, 0.2)
    assert (sprt.lower, sprt.upper) == pytest.approx(bounds(0.008, 0.16))
    assert (sprt.mix_lower, sprt.mix_upper) == pytest.approx((math.log(0.04), -math.log(0.002)))


@pytest.mark.parametrize(
    ("alpha", "beta", "words"),
    [(0.0, 0.05, "alpha=0.0"), (0.05, 1.0, "beta=1.0"), (0.6, 0.5, "alpha + beta")],
)
def test_bad_error_rates_are_refused(alpha: float, beta: float, words: str) -> None:
    with pytest.raises(StatsError, match=re.escape(words)):
        Sprt(0, 5, alpha, beta)


def test_bad_hypotheses_are_refused() -> None:
    with pytest.raises(StatsError, match="elo0 must be below elo1"):
        Sprt(5, 5)
    with pytest.raises(StatsError, match="elo1=inf"):
        Sprt(0, math.inf)


def test_llr_of_two_outcomes_is_the_binomial_sprt() -> None:
    # Only 0 and 1 observed: the most likely distribution with mean s puts s on 1,
    # so the GSPRT is Wald's binomial SPRT: W log(s1/s0) + L log((1-s1)/(1-s0)).
    wins, losses = 30, 20
    s0, s1 = score_of_elo(0), score_of_elo(20)
    by_hand = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
    assert llr([(0.0, losses), (1.0, wins)], s0, s1) == pytest.approx(by_hand, rel=1e-12)
    assert mle([(0.0, losses), (1.0, wins)], s1) == pytest.approx([1 - s1, s1], rel=1e-12)


def _loglik(counts: tuple[int, int, int], top: float, s: float) -> float:
    """Log-likelihood of (losses, draws, wins) when P(win) = top and the mean is s."""
    p = (1 - 2 * s + top, 2 * (s - top), top)  # P(0), P(½), P(1): mean is s
    return sum(n * math.log(q) for n, q in zip(counts, p, strict=True))


def _max_loglik(counts: tuple[int, int, int], s: float) -> float:
    """Maximises over P(win) by golden-section search: a route independent of `mle`."""
    lo, hi = max(0.0, 2 * s - 1) + 1e-12, s - 1e-12
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if _loglik(counts, a, s) < _loglik(counts, b, s):
            lo = a
        else:
            hi = b
    return _loglik(counts, (lo + hi) / 2, s)


@pytest.mark.parametrize("counts", [(3, 5, 4), (10, 2, 7), (1, 30, 2)])
def test_llr_of_a_trinomial_matches_direct_maximisation(counts: tuple[int, int, int]) -> None:
    s0, s1 = score_of_elo(-10), score_of_elo(40)
    by_hand = _max_loglik(counts, s1) - _max_loglik(counts, s0)
    points = [(0.0, counts[0]), (0.5, counts[1]), (1.0, counts[2])]
    assert llr(points, s0, s1) == pytest.approx(by_hand, rel=1e-9, abs=1e-9)


def test_mle_of_a_pentanomial_is_the_constrained_maximum() -> None:
    points = [(0.0, 7), (0.25, 19), (0.5, 40), (0.75, 22), (1.0, 12)]
    s = 0.56
    p = mle(points, s)
    assert sum(p) == pytest.approx(1.0, abs=1e-12)
    assert sum(pi * a for pi, (a, _) in zip(p, points, strict=True)) == pytest.approx(s, abs=1e-12)
    best = sum(n * math.log(pi) for pi, (_, n) in zip(p, points, strict=True))
    # Any move that keeps the total and the mean (a null vector of both constraints)
    # lowers the likelihood: the point is the maximum, not just a stationary point.
    rng = random.Random(1)
    for _ in range(200):
        v = [rng.uniform(-1, 1) for _ in range(3)] + [0.0, 0.0]
        # Solve the last two components so that sum(v) = 0 and sum(v * a) = 0.
        a3, a4 = points[3][0], points[4][0]
        r0 = -sum(v[:3])
        r1 = -sum(vi * a for vi, (a, _) in zip(v[:3], points[:3], strict=True))
        v[4] = (r1 - a3 * r0) / (a4 - a3)
        v[3] = r0 - v[4]
        step = 1e-3 / max(abs(x) for x in v)
        q = [pi + step * vi for pi, vi in zip(p, v, strict=True)]
        assert sum(n * math.log(qi) for qi, (_, n) in zip(q, points, strict=True)) < best


def test_llr_of_a_large_pentanomial_matches_the_normal_approximation() -> None:
    # For many pairs and close hypotheses the GSPRT is the Brownian approximation
    # N (s1 - s0)(2 mean - s0 - s1) / (2 var) (fishtest's LLR_alt2).
    counts = [1187, 7410, 13475, 7378, 1164]
    points = [(i / 4, n) for i, n in enumerate(counts)]
    n = sum(counts)
    mean = sum(a * c for a, c in points) / n
    var = sum(c * (a - mean) ** 2 for a, c in points) / n
    s0, s1 = score_of_elo(-3), score_of_elo(1)
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert llr(points, s0, s1) == pytest.approx(approx, rel=2e-3)


def test_regularisation_touches_only_the_empty_ends() -> None:
    assert regularised([(0.25, 3.0), (0.5, 1.0)]) == [
        (0.0, 1e-3),
        (0.25, 3.0),
        (0.5, 1.0),
        (1.0, 1e-3),
    ]
    full = [(0.0, 1.0), (0.75, 2.0), (1.0, 4.0)]
    assert regularised(full) == full
    assert regularised([(-0.2, 1.0), (1.3, 1.0)]) == [(-0.2, 1.0), (1.3, 1.0)]
    with pytest.raises(StatsError, match="not strictly inside"):
        llr([(0.25, 3.0), (0.5, 1.0)], 0.5, 0.6)


def _units(seed: int, count: int, edge: float = 0.06) -> list[Unit]:
    """Luck-corrected duplicate units whose NEW is a little better than BASE."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        x = rng.random()
        new = 1.0 if x < 1 / 3 + edge else 0.0 if x > 2 / 3 + edge else 0.5
        base = rng.choice((0.0, 0.5, 1.0))
        out.append(Unit(new, base, luck_new=rng.gauss(0, 0.2), luck_base=rng.gauss(0, 0.2)))
    return out


def test_the_test_stops_at_the_first_unit_whose_llr_crosses_a_bound() -> None:
    units = _units(7, 5000)
    sprt = Sprt(0, 20, mixture=False)  # the GSPRT alone (tests/stats/test_mixture.py: both)
    s0, s1 = score_of_elo(0), score_of_elo(20)
    lower, upper = bounds(0.05, 0.05)
    counts: dict[float, list[float]] = {}
    stopped = -1
    for index, unit in enumerate(units):
        # The LLR of every prefix, from scratch: bins of width 1/48 keep count and sum.
        slot = counts.setdefault(math.floor(unit.value * 48 + 0.5), [0.0, 0.0])
        slot[0] += 1
        slot[1] += unit.value
        by_hand = llr(regularised((s / c, c) for c, s in counts.values()), s0, s1)
        verdict = sprt.add(unit)
        assert sprt.state.llr == pytest.approx(by_hand, rel=1e-9, abs=1e-12)
        crossed = by_hand >= upper or by_hand <= lower
        assert (verdict is not None) == crossed
        if crossed:
            stopped = index
            break
    assert verdict is Verdict.H1
    assert sprt.state.units == stopped + 1 and sprt.state.games == 2 * (stopped + 1)
    with pytest.raises(StatsError, match="already accepted H1"):
        sprt.add(units[stopped + 1])


def test_a_resumed_test_ends_exactly_as_an_uninterrupted_one() -> None:
    units = _units(11, 5000, edge=0.0)
    whole = Sprt(-5, 45, 0.05, 0.1, fit_luck=True)
    verdict = run(whole, units)
    assert verdict is not None and whole.state.units > 40  # the fitted factor was in use
    for cut in (1, 17, whole.state.units // 2, whole.state.units - 1):
        first = Sprt(-5, 45, 0.05, 0.1, fit_luck=True)
        run(first, units[:cut])
        saved = json.loads(json.dumps(first.state.to_dict()))
        resumed = Sprt.resume(saved)
        assert run(resumed, units[cut:]) is verdict
        assert resumed.summary() == whole.summary()
        assert resumed.state.to_dict() == whole.state.to_dict()


def test_a_saved_state_that_does_not_add_up_is_refused() -> None:
    sprt = Sprt(0, 5)
    run(sprt, _units(3, 20))
    good = sprt.state.to_dict()
    with pytest.raises(StatsError, match="version"):
        Sprt.resume({**good, "version": 99})
    with pytest.raises(StatsError, match="units must be a whole number"):
        Sprt.resume({**good, "units": -1})
    with pytest.raises(StatsError, match="the bins do not hold"):
        Sprt.resume({**good, "units": 21, "wins": good["wins"] + 1})
    with pytest.raises(StatsError, match="verdict 'maybe'"):
        Sprt.resume({**good, "verdict": "maybe"})
    with pytest.raises(StatsError, match="llr must be a finite number"):
        Sprt.resume({**good, "llr": "high"})
    with pytest.raises(StatsError, match="elo0 must be below elo1"):
        Sprt.resume({**good, "elo0": 10})
    with pytest.raises(StatsError, match="fit_luck must be true or false"):
        Sprt.resume({**good, "fit_luck": "yes"})
    with pytest.raises(StatsError, match="other parameters"):
        Sprt(0, 6, state=sprt.state)
    with pytest.raises(StatsError, match="other parameters"):
        Sprt(0, 5, fit_luck=True, state=sprt.state)


def test_units_counted_in_schedule_order_whatever_order_they_finish_in() -> None:
    units = _units(5, 3000)
    expected = Sprt(0, 20)
    decided = run(expected, units)
    assert decided is not None
    order = list(range(len(units)))
    random.Random(2).shuffle(order)
    sprt = Sprt(0, 20)
    ordered = InOrder(sprt)
    verdicts = [ordered.put(i, units[i]) for i in order]
    assert decided in verdicts
    assert sprt.summary() == expected.summary()  # units after the deciding one never count
    with pytest.raises(StatsError, match="unit 0 was already counted"):
        InOrder(Sprt(0, 20), next_index=1).put(0, units[0])


def test_summary_reports_pairs_and_games() -> None:
    sprt = Sprt(0, 10)
    for unit in (Unit(1, 0), Unit(0.5, 0.5), Unit(0, 1), Unit(1, 0.5), single_game(1.0)):
        sprt.add(unit)
    summary = sprt.summary()
    assert (summary.units, summary.games) == (5, 9)
    assert (summary.wins, summary.draws, summary.losses) == (3, 1, 1)
    assert summary.raw_score == summary.score == pytest.approx((1 + 0.5 + 0 + 0.75 + 1) / 5)
    out = summary.to_dict()
    assert out["verdict"] is None and out["decided_by"] is None
    assert out["lower"] == pytest.approx(math.log(0.04 / 0.96))  # 4/5 of alpha and beta
    assert out["mixture_upper"] == pytest.approx(-math.log(0.01))  # 1/5 of alpha
    assert json.loads(json.dumps(out)) == out


def _lucky_units(rng: random.Random, count: int, truth: float) -> list[Unit]:
    """Units whose raw result is 0.6 of their luck plus noise, with mean `truth`."""
    out = []
    for _ in range(count):
        luck = rng.gauss(0, 0.3)
        raw = truth + 0.6 * luck + rng.gauss(0, 0.1)
        out.append(Unit(new=2 * raw - 1, base=0.0, luck_new=2 * luck))  # raw and luck exactly
    return out


def test_a_fitted_luck_factor_uses_only_earlier_units() -> None:
    units = _lucky_units(random.Random(4), 300, 0.55)
    # Raw results outside [0, 1]: the GSPRT alone, which takes any real result.
    sprt = Sprt(-1, 1, 1e-12, 1e-12, luck_scale=0.25, fit_luck=True, mixture=False)
    for index, unit in enumerate(units):
        before = sprt.state.total
        sprt.add(unit)
        counted = sprt.state.total - before
        if index < 32:
            expected = 0.25  # the given factor until FIT_AFTER units have come
        else:
            xs = [u.luck for u in units[:index]]
            ys = [u.raw for u in units[:index]]
            mx, my = sum(xs) / index, sum(ys) / index
            cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
            expected = cov / sum((x - mx) ** 2 for x in xs)
        assert counted == pytest.approx(unit.raw - expected * unit.luck, abs=1e-9)
    assert sprt.scale() == pytest.approx(0.6, abs=0.05)
    assert sprt.summary().luck_scale == sprt.scale()


def test_a_fitted_luck_factor_keeps_the_mean() -> None:
    # Known truth: the raw mean is 0.55 and the luck has mean zero, so the counted
    # mean must be 0.55 too, though each factor is fitted on the test's own units.
    rng = random.Random(9)
    shifts = []
    for _ in range(120):
        sprt = Sprt(-1, 1, 1e-12, 1e-12, luck_scale=0.0, fit_luck=True, mixture=False)
        for unit in _lucky_units(rng, 50, 0.55):
            sprt.add(unit)
        summary = sprt.summary()
        shifts.append(summary.score - 0.55)
        assert summary.score != summary.raw_score
    mean = sum(shifts) / len(shifts)
    error = math.sqrt(sum((x - mean) ** 2 for x in shifts) / (len(shifts) - 1) / len(shifts))
    assert abs(mean) < 4 * error
