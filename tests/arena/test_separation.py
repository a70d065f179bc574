"""The separation of the final: paired results, intervals, error spent over looks, kept results."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from referee.arena import separation
from referee.arena.separation import (
    PairResult,
    Separation,
    look_alpha,
    pair_units,
    t_quantile,
)

Game = list[tuple[str, int]]


def _unit(strength: dict[str, float], rng: random.Random) -> list[Game]:
    """One deal under every rotation of the seats: the seats' luck is the deal's, and shared."""
    bots = list(strength)
    luck = [rng.gauss(0.0, 1.0) for _ in bots]
    games: list[Game] = []
    for turn in range(len(bots)):
        play = {}
        for seat, chance in enumerate(luck):
            bot = bots[(seat + turn) % len(bots)]
            play[bot] = strength[bot] + chance + rng.gauss(0.0, 1.0)
        order = sorted(play, key=lambda bot: -play[bot])
        games.append([(bot, place + 1) for place, bot in enumerate(order)])
    return games


def test_pair_units_of_two_seats() -> None:
    assert pair_units([[("A", 1), ("B", 2)], [("B", 2), ("A", 1)]]) == {("A", "B"): 1.0}
    assert pair_units([[("B", 1), ("A", 2)], [("A", 1), ("B", 2)]]) == {("A", "B"): 0.5}
    assert pair_units([[("B", 1), ("A", 2)], [("A", 2), ("B", 1)]]) == {("A", "B"): 0.0}
    assert pair_units([[("A", 1), ("B", 1)], [("B", 1), ("A", 2)]]) == {("A", "B"): 0.25}


def test_pair_units_of_three_seats_with_ties() -> None:
    unit = [
        [("A", 1), ("B", 1), ("C", 2)],
        [("C", 3), ("A", 2), ("B", 1)],
        [("B", 2), ("C", 1), ("A", 2)],
    ]
    assert pair_units(unit) == pytest.approx(
        {("A", "B"): 1 / 3, ("A", "C"): 2 / 3, ("B", "C"): 2 / 3}
    )


def test_pair_units_refuses_what_is_not_a_unit() -> None:
    with pytest.raises(ValueError, match="different bots"):
        pair_units([[("A", 1), ("B", 2)], [("A", 1), ("C", 2)]])
    with pytest.raises(ValueError, match="two seats"):
        pair_units([[("A", 1), ("A", 2)]])
    with pytest.raises(ValueError, match="seats"):
        pair_units([[("A", 1)]])
    with pytest.raises(ValueError, match="at least one game"):
        pair_units([])


def test_a_strong_a_medium_and_a_weak_bot_are_separated() -> None:
    rng = random.Random(31)
    strength = {"strong": 3.0, "medium": 1.5, "weak": 0.0}
    final = Separation()
    for _ in range(60):
        final.add(pair_units(_unit(strength, rng)))
        results = final.look(["strong", "medium", "weak"])
        if all(result.separated for result in results):
            break
    assert all(result.separated for result in results), results
    assert [(r.ahead, r.behind) for r in results] == [("strong", "medium"), ("medium", "weak")]
    assert all(r.mean > 0.5 and r.low > 0.5 for r in results)
    assert final.looks <= 60


def _false_separations(runs: int, looks: int) -> int:
    """Finals of two equal bots, ranked by the results so far: how many ever separate them."""
    strength = {"x": 0.0, "y": 0.0}
    count = 0
    for run in range(runs):
        rng = random.Random(9000 + run)
        final = Separation()
        total = 0.0
        for _ in range(looks):
            results = pair_units(_unit(strength, rng))
            final.add(results)
            total += results["x", "y"]
            ranking = ["x", "y"] if total >= final.looks / 2 else ["y", "x"]
            if final.look(ranking)[0].separated:
                count += 1
                break
    return count


def test_equal_bots_are_rarely_separated_over_many_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    # 5% of 200 is 10; 16 allows for the sampling error of 200 runs.
    assert _false_separations(200, 60) <= 16
    # Without spending the error over looks, the same finals separate them far too often.
    monkeypatch.setattr(separation, "look_alpha", lambda look, confidence=0.95: 1 - confidence)
    assert _false_separations(200, 60) > 16


def test_a_separation_is_kept() -> None:
    final = Separation(min_units=6)
    for _ in range(6):
        final.add({("A", "B"): 1.0})
    (first,) = final.look(["A", "B"])
    assert first == PairResult("A", "B", 6, 1.0, 1.0, 1.0, True)
    for _ in range(10):
        final.add({("B", "A"): 1.0})
    (later,) = final.look(["A", "B"])
    assert later.units == 16
    assert later.mean == pytest.approx(6 / 16)
    assert later.low < 0.5 < later.high
    assert later.separated
    (reversed_,) = final.look(["B", "A"])
    assert reversed_.mean == pytest.approx(10 / 16)
    assert not reversed_.separated
    assert final.looks == 3


def test_too_few_units_or_an_even_record_separate_nothing() -> None:
    final = Separation(min_units=6)
    for _ in range(5):
        final.add({("A", "B"): 1.0, ("B", "C"): 0.5})
    assert [r.separated for r in final.look(["A", "B", "C"])] == [False, False]
    for _ in range(100):
        final.add({("A", "B"): 1.0, ("B", "C"): 0.5})
    ab, bc = final.look(["A", "B", "C"])
    assert ab.separated
    assert (bc.mean, bc.low, bc.high, bc.separated) == (0.5, 0.5, 0.5, False)
    (unseen,) = final.look(["A", "Z"])
    assert (unseen.units, unseen.mean, unseen.low, unseen.high) == (0, 0.5, 0.0, 1.0)
    assert not unseen.separated


def test_the_interval_is_the_student_t_interval_at_the_look_level() -> None:
    final = Separation()
    values = [0.75, 0.5, 1.0, 0.75, 0.25, 1.0, 0.75, 1.0]
    for value in values:
        final.add({("A", "B"): value})
    (result,) = final.look(["A", "B"])
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(1 - look_alpha(1) / 2, n - 1) * sd / math.sqrt(n)
    assert result.mean == pytest.approx(mean)
    assert result.low == pytest.approx(mean - half)
    assert result.high == pytest.approx(min(1.0, mean + half))


def test_add_refuses_bad_results() -> None:
    final = Separation()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        final.add({("A", "B"): 1.5})
    with pytest.raises(ValueError, match="twice"):
        final.add({("A", "B"): 1.0, ("B", "A"): 0.0})
    with pytest.raises(ValueError, match="two bots"):
        final.add({("A", "A"): 0.5})
    with pytest.raises(ValueError, match="once"):
        final.look(["A", "B", "A"])
    assert final.look(["A", "B"])[0].units == 0


def test_the_error_spent_over_all_looks_is_one_minus_the_confidence() -> None:
    assert look_alpha(1) == pytest.approx(0.05 * 6 / math.pi**2)
    spent = math.fsum(look_alpha(j, 0.9) for j in range(1, 100_001))
    assert spent < 0.1
    assert spent == pytest.approx(0.1, abs=1e-5)


def _t5_tail(t: float) -> float:
    """P(T > t) at 5 degrees of freedom, in closed form (Abramowitz and Stegun 26.7.3)."""
    angle = math.atan(t / math.sqrt(5.0))
    cos = math.cos(angle)
    inside = 2.0 / math.pi * (angle + math.sin(angle) * (cos + 2.0 / 3.0 * cos**3))
    return (1.0 - inside) / 2.0


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.999, 1 - 1e-6, 1 - 1e-9])
def test_t_quantiles_match_closed_forms(p: float) -> None:
    # One degree of freedom is Cauchy's, two have t = (2p − 1) / √(2p(1 − p)).
    assert t_quantile(p, 1) == pytest.approx(1 / math.tan(math.pi * (1 - p)), rel=1e-9)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    assert _t5_tail(t_quantile(p, 5)) == pytest.approx(1 - p, rel=1e-6)
    assert t_quantile(1 - p, 5) == -t_quantile(p, 5)
    z = NormalDist().inv_cdf(p)
    assert z < t_quantile(p, 1000) < t_quantile(p, 30) < t_quantile(p, 3)
    assert t_quantile(p, 1e9) == pytest.approx(z, rel=1e-6)
