"""The order-free rating refit: a maximum-likelihood Plackett-Luce fit over all games.

Kaggle's final leaderboard is a Bradley-Terry fit over every game played; this is
the Plackett-Luce analogue for games of 2 to 8 seats with ties. A game is a
sequence of (player, rank), rank 1 best, tied players sharing a rank. Player i
has a strength γ_i > 0; a game is read as stages, one per rank group from the
best down: the group "wins" the stage against everyone not yet placed (itself
included). A stage won by one player i out of the set R has the likelihood
γ_i / Σ_R γ, as in Plackett-Luce.

Ties are fractional wins: each of the k players of a tied group wins the stage
with weight 1/k, so the stage contributes (Π_group γ)^(1/k) / Σ_R γ. A tied
stage weighs as much as a won one, and at two seats a tie is half a win for
each side, the usual Bradley-Terry convention. A last place held alone is no
stage (it carries no information); a tie for last place is one.

The prior: each player wins once and loses once, with weight `prior`, against
a virtual player whose strength is fixed at 1. It keeps every strength finite
(a player who never lost, never won, or played one game) and makes the
maximum unique on any comparison graph, connected or not.

The fit is Hunter's MM algorithm (D. R. Hunter, "MM algorithms for generalized
Bradley-Terry models", Ann. Statist. 32, 2004):
γ_i ← W_i / (Σ_{s ∋ i} 1 / Σ_{R_s} γ + 2·prior / (γ_i + 1)), W_i being i's
wins (fractional for ties) plus `prior`, the sum running over the stages whose
choice set R_s holds i. Each step is followed by an exact maximisation along the direction
MM moves slowly: the data do not depend on the common scale of a connected
component's strengths, only the prior does, so each component is rescaled by
a Newton solve in one variable. The steps are accelerated by SQUAREM
(`_Model.fit`), which keeps an extrapolation only if the likelihood does not
drop. `iterations` counts the steps; the fit has converged when a step moves
no log-strength by `tol` or more.

Games are read once into integer columns grouped by shape (seats and tie
groups) and sorted, so the arithmetic does not depend on the order of the games
or of their seats: shuffled games give the same strengths, bit for bit. A step
takes about 0.07 s per 100,000 four-seat games (0.09 s when it also computes
the likelihood, as two steps in three do) on the 2-core machine this was
written on, CPython 3.11; a million games of 2 to 4 seats among 300 players
took about 1 s a step, 103 steps, and 0.7 GB with the games themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import add, itemgetter

MAX_SEATS = 8
LIMIT = 300.0  # an extrapolated log-strength is kept within ±LIMIT
_INVERSE = (1.0).__truediv__  # x ↦ 1 / x, mapped over whole columns


@dataclass(frozen=True)
class Refit:
    """A fit: log-strengths per player, centred so that their mean is 0."""

    strength: dict[str, float]  # log γ per player, mean 0 over the players
    games: int  # games used
    iterations: int  # MM steps taken
    converged: bool  # the last step moved no log-strength by `tol` or more


def ordered(fit: Refit) -> list[tuple[str, float]]:
    """The players by strength, strongest first; equal strengths by name."""
    return sorted(fit.strength.items(), key=lambda item: (-item[1], item[0]))


@dataclass
class _Shape:
    """The games of one shape: columns of player ids, one per place, and their stages."""

    starts: tuple[int, ...]  # the first place of each stage's group
    stage_of: tuple[int, ...]  # per place: the last stage whose choice set holds it
    weights: tuple[float, ...]  # per place: its share of its stage's win (0 for a lone last)
    columns: list[list[int]]  # per place: the id of the player there, game by game


def refit(
    games: Iterable[Sequence[tuple[str, int]]],
    *,
    prior: float = 1.0,
    max_iter: int = 500,
    tol: float = 1e-9,
) -> Refit:
    """Fit Plackett-Luce strengths to `games` by maximum likelihood under the prior.

    Raises `ValueError` for a game of fewer than 2 or more than 8 seats or with a
    player twice, for a `prior` or `tol` that is not positive, and for `max_iter` < 1.
    """
    if not prior > 0.0:
        raise ValueError(f"prior must be positive, not {prior!r}")
    if not tol > 0.0:
        raise ValueError(f"tol must be positive, not {tol!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be at least 1, not {max_iter!r}")
    listed = [_checked(game) for game in games]
    names = sorted({name for game in listed for name, _ in game})
    if not names:
        return Refit({}, 0, 0, True)
    played = len(listed)
    ids = {name: i for i, name in enumerate(names)}
    count = len(names)
    wins = [0.0] * count
    parent = list(range(count))
    rows: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for game in listed:
        seats = sorted((rank, ids[name]) for name, rank in game)
        sizes: list[int] = []
        last = None
        for rank, _ in seats:
            if rank == last:
                sizes[-1] += 1
            else:
                sizes.append(1)
                last = rank
        key = tuple(sizes)
        rows.setdefault(key, []).append(tuple(i for _, i in seats))
        root = _root(parent, seats[0][1])
        for _, i in seats[1:]:
            other = _root(parent, i)
            if other != root:
                parent[other] = root
    shapes = [_shape(shape, sorted(rows[shape])) for shape in sorted(rows)]
    del rows, listed
    # Where each player's stage sums lie in the flat list built at each iteration.
    spots: list[list[int]] = [[] for _ in range(count)]
    base = 0
    for shape in shapes:
        games_here = len(shape.columns[0])
        for place, column in enumerate(shape.columns):
            offset = base + shape.stage_of[place] * games_here
            weight = shape.weights[place]
            for g, i in enumerate(column):
                spots[i].append(offset + g)
                wins[i] += weight
        base += len(shape.starts) * games_here
    # A player seen once is paired with an extra 0 at the end, so that its getter gives a tuple.
    getters: list[Callable[[list[float]], tuple[float, ...]]] = [
        itemgetter(*player) if len(player) > 1 else itemgetter(*player, base) for player in spots
    ]
    del spots
    components: dict[int, list[int]] = {}
    for i in range(count):
        components.setdefault(_root(parent, i), []).append(i)
    model = _Model(
        shapes,
        getters,
        [w + prior for w in wins],
        prior,
        sorted(components.values()),
    )
    theta, iterations, converged = model.fit(max_iter, tol)
    mean = math.fsum(theta) / count
    return Refit(
        {name: value - mean for name, value in zip(names, theta, strict=True)},
        played,
        iterations,
        converged,
    )


class _Model:
    """The games read for fitting, and the fit: MM steps accelerated by SQUAREM."""

    def __init__(
        self,
        shapes: list[_Shape],
        getters: list[Callable[[list[float]], tuple[float, ...]]],
        numerators: list[float],
        prior: float,
        components: list[list[int]],
    ) -> None:
        self.shapes = shapes
        self.getters = getters  # per player: its entries of the flat list of stage sums
        self.numerators = numerators  # per player: its wins plus the prior's
        self.prior = prior
        self.components = components
        self.steps = 0

    def step(self, theta: list[float], likelihood: bool = False) -> tuple[list[float], float]:
        """One MM step and rescaling from log-strengths θ, and the log-likelihood at θ (NaN
        unless asked for)."""
        self.steps += 1
        gamma = [math.exp(t) for t in theta]
        flat: list[float] = []
        stages = 0.0
        for shape in self.shapes:
            for totals, sums in _stage_sums(shape, gamma):
                if likelihood:
                    stages += sum(map(math.log, totals))
                flat.extend(sums)
        flat.append(0.0)
        twice = 2.0 * self.prior
        new = [
            numerator / (sum(getter(flat)) + twice / (g + 1.0))
            for numerator, getter, g in zip(self.numerators, self.getters, gamma, strict=True)
        ]
        for group in self.components:
            _rescale(new, group)
        value = math.nan
        if likelihood:
            value = (
                sum(w * t for w, t in zip(self.numerators, theta, strict=True))
                - stages
                - twice * sum(math.log1p(g) for g in gamma)
            )
        return [math.log(g) for g in new], value

    def fit(self, max_iter: int, tol: float) -> tuple[list[float], int, bool]:
        """Log-strengths, steps taken and whether a step moved none by `tol` or more.

        SQUAREM (R. Varadhan, C. Roland, Scand. J. Statist. 35, 2008, scheme S3)
        on the MM map: two steps θ1 = M(θ0), θ2 = M(θ1) give r = θ1 − θ0 and
        v = θ2 − 2θ1 + θ0; θ' = θ0 + 2a·r + a²·v with a = ‖r‖ / ‖v‖ (at least 1,
        at most a bound that grows while it binds) is kept, after one more step,
        only if its likelihood is no lower than θ1's; otherwise the fit goes on
        from θ2, as plain MM would.
        """
        theta = [0.0] * len(self.numerators)
        longest = 4.0
        while True:
            one, _ = self.step(theta)
            if _moved(one, theta) < tol:
                return one, self.steps, True
            if self.steps >= max_iter:
                return one, self.steps, False
            two, after_one = self.step(one, likelihood=True)
            if _moved(two, one) < tol:
                return two, self.steps, True
            if self.steps >= max_iter:
                return two, self.steps, False
            r = [b - a for a, b in zip(theta, one, strict=True)]
            v = [c - 2.0 * b + a for a, b, c in zip(theta, one, two, strict=True)]
            r_norm = math.sqrt(math.fsum(x * x for x in r))
            v_norm = math.sqrt(math.fsum(x * x for x in v))
            a = min(longest, r_norm / v_norm) if v_norm > 0.0 else 1.0
            if a <= 1.0:
                theta = two
                continue
            leap = [
                min(LIMIT, max(-LIMIT, t + 2.0 * a * x + a * a * y))
                for t, x, y in zip(theta, r, v, strict=True)
            ]
            landed, at_leap = self.step(leap, likelihood=True)
            if at_leap >= after_one:
                theta = landed
                if a == longest:
                    longest *= 4.0
            else:
                theta = two
                longest = max(1.0, longest / 4.0)
            if self.steps >= max_iter:
                return theta, self.steps, False


def _moved(new: list[float], old: list[float]) -> float:
    """The largest change of a log-strength."""
    return max(abs(a - b) for a, b in zip(new, old, strict=True))


def _checked(game: Sequence[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """The game as a tuple, or `ValueError` if its seats cannot be a game."""
    seats = tuple(game)
    if not 2 <= len(seats) <= MAX_SEATS:
        raise ValueError(f"a game has 2 to {MAX_SEATS} seats, not {len(seats)}: {seats!r}")
    if len({name for name, _ in seats}) != len(seats):
        raise ValueError(f"a player holds two seats of one game: {seats!r}")
    return seats


def _root(parent: list[int], i: int) -> int:
    """The representative of i's component (union-find, with path halving)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _shape(sizes: tuple[int, ...], rows: list[tuple[int, ...]]) -> _Shape:
    """The columns of games of these tie-group sizes, and where their stages start."""
    stages = len(sizes) - 1 if sizes[-1] == 1 else len(sizes)
    starts: list[int] = []
    stage_of: list[int] = []
    weights: list[float] = []
    place = 0
    for group, size in enumerate(sizes):
        if group < stages:
            starts.append(place)
        stage_of.extend([min(group, stages - 1)] * size)
        weights.extend([1.0 / size if group < stages else 0.0] * size)
        place += size
    columns = [list(column) for column in zip(*rows, strict=True)]
    return _Shape(tuple(starts), tuple(stage_of), tuple(weights), columns)


def _stage_sums(shape: _Shape, gamma: list[float]) -> list[tuple[list[float], list[float]]]:
    """Per stage s, game by game: Σ_R γ over its choice set R, and Σ_{t ≤ s} 1 / that of t."""
    totals: list[list[float]] = []
    suffix: list[float] | None = None
    wanted = set(shape.starts)
    for place in range(len(shape.columns) - 1, -1, -1):
        here = map(gamma.__getitem__, shape.columns[place])
        suffix = list(here) if suffix is None else list(map(add, here, suffix))
        if place in wanted:
            totals.append(suffix)
    totals.reverse()
    sums: list[tuple[list[float], list[float]]] = []
    running: list[float] | None = None
    for total in totals:
        inverse = map(_INVERSE, total)
        running = list(inverse) if running is None else list(map(add, running, inverse))
        sums.append((total, running))
    return sums


def _rescale(gamma: list[float], group: list[int]) -> None:
    """Scale the strengths of one component to the prior's optimum along their common scale.

    The data do not depend on that scale; the prior's log-likelihood is
    Σ (θ_i + c) − 2 log(1 + exp(θ_i + c)), maximal where Σ σ(θ_i + c) = n / 2.
    """
    half = len(group) / 2.0
    scale = 1.0
    for _ in range(100):
        total = 0.0
        slope = 0.0
        for i in group:
            x = gamma[i] * scale
            p = x / (1.0 + x)
            total += p
            slope += p * (1.0 - p)
        if slope <= 0.0:
            break
        step = (half - total) / slope
        step = max(-1.0, min(1.0, step))
        scale *= math.exp(step)
        if abs(step) < 1e-14:
            break
    if scale != 1.0:
        for i in group:
            gamma[i] *= scale
