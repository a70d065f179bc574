"""The game score, the paired unit result, and the Elo scale with its interval and LOS."""

from __future__ import annotations

import math

import pytest

from referee.stats import (
    Sprt,
    Unit,
    elo_of_score,
    game_score,
    interval,
    los,
    opponents,
    score_of_elo,
    single_game,
)


def test_two_seats_score_like_chess() -> None:
    assert game_score([1, 2], 0) == 1.0
    assert game_score([1, 2], 1) == 0.0
    assert game_score([1, 1], 1) == 0.5


def test_the_score_is_the_share_of_other_sides_beaten_ties_half() -> None:
    ranks = [2, 1, 2, 4, 5]  # seats 0 and 2 tie for second
    assert game_score(ranks, 1) == 1.0
    assert game_score(ranks, 0) == pytest.approx((0.5 + 1 + 1) / 4)
    assert game_score(ranks, 4) == 0.0
    eight = [1, 1, 1, 1, 1, 1, 1, 1]  # everybody tied
    assert all(game_score(eight, s) == 0.5 for s in range(8))


def test_partners_count_once_and_not_against_each_other() -> None:
    sides = [0, 1, 2, 0, 1, 2]  # six seats, three teams, partners opposite
    ranks = [1, 3, 2, 1, 3, 2]
    assert opponents(sides, 0) == 2
    assert game_score(ranks, 0, sides) == 1.0
    assert game_score(ranks, 5, sides) == 0.5
    assert game_score([2, 1, 2, 1], 0, [0, 1, 0, 1]) == 0.0


def test_bad_seats_and_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="seat 3 is not a seat"):
        game_score([1, 2], 3)
    with pytest.raises(ValueError, match="3 sides given for 2 ranks"):
        game_score([1, 2], 0, [0, 1, 2])
    with pytest.raises(ValueError, match="at least one other side"):
        game_score([1, 1], 0, [0, 0])


def test_a_chess_pair_is_the_pentanomial_pair_score() -> None:
    # NEW wins game A as seat 0, draws game B as seat 1: BASE scored 0 in A and ½ in B.
    # Read per seat 0 (NEW in A against BASE in B) or per bot, the result is ¾.
    per_seat = Unit(new=1.0, base=0.5)  # NEW's score in A at seat 0, BASE's in B at seat 0
    per_bot = Unit(new=(1.0 + 0.5) / 2, base=(0.0 + 0.5) / 2)
    assert per_seat.raw == per_bot.raw == 0.75
    assert Unit(0.5, 0.5).raw == 0.5 and Unit(0.0, 1.0).raw == 0.0


def test_the_luck_comes_off_each_side_before_pairing() -> None:
    unit = Unit(new=1.0, base=0.0, luck_new=0.3, luck_base=-0.1)
    assert unit.raw == 1.0
    assert unit.value == pytest.approx((1 + 0.7 - 0.1) / 2)
    game = single_game(1.0, luck=0.25)
    assert (game.games, game.raw, game.value) == (1, 1.0, 0.75)


def test_elo_scale_known_values() -> None:
    assert score_of_elo(0) == 0.5
    assert score_of_elo(400) == pytest.approx(10 / 11)
    assert elo_of_score(0.75) == pytest.approx(400 * math.log10(3))  # 190.85
    assert elo_of_score(score_of_elo(-123.4)) == pytest.approx(-123.4)
    assert elo_of_score(1.0) == pytest.approx(400 * math.log10(999))  # fishtest's clamp
    assert elo_of_score(-0.3) == pytest.approx(-elo_of_score(1.0))


def test_interval_and_los_by_hand() -> None:
    # 100 units, 60 at ¾ and 40 at ¼: mean 0.55, variance 0.06, standard error 0.0244949.
    n, mean, var = 100, 0.55, 0.06
    low, high = interval(mean, var, n)
    assert low == pytest.approx(0.55 - 1.959964 * 0.0244949, abs=1e-6)
    assert high == pytest.approx(0.55 + 1.959964 * 0.0244949, abs=1e-6)
    assert los(mean, var, n) == pytest.approx(0.979387, abs=1e-6)  # Phi(2.041241)
    assert los(0.5, var, n) == 0.5
    assert los(0.6, 0.0, n) == 1.0 and los(0.4, 0.0, n) == 0.0
    sprt = Sprt(0, 5)
    for i in range(100):  # interleaved: 60 straight wins would end the test (its mixture)
        sprt.add(Unit(1.0, 0.5) if i % 5 < 3 else Unit(0.5, 1.0))
    summary = sprt.summary()
    assert summary.score == pytest.approx(0.55)
    assert summary.elo == pytest.approx(400 * math.log10(0.55 / 0.45))  # 34.86
    assert summary.elo_low == pytest.approx(elo_of_score(low))
    assert summary.elo_ci95 == pytest.approx((elo_of_score(high) - elo_of_score(low)) / 2)
    assert summary.los == pytest.approx(0.979387, abs=1e-6)


def test_a_test_with_no_units_reports_the_whole_scale() -> None:
    summary = Sprt(0, 5).summary()
    assert (summary.score, summary.elo, summary.los, summary.llr) == (0.5, 0.0, 0.5, 0.0)
    assert summary.elo_ci95 == pytest.approx(elo_of_score(1.0))
