"""The luck correction: control variates at every chance event of a game, after AIVAT.

At a chance event the referee knows what could have happened: a drawn tile is
uniform over the boneyard of that moment, a deal is one shuffle among all. For
a value function V (an estimate of the tested seat's game score) the term

    V(what happened) − mean of V over what could have happened

has expectation zero given everything before the event, whatever V is. The
luck of a game is the sum of these terms; a game score minus its luck keeps
the same expectation and, when V is good, loses much of the variance that the
draws bring (Burch, Schmid, Moravčík, Morrill, Bowling, "AIVAT", AAAI 2018).
spec/STATS.md gives the argument in full.

The chance events corrected are the tiles drawn by `draw` moves and each
round's deal. The first deal's value is not centred: its expectation is the
same for NEW's and BASE's games of a unit (same seat, rules and value), so it
cancels from the unit's result. Tiles taken as a penalty (announce-one-tile)
are left uncorrected: a correction may skip any chance event without bias.

Counterfactual positions are the engine's own: a copy of the state before the
draw with the candidate tile on top of the boneyard, then `apply(DRAW)`.
Rollouts replace the unseen order of the boneyard with shuffles of their own,
made from its tiles in sorted order, never from the real order: a rollout value
depends on which tiles the boneyard holds and not on how they lie, so no value
peeks at the future it is meant to average over.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from referee.rules import DRAW, MoveKind, Rules, State, Tile, apply, legal_moves

from .players import Player, greedy_player
from .score import game_score


class Value(Protocol):
    """A value function: what positions and possible draws are worth to one seat."""

    def draws(self, before: State, seat: int, key: str) -> dict[Tile, float]:
        """For each tile of `before.boneyard`: `seat`'s value once the seat to move drew it."""
        ...

    def position(self, state: State, seat: int, key: str) -> float:
        """`seat`'s value of a freshly dealt position, the boneyard's order unknown."""
        ...


@dataclass(frozen=True, slots=True)
class Luck:
    """A game's luck for one seat; subtract `total` from the seat's game score.

    `draws` sums the draw terms and `deals` the terms of the deals after the
    first; both have expectation zero. `opening` is the value of the first deal
    itself: its expectation is one constant for every game at this seat under
    these rules, so it cancels from any unit that compares NEW and BASE in the
    same seats (and is equal in both games of a duplicate pair).
    """

    draws: float
    deals: float
    opening: float
    events: int  # chance events corrected: draws plus deals after the first

    @property
    def total(self) -> float:
        """The whole correction: draws + deals + opening."""
        return self.draws + self.deals + self.opening


def luck(
    steps: Iterable[tuple[State, State]],
    seat: int,
    value: Value,
    key: object = "",
    *,
    alternatives: int = 8,
) -> Luck:
    """The luck of `seat` over a game given as its (before, after) states in order.

    `steps` come from `referee.logs.replay.states(log)` (`(s.before, s.after)`) or from
    an in-process game. `key` seeds the value function's own randomness: give
    both games of a unit the same key (the deal seed, say) so that what they
    share is valued alike. A deal after the first is compared with the mean
    value of `alternatives` other deals of that round after the same rounds.
    """
    draw_total = 0.0
    deal_total = 0.0
    opening = 0.0
    events = 0
    first = True
    for index, (before, after) in enumerate(steps):
        if first:
            first = False
            opening = value.position(before, seat, f"{key}/deal/0")
        if after.drawn is not None:
            # Only a `draw` move leaves a drawn tile in the state; a play, a pass or an
            # end clears it, and a new round starts with none.
            values = value.draws(before, seat, f"{key}/draw/{index}")
            draw_total += values[after.drawn] - sum(values.values()) / len(values)
            events += 1
        elif after.round_index != before.round_index and after.outcome is None:
            where = f"{key}/deal/{after.round_index}"
            others = [
                value.position(_fresh_deal(after, f"{where}/{j}"), seat, where)
                for j in range(alternatives)
            ]
            deal_total += value.position(after, seat, where) - sum(others) / len(others)
            events += 1
    return Luck(draw_total, deal_total, opening, events)


def drawn(before: State, tile: Tile) -> State:
    """The state after the seat to move draws `tile` from `before`'s boneyard instead."""
    return _with_boneyard(before, [t for t in before.boneyard if t != tile] + [tile], draw=True)


def _with_boneyard(state: State, order: Sequence[Tile], *, draw: bool = False) -> State:
    """`state` with its boneyard in `order` (drawn from the end), optionally one draw made."""
    copy = state.copy()
    copy.boneyard = tuple(order)
    return apply(copy, DRAW) if draw else copy


def _sides(rules: Rules) -> tuple[int, ...]:
    return tuple(rules.team_of(s) for s in range(rules.players))


def _share(rules: Rules, seat: int, drawer: int) -> float:
    """How much of a draw's effect on the drawer's side falls on `seat`'s score.

    A gain for one's own side counts fully; a gain for one of m other sides costs
    `seat` one of its m comparisons, so it counts -1/m.
    """
    sides = _sides(rules)
    if sides[drawer] == sides[seat]:
        return 1.0
    return -1.0 / len({s for s in sides if s != sides[seat]})


def _playable(after: State) -> bool:
    return any(m.kind is MoveKind.PLAY for m in legal_moves(after))


@dataclass(frozen=True, slots=True)
class FeatureValue:
    """A cheap value: what the drawn tile does to the drawer, weighted.

    V = share · (playable · [drawn tile can be played at once] − pips · its pips),
    where share is +1 when the drawer is on the tested seat's side and −1/m for
    each of the m other sides. Weights are in game-score units per feature and
    must be fixed before the test (e.g. fitted on other games, `fit_scale`).
    Deals are left uncorrected.
    """

    playable: float = 0.0
    pips: float = 0.0

    def draws(self, before: State, seat: int, key: str) -> dict[Tile, float]:
        """The weighted features of each possible draw, signed for `seat`."""
        share = _share(before.rules, seat, before.to_move)
        out = {}
        for tile in before.boneyard:
            v = -self.pips * tile.pips
            if self.playable:
                v += self.playable * _playable(drawn(before, tile))
            out[tile] = share * v
        return out

    def position(self, state: State, seat: int, key: str) -> float:
        """No value for deals: only draws are corrected."""
        return 0.0


def standing(state: State, seat: int) -> float:
    """`seat`'s game score if the game ended now, totals so far deciding (the outcome if over)."""
    rules = state.rules
    sides = _sides(rules)
    if state.outcome is not None:
        return game_score(state.outcome.ranks, seat, sides)
    totals = [sum(r.scores[s] for r in state.results) for s in range(rules.players)]
    ranks = [1 + sum(1 for t in totals if t < totals[s]) for s in range(rules.players)]
    return game_score(ranks, seat, sides)


@dataclass(frozen=True)
class RolloutValue:
    """V = the mean standing of the seat after playing the round out `rollouts` times.

    Every seat is played by `player` (the in-process greedy player by default)
    with seeds from the key. Each rollout draws from its own shuffle of the
    unseen tiles, and every candidate draw of one event shares those shuffles and
    seeds (common random numbers), so that the differences between candidates
    carry little rollout noise. A dealt position is valued by `rollouts`
    playouts of its hands, each on its own shuffle of the boneyard. Every
    shuffle starts from the boneyard's tiles sorted, so the values are the same
    whatever order the real boneyard is in (the order the game will draw from).
    """

    rollouts: int = 8
    player: Callable[[object], Player] = field(default=greedy_player)

    def draws(self, before: State, seat: int, key: str) -> dict[Tile, float]:
        """Rollout values of each possible draw, on shared shuffles and seeds."""
        tiles = sorted(before.boneyard)
        orders = []
        for r in range(self.rollouts):
            order = list(tiles)
            random.Random(f"luck/{key}/{r}").shuffle(order)
            orders.append(order)
        out = {}
        for tile in tiles:
            total = 0.0
            for r, order in enumerate(orders):
                rest = [t for t in order if t != tile]
                after = _with_boneyard(before, [*rest, tile], draw=True)
                total += self._playout(after, seat, r, key)
            out[tile] = total / self.rollouts
        return out

    def position(self, state: State, seat: int, key: str) -> float:
        """The mean standing over playouts, each on its own shuffle of the boneyard."""
        total = 0.0
        for r in range(self.rollouts):
            order = sorted(state.boneyard)
            random.Random(f"luck/{key}/{r}").shuffle(order)
            total += self._playout(_with_boneyard(state, order), seat, r, key)
        return total / self.rollouts

    def _playout(self, state: State, seat: int, r: int, key: str) -> float:
        players = [self.player((key, r, s)) for s in range(state.rules.players)]
        round_index = state.round_index
        while state.outcome is None and state.round_index == round_index:
            state = apply(state, players[state.to_move](state))
        return standing(state, seat)


def _fresh_deal(dealt: State, key: str) -> State:
    """Another deal of the same round after the same rounds, from an independent seed.

    It is the engine's own dealer (`_deal`, which `new_game` calls for round 0),
    so the alternative deals follow every rule of dealing the real one followed.
    """
    from referee.rules.engine import _deal

    seed = random.Random(f"luck-deal/{key}").getrandbits(64)
    return _deal(dealt.rules, seed, dealt.round_index, dealt.results)


def fit_scale(scores: Sequence[float], lucks: Sequence[float]) -> float:
    """The factor c minimising the variance of score − c·luck: Cov(score, luck) / Var(luck).

    Fit it on games that the test will not count (a pilot run): a factor
    computed from the counted games themselves makes the correction depend on
    them and the unbiasedness only approximate.
    """
    n = len(scores)
    if n != len(lucks) or n < 2:
        raise ValueError("fit_scale needs at least two (score, luck) pairs of equal length")
    ms = sum(scores) / n
    ml = sum(lucks) / n
    cov = sum((s - ms) * (x - ml) for s, x in zip(scores, lucks, strict=True))
    var = sum((x - ml) ** 2 for x in lucks)
    return cov / var if var > 0.0 else 0.0
