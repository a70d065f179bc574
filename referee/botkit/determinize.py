"""Guess the hidden tiles: worlds consistent with everything one seat has seen.

`determinize(knowledge, rng)` returns an engine `State` of the current decision in
which the seat's hand, every tile on the table, the counts, markers, open doubles
and whose move it is are the real ones, and the tiles the seat cannot see (the
other hands, the boneyard's order) are a guess. The guess uses what the round
revealed, as a player would:

- every tile a seat played was in its hand from the start, or drawn before it was
  played;
- when a seat drew or passed, it held no tile it could have played then (the
  engine's own legal moves say which tiles those were, so every rule set's
  binding doubles, first turns and follow-ups count), and a tile it drew after
  that is free of the constraint;
- the tiles nobody has seen are spread uniformly over what is left.

Then the whole round is replayed through the engine from the guessed deal, so the
world's internal state (open doubles, bindings, a turn's step) is the engine's own.
With `strict=True` each replayed move must be legal in the guessed world, which
proves the guess could have happened; the sampler is built so that it nearly
always is, and a guess that is not is drawn again. A world that cannot be made
(a rule set whose steps the seat does not see in order: a fast first turn, where
the other sides' builds are shown only when the phase ends) gives None, and the
caller falls back to a heuristic.

The work that does not depend on the guess (where each step left the public
table, which tiles each pass rules out) is done once per decision and cached on
the knowledge's step count; the round's dealt first decision, once a round (a
guess's is that state with the guess's hands and boneyard).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..rules import (
    END,
    FirstTurn,
    IllegalMoveError,
    MoveKind,
    RulesError,
    State,
    Tile,
    apply,
    full_set,
    legal_moves,
    round_state,
    view,
)
from .knowledge import Knowledge, Step

ATTEMPTS = 24  # guesses tried before a constrained slot is filled without its constraint
FIRSTS_KEPT = 64  # rounds whose first decision `_start` remembers (see `_FIRSTS`)

_full_set = functools.cache(full_set)

# By a round's public start: its first decision as `round_state` made it for one guess
# at the deal, and the set less the engine, sorted. Any guess's first decision is that
# state with the guess's hands and boneyard (`_start`).
_FIRSTS: dict[tuple[object, ...], tuple[State, list[Tile]]] = {}


@dataclass(slots=True)
class _Slot:
    """One place in an opponent's hand: dealt (`acquired` -1) or drawn at a step."""

    seat: int
    acquired: int  # the step index of its draw, -1 for the deal
    tile: Tile | None = None  # a played tile placed here (known), else guessed
    forbidden: frozenset[Tile] = frozenset()


@dataclass
class _Plan:
    """What every guess of one decision shares."""

    slots: list[_Slot]  # every opponent slot, dealt ones first, then draws in order
    free: list[_Slot]  # slots whose tile is hidden (held now), most constrained first
    draws: list[tuple[Tile | None, _Slot | None]]  # each draw in order: a known tile or a slot
    pool: list[Tile]  # the tiles nobody has seen, in set order
    dealt: dict[int, list[_Slot]] = field(default_factory=dict)  # seat -> its dealt slots
    first: State | None = None  # the round's first decision for one guess (`_FIRSTS`)
    expected: list[Tile] = field(default_factory=list)  # the set less the engine, sorted


class Determinizer:
    """Worlds for one `Knowledge`; reuse one per decision (it caches the shared work)."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.k = knowledge
        self._plan: _Plan | None = None
        self._steps = -1

    def world(
        self, rng: random.Random, *, strict: bool = False, mover: int | None = None
    ) -> State | None:
        """One guessed world after the last step, or None. `mover`: the seat known to
        move now (a bot asked for its move), whose turn the last seat must have ended."""
        plan = self._shared()
        if plan is None:
            return None
        for attempt in range(ATTEMPTS):
            relaxed = attempt == ATTEMPTS - 1
            guess = _guess(plan, rng, relaxed=relaxed)
            if guess is None:
                continue
            state = _replay(self.k, plan, guess, rng, strict=strict, mover=mover)
            if state is not None:
                return state
        return None

    def _shared(self) -> _Plan | None:
        if len(self.k.results) != self.k.round_index:
            return None  # the earlier rounds were not seen (a bot that joined late)
        if self.k.rules.first_turn is FirstTurn.FAST:
            # Everyone builds at once and sees the other sides' builds only when the
            # phase ends, so the order of the round's steps is not the seat's to know.
            return None
        if self._plan is None or self._steps != len(self.k.steps):
            self._steps = len(self.k.steps)
            self._plan = _prepare(self.k)
        return self._plan


def determinize(
    knowledge: Knowledge, rng: random.Random, *, strict: bool = False, mover: int | None = None
) -> State | None:
    """A world consistent with `knowledge` after its last step, or None (see
    `Determinizer.world`). For many worlds of one decision, keep a `Determinizer`."""
    return Determinizer(knowledge).world(rng, strict=strict, mover=mover)


# ---------------------------------------------------------------- the shared work


def _slots(k: Knowledge) -> tuple[list[_Slot], dict[int, list[_Slot]], list[tuple[int, int]]]:
    """Every opponent slot; by seat, the dealt ones; and each draw as (step, seat)."""
    slots: list[_Slot] = []
    dealt: dict[int, list[_Slot]] = {}
    for seat, count in enumerate(k.counts):
        if seat != k.seat:
            dealt[seat] = [_Slot(seat, -1) for _ in range(count)]
            slots.extend(dealt[seat])
    draws = []
    for i, step in enumerate(k.steps):
        if step.move is None or step.move.kind is MoveKind.DRAW:
            draws.append((i, step.seat))
            if step.seat != k.seat:
                slots.append(_Slot(step.seat, i))
    return slots, dealt, draws


def _prepare(k: Knowledge) -> _Plan | None:
    """Place the played tiles, find each pass's constraint, and list the hidden tiles."""
    slots, dealt, draws = _slots(k)
    mine = set(k.hand)
    for step in k.steps:
        if step.seat == k.seat and step.drawn is not None:
            mine.add(step.drawn)
    played = [
        (i, step.seat, step.move.tile)
        for i, step in enumerate(k.steps)
        if step.move is not None and step.move.kind is MoveKind.PLAY and step.seat != k.seat
    ]
    engine = k.rules.engines[k.round_index]
    engine_tile = Tile(engine, engine)
    seen = mine | {t for _, _, t in played if t is not None} | {engine_tile}
    pool = [t for t in _full_set(k.rules.max_pip) if t not in seen]

    # First placement, constraints unknown: each played tile in the earliest slot it fits.
    if not _place_played(slots, played, {}):
        return None
    # The public replay: a world from that placement, replayed without legality checks,
    # shows the table at every step; what a seat could have played when it drew or
    # passed does not depend on the hidden tiles.
    plan = _Plan(slots, [], [], pool, dealt)
    plan.draws = _draw_list(k, slots, draws)
    rng = random.Random(0)
    guess = _guess(plan_free(plan), rng, relaxed=True)
    if guess is None:
        return None
    constraints = _constraints(k, plan, guess, pool)
    if constraints is None:
        return None
    for slot in slots:
        slot.tile = None
    if not _place_played(slots, played, constraints):
        return None
    for slot in slots:
        slot.forbidden = (
            frozenset(
                tile
                for step, (seat, tiles) in constraints.items()
                if seat == slot.seat and slot.acquired < step
                for tile in tiles
            )
            if slot.tile is None
            else frozenset()
        )
    return plan_free(plan)


def plan_free(plan: _Plan) -> _Plan:
    """`plan` with its free slots listed, the most constrained first."""
    plan.free = sorted((s for s in plan.slots if s.tile is None), key=lambda s: -len(s.forbidden))
    return plan


def _place_played(
    slots: list[_Slot],
    played: Sequence[tuple[int, int, Tile | None]],
    constraints: dict[int, tuple[int, frozenset[Tile]]],
) -> bool:
    """Put each tile an opponent played in one of its slots: the earliest one that was
    in its hand before the play and that no pass in between rules out, else the latest
    one before the play. False when a seat played more tiles than it could hold."""
    by_seat: dict[int, list[_Slot]] = {}
    for s in slots:
        by_seat.setdefault(s.seat, []).append(s)
    passes: dict[int, list[tuple[int, frozenset[Tile]]]] = {}
    for step, (who, tiles) in constraints.items():
        passes.setdefault(who, []).append((step, tiles))
    for index, seat, tile in played:
        assert tile is not None
        fits = [s for s in by_seat.get(seat, ()) if s.tile is None and s.acquired < index]
        if not fits:
            return False
        ruled = [step for step, tiles in passes.get(seat, ()) if step < index and tile in tiles]
        chosen = next(
            (s for s in fits if not any(s.acquired < step for step in ruled)),
            fits[-1],
        )
        chosen.tile = tile
    return True


def _draw_list(
    k: Knowledge, slots: list[_Slot], draws: list[tuple[int, int]]
) -> list[tuple[Tile | None, _Slot | None]]:
    """Each draw of the round in order: the seat's own drawn tile, or the slot it filled."""
    by_step = {s.acquired: s for s in slots if s.acquired >= 0}
    out: list[tuple[Tile | None, _Slot | None]] = []
    for index, seat in draws:
        if seat == k.seat:
            out.append((k.steps[index].drawn, None))
        else:
            out.append((None, by_step[index]))
    return out


def _constraints(
    k: Knowledge, plan: _Plan, guess: dict[int, Tile], pool: list[Tile]
) -> dict[int, tuple[int, frozenset[Tile]]] | None:
    """For each step at which an opponent drew for its turn or passed: that seat, and
    every tile it could have played then (so did not hold)."""
    state = _start(k, plan, guess, random.Random(0))
    if state is None:
        return None
    candidates = tuple(sorted(set(pool) | {s.tile for s in plan.slots if s.tile is not None}))
    rules = k.rules
    out: dict[int, tuple[int, frozenset[Tile]]] = {}
    for i, step in enumerate(k.steps):
        move = step.move
        if move is None:
            continue  # a penalty draw: the engine made it after the step before
        moved = _ends_turn_before(state, step.seat)
        if moved is None:
            return None
        state = moved
        if step.seat != k.seat and (
            move.kind is MoveKind.PASS or (move.kind is MoveKind.DRAW and rules.must_play)
        ):
            on_table = {t for train in state.trains for t in train.tiles}
            probe = state.copy()
            hands = list(probe.hands)
            hands[step.seat] = tuple(t for t in candidates if t not in on_table)
            probe.hands = tuple(hands)
            probe.drawn = None
            out[i] = (
                step.seat,
                frozenset(m.tile for m in legal_moves(probe) if m.tile is not None),
            )
        try:
            state = apply(state, move, check=False)
        except (IndexError, ValueError, AssertionError):
            return None
        if state.round_index != k.round_index:
            return None
    return out


# ---------------------------------------------------------------- one guess


def _guess(plan: _Plan, rng: random.Random, *, relaxed: bool) -> dict[int, Tile] | None:
    """A tile for every free slot (by its id), each allowed by its slot's constraint
    unless `relaxed`; None when the tiles run out for a constrained slot."""
    left = list(plan.pool)
    rng.shuffle(left)
    out: dict[int, Tile] = {}
    for slot in plan.free:
        if relaxed or not slot.forbidden:
            pick = len(left) - 1
        else:
            forbidden = slot.forbidden
            pick = len(left) - 1  # the last tile the slot allows
            while pick >= 0 and left[pick] in forbidden:
                pick -= 1
            if pick < 0:
                return None
        if pick < 0:
            return None
        out[id(slot)] = left.pop(pick)
    return out


def _tile_of(slot: _Slot, guess: dict[int, Tile]) -> Tile:
    return slot.tile if slot.tile is not None else guess[id(slot)]


def _start(k: Knowledge, plan: _Plan, guess: dict[int, Tile], rng: random.Random) -> State | None:
    """The round's first decision in the guessed world."""
    hands: list[list[Tile]] = [[] for _ in k.counts]
    hands[k.seat] = list(k.hand)
    for seat, dealt in plan.dealt.items():
        hands[seat] = [_tile_of(s, guess) for s in dealt]
    drawn = [tile if slot is None else _tile_of(slot, guess) for tile, slot in plan.draws]
    if any(t is None for t in drawn):
        return None
    used = {t for h in hands for t in h} | {t for t in drawn if t is not None}
    rest = [t for t in plan.pool if t not in used]
    rng.shuffle(rest)
    boneyard = [*rest, *reversed([t for t in drawn if t is not None])]
    if plan.first is None:
        made = _first(k, hands, boneyard)
        if made is None:
            return None
        plan.first, plan.expected = made
    # What `round_state` makes of these hands and this boneyard: the same state but for
    # them (it deals the round from scratch first, which is most of its cost).
    hand_tiles = tuple(tuple(sorted(h)) for h in hands)
    pile = tuple(boneyard)
    if sorted([*pile, *(t for h in hand_tiles for t in h)]) != plan.expected:
        return None  # round_state's RulesError: not the set less the engine
    state = plan.first.copy()
    state.hands = hand_tiles
    state.boneyard = pile
    state.fast_counts = tuple(len(h) for h in hand_tiles)
    return state


def _first(
    k: Knowledge, hands: list[list[Tile]], boneyard: list[Tile]
) -> tuple[State, list[Tile]] | None:
    """The round's first decision as `round_state` makes it (for these hands and this
    boneyard, the first time), and the set less the engine, sorted; None for
    `round_state`'s error. Remembered by the round's public start (`_FIRSTS`)."""
    key = (k.rules, k.round_index, k.results, k.holder, k.starter, k.engine_draws)
    made = _FIRSTS.get(key)
    if made is None:
        try:
            state = round_state(
                k.rules,
                k.round_index,
                k.results,
                hands,
                boneyard,
                holder=k.holder,
                starter=k.starter,
                engine_draws=k.engine_draws,
            )
        except RulesError:
            return None
        engine = Tile(state.engine, state.engine)
        if len(_FIRSTS) >= FIRSTS_KEPT:
            _FIRSTS.clear()
        made = _FIRSTS[key] = state, [t for t in _full_set(k.rules.max_pip) if t != engine]
    return made


def _ends_turn_before(state: State, seat: int) -> State | None:
    """`state` with the turns ended that must have ended before `seat` acted: a
    multi-tile turn ends with `end`, which no message shows the other seats."""
    while state.to_move != seat:
        if END not in legal_moves(state):
            return None
        state = apply(state, END)
    return state


def _replay(
    k: Knowledge,
    plan: _Plan,
    guess: dict[int, Tile],
    rng: random.Random,
    *,
    strict: bool,
    mover: int | None,
) -> State | None:
    """The guessed world replayed to the seat's current decision, or None if the guess
    does not hold (or, `strict`, a move was not legal in it)."""
    state = _start(k, plan, guess, rng)
    if state is None:
        return None
    steps: Sequence[Step] = k.steps
    try:
        for step in steps:
            if step.move is None:
                continue  # a penalty draw: the engine made it after the step before
            moved = _ends_turn_before(state, step.seat)
            if moved is None:
                return None
            state = moved
            state = apply(state, step.move, check=strict)
            if state.round_index != k.round_index or state.outcome is not None:
                return None
        moved = state if mover is None else _ends_turn_before(state, mover)
    except (IllegalMoveError, IndexError, ValueError, AssertionError):
        return None
    if moved is None or moved.hands[k.seat] != k.known_hand():
        return None
    return moved


def is_consistent(world: State, real: State, seat: int) -> bool:
    """True when `world` shows `seat` exactly what `real` does: the same view and the
    same legal moves (what the determinizer promises; used by the tests)."""
    return view(world, seat) == view(real, seat) and (
        world.to_move != seat or legal_moves(world) == legal_moves(real)
    )


__all__ = ["Determinizer", "determinize", "is_consistent"]
