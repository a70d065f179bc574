"""The search baseline: perfect-information Monte Carlo over determinized worlds.

For one decision: guess a world consistent with what the seat has seen
(`referee.botkit.determinize`), play every candidate move in it, finish the round
with a fast plan-aware rollout policy for every seat, and score the round from the
seat's side (the others' mean points less its own). Every candidate is played in
the same world with the same rollout random numbers (common random numbers), so
the comparison between candidates carries no luck of the deal. Worlds are added
until the deadline; the candidate with the best mean wins, ties going to the plan
baseline's choice, and it overrules the plan only when its paired differences with
the plan's move, over at least `MIN_WORLDS` worlds, clear the 97.5% Student t
quantile (with fewer worlds the error estimate is itself noise: at two worlds a
two-standard-error test passed chance leads and left the plan's move on 29% of
decisions). The search stops before the deadline once the choice is settled: no
other candidate can be better by `INDIFFERENT` points at the 99.5% quantile (it
saves 2-3% of the worlds at 16 a decision and 7-10% at 64, the same move on all but
one decision in 720: bench/bench_search_stop.py). One legal move
is played at once, without a search; when no world can be made (a rule set whose
steps the seat did not all see), the plan baseline decides.

The rollout policy is the plan's idea made cheap: each seat keeps the longest chain
for its own train (found once per hand and end, shared by every rollout of the
decision, and searched for only when it could change the move) and sheds the rest
first, heaviest first, follows doubles it can follow, and plays on its own train when
its marker is up; a little noise keeps rollouts of one world apart.

Rollouts run on the rollout model (`referee.botkit.rollout`, about three times the
engine's speed), made once per world and copied per candidate; the policy reads it
as it would the engine and draws the same random numbers, so a world scores the
same either way (`tests/botkit/test_rollout.py`). A world the model refuses (a
hand-made state with a tile in play twice) is rolled out with the engine.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..rules import Move, MoveKind, RoundEnd, State, Tile, apply, legal_moves
from ..rules.scoring import finish_round
from .determinize import Determinizer
from .knowledge import Knowledge
from .plan import longest_chain, non_play, plan_move, value_of
from .rollout import DRAW_CODE, END_CODE, Rollout, code_of, tile_index

ROLLOUT_CHAIN_BUDGET = 150  # placements per chain search inside rollouts
NOISE = 3.0  # rollout noise, in pips
PLAN_CACHE = 20_000  # chain searches remembered per decision
MIN_WORLDS = 8  # worlds before the search may overrule the plan or stop early
# Student t quantiles by degrees of freedom (n - 1 worlds): 97.5% one-sided for
# overruling the plan (its paired test), 99.5% for stopping early; the normal's
# beyond the table.
T_SWITCH = {7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042,
            60: 2.000, 120: 1.980}  # fmt: skip
T_STOP = {7: 3.499, 8: 3.355, 9: 3.250, 10: 3.169, 12: 3.055, 15: 2.947, 20: 2.845, 30: 2.750,
          60: 2.660, 120: 2.617}  # fmt: skip
Z_SWITCH, Z_STOP = 1.960, 2.576
INDIFFERENT = 0.5  # points: a move this little better is not worth more worlds
PLAY = MoveKind.PLAY
OUT = RoundEnd.OUT


@dataclass
class Searched:
    """A search's choice and what it rests on."""

    move: Move
    worlds: int  # worlds played (every candidate in each)
    values: dict[Move, float]  # mean score per candidate (the others' points less its own)
    fallback: bool  # True when the plan chose: one legal move, or no world could be made


class Rollouts:
    """The rollout policy and the chain searches it remembers for one decision."""

    def __init__(self) -> None:
        self.plans: dict[tuple[tuple[Tile, ...], int], frozenset[Tile]] = {}
        self.masks: dict[tuple[int, int], int] = {}  # the same plans as tile masks

    def plan(self, hand: tuple[Tile, ...], end: int) -> frozenset[Tile]:
        """The tiles of the longest chain `hand` builds from `end`."""
        key = (hand, end)
        found = self.plans.get(key)
        if found is None:
            if len(self.plans) > PLAN_CACHE:
                self.plans.clear()
            found = self.plans[key] = frozenset(longest_chain(hand, end, ROLLOUT_CHAIN_BUDGET))
        return found

    def move(self, state: State, rng: random.Random) -> Move:
        """The rollout policy's move for the seat to move.

        Each play is valued both ways, with its tile in the plan and not (the same sums
        in the same order either way), and the noise is drawn for every play in order,
        before the plan is looked at. The chain search is skipped when its answer cannot
        change the choice: no tile in hand meets the seat's train end (the plan is then
        empty), or one play beats every other whichever way the plan goes."""
        moves = legal_moves(state)
        if len(moves) == 1:
            return moves[0]
        plays = [m for m in moves if m.kind is PLAY]
        if not plays:
            return non_play(moves)
        seat = state.to_move
        hand = state.hands[seat]
        blank = state.rules.double_blank_score
        marker = state.markers[seat]
        out: list[float] = []  # each play's value with its tile off the plan
        on: list[float] = []  # and on it
        for m in plays:
            t = m.tile
            assert t is not None
            v = float(value_of(t, blank))
            if m.train == seat:
                if marker:
                    v += 6.0
                w = v + 2.0
            else:
                w = v - 8.0
            if t.hi == t.lo:
                bonus = 5.0 if any(t.hi in x for x in hand if x != t) else -3.0
                v += bonus
                w += bonus
            if m.announce:
                v += 0.5
                w += 0.5
            noise = rng.random() * NOISE
            out.append(v + noise)
            on.append(w + noise)
        end = state.trains[seat].end
        values = out
        if len(plays) > 1 and any(end in x for x in hand):
            lead = _sure(out, on)
            if lead is not None:
                return plays[lead]  # the best whichever way the plan goes
            plan = self.plan(hand, end)
            values = [b if m.tile in plan else a for m, a, b in zip(plays, out, on, strict=True)]
        return plays[values.index(max(values))]  # the first of the best, as a strict > keeps

    def plan_mask(self, world: Rollout, seat: int, end: int) -> int:
        """`plan` for the model: the chain's tiles as a mask of the seat's hand."""
        key = (world.hands[seat], end)
        found = self.masks.get(key)
        if found is None:
            if len(self.masks) > PLAN_CACHE:
                self.masks.clear()
            chain = longest_chain(world.hand(seat), end, ROLLOUT_CHAIN_BUDGET)
            found = self.masks[key] = sum(1 << tile_index(t) for t in chain)
        return found

    def move_code(self, world: Rollout, rng: random.Random) -> int:
        """`move` on the model: the same choice, with the same random numbers drawn."""
        moves = world.legal()
        if len(moves) == 1:
            return moves[0]
        plays = [c for c in moves if c >= 0]
        if not plays:
            return END_CODE if END_CODE in moves else DRAW_CODE if DRAW_CODE in moves else moves[0]
        seat = world.to_move
        spec = world.spec
        value = spec.value
        pips = spec.pips
        match = spec.match
        hand = world.hands[seat]
        marker = world.markers >> seat & 1
        out: list[float] = []
        on: list[float] = []
        for c in plays:
            k = c >> 9
            v = float(value[k])
            if c >> 1 & 255 == seat:
                if marker:
                    v += 6.0
                w = v + 2.0
            else:
                w = v - 8.0
            hi, lo = pips[k]
            if hi == lo:
                bonus = 5.0 if hand & ~(1 << k) & match[hi] else -3.0
                v += bonus
                w += bonus
            if c & 1:
                v += 0.5
                w += 0.5
            noise = rng.random() * NOISE
            out.append(v + noise)
            on.append(w + noise)
        end = world.t_end[seat]
        values = out
        if len(plays) > 1 and hand & match[end]:
            lead = _sure(out, on)
            if lead is not None:
                return plays[lead]
            plan = self.plan_mask(world, seat, end)
            values = [
                b if plan >> (c >> 9) & 1 else a for c, a, b in zip(plays, out, on, strict=True)
            ]
        return plays[values.index(max(values))]

    def finish_model(self, world: Rollout, seat: int, rng: random.Random) -> float:
        """`finish` on the model (which it plays out in place): the same score."""
        while not world.over:
            world.apply(self.move_code(world, rng))
        return _side_score(world.scores, world.spec.group_of, seat)

    def finish(self, state: State, seat: int, rng: random.Random) -> float:
        """Play the round out; the others' mean points less the seat's side's.

        A play of the mover's last tile ends the round with that seat out (outside a
        masters first turn, `first_turns_complete`): it is scored here, as the engine
        would, without the engine dealing the next round only to be dropped."""
        index = state.round_index
        rules = state.rules
        shortcut = not rules.first_turns_complete
        while state.round_index == index and state.outcome is None:
            move = self.move(state, rng)
            mover = state.to_move
            if shortcut and move.kind is PLAY and len(state.hands[mover]) == 1:
                hands = (*state.hands[:mover], (), *state.hands[mover + 1 :])
                result = finish_round(rules, index, state.engine, state.starter, OUT, hands)
                return _side_score(result.scores, state.table.group_of, seat)
            state = apply(state, move, check=False)
        return _side_score(state.results[index].scores, state.table.group_of, seat)


def search(
    knowledge: Knowledge,
    legal: Sequence[Move],
    rng: random.Random,
    *,
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
    max_worlds: int | None = None,
) -> Searched:
    """The best of `legal` (the seat's legal moves now) by the mean of its rollouts
    over guessed worlds, until `clock()` reaches `deadline` or `max_worlds` worlds."""
    candidates = list(dict.fromkeys(legal))
    if len(candidates) == 1:
        return Searched(candidates[0], 0, {}, True)
    determinizer = Determinizer(knowledge)
    rollouts = Rollouts()
    rows: list[list[float]] = []  # per world, each candidate's score
    preferred: Move | None = None  # the plan's choice, in the first world
    paired: _Paired | None = None
    misses = 0
    while clock() < deadline and (max_worlds is None or len(rows) < max_worlds):
        world = determinizer.world(rng, mover=knowledge.seat)
        if world is None or set(legal_moves(world)) != set(candidates):
            misses += 1  # no world, or not the real decision (never expected)
            if misses >= 3 and not rows:
                break
            continue
        if preferred is None:
            preferred = plan_move(world)
            if preferred not in candidates:
                break  # the plan decides (below), whatever the worlds say
            paired = _Paired(len(candidates), candidates.index(preferred))
        seed = rng.getrandbits(64)
        values = []
        model = _model_of(world)
        for move in candidates:
            if max_worlds is None and clock() >= deadline:
                break
            if model is not None:
                played = model.copy()
                played.apply(code_of(move))
                if played.over:
                    values.append(_side_score(played.scores, played.spec.group_of, knowledge.seat))
                else:
                    values.append(
                        rollouts.finish_model(played, knowledge.seat, random.Random(seed))
                    )
                continue
            after = apply(world, move, check=False)
            if after.round_index != knowledge.round_index or after.outcome is not None:
                values.append(_score(after, knowledge.round_index, knowledge.seat))
            else:
                values.append(rollouts.finish(after, knowledge.seat, random.Random(seed)))
        if len(values) < len(candidates):
            break  # out of time inside this world: keep the candidates even
        rows.append(values)
        assert paired is not None
        paired.add(values)
        if len(rows) >= MIN_WORLDS and _settled(rows, paired):
            break  # more worlds would not change the choice: the time is saved
    if not rows or preferred not in candidates:
        choice = preferred if preferred in candidates else _first_play(candidates)
        assert choice is not None
        return Searched(choice, len(rows), {}, True)
    n = len(rows)
    means = {m: sum(r[j] for r in rows) / n for j, m in enumerate(candidates)}
    return Searched(candidates[_choice(rows, candidates.index(preferred))], n, means, False)


class _Paired:
    """Each candidate's running sums of its paired differences with the plan's move
    (the same world and rollout numbers for both), for the tests below."""

    def __init__(self, count: int, plan: int) -> None:
        self.plan = plan
        self.sums = [0.0] * count
        self.squares = [0.0] * count

    def add(self, values: Sequence[float]) -> None:
        base = values[self.plan]
        sums, squares = self.sums, self.squares
        for j, v in enumerate(values):
            d = v - base
            sums[j] += d
            squares[j] += d * d


def _t(table: dict[int, float], beyond: float, n: int) -> float:
    """The quantile of a `table` for `n` worlds (n - 1 degrees of freedom): the entry of
    the largest tabled count not above, so never smaller than the true quantile."""
    df = n - 1
    if df < min(table):
        return math.inf
    return table[max(k for k in table if k <= df)] if df <= max(table) else beyond


def _bound(mean: float, var: float, n: int, t: float) -> tuple[float, float]:
    """The paired mean less and plus `t` standard errors."""
    half = t * math.sqrt(max(var, 0.0) / n)
    return mean - half, mean + half


def _choice(rows: Sequence[Sequence[float]], plan: int) -> int:
    """The candidate with the best mean (the plan's among equals), if it beat the plan's
    move by its paired test (`_clearly_better`); else the plan's."""
    totals = [sum(r[j] for r in rows) for j in range(len(rows[0]))]
    best = max(range(len(totals)), key=lambda j: (totals[j], j == plan))
    return best if best != plan and _clearly_better(rows, best, plan) else plan


def _settled(rows: Sequence[Sequence[float]], paired: _Paired) -> bool:
    """Whether more worlds would hardly change the choice: the chosen candidate is
    beaten by no other by more than `INDIFFERENT` points at the stopping quantile
    (`T_STOP`, stricter than the switch test's, as it is asked after every world),
    and a choice against the plan is one that beat the plan at that quantile too."""
    n = len(rows)
    if n < MIN_WORLDS:
        return False
    t = _t(T_STOP, Z_STOP, n)
    choice = _choice(rows, paired.plan)
    if choice == paired.plan:
        for j, (s, q) in enumerate(zip(paired.sums, paired.squares, strict=True)):
            if j == choice:
                continue
            mean = s / n
            if _bound(mean, (q - s * mean) / (n - 1), n, t)[1] >= INDIFFERENT:
                return False
        return True
    s, q = paired.sums[choice], paired.squares[choice]
    mean = s / n
    if _bound(mean, (q - s * mean) / (n - 1), n, t)[0] <= 0:
        return False
    for j in range(len(rows[0])):
        if j == choice:
            continue
        diffs = [r[j] - r[choice] for r in rows]
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        if _bound(mean, var, n, t)[1] >= INDIFFERENT:
            return False
    return True


def _sure(out: list[float], on: list[float]) -> int | None:
    """The play whose worse value (off the plan or on it) beats every other's better
    one, which the plan cannot change; None when there is none."""
    low = list(map(min, out, on))
    high = list(map(max, out, on))
    floor = max(low)
    lead = low.index(floor)
    high[lead] = -math.inf
    return lead if floor > max(high) else None


def _model_of(world: State) -> Rollout | None:
    """The rollout model of a world, or None where it refuses one (the engine then plays)."""
    try:
        return Rollout.from_state(world)
    except ValueError:
        return None


def _clearly_better(rows: Sequence[Sequence[float]], a: int, b: int) -> bool:
    """True when candidate `a` beat `b` over at least `MIN_WORLDS` worlds by more than
    the 97.5% Student t quantile of standard errors of the paired differences (the
    same worlds and rollout numbers for both). With fewer worlds the error estimate
    is itself too noisy (at two worlds it has one degree of freedom), so the plan
    stays."""
    n = len(rows)
    if n < MIN_WORLDS:
        return False
    diffs = [r[a] - r[b] for r in rows]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return _bound(mean, var, n, _t(T_SWITCH, Z_SWITCH, n))[0] > 0


def _score(state: State, index: int, seat: int) -> float:
    """The score of a round the candidate itself ended (the seat went out)."""
    return _side_score(state.results[index].scores, state.table.group_of, seat)


def _side_score(scores: Sequence[int], side: Sequence[int], seat: int) -> float:
    """The others' mean points less the seat's (its side's) points."""
    others = [scores[s] for s in range(len(scores)) if side[s] != side[seat]]
    return (sum(others) / len(others) if others else 0.0) - scores[seat]


def _first_play(candidates: Sequence[Move]) -> Move:
    for m in candidates:
        if m.kind is MoveKind.PLAY:
            return m
    return candidates[0]
