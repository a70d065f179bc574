"""The schedule: every game of a league, in a fixed order, each with its seed and seats.

Round-robin plays every combination of bots for the table size; a gauntlet
plays each challenger against every combination of the field. Every table
plays the same deals (a deal's seed depends only on the league seed and the
deal number), and with duplicate deals each deal is played under every cyclic
rotation of the seats; the rotations of one deal at one table form a unit for
the statistics. Games are interleaved (deal, then rotation, then table), so a
league stopped half way has played every table about equally.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from .config import LeagueConfig


@dataclass(frozen=True)
class Scheduled:
    """One game of the schedule."""

    index: int  # position in the schedule, from 0: the order standings are computed in
    unit: int  # the duplicate unit: one table and one deal
    table: int  # which combination of bots
    deal: int
    rotation: int
    seed: int
    seats: tuple[str, ...]  # bot names by seat

    @property
    def game_id(self) -> str:
        """The game's id, also the log's file name."""
        return f"g{self.index + 1:05d}"


def deal_seed(league_seed: int, deal: int) -> int:
    """The game seed of deal `deal`: the same for every table."""
    return random.Random(f"league/{league_seed}/deal/{deal}").getrandbits(31)


def tables(config: LeagueConfig) -> list[tuple[str, ...]]:
    """The combinations of bots that sit down together, in a fixed order."""
    names = [b.name for b in config.bots]
    if config.format == "gauntlet":
        field = [n for n in names if n not in config.challengers]
        return [
            (challenger, *others)
            for challenger in config.challengers
            for others in itertools.combinations(field, config.table - 1)
        ]
    return list(itertools.combinations(names, config.table))


def schedule(config: LeagueConfig) -> list[Scheduled]:
    """Every game of the league in schedule order."""
    combos = tables(config)
    rotations = config.table if config.duplicate else 1
    games: list[Scheduled] = []
    for deal in range(config.deals):
        seed = deal_seed(config.seed, deal)
        for rotation in range(rotations):
            for t, combo in enumerate(combos):
                seats = combo[rotation:] + combo[:rotation]
                games.append(
                    Scheduled(
                        index=len(games),
                        unit=deal * len(combos) + t,
                        table=t,
                        deal=deal,
                        rotation=rotation,
                        seed=seed,
                        seats=seats,
                    )
                )
    return games
