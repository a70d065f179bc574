"""Why a move is illegal, in words a bot author can act on.

Only called when `apply` has already found the move outside `legal_moves`, so
speed does not matter here; clarity does. Each sentence names the tile, the
train and the rule at stake.
"""

from __future__ import annotations

from .legal import (
    _available,
    _follow_plays,
    _followed,
    _on_double_plays,
    _optional_follow,
    _optional_plays,
    _swan_targets,
    binding,
    legal_moves,
)
from .options import FirstTurn, FollowUp, SatisfyOrder
from .state import MEXICAN, Ctx, Move, MoveKind, State


def train_name(state: State, index: int) -> str:
    """A train as a player would name it: "seat 2's train", "the Mexican train"."""
    train = state.trains[index]
    if train.parent >= 0:
        return f"branch {index} off {train_name(state, train.parent)}"
    if train.owner == MEXICAN:
        return "the Mexican train"
    return f"seat {index}'s train"


def explain(state: State, move: Move) -> str:
    """One sentence saying why `move` is not legal in `state`."""
    if state.outcome is not None:
        return "the game is over"
    seat = state.to_move
    legal = legal_moves(state)
    kinds = {m.kind for m in legal}
    if not isinstance(move, Move) or not isinstance(move.kind, MoveKind):
        return f"{move!r} is not a move"
    if move.kind is MoveKind.PLAY:
        return _explain_play(state, move)
    if move.kind is MoveKind.DRAW:
        if state.drawn is not None and not state.boneyard:
            return f"seat {seat} already drew and the boneyard is empty"
        if not state.boneyard:
            return "the boneyard is empty"
        if state.ctx in (Ctx.CONTINUE, Ctx.SWAN, Ctx.BUILD, Ctx.BUILD_FOLLOW):
            return "no drawing in the middle of a multi-tile turn; play on or end the turn"
        if state.ctx is Ctx.START and state.turn_first and not state.rules.first_train_draws:
            if MoveKind.PLAY in kinds:
                return f"seat {seat} does not draw in its first turn: it starts its train"
            return f"seat {seat} does not draw in its first turn: unable to start, it passes"
        if state.drawn is not None:
            return f"seat {seat} already drew {state.drawn} this turn: play it or pass"
        if state.ctx is Ctx.FOLLOW and MoveKind.END in kinds:
            return "a double on one's own train need not be followed: play on or end the turn"
        return f"seat {seat} can play and must do so"
    if move.kind is MoveKind.PASS:
        if MoveKind.DRAW in kinds:
            return f"seat {seat} must draw before passing"
        if MoveKind.END in kinds:
            return "end the turn with END here: nobody passes in a multi-tile turn"
        return f"seat {seat} can play and must do so"
    # END
    if state.ctx is Ctx.FOLLOW or state.ctx is Ctx.BUILD_FOLLOW:
        if MoveKind.DRAW in kinds:
            return f"seat {seat} played a double and must play again, or draw"
        return f"seat {seat} played a double and must play again"
    if state.ctx is Ctx.CONTINUE and MoveKind.PLAY in kinds:
        # END is refused in a first train only with first_train_until_stuck.
        return f"seat {seat}'s first train goes on while a tile of its hand fits it"
    return "END only closes a multi-tile turn (long first train, fast phase, swan drive)"


def _explain_play(state: State, move: Move) -> str:
    seat = state.to_move
    tile, index = move.tile, move.train
    if tile is None or index is None:
        return "a play names a tile and a train"
    if not 0 <= index < len(state.trains):
        return f"there is no train {index}"
    if tile not in state.hands[seat]:
        return f"seat {seat} does not hold {tile}"
    name = train_name(state, index)
    if state.drawn is not None and tile != state.drawn:
        return f"seat {seat} drew {state.drawn} and may only play that tile now"
    end = state.trains[index].end
    if end not in tile:
        return f"{tile} does not match the open end {end} of {name}"
    rules = state.rules
    table = state.table
    ctx = state.ctx
    own = table.group_of[seat]
    first_train = ctx in (Ctx.CONTINUE, Ctx.BUILD) or (state.turn_first and ctx is Ctx.START)
    if first_train and state.trains[index].owner != own:
        return f"a first train is built only on one's own train, not on {name}"
    if ctx is Ctx.SWAN:
        targets = _swan_targets(state, seat, table)
        if not targets:
            return "the swan drive has no public train left to play on: END the turn"
        return f"the swan drive goes on with {train_name(state, targets[0])}, not {name}"
    if ctx in (Ctx.FOLLOW, Ctx.BUILD_FOLLOW):
        follow = {mv.train for mv in _follow_plays(state, seat, table, None)}
        if index not in follow:
            if state.lock >= 0:
                return f"the double on {train_name(state, state.lock)} must be finished first"
            return f"{name} is not open to seat {seat}"
        where = train_name(state, _followed(state))
        if _optional_follow(state, seat, table):
            if rules.follow_up is FollowUp.ON_DOUBLE and index not in {
                mv.train for mv in _optional_plays(state, seat, table)
            }:
                free = table.mexican >= 0 and not state.turn_first
                mexican = " or on the Mexican train" if free else ""
                return (
                    f"after a double on one's own train the next tile goes on that double, "
                    f"on {where}{mexican}, or the turn ends"
                )
        elif rules.follow_up is FollowUp.ON_DOUBLE and index not in {
            mv.train for mv in _on_double_plays(state, seat, table, state.drawn)
        }:
            return f"the tile after a double goes on that double, on {where}"
    bound = binding(state)
    if bound and index not in bound:
        first = state.trains[bound[-1]].tiles[-1]
        where = train_name(state, bound[-1])
        candidates = state.bind_now if table.next_turn else state.open_doubles
        if rules.satisfy_order is SatisfyOrder.REVERSE and index in candidates:
            return (
                f"open doubles are satisfied in reverse order: the {first} on {where} comes first"
            )
        if rules.satisfy_order is SatisfyOrder.LAST and index in candidates:
            return f"only the last double played binds: the {first} on {where}"
        return f"the open double {first} on {where} must be satisfied first"
    if index not in _available(state, seat, table):
        return f"{name} is private: it has no marker"
    if rules.mexican_start_restricted and state.trains[index].owner == MEXICAN:
        return "the Mexican train may only be started when no other play exists"
    if rules.announce_one_tile and move.announce and len(state.hands[seat]) != 2:
        return "announce only with the play that leaves one tile in hand"
    if rules.first_turn is FirstTurn.DELAYED and ctx is Ctx.CONTINUE:
        return f"a first train is built only on one's own train, not on {name}"
    return f"play {tile} on {name} is not legal now"
