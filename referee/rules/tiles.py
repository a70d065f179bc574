"""Tiles and sets: the nouns every other engine module uses.

A tile is stored high pip first, so `Tile(6, 4)` and the wire's `[6, 4]` are one
value whichever way round a player names it. Nothing here knows about turns.
"""

from __future__ import annotations

from typing import NamedTuple


class Tile(NamedTuple):
    """One domino, high end first."""

    hi: int
    lo: int

    @property
    def is_double(self) -> bool:
        """True for a double such as 6-6."""
        return self.hi == self.lo

    @property
    def pips(self) -> int:
        """The pip count, double-blank counting 0 (scoring applies its own value)."""
        return self.hi + self.lo

    def other(self, end: int) -> int:
        """The pip showing after this tile is joined to `end` (which it must match)."""
        return self.lo if self.hi == end else self.hi

    def __str__(self) -> str:
        return f"{self.hi}-{self.lo}"


def tile(a: int, b: int) -> Tile:
    """The tile with ends `a` and `b`, in either order."""
    return Tile(a, b) if a >= b else Tile(b, a)


def full_set(max_pip: int) -> tuple[Tile, ...]:
    """Every tile of a double-`max_pip` set once, in a fixed order."""
    tiles = _SETS.get(max_pip)
    if tiles is None:
        tiles = tuple(Tile(hi, lo) for hi in range(max_pip + 1) for lo in range(hi + 1))
        if len(_SETS) < 64:
            _SETS[max_pip] = tiles
    return tiles


_SETS: dict[int, tuple[Tile, ...]] = {}  # full_set's results, made once (every round deals one)


def set_size(max_pip: int) -> int:
    """How many tiles a double-`max_pip` set holds."""
    return (max_pip + 1) * (max_pip + 2) // 2
