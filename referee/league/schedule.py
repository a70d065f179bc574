"""The schedule: every game of a league, in a fixed order, each with its seed and seats.

Round-robin plays every combination of bots for the table size; a gauntlet
plays each challenger against every combination of the field. Each table gets
its own deals, and with duplicate deals each deal is played under every cyclic
rotation of the seats; the rotations of one deal at one table form a unit for
the statistics. Games are interleaved (deal, then rotation, then table), so a
league stopped half way has played every table about equally.

A deal's seed is a 128-bit value derived with HMAC-SHA256 from the league's
secret deal key (made when the league starts and kept in its ledger, or pinned
by `deal_key`), so that no bot can work the deal back from its hand by trying
the referee's own functions on small public numbers. Tables do not share deals:
a bot that sits at two tables would otherwise see one deal twice, and know in
the second game what another seat held in the first.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
from dataclasses import dataclass

from ..match import SEED_BITS
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


def deal_seed(key: bytes, league_seed: int, deal: int, table: int) -> int:
    """The game seed of deal `deal` at table `table`: 128 bits, secret while `key` is."""
    message = f"league/{league_seed}/deal/{deal}/table/{table}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[: SEED_BITS // 8], "big")


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


def schedule(config: LeagueConfig, deal_key: bytes) -> list[Scheduled]:
    """Every game of the league in schedule order, its deals drawn from `deal_key`."""
    combos = tables(config)
    rotations = config.table if config.duplicate else 1
    games: list[Scheduled] = []
    for deal in range(config.deals):
        seeds = [deal_seed(deal_key, config.seed, deal, t) for t in range(len(combos))]
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
                        seed=seeds[t],
                        seats=seats,
                    )
                )
    return games
