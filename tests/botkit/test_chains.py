"""The chain searches of the plan and greedy bots are the plain recursive search.

Both bots search the longest chain a hand builds with a depth-first search capped at
a number of placements; they run it on an explicit stack and stop at a chain of the
whole hand, which is faster. Every answer, cap included, must be the one the plain
recursive search gives (the bots' moves, the spec's examples and the benchmarks'
figures rest on it): here over random hands, starts and caps.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.botkit.plan import longest_chain
from referee.rules import Tile, tile

BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


def _greedy():  # type: ignore[no-untyped-def]
    loader = importlib.util.spec_from_file_location("greedy_bot", BOTS / "greedy_bot.py")
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules.setdefault("greedy_bot", module)
    loader.loader.exec_module(module)
    return module


def recursive_chain(hand: Sequence[Tile], start: int, budget: int) -> tuple[Tile, ...]:
    """The reference: tiles in hand order at each end, the first chain that beats all
    before it, at most `budget` placements."""
    used = [False] * len(hand)
    path: list[int] = []
    best: tuple[int, int, tuple[int, ...]] = (0, 0, ())
    left = budget

    def walk(end: int, pips: int) -> None:
        nonlocal best, left
        if (len(path), pips) > best[:2]:
            best = (len(path), pips, tuple(path))
        for i, t in enumerate(hand):
            if used[i] or end not in (t.hi, t.lo) or left <= 0:
                continue
            left -= 1
            used[i] = True
            path.append(i)
            walk(t.lo if t.hi == end else t.hi, pips + t.hi + t.lo)
            path.pop()
            used[i] = False

    walk(start, 0)
    return tuple(hand[i] for i in best[2])


TILES = [tile(a, b) for a in range(13) for b in range(a + 1)]
hands = st.lists(st.sampled_from(TILES), unique=True, max_size=24)
# Small pip ranges give hands full of matches: the caps are reached.
dense = st.integers(2, 6).flatmap(
    lambda top: st.lists(
        st.sampled_from([t for t in TILES if t.hi <= top]), unique=True, max_size=16
    )
)
caps = st.sampled_from([0, 1, 2, 5, 30, 150, 5_000])


@settings(max_examples=300)
@given(hand=st.one_of(hands, dense), start=st.integers(0, 12), cap=caps)
def test_the_plan_bots_chain_is_the_recursive_search(
    hand: list[Tile], start: int, cap: int
) -> None:
    assert longest_chain(hand, start, cap) == recursive_chain(hand, start, cap)


@settings(max_examples=300)
@given(
    hand=st.one_of(hands, dense),
    flips=st.lists(st.booleans(), min_size=24, max_size=24),
    start=st.integers(0, 12),
    cap=caps,
)
def test_the_greedy_bots_chain_is_the_recursive_search(
    hand: list[Tile], flips: list[bool], start: int, cap: int
) -> None:
    greedy = _greedy()
    # The wire gives tiles as [a, b] in either order.
    wire = [[t.lo, t.hi] if f else [t.hi, t.lo] for t, f in zip(hand, flips, strict=False)]
    chain = recursive_chain(hand, start, cap)
    assert greedy.longest_chain(wire, start, cap) == (len(chain), sum(t.hi + t.lo for t in chain))
