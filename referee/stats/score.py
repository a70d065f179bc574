"""What one game and one unit are worth to the tested bot: the game score and the paired result.

A game score is the share of the other scoring sides that the bot's side
finished ahead of, ties counting half: 1 for beating every other side, 0 for
finishing below all of them; with two players it is chess's 1, ½, 0. A unit is
one deal played twice, NEW where BASE sat; its paired result
(1 + NEW's score − BASE's score) / 2 lies in [0, 1], is ½ when both did
equally well, and with two seats is the pentanomial pair score of chess.
Pure: numbers in, numbers out (spec/STATS.md, "The score" and "The unit").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def opponents(sides: Sequence[int], seat: int) -> int:
    """How many scoring sides other than `seat`'s sit at the table."""
    return len({s for s in sides if s != sides[seat]})


def game_score(ranks: Sequence[int], seat: int, sides: Sequence[int] | None = None) -> float:
    """The share of the other sides `seat`'s side finished ahead of, ties counting half.

    `ranks[s]` is seat s's final rank (1 best, ties shared, partners equal), as in
    `Outcome.ranks` or the match's final ranks after forfeits; `sides[s]` is seat
    s's scoring side (`rules.team_of(s)`), every seat its own side when omitted.
    """
    if not 0 <= seat < len(ranks):
        raise ValueError(f"seat {seat} is not a seat of a {len(ranks)}-seat table")
    side_of = list(range(len(ranks))) if sides is None else list(sides)
    if len(side_of) != len(ranks):
        raise ValueError(f"{len(side_of)} sides given for {len(ranks)} ranks")
    own = side_of[seat]
    rank_of_side: dict[int, int] = {}
    for s, side in enumerate(side_of):
        if side != own:
            rank_of_side[side] = ranks[s]
    if not rank_of_side:
        raise ValueError("a game score needs at least one other side at the table")
    mine = ranks[seat]
    points = sum(1.0 if mine < r else 0.5 if mine == r else 0.0 for r in rank_of_side.values())
    return points / len(rank_of_side)


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit's paired result: what NEW and BASE scored on the same deal, same seats.

    `new` is NEW's game score in the unit (the mean over its games when it plays
    more than one), `base` BASE's in the twin game(s). `luck_new` and
    `luck_base` are the luck corrections of those games for the seat the bot
    sat in (`referee.stats.luck`), 0 when not computed. `games` counts the games
    the unit took: 2 for a duplicate pair, 1 for a single independent game.
    """

    new: float
    base: float
    luck_new: float = 0.0
    luck_base: float = 0.0
    games: int = 2

    @property
    def raw(self) -> float:
        """The paired result in [0, 1] before any luck correction; ½ is a tie."""
        return (1.0 + self.new - self.base) / 2.0

    @property
    def luck(self) -> float:
        """The luck on the paired result's scale: (luck_new − luck_base) / 2."""
        return (self.luck_new - self.luck_base) / 2.0

    @property
    def value(self) -> float:
        """The paired result with the luck taken out (factor 1): `raw − luck`."""
        return (1.0 + (self.new - self.luck_new) - (self.base - self.luck_base)) / 2.0


def single_game(score: float, luck: float = 0.0) -> Unit:
    """One game of NEW against BASE alone on its own deal, as a one-game unit.

    With two sides BASE's score is 1 − NEW's, so the unit's result is NEW's score.
    """
    return Unit(new=score, base=1.0 - score, luck_new=luck, luck_base=-luck, games=1)
