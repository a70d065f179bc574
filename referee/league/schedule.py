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
the referee's own functions on small public numbers (`deal_seed`, in
`referee.proof.commitment`, which fixes it). Tables do not share deals:
a bot that sits at two tables would otherwise see one deal twice, and know in
the second game what another seat held in the first.

A match (format = "match") has no end fixed in advance: its schedule is a
stream of units, each one deal played twice, first with NEW in the tested seat
and then with BASE there, the field in the same seats (`match_games`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ..proof.commitment import deal_seed
from .config import LeagueConfig


@dataclass(frozen=True)
class Scheduled:
    """One game of the schedule."""

    index: int  # position in the schedule, from 0: the order standings are computed in
    unit: int  # the duplicate unit: one table and one deal
    table: int  # which combination of bots
    deal: int
    rotation: int  # in a match: 0 for NEW's game of the unit, 1 for BASE's
    seed: int
    seats: tuple[str, ...]  # bot names by seat

    @property
    def game_id(self) -> str:
        """The game's id, also the log's file name."""
        return f"g{self.index + 1:05d}"


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
    """Every game of the league in schedule order, its deals drawn from `deal_key`.

    A match without `max_games` has no last game: see `games`."""
    if config.match is not None:
        if config.match.max_units is None:
            raise ValueError("a match without max_games has no whole schedule")
        return list(match_games(config, deal_key))
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


def games(config: LeagueConfig, deal_key: bytes) -> Iterator[Scheduled]:
    """Every game of the league in schedule order, one at a time (a match may not end)."""
    if config.match is not None:
        return match_games(config, deal_key)
    return iter(schedule(config, deal_key))


def match_games(config: LeagueConfig, deal_key: bytes, start: int = 0) -> Iterator[Scheduled]:
    """A match's games from unit `start` on: in unit u, deal u is played by NEW and then
    by BASE in seat u mod table; the field keeps the other seats in file order (with no
    field, the other seat holds the other bot: the chess game pair). The bots' own seeds
    come from the deal seed and the seat, so they are the same in both games."""
    match = config.match
    assert match is not None
    unit = start
    while match.max_units is None or unit < match.max_units:
        seed = deal_seed(deal_key, config.seed, unit, 0)
        tested = unit % config.table
        for which, (me, other) in enumerate(((match.new, match.base), (match.base, match.new))):
            others = iter(match.field or (other,))
            seats = tuple(me if s == tested else next(others) for s in range(config.table))
            yield Scheduled(
                index=2 * unit + which,
                unit=unit,
                table=0,
                deal=unit,
                rotation=which,
                seed=seed,
                seats=seats,
            )
        unit += 1
