"""Hand-dealt scenarios for one turn under the `standard` preset.

Four seats, double-12, round 0: the engine is 12. Seat s's train is train s and
the Mexican train is train 4. Boneyards are always given explicitly, in the
order the tiles will be drawn, so every position is exact.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
    END,
    PASS,
    Ctx,
    IllegalMoveError,
    State,
    Tile,
    apply,
    legal_moves,
    play,
    position,
    preset,
)

RULES = preset("standard")
MEX = 4


def deal(hands, *, boneyard=(), trains=None, markers=(), to_move=0) -> State:
    """A standard four-seat position; four hands, seat 0 first."""
    return position(
        RULES, hands, boneyard=boneyard, trains=trains, markers=markers, to_move=to_move
    )


def rejected(state: State, move) -> str:
    """The message of the IllegalMoveError that `apply(state, move)` raises."""
    with pytest.raises(IllegalMoveError) as info:
        apply(state, move)
    return str(info.value)


def snapshot(state: State) -> dict[str, object]:
    """Every public field of a state, to compare before and after `apply`."""
    return {name: getattr(state, name) for name in State.__slots__ if name != "_legal"}


# A table where seat 0 has a choice: own train ends 5, seat 1's train is marked
# and ends 7, seat 2's train is private and ends 6, seat 3's and the Mexican
# train are empty (open end 12).
TABLE = {0: [(12, 5)], 1: [(12, 7)], 2: [(12, 6)]}
OTHERS = [[(1, 0)], [(2, 0)], [(3, 0)]]


# ---------------------------------------------------------------- legal moves


def test_legal_moves_are_own_public_and_mexican_trains_in_order() -> None:
    hand = [(5, 1), (0, 5), (8, 5), (7, 2), (6, 4), (12, 3), (9, 9)]
    state = deal([hand, *OTHERS], trains=TABLE, markers=[1], boneyard=[(11, 0)])
    assert legal_moves(state) == (
        play(5, 0, 0),
        play(5, 1, 0),
        play(8, 5, 0),
        play(7, 2, 1),
        play(12, 3, MEX),
    )


def test_private_train_of_another_seat_is_closed() -> None:
    # 6-4 matches seat 2's train (end 6), but seat 2 has no marker up.
    state = deal([[(6, 4)], *OTHERS], trains=TABLE, markers=[1], boneyard=[(11, 0)])
    assert legal_moves(state) == (DRAW,)
    assert rejected(state, play(6, 4, 2)) == "seat 2's train is private: it has no marker"


def test_empty_own_train_starts_with_engine_tile() -> None:
    state = deal([[(12, 4), (4, 3)], *OTHERS], trains={MEX: [(12, 9)]}, boneyard=[(11, 0)])
    assert legal_moves(state) == (play(12, 4, 0),)


def test_mexican_train_starts_with_engine_matching_tile() -> None:
    hand = [(12, 4), (5, 4), (11, 4)]
    state = deal([hand, *OTHERS], trains={0: [(12, 10)]}, boneyard=[(11, 0)])
    assert legal_moves(state) == (play(12, 4, MEX),)
    after = apply(state, play(12, 4, MEX))
    assert after.trains[MEX].tiles == (Tile(12, 4),)
    assert after.trains[MEX].end == 4
    assert after.to_move == 1
    # Once started, its open end is the far pip of the tile played.
    back = deal([[(11, 4), (5, 4)], *OTHERS], trains={0: [(12, 10)], MEX: [(12, 4)]})
    assert legal_moves(back) == (play(5, 4, MEX), play(11, 4, MEX))


def test_mexican_train_is_open_to_every_seat_without_marker() -> None:
    hands = [[(1, 0)], [(2, 0)], [(12, 8)], [(3, 0)]]
    state = deal(hands, trains={2: [(12, 6)]}, to_move=2, boneyard=[(11, 0)])
    assert legal_moves(state) == (play(12, 8, MEX),)


def test_play_moves_the_turn_to_the_next_seat_and_wraps() -> None:
    hands = [[(1, 0)], [(2, 0)], [(3, 0)], [(12, 6), (6, 4)]]
    state = deal(hands, to_move=3, boneyard=[(11, 0)])
    after = apply(state, play(12, 6, 3))
    assert after.to_move == 0
    assert after.ctx is Ctx.START
    assert after.hands[3] == (Tile(6, 4),)
    assert after.trains[3].tiles == (Tile(12, 6),)
    assert after.trains[3].end == 6


# ---------------------------------------------------------------- drawing


def test_no_play_gives_only_draw() -> None:
    state = deal([[(9, 1), (6, 3)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    assert legal_moves(state) == (DRAW,)


def test_draw_takes_the_next_boneyard_tile_into_the_hand() -> None:
    state = deal([[(9, 1)], *OTHERS], trains=TABLE, boneyard=[(5, 10), (11, 0)])
    after = apply(state, DRAW)
    assert after.drawn == Tile(10, 5)
    assert after.hands[0] == (Tile(9, 1), Tile(10, 5))
    assert after.boneyard == (Tile(11, 0),)
    assert after.to_move == 0


def test_drawn_tile_that_fits_must_be_played_at_once() -> None:
    state = deal([[(9, 1)], *OTHERS], trains=TABLE, boneyard=[(5, 10), (11, 0)])
    after = apply(state, DRAW)
    assert legal_moves(after) == (play(10, 5, 0),)
    assert rejected(after, PASS) == "seat 0 can play and must do so"
    done = apply(after, play(10, 5, 0))
    assert done.trains[0].end == 10
    assert done.hands[0] == (Tile(9, 1),)
    assert done.to_move == 1
    assert done.markers == (False, False, False, False)


def test_drawn_tile_lists_every_train_it_fits() -> None:
    # 7-5 fits the own train (end 5) and seat 1's marked train (end 7).
    state = deal([[(9, 1)], *OTHERS], trains=TABLE, markers=[1], boneyard=[(7, 5)])
    assert legal_moves(apply(state, DRAW)) == (play(7, 5, 0), play(7, 5, 1))


def test_only_the_drawn_tile_is_playable_after_a_draw() -> None:
    # 7-3 fits seat 1's train once seat 1 is marked; it is not the drawn tile.
    state = deal([[(7, 3)], *OTHERS], trains=TABLE, boneyard=[(5, 10)])
    after = apply(state, DRAW)
    assert legal_moves(after) == (play(10, 5, 0),)
    assert rejected(after, play(7, 3, 0)) == "seat 0 drew 10-5 and may only play that tile now"


def test_unplayable_draw_leaves_only_pass() -> None:
    state = deal([[(9, 1)], *OTHERS], trains=TABLE, boneyard=[(3, 2), (11, 0)])
    after = apply(state, DRAW)
    assert after.drawn == Tile(3, 2)
    assert legal_moves(after) == (PASS,)
    assert rejected(after, DRAW) == "seat 0 already drew 3-2 this turn: play it or pass"


def test_pass_raises_the_seat_marker_and_ends_the_turn() -> None:
    state = deal([[(9, 1)], *OTHERS], trains=TABLE, boneyard=[(3, 2), (11, 0)])
    after = apply(apply(state, DRAW), PASS)
    assert after.markers == (True, False, False, False)
    assert after.to_move == 1
    assert after.drawn is None
    assert after.hands[0] == (Tile(3, 2), Tile(9, 1))
    assert after.boneyard == (Tile(11, 0),)


def test_empty_boneyard_and_no_play_gives_only_pass() -> None:
    # Seat 1 can still play on the Mexican train, so the round goes on.
    hands = [[(9, 1)], [(12, 2), (2, 0)], [(3, 0)], [(4, 0)]]
    state = deal(hands, trains=TABLE, boneyard=[])
    assert legal_moves(state) == (PASS,)
    assert rejected(state, DRAW) == "the boneyard is empty"
    after = apply(state, PASS)
    assert after.round_index == 0
    assert after.markers == (True, False, False, False)
    assert after.to_move == 1
    assert legal_moves(after) == (play(12, 2, MEX),)


# ---------------------------------------------------------------- markers


def test_marker_makes_the_train_public_to_the_others() -> None:
    hands = [[(9, 1)], [(5, 2), (7, 2)], [(3, 0)], [(4, 0)]]
    # Without seat 0's marker, seat 1 may only use its own train.
    closed = deal(hands, trains=TABLE, to_move=1, boneyard=[(11, 0)])
    assert legal_moves(closed) == (play(7, 2, 1),)
    state = deal(hands, trains=TABLE, boneyard=[(3, 2), (11, 0)])
    after = apply(apply(state, DRAW), PASS)
    assert after.to_move == 1
    assert legal_moves(after) == (play(5, 2, 0), play(7, 2, 1))


def test_others_playing_on_a_marked_train_leave_the_marker_up() -> None:
    hands = [[(9, 1)], [(5, 2), (7, 2)], [(3, 0)], [(4, 0)]]
    state = deal(hands, trains=TABLE, markers=[0], to_move=1, boneyard=[(11, 0)])
    after = apply(state, play(5, 2, 0))
    assert after.trains[0].end == 2
    assert after.markers == (True, False, False, False)


def test_owner_playing_on_own_train_takes_the_marker_down() -> None:
    state = deal([[(5, 1), (9, 1)], *OTHERS], trains=TABLE, markers=[0, 1], boneyard=[(11, 0)])
    after = apply(state, play(5, 1, 0))
    assert after.markers == (False, True, False, False)


def test_owner_playing_elsewhere_keeps_the_marker_up() -> None:
    hand = [(12, 3), (7, 4), (9, 1)]
    state = deal([hand, *OTHERS], trains=TABLE, markers=[0, 1], boneyard=[(11, 0)])
    assert legal_moves(state) == (play(7, 4, 1), play(12, 3, MEX))
    on_mexican = apply(state, play(12, 3, MEX))
    assert on_mexican.markers == (True, True, False, False)
    on_public = apply(state, play(7, 4, 1))
    assert on_public.markers == (True, True, False, False)


# ---------------------------------------------------------------- illegal moves


def test_error_names_the_unmatched_open_end() -> None:
    hands = [[(1, 0)], [(7, 5), (2, 0)], [(3, 0)], [(4, 0)]]
    state = deal(hands, trains=TABLE, markers=[2], to_move=1, boneyard=[(11, 0)])
    # Tiles are named high end first, however the move named them.
    assert rejected(state, play(5, 7, 2)) == "7-5 does not match the open end 6 of seat 2's train"


def test_error_names_a_tile_not_held() -> None:
    state = deal([[(5, 1)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    assert rejected(state, play(9, 1, 0)) == "seat 0 does not hold 9-1"


def test_error_names_the_open_double_that_binds() -> None:
    hands = [[(5, 1), (6, 2)], [(2, 0)], [(3, 0)], [(4, 0)]]
    trains = {0: [(12, 5)], 1: [(12, 6), (6, 6)]}
    state = deal(hands, trains=trains, boneyard=[(11, 0)])
    assert legal_moves(state) == (play(6, 2, 1),)
    expected = "the open double 6-6 on seat 1's train must be satisfied first"
    assert rejected(state, play(5, 1, 0)) == expected


def test_error_for_draw_or_pass_when_a_play_exists() -> None:
    state = deal([[(5, 1)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    assert rejected(state, DRAW) == "seat 0 can play and must do so"
    assert rejected(state, PASS) == "seat 0 can play and must do so"


def test_error_for_pass_before_drawing_and_for_end() -> None:
    state = deal([[(9, 1)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    assert rejected(state, PASS) == "seat 0 must draw before passing"
    expected = "END only closes a multi-tile turn (long first train, fast phase, swan drive)"
    assert rejected(state, END) == expected


def test_error_for_a_train_that_does_not_exist() -> None:
    state = deal([[(5, 1)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    assert rejected(state, play(5, 1, 7)) == "there is no train 7"


# ---------------------------------------------------------------- purity


def test_apply_leaves_the_old_state_unchanged() -> None:
    state = deal([[(5, 1), (9, 1)], *OTHERS], trains=TABLE, markers=[0], boneyard=[(3, 2)])
    before = snapshot(state)
    moves = legal_moves(state)
    played = apply(state, play(5, 1, 0))
    assert snapshot(state) == before
    assert legal_moves(state) == moves
    drawn = apply(deal([[(9, 1)], *OTHERS], trains=TABLE, boneyard=[(3, 2)]), DRAW)
    drawn_before = snapshot(drawn)
    apply(drawn, PASS)
    assert snapshot(drawn) == drawn_before
    assert played is not state


def test_rejected_move_leaves_the_state_unchanged() -> None:
    state = deal([[(5, 1)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    before = snapshot(state)
    rejected(state, play(6, 4, 2))
    assert snapshot(state) == before
    assert legal_moves(state) == (play(5, 1, 0),)


def test_apply_that_ends_the_game_leaves_the_old_state_unchanged() -> None:
    rules = preset("standard", rounds="single")
    state = position(rules, [[(5, 1)], *OTHERS], trains=TABLE, boneyard=[(11, 0)])
    before = snapshot(state)
    over = apply(state, play(5, 1, 0))
    assert over.outcome is not None
    assert snapshot(state) == before
    assert state.outcome is None
    assert state.results == ()
    assert legal_moves(state) == (play(5, 1, 0),)
