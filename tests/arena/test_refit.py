"""The Plackett-Luce refit: right order, recovered strengths, ties, the prior, and no order."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.arena.refit import Refit, ordered, refit

Game = list[tuple[str, int]]


def _simulate(strength: dict[str, float], games: int, seats: int, seed: int) -> list[Game]:
    """Games drawn from Plackett-Luce: each place goes to a player in proportion to exp(θ)."""
    rng = random.Random(seed)
    names = sorted(strength)
    out: list[Game] = []
    for _ in range(games):
        left = rng.sample(names, seats)
        game: Game = []
        while left:
            pick = rng.choices(left, weights=[math.exp(strength[n]) for n in left])[0]
            left.remove(pick)
            game.append((pick, len(game) + 1))
        out.append(game)
    return out


def _gradient(games: Sequence[Game], fit: Refit, prior: float) -> dict[str, float]:
    """The gradient of the penalised log-likelihood the docstring describes, at the fit.

    The fit is centred; the level is put back as the prior's optimum along the common
    scale (the data do not depend on it): Σ σ(θ_i + c) = n / 2, solved by bisection.
    """
    theta = fit.strength
    low, high = -50.0, 50.0
    for _ in range(200):
        c = (low + high) / 2.0
        total = sum(1.0 / (1.0 + math.exp(-(t + c))) for t in theta.values())
        low, high = (c, high) if total < len(theta) / 2.0 else (low, c)
    gamma = {name: math.exp(t + low) for name, t in theta.items()}
    grad = {name: prior - 2.0 * prior * g / (1.0 + g) for name, g in gamma.items()}
    for game in games:
        left = sorted(game, key=lambda seat: seat[1])
        while left:
            rank = left[0][1]
            group = [name for name, r in left if r == rank]
            if len(left) == 1:
                break
            total = sum(gamma[name] for name, _ in left)
            for name in group:
                grad[name] += 1.0 / len(group)
            for name, _ in left:
                grad[name] -= gamma[name] / total
            left = [(name, r) for name, r in left if r != rank]
    return grad


def test_a_beats_b_beats_c() -> None:
    games = [[("A", 1), ("B", 2), ("C", 3)]] * 5 + [[("A", 1), ("B", 2)], [("B", 1), ("C", 2)]]
    fit = refit(games)
    assert [name for name, _ in ordered(fit)] == ["A", "B", "C"]
    assert fit.strength["A"] > fit.strength["B"] > fit.strength["C"]
    assert fit.games == 7
    assert fit.converged


def test_simulated_strengths_are_recovered() -> None:
    truth = {"a": -1.0, "b": -0.5, "c": -0.1, "d": 0.2, "e": 0.5, "f": 0.9}
    mean = sum(truth.values()) / len(truth)
    fit = refit(_simulate(truth, 3000, 4, seed=2024))
    assert fit.converged
    assert [name for name, _ in ordered(fit)] == ["f", "e", "d", "c", "b", "a"]
    for name, value in truth.items():
        assert fit.strength[name] == pytest.approx(value - mean, abs=0.15)


@pytest.mark.parametrize(("spread", "seats", "count"), [(3.5, 3, 400), (8.0, 2, 300)])
def test_the_fit_is_the_maximum_of_the_likelihood_described(
    spread: float, seats: int, count: int
) -> None:
    truth = {f"p{i}": spread * i / 5 for i in range(6)}
    games = _simulate(truth, count, seats, seed=7)
    games += [[("p0", 1), ("p1", 1), ("p2", 2)], [("p3", 1), ("p4", 2), ("p2", 2)]]
    games += [[("p1", 1), ("p5", 1)], [("p2", 1), ("p3", 1), ("p4", 1)]]
    for prior in (1.0, 0.25):
        fit = refit(games, prior=prior)
        assert fit.converged
        for value in _gradient(games, fit, prior).values():
            assert abs(value) < 1e-6


def test_the_order_of_the_games_and_of_their_seats_does_not_matter() -> None:
    truth = {f"p{i}": 0.3 * i for i in range(8)}
    games = _simulate(truth, 600, 4, seed=11)
    games += [[("p1", 1), ("p2", 1), ("p3", 3), ("p4", 3)], [("p5", 2), ("p6", 2), ("p0", 1)]]
    fit = refit(games)
    rng = random.Random(5)
    for _ in range(3):
        shuffled = [rng.sample(game, len(game)) for game in games]
        rng.shuffle(shuffled)
        again = refit(shuffled)
        assert again.iterations == fit.iterations
        for name, value in fit.strength.items():
            assert again.strength[name] == pytest.approx(value, abs=1e-9)


def test_players_who_always_tie_are_equal() -> None:
    games: list[Game] = []
    for i in range(30):
        games.append([("A", 1), ("B", 1), ("C", 2 + i % 2), ("D", 3 - i % 2)])
        games.append([("C", 1), ("A", 2), ("B", 2)])
        games.append([("A", 1), ("B", 1)])
        games.append([("D", 1), ("A", 2), ("B", 2), ("C", 3)])
    fit = refit(games)
    assert fit.converged
    assert fit.strength["A"] == pytest.approx(fit.strength["B"], abs=1e-9)
    assert fit.strength["A"] != pytest.approx(fit.strength["C"], abs=1e-3)


def test_one_game_never_lost_or_never_won_give_finite_strengths() -> None:
    games = [[("A", 1), ("B", 2), ("C", 3)]] * 20 + [[("B", 1), ("C", 2)]] * 10
    games.append([("new", 1), ("C", 2)])
    fit = refit(games)
    assert fit.converged
    assert all(math.isfinite(value) for value in fit.strength.values())
    # A never lost, C never won; the newcomer won its one game, against the weakest.
    assert fit.strength["A"] > fit.strength["B"] > fit.strength["C"]
    assert fit.strength["C"] < fit.strength["new"] < fit.strength["A"]


def test_disconnected_groups_and_lopsided_pairs_converge() -> None:
    games = [[("A", 1), ("B", 2)]] * 50 + [[("X", 1), ("Y", 2), ("Z", 2)]] * 3
    games += [[("lone", 1), ("other", 1)]]
    fit = refit(games)
    assert fit.converged
    assert (
        fit.strength["A"]
        > fit.strength["X"]
        > fit.strength["Y"]
        == pytest.approx(fit.strength["Z"], abs=1e-9)
    )
    assert fit.strength["lone"] == pytest.approx(fit.strength["other"], abs=1e-9)
    assert sum(fit.strength.values()) == pytest.approx(0.0, abs=1e-9)


def test_no_games_and_bad_games() -> None:
    assert refit([]) == Refit({}, 0, 0, True)
    with pytest.raises(ValueError, match="seats"):
        refit([[("A", 1)]])
    with pytest.raises(ValueError, match="seats"):
        refit([[(f"p{i}", i) for i in range(9)]])
    with pytest.raises(ValueError, match="two seats"):
        refit([[("A", 1), ("A", 2)]])
    with pytest.raises(ValueError, match="prior"):
        refit([[("A", 1), ("B", 2)]], prior=0.0)


def test_max_iter_is_kept() -> None:
    fit = refit(_simulate({"a": 0.0, "b": 2.0, "c": 4.0}, 50, 2, seed=1), max_iter=3)
    assert fit.iterations == 3
    assert not fit.converged


def test_ordered_breaks_ties_by_name() -> None:
    fit = Refit({"b": 0.5, "a": 0.5, "c": -1.0}, 1, 1, True)
    assert ordered(fit) == [("a", 0.5), ("b", 0.5), ("c", -1.0)]


_NAMES = ["p0", "p1", "p2", "p3", "p4", "p5"]


@st.composite
def _games(draw: st.DrawFn) -> list[Game]:
    out: list[Game] = []
    for _ in range(draw(st.integers(1, 12))):
        seats = draw(st.lists(st.sampled_from(_NAMES), min_size=2, max_size=4, unique=True))
        ranks = draw(st.lists(st.integers(1, 4), min_size=len(seats), max_size=len(seats)))
        out.append(list(zip(seats, ranks, strict=True)))
    return out


@given(_games(), st.permutations(_NAMES))
def test_finite_centred_and_relabelling_permutes(games: list[Game], names: list[str]) -> None:
    fit = refit(games)
    assert fit.converged
    assert all(math.isfinite(value) for value in fit.strength.values())
    assert sum(fit.strength.values()) == pytest.approx(0.0, abs=1e-9)
    relabel = dict(zip(_NAMES, names, strict=True))
    moved = refit([[(relabel[name], rank) for name, rank in game] for game in games])
    assert moved.strength.keys() == {relabel[name] for name in fit.strength}
    for name, value in fit.strength.items():
        assert moved.strength[relabel[name]] == pytest.approx(value, abs=1e-6)
