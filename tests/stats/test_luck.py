"""The luck correction: the right chance events, honest counterfactuals, and no bias."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import pytest

from referee.rules import DRAW, MoveKind, Rules, State, Tile, legal_moves, preset
from referee.stats import game_score
from referee.stats.luck import FeatureValue, Luck, RolloutValue, drawn, fit_scale, luck
from referee.stats.players import greedy_player, play_recorded, random_player

TWO = preset("standard", players=2, max_pip=6, rounds="single")


def _game(seed: int, rules: Rules = TWO) -> tuple[State, list[tuple[State, State]]]:
    return play_recorded(rules, seed, [random_player((seed, s)) for s in range(rules.players)])


@dataclass
class Counting:
    """A value that records where it was asked: draws valued by pips, deals by hand pips."""

    asked: list[tuple[str, int]]

    def draws(self, before: State, seat: int, key: str) -> dict[Tile, float]:
        self.asked.append(("draw", len(before.boneyard)))
        return {t: float(t.pips) for t in before.boneyard}

    def position(self, state: State, seat: int, key: str) -> float:
        self.asked.append(("deal", state.round_index))
        return float(sum(t.pips for t in state.hands[seat]))


def test_every_draw_move_and_every_later_deal_is_a_chance_event() -> None:
    rules = preset("standard", players=3, max_pip=6, rounds="ascending")
    for seed in range(5):
        _, steps = _game(seed, rules)
        moves = [b for b, a in steps if len(a.boneyard) == len(b.boneyard) - 1 and a.drawn]
        assert all(DRAW in legal_moves(b) for b in moves)
        value = Counting([])
        found = luck(steps, 1, value, seed, alternatives=3)
        draws = [n for kind, n in value.asked if kind == "draw"]
        deals = [n for kind, n in value.asked if kind == "deal"]
        assert draws == [len(b.boneyard) for b in moves]
        rounds = len(rules.engines)
        assert deals[0] == 0 and len(deals) == 1 + (rounds - 1) * 4  # actual + 3 alternatives
        assert found.events == len(moves) + rounds - 1
        assert found.opening == sum(t.pips for t in steps[0][0].hands[1])
        assert found.total == found.draws + found.deals + found.opening


def test_a_counterfactual_draw_is_the_engine_drawing_that_tile() -> None:
    _, steps = _game(3)
    before = next(b for b, a in steps if a.drawn is not None)
    seat = before.to_move
    for tile in before.boneyard:
        after = drawn(before, tile)
        assert after.drawn == tile
        assert tile in after.hands[seat] and tile not in after.boneyard
        assert sorted(after.boneyard) == sorted(t for t in before.boneyard if t != tile)
        assert after.to_move == seat and after.trains == before.trains
        assert all(m.tile == tile for m in legal_moves(after) if m.kind is MoveKind.PLAY)
    assert before.boneyard == steps[[b for b, _ in steps].index(before)][0].boneyard


def _mean_and_error(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(len(values))


def test_the_corrected_mean_equals_the_raw_mean_over_many_deals() -> None:
    # The truth is known: each draw term has expectation zero, so over many games
    # the corrected and raw mean scores agree within sampling error, while the
    # correction itself is large enough to matter (it explains part of the score).
    value = FeatureValue(playable=0.3, pips=0.02)
    raw, corrected, terms = [], [], []
    for seed in range(500):
        end, steps = _game(seed)
        assert end.outcome is not None
        found = luck(steps, 0, value, seed).total
        # With two seats every draw term of seat 1 is minus seat 0's.
        assert luck(steps[:12], 1, value, seed).total == -luck(steps[:12], 0, value, seed).total
        for seat, term in ((0, found), (1, -found)):
            score = game_score(end.outcome.ranks, seat)
            raw.append(score)
            corrected.append(score - term)
            terms.append(term)
    shift, error = _mean_and_error(terms)
    assert abs(shift) < 4 * error, f"mean correction {shift:.4f} ± {error:.4f}"
    assert statistics.fmean(raw) == pytest.approx(0.5)  # the two seats' scores add to 1
    assert abs(statistics.fmean(corrected) - 0.5) < 4 * error
    assert statistics.correlation(raw, terms) > 0.1  # a real control variate, not noise


@dataclass(frozen=True)
class Peeking:
    """A dishonest value: it knows which tile is really on top of the boneyard."""

    def draws(self, before: State, seat: int, key: str) -> dict[Tile, float]:
        return {t: float(t == before.boneyard[-1]) for t in before.boneyard}

    def position(self, state: State, seat: int, key: str) -> float:
        return 0.0


def test_the_same_check_catches_a_value_that_peeks_at_the_boneyard() -> None:
    terms = [luck(_game(seed)[1], 0, Peeking(), seed).total for seed in range(200)]
    shift, error = _mean_and_error(terms)
    assert shift > 4 * error


def test_later_deals_are_compared_with_fresh_deals_of_the_same_round() -> None:
    rules = preset("standard", players=2, max_pip=6, rounds="ascending")
    terms = []
    for seed in range(120):
        _, steps = _game(seed, rules)
        terms.append(luck(steps, 0, Counting([]), seed, alternatives=4).deals)
    shift, error = _mean_and_error(terms)
    assert error > 0.5  # hand pips differ from deal to deal: the terms are not all zero
    assert abs(shift) < 4 * error


def test_rollout_luck_is_reproducible_and_shared_deals_are_valued_alike() -> None:
    value = RolloutValue(rollouts=2, player=random_player)
    seed = 12
    first = play_recorded(TWO, seed, [greedy_player(1), random_player(2)])[1]
    twin = play_recorded(TWO, seed, [random_player(2), greedy_player(1)])[1]
    a = luck(first, 0, value, seed)
    assert luck(first, 0, value, seed) == a
    b = luck(twin, 0, value, seed)
    assert a.opening == b.opening  # a duplicate pair shares its deal: the opening cancels
    assert isinstance(a, Luck) and a.events > 0


def test_rollout_values_do_not_read_the_real_order_of_the_boneyard() -> None:
    # The rollouts shuffle the boneyard's tiles from their sorted order: the same
    # tiles in another order (the order the game would really draw from) give the
    # same value to every candidate draw and to the position, bit for bit.
    value = RolloutValue(rollouts=4)
    checked = 0
    for seed in range(6):
        for before, after in _game(seed)[1]:
            if after.drawn is None or len(before.boneyard) < 3:
                continue
            reordered = before.copy()
            reordered.boneyard = tuple(reversed(before.boneyard))
            assert reordered.boneyard != before.boneyard
            key = f"{seed}/{checked}"
            assert value.draws(reordered, 0, key) == value.draws(before, 0, key)
            assert value.position(reordered, 1, key) == value.position(before, 1, key)
            checked += 1
            break
    assert checked == 6


def test_fit_scale_is_the_regression_slope() -> None:
    scores = [0.0, 1.0, 1.0, 0.0, 0.5]
    lucks = [-0.5, 0.5, 0.3, -0.3, 0.0]
    c = fit_scale(scores, lucks)
    residual = [s - c * x for s, x in zip(scores, lucks, strict=True)]
    for other in (c - 0.05, c + 0.05):
        worse = [s - other * x for s, x in zip(scores, lucks, strict=True)]
        assert statistics.pvariance(worse) > statistics.pvariance(residual)
    assert fit_scale([1.0, 0.0], [0.0, 0.0]) == 0.0
    with pytest.raises(ValueError, match="at least two"):
        fit_scale([1.0], [0.5])
