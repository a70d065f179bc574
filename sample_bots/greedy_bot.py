"""A greedy bot with a plan for its own train.

The idea is the classic one for Mexican Train: keep a chain of tiles in hand
that can go on your own train one after another (nobody else may play there
while your marker is down), and get rid of everything else on the Mexican
train and the public trains first, heaviest first. Each legal play is scored
by what it leaves behind:

- the pips that would still be stuck in hand, off the planned chain (fewer is
  better), so heavy tiles that do not fit the plan leave first;
- a double is welcome when a follow-up for it stays in hand (two tiles go in
  one turn) and unwelcome when nothing could follow it;
- a play on its own train is welcome when its marker is up (it comes down);
- when equal, a play elsewhere beats a play on its own train, which keeps;
- once an opponent is down to one or two tiles, the heaviest tile goes first.

It never draws, passes or ends a turn while it can play. `choose(turn, game)`
is pure: the same request gives the same answer. Run it with the project's
Python: `python sample_bots/greedy_bot.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from protocol.bot import Game, run
from protocol.messages import MoveSpec, Tile, Turn, ViewInfo

SEARCH_LIMIT = 1_000  # tile placements tried by one plan search (5,000 played no better)
STUCK_TILE = 2.0  # cost of each tile in hand off the planned chain, besides its pips
DOUBLE_FOLLOW_BONUS = 8.0  # a double whose follow-up stays in hand
DOUBLE_ALONE_PENALTY = 6.0  # a double after which nothing in hand could be played
MARKER_BONUS = 6.0  # a play on its own train while its marker is up
ELSEWHERE_BONUS = 0.5  # tie-break: keep its own train for later
DANGER_HAND = 2  # an opponent with this many tiles or fewer may go out soon
NON_PLAY_ORDER = ("end", "draw", "pass")  # when there is no play at all


def pips(tile: Sequence[int]) -> int:
    """The pip count of a tile."""
    return tile[0] + tile[1]


def other_end(tile: Sequence[int], end: int) -> int:
    """The pip a tile shows once joined to `end` (which it matches)."""
    return tile[1] if tile[0] == end else tile[0]


def longest_chain(hand: Sequence[Tile], start: int, limit: int = SEARCH_LIMIT) -> tuple[int, int]:
    """(tiles, pips) of the longest chain from `start` made of hand tiles, the
    heaviest among equally long ones; the search stops after `limit` placements.

    A depth-first search on an explicit stack: at each end it tries the hand's tiles
    in hand order and keeps the first chain that beats every one before it. A chain of
    the whole hand cannot be beaten, so it stops there."""
    by_pip: dict[int, list[tuple[int, int, int]]] = {}  # end -> (index, other end, pips)
    for i, (a, b) in enumerate(hand):
        by_pip.setdefault(a, []).append((i, b, a + b))
        if b != a:
            by_pip.setdefault(b, []).append((i, a, a + b))
    whole = len(hand)
    used = [False] * whole
    path: list[int] = []
    totals = [0]  # the chain's pips at each depth
    best = (0, 0)
    budget = limit
    stack = [iter(by_pip.get(start, ()))]
    while stack:
        for i, end, pips in stack[-1]:
            if used[i]:
                continue
            if budget <= 0:
                return best
            budget -= 1
            used[i] = True
            path.append(i)
            total = totals[-1] + pips
            if (len(path), total) > best:
                best = (len(path), total)
                if len(path) == whole:
                    return best
            stack.append(iter(by_pip.get(end, ())))
            totals.append(total)
            break
        else:
            stack.pop()
            totals.pop()
            if path:
                used[path.pop()] = False
    return best


@dataclass
class Planner:
    """What one decision needs from the view, with a cache of chain searches."""

    view: ViewInfo
    seat: int
    cache: dict[tuple[tuple[Tile, ...], int], tuple[int, int]] = field(default_factory=dict)

    @property
    def side(self) -> int:
        """The scoring side that owns this seat's train."""
        return self.view.trains[self.seat].owner

    @property
    def danger(self) -> bool:
        """True when an opponent may go out soon."""
        counts = self.view.hand_counts
        side = self.side
        trains = self.view.trains
        opponents = [counts[s] for s in range(len(counts)) if trains[s].owner != side]
        return bool(opponents) and min(opponents) <= DANGER_HAND

    def chain(self, hand: tuple[Tile, ...], start: int) -> tuple[int, int]:
        """`longest_chain`, remembered for this decision."""
        key = (hand, start)
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = longest_chain(hand, start)
        return found

    def value(self, move: MoveSpec) -> float:
        """How good a play is; higher is better."""
        assert move.tile is not None and move.train is not None
        view = self.view
        tile = move.tile
        train = view.trains[move.train]
        hand = list(view.hand)
        hand.remove(tile if tile in hand else (tile[1], tile[0]))
        rest = tuple(hand)
        own = view.trains[self.seat]
        own_end = other_end(tile, train.end) if move.train == self.seat else own.end
        length, planned = self.chain(rest, own_end)
        left = sum(pips(t) for t in rest)
        stuck = left - planned + STUCK_TILE * (len(rest) - length)
        value = -10.0 * left - stuck if self.danger else -stuck
        if tile[0] == tile[1] and rest:
            if any(tile[0] in t for t in rest):
                value += DOUBLE_FOLLOW_BONUS
            elif not self.playable_after(rest, move.train, tile[0]):
                value -= DOUBLE_ALONE_PENALTY
        if train.owner == self.side:
            if view.markers[self.seat]:
                value += MARKER_BONUS
        else:
            value += ELSEWHERE_BONUS
        if move.announce:
            value += 0.01  # an announced play never draws a penalty
        return value

    def playable_after(self, rest: tuple[Tile, ...], played_on: int, double: int) -> bool:
        """True when some tile of `rest` fits a train this seat may use after a double."""
        ends = {double}
        for t in self.view.trains:
            if t.train != played_on and (t.owner == self.side or t.public):
                ends.add(t.end)
        return any(a in ends or b in ends for a, b in rest)


def choose(turn: Turn, game: Game) -> int:
    """The index of the chosen move in `turn.legal`."""
    del game  # the choice depends on the request alone
    plays = [i for i, mv in enumerate(turn.legal) if mv.action == "play"]
    if not plays:
        for action in NON_PLAY_ORDER:
            for i, mv in enumerate(turn.legal):
                if mv.action == action:
                    return i
        return 0
    planner = Planner(turn.view, turn.seat)
    return max(plays, key=lambda i: planner.value(turn.legal[i]))


def main() -> None:
    """Speak the protocol on stdin and stdout until `bye`."""
    run(choose, name="greedy", version="1.0", author="sample bots")


if __name__ == "__main__":
    main()
