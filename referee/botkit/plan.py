"""The plan baseline: greedy, with a lookahead of the chains the hand can still build.

Each legal play is scored by what it leaves in hand. After the play, the hand is
laid out as the longest chain it can still build on the seat's own train, then the
longest chain it can build from the remaining tiles on any other train the seat may
use (the Mexican train, public trains, the train just played on); every tile on
neither chain is "stuck", and stuck tiles cost their true value (the double-blank
as the rules score it, not 0) plus a little each. Doubles that can be followed from
the hand are welcome and those that cannot are not; a play on the seat's own
train while its marker is up is welcome (it comes down); when an opponent is close
to going out, shedding value counts ten times more.

`Seen` is the part of a position this needs, made from a protocol `Turn` (over the
wire) or an engine `State` (inside a search's rollouts), so both play the same plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from protocol.messages import MoveSpec, Turn

from ..rules import MEXICAN, Move, MoveKind, Rules, State, Tile, legal_moves, tile

CHAIN_BUDGET = 5_000  # tile placements one chain search may try
STUCK_TILE = 2.0  # cost of each stuck tile, besides its value
OTHER_CHAIN = 0.85  # a tile that chains on another train costs this share of its value
DOUBLE_FOLLOW = 8.0  # a double whose follow-up stays in hand
DOUBLE_ALONE = 6.0  # a double nothing in hand could follow
MARKER = 6.0  # a play on its own train while its marker is up
ELSEWHERE = 0.5  # tie-break: keep its own train for later
DANGER = 2  # an opponent with this many tiles or fewer may go out soon
NON_PLAY_ORDER = ("end", "draw", "pass")  # when there is no play at all


class Seen(NamedTuple):
    """What the plan reads of a position, from the seat's point of view."""

    seat: int
    side: int  # the scoring side whose train is `seat`'s own
    hand: tuple[Tile, ...]
    ends: tuple[int, ...]  # each train's open end
    owners: tuple[int, ...]  # each train's side, MEXICAN for the Mexican train and its branches
    public: tuple[bool, ...]  # each train: may anyone play on it
    marker_up: bool  # the seat's own marker
    danger: bool  # an opponent may go out soon
    blank: int  # what the double-blank scores


def value_of(t: Tile, blank: int) -> int:
    """A tile's value in a hand at the end of a round."""
    return blank if t.hi == 0 and t.lo == 0 else t.hi + t.lo


def longest_chain(hand: Sequence[Tile], start: int, budget: int = CHAIN_BUDGET) -> tuple[Tile, ...]:
    """The longest chain of hand tiles from the open end `start` (the heaviest among
    equally long ones), found by a depth-first search of at most `budget` placements.

    The search tries the hand's tiles in hand order at each end and keeps the first
    chain that beats every one before it; a chain of the whole hand cannot be beaten,
    so the search stops there. It runs on an explicit stack (no call per placement):
    the same placements in the same order as a recursive search, at about half the cost.
    """
    by_pip: dict[int, list[tuple[int, int, int]]] = {}  # end -> (index, other end, pips)
    for i, t in enumerate(hand):
        a, b = t.hi, t.lo
        by_pip.setdefault(a, []).append((i, b, a + b))
        if b != a:
            by_pip.setdefault(b, []).append((i, a, a + b))
    whole = len(hand)
    used = [False] * whole
    path: list[int] = []
    totals = [0]  # the chain's pips at each depth
    best_count = best_pips = 0
    best: tuple[int, ...] = ()
    left = budget
    stack = [iter(by_pip.get(start, ()))]
    while stack:
        for i, end, pips in stack[-1]:
            if used[i]:
                continue
            if left <= 0:
                return tuple(hand[j] for j in best)
            left -= 1
            used[i] = True
            path.append(i)
            total = totals[-1] + pips
            count = len(path)
            if count > best_count or (count == best_count and total > best_pips):
                best_count, best_pips, best = count, total, tuple(path)
                if count == whole:
                    return tuple(hand[j] for j in best)
            stack.append(iter(by_pip.get(end, ())))
            totals.append(total)
            break
        else:
            stack.pop()
            totals.pop()
            if path:
                used[path.pop()] = False
    return tuple(hand[j] for j in best)


def seen_of_turn(turn: Turn, rules: Rules) -> Seen:
    """`Seen` from a turn request."""
    v = turn.view
    own = v.trains[turn.seat]
    side = own.owner
    counts = v.hand_counts
    others = [counts[s] for s in range(len(counts)) if v.trains[s].owner != side]
    return Seen(
        seat=turn.seat,
        side=side,
        hand=tuple(tile(a, b) for a, b in v.hand),
        ends=tuple(t.end for t in v.trains),
        owners=tuple(t.owner for t in v.trains),
        public=tuple(t.public for t in v.trains),
        marker_up=v.markers[turn.seat],
        danger=bool(others) and min(others) <= DANGER,
        blank=rules.double_blank_score,
    )


def seen_of_state(state: State, seat: int) -> Seen:
    """`Seen` from an engine state (the seat's own hand and public facts only)."""
    table = state.table
    side = table.group_of[seat]
    markers = state.markers
    members = table.members
    counts = [len(h) for h in state.hands]
    others = [counts[s] for s in range(len(counts)) if table.group_of[s] != side]
    return Seen(
        seat=seat,
        side=side,
        hand=state.hands[seat],
        ends=tuple(t.end for t in state.trains),
        owners=tuple(t.owner for t in state.trains),
        public=tuple(
            t.owner == MEXICAN or all(markers[s] for s in members[t.owner]) for t in state.trains
        ),
        marker_up=markers[seat],
        danger=bool(others) and min(others) <= DANGER,
        blank=state.rules.double_blank_score,
    )


class Planner:
    """Scores the plays of one position; chain searches are remembered."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen
        self._chains: dict[tuple[tuple[Tile, ...], int], tuple[Tile, ...]] = {}

    def chain(self, hand: tuple[Tile, ...], start: int) -> tuple[Tile, ...]:
        """`longest_chain`, remembered for this position."""
        key = (hand, start)
        found = self._chains.get(key)
        if found is None:
            found = self._chains[key] = longest_chain(hand, start)
        return found

    def value(self, t: Tile, train: int, announce: bool = False) -> float:
        """How good playing `t` on `train` is; higher is better."""
        s = self.seen
        rest = list(s.hand)
        rest.remove(t)
        hand = tuple(rest)
        own = s.seat
        end = t.lo if t.hi == s.ends[train] else t.hi  # the train's end after the play
        own_end = end if train == own else s.ends[own]
        planned = self.chain(hand, own_end)
        spare = tuple(x for x in hand if x not in planned)
        best_other: tuple[Tile, ...] = ()
        if spare:
            others = {end} if train != own else set()
            for i, e in enumerate(s.ends):
                if i != own and (s.public[i] or s.owners[i] == s.side):
                    others.add(e)
            for e in sorted(others):
                found = self.chain(spare, e)
                if len(found) > len(best_other):
                    best_other = found
        stuck = [x for x in spare if x not in best_other]
        blank = s.blank
        left = sum(value_of(x, blank) for x in hand)
        cost = (
            sum(value_of(x, blank) for x in stuck)
            + STUCK_TILE * len(stuck)
            + OTHER_CHAIN * sum(value_of(x, blank) for x in best_other)
        )
        score = -10.0 * left - cost if s.danger else -cost
        if t.is_double and hand:
            if any(t.hi in x for x in hand):
                score += DOUBLE_FOLLOW
            elif not any(e in x for x in hand for e in self._ends_after(train, t.hi)):
                score -= DOUBLE_ALONE
        if s.owners[train] == s.side:
            if s.marker_up:
                score += MARKER
        else:
            score += ELSEWHERE
        if announce:
            score += 0.01  # an announced play never draws a penalty
        return score

    def _ends_after(self, played_on: int, double: int) -> set[int]:
        s = self.seen
        ends = {double}
        for i, e in enumerate(s.ends):
            if i != played_on and (s.owners[i] == s.side or s.public[i]):
                ends.add(e)
        return ends


def choose(turn: Turn, rules: Rules) -> int:
    """The plan's choice for a turn request: an index into `turn.legal`."""
    legal = turn.legal
    plays = [i for i, mv in enumerate(legal) if mv.action == "play"]
    if not plays:
        return _non_play(legal)
    if len(plays) == 1:
        return plays[0]
    planner = Planner(seen_of_turn(turn, rules))

    def score(i: int) -> float:
        mv = legal[i]
        assert mv.tile is not None and mv.train is not None
        return planner.value(tile(*mv.tile), mv.train, mv.announce)

    return max(plays, key=score)


def _non_play(legal: Sequence[MoveSpec]) -> int:
    for action in NON_PLAY_ORDER:
        for i, mv in enumerate(legal):
            if mv.action == action:
                return i
    return 0


def non_play(legal: Sequence[Move]) -> Move:
    """With no play among `legal`: end the turn, else draw, else pass."""
    for kind in (MoveKind.END, MoveKind.DRAW, MoveKind.PASS):
        for m in legal:
            if m.kind is kind:
                return m
    return legal[0]


def plan_move(state: State, moves: Sequence[Move] | None = None) -> Move:
    """The plan's choice for the seat to move in an engine state."""
    legal = moves if moves is not None else legal_moves(state)
    plays = [m for m in legal if m.kind is MoveKind.PLAY]
    if not plays:
        return non_play(legal)
    if len(plays) == 1:
        return plays[0]
    planner = Planner(seen_of_state(state, state.to_move))

    def score(m: Move) -> float:
        assert m.tile is not None and m.train is not None
        return planner.value(m.tile, m.train, m.announce)

    return max(plays, key=score)
