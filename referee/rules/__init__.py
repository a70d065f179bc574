"""The Mexican Train engine: pure, standard library only, no I/O.

Vocabulary after OpenSpiel: `new_game(rules, seed)`, `legal_moves(state)`,
`apply(state, move)`, `state.to_move`, `state.outcome`, `view(state, seat)`;
`binding(state)` names the open doubles that confine the seat to move.
One decision is one atomic `Move`; a multi-tile turn is several in a row.
Imports nothing of the referee (nor of `protocol`).
"""

from .engine import IllegalMoveError, apply, deal_round, new_game, round_tiles
from .explain import explain, train_name
from .legal import binding, legal_moves
from .options import (
    OPTION_NAMES,
    PRESET_SOURCES,
    PRESETS,
    VARIANTS,
    BindDuration,
    EngineSource,
    FirstPlayer,
    FirstTurn,
    FollowUp,
    HandTable,
    OwnDoubleFollowUp,
    RoundOrder,
    Rules,
    RulesError,
    SatisfyOrder,
    preset,
    to_toml,
)
from .scoring import hand_value
from .setup import position, round_state
from .state import (
    DRAW,
    END,
    MEXICAN,
    PASS,
    Ctx,
    Move,
    MoveKind,
    Outcome,
    RoundEnd,
    RoundResult,
    State,
    Train,
    play,
)
from .tiles import Tile, full_set, set_size, tile
from .view import TrainView, View, view

__all__ = [
    "DRAW",
    "END",
    "MEXICAN",
    "OPTION_NAMES",
    "PASS",
    "PRESETS",
    "PRESET_SOURCES",
    "VARIANTS",
    "BindDuration",
    "Ctx",
    "EngineSource",
    "FirstPlayer",
    "FirstTurn",
    "FollowUp",
    "HandTable",
    "IllegalMoveError",
    "Move",
    "MoveKind",
    "Outcome",
    "OwnDoubleFollowUp",
    "RoundEnd",
    "RoundOrder",
    "RoundResult",
    "Rules",
    "RulesError",
    "SatisfyOrder",
    "State",
    "Tile",
    "Train",
    "TrainView",
    "View",
    "apply",
    "binding",
    "deal_round",
    "explain",
    "full_set",
    "hand_value",
    "legal_moves",
    "new_game",
    "play",
    "position",
    "preset",
    "round_state",
    "round_tiles",
    "set_size",
    "tile",
    "to_toml",
    "train_name",
    "view",
]
