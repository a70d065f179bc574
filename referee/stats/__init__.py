"""Statistics of a match between NEW and BASE: the score, the sequential test, the luck correction.

Pure and standard library only (plus the engine, for the luck correction and
the in-process players): no trio, no I/O, no clock. The integrating command
builds a `Unit` per duplicate unit from its two games' ranks (`game_score`),
optionally with each game's `luck`, and feeds the units to `Sprt.add` in
schedule order (the GSPRT, with the mixture test of `referee.stats.mixture`
beside it); `Sprt.summary()` is what it prints, `Sprt.state` what it saves.
The model and its sources are in spec/STATS.md. May import the engine
(`referee.rules`) and nothing else of the referee.
"""

from .elo import elo_of_score, interval, los, score_of_elo
from .score import Unit, game_score, opponents, single_game
from .sprt import (
    RESOLUTION,
    InOrder,
    Sprt,
    SprtState,
    StatsError,
    Summary,
    Verdict,
    bounds,
    llr,
    mle,
    regularised,
    run,
    unanimous_bounds,
)

__all__ = [
    "RESOLUTION",
    "InOrder",
    "Sprt",
    "SprtState",
    "StatsError",
    "Summary",
    "Unit",
    "Verdict",
    "bounds",
    "elo_of_score",
    "game_score",
    "interval",
    "llr",
    "los",
    "mle",
    "opponents",
    "regularised",
    "run",
    "score_of_elo",
    "single_game",
    "unanimous_bounds",
]
