"""Hand-dealt scenarios for doubles under the `standard` preset.

Four seats, double-12, round 0: the engine is 12. Seat s's train is train s and
the Mexican train is train 4. Boneyards are given explicitly, in draw order.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
    END,
    PASS,
    Ctx,
    IllegalMoveError,
    RoundEnd,
    Rules,
    State,
    Tile,
    apply,
    legal_moves,
    play,
    position,
    preset,
    view,
)

RULES = preset("standard")
MEX = 4
NO_MARKERS = (False, False, False, False)


def deal(hands, *, rules: Rules = RULES, boneyard=(), trains=None, markers=(), to_move=0):
    return position(
        rules, hands, boneyard=boneyard, trains=trains, markers=markers, to_move=to_move
    )


def rejected(state: State, move) -> str:
    with pytest.raises(IllegalMoveError) as info:
        apply(state, move)
    return str(info.value)


def run(state: State, *moves) -> State:
    for move in moves:
        state = apply(state, move)
    return state


# Seat 0 holds 5-5 with its train ending 5; the others hold nothing that fits
# a 5, so whatever binds them is visible in their legal moves.
SEAT1 = [(5, 1), (3, 4), (12, 9)]  # 5-1 satisfies, 3-4 fits a Mexican 12-3, 12-9 starts own
OTHERS = [[(3, 2)], [(11, 0)]]


def double_on_own_train(seat0, *, rules: Rules = RULES, boneyard=((10, 10),)) -> State:
    """Seat 0 to move, train 0 = 12-5, seat 0 about to play 5-5 on it."""
    return deal([seat0, SEAT1, *OTHERS], rules=rules, trains={0: [(12, 5)]}, boneyard=boneyard)


# ---------------------------------------------------------------- the follow-up


def test_double_makes_the_same_seat_play_again_anywhere() -> None:
    state = double_on_own_train([(5, 5), (5, 2), (12, 3), (9, 1)])
    assert legal_moves(state) == (play(5, 2, 0), play(5, 5, 0), play(12, 3, MEX))
    after = apply(state, play(5, 5, 0))
    assert after.to_move == 0
    assert after.ctx is Ctx.FOLLOW
    assert after.open_doubles == (0,)
    # Not bound by its own double: the Mexican train is open too.
    assert legal_moves(after) == (play(5, 2, 0), play(12, 3, MEX))
    assert rejected(after, END) == "seat 0 played a double and must play again"


def test_follow_up_on_the_double_satisfies_it() -> None:
    state = double_on_own_train([(5, 5), (5, 2), (12, 3), (9, 1)])
    after = run(state, play(5, 5, 0), play(5, 2, 0))
    assert after.open_doubles == ()
    assert after.to_move == 1
    assert after.trains[0].tiles == (Tile(12, 5), Tile(5, 5), Tile(5, 2))
    assert legal_moves(after) == (play(12, 9, 1), play(12, 9, MEX))


def test_follow_up_unable_draws_and_plays_the_drawn_tile() -> None:
    state = double_on_own_train([(5, 5), (9, 1)], boneyard=[(12, 8), (10, 10)])
    after = apply(state, play(5, 5, 0))
    assert legal_moves(after) == (DRAW,)
    drawn = apply(after, DRAW)
    assert drawn.drawn == Tile(12, 8)
    # The drawn tile fits only the Mexican train, and it must be played there.
    assert legal_moves(drawn) == (play(12, 8, MEX),)
    done = apply(drawn, play(12, 8, MEX))
    assert done.to_move == 1
    # The 5-5 is left unfinished on seat 0's own train: its marker goes up (004).
    assert done.markers == (True, False, False, False)
    assert done.open_doubles == (0,)


def test_follow_up_unable_even_after_drawing_passes_with_marker() -> None:
    state = double_on_own_train([(5, 5), (9, 1)], boneyard=[(8, 7), (10, 10)])
    drawn = run(state, play(5, 5, 0), DRAW)
    assert legal_moves(drawn) == (PASS,)
    after = apply(drawn, PASS)
    assert after.markers == (True, False, False, False)
    assert after.to_move == 1
    assert after.open_doubles == (0,)
    assert legal_moves(after) == (play(5, 1, 0),)
    # Satisfying seat 0's double does not take seat 0's marker down.
    satisfied = apply(after, play(5, 1, 0))
    assert satisfied.open_doubles == ()
    assert satisfied.markers == (True, False, False, False)


def test_follow_up_with_another_double_repeats() -> None:
    hand = [(5, 5), (8, 8), (8, 2), (1, 0)]
    state = deal([hand, SEAT1, *OTHERS], trains={0: [(12, 5)], MEX: [(12, 8)]})
    first = apply(state, play(5, 5, 0))
    assert legal_moves(first) == (play(8, 2, MEX), play(8, 8, MEX))
    second = apply(first, play(8, 8, MEX))
    assert second.to_move == 0
    assert second.ctx is Ctx.FOLLOW
    assert second.open_doubles == (0, MEX)
    assert legal_moves(second) == (play(8, 2, MEX),)
    done = apply(second, play(8, 2, MEX))
    assert done.to_move == 1
    assert done.open_doubles == (0,)


# ---------------------------------------------------------------- binding the table


# The standard preset marks a train whose owner leaves a double on it unfinished
# (004); with the option off the train stays private, as in the other presets.
PRIVATE_DOUBLES = preset("standard", unfinished_own_double_marks=False)


def left_open(rules: Rules = RULES) -> State:
    """Seat 0 played 5-5 on its own train, then 12-3 on the Mexican train: seat 1 to move."""
    state = double_on_own_train([(5, 5), (12, 3), (9, 1)], rules=rules)
    return run(state, play(5, 5, 0), play(12, 3, MEX))


def test_open_double_binds_the_next_seat_on_a_private_train() -> None:
    private = left_open(PRIVATE_DOUBLES)
    assert private.markers == NO_MARKERS  # seat 0's train is private
    public = left_open()
    assert public.markers == (True, False, False, False)  # 004: left unfinished, marked
    for state in (private, public):
        assert state.to_move == 1
        assert state.open_doubles == (0,)
        # 3-4 fits the Mexican train and 12-9 starts seat 1's own: both barred.
        assert legal_moves(state) == (play(5, 1, 0),)
        expected = "the open double 5-5 on seat 0's train must be satisfied first"
        assert rejected(state, play(12, 9, 1)) == expected
        assert rejected(state, play(4, 3, MEX)) == expected


def test_satisfying_the_double_frees_the_table() -> None:
    after = apply(left_open(), play(5, 1, 0))
    assert after.open_doubles == ()
    # Seat 0's marker, raised for the unfinished double, stays up: only a play
    # by seat 0's side takes it down.
    assert after.markers == (True, False, False, False)
    assert after.trains[0].end == 1
    assert after.to_move == 2
    assert legal_moves(after) == (play(3, 2, MEX),)


def test_open_double_binds_its_own_player_on_the_next_turn() -> None:
    hands = [[(5, 5), (12, 3), (3, 1), (5, 2)], [(9, 1)], [(4, 2)], [(11, 0)]]
    boneyard = [(10, 9), (8, 7), (11, 11), (10, 10)]
    state = deal(hands, trains={0: [(12, 5)]}, boneyard=boneyard)
    state = run(state, play(5, 5, 0), play(12, 3, MEX), *(DRAW, PASS) * 3)
    assert state.to_move == 0
    assert state.markers == (True, True, True, True)  # seat 0's for the unfinished 5-5
    # 3-1 would fit the Mexican train (end 3), but seat 0's own 5-5 binds it too.
    assert legal_moves(state) == (play(5, 2, 0),)


def bound(seat1, boneyard) -> State:
    """Seat 1 to move, bound by the open 6-6 at the end of seat 0's private train."""
    trains = {0: [(12, 6), (6, 6)], 1: [(12, 7)]}
    hands = [[(9, 1)], seat1, [(12, 2)], [(11, 0)]]
    return deal(hands, trains=trains, boneyard=boneyard, to_move=1)


def test_bound_seat_that_cannot_satisfy_draws() -> None:
    state = bound([(7, 3), (12, 4)], [(10, 10)])
    assert legal_moves(state) == (DRAW,)


def test_bound_seat_must_play_a_drawn_tile_on_the_double() -> None:
    # 7-6 would fit seat 1's own train (end 7) too, but the double comes first.
    drawn = apply(bound([(7, 3)], [(7, 6)]), DRAW)
    assert legal_moves(drawn) == (play(7, 6, 0),)
    after = apply(drawn, play(7, 6, 0))
    assert after.open_doubles == ()
    assert after.trains[0].end == 7
    assert after.to_move == 2


def test_bound_seat_passes_when_the_drawn_tile_fits_only_elsewhere() -> None:
    drawn = apply(bound([(9, 3)], [(7, 2), (10, 10)]), DRAW)
    assert legal_moves(drawn) == (PASS,)
    after = apply(drawn, PASS)
    assert after.markers == (False, True, False, False)
    assert after.to_move == 2
    assert after.open_doubles == (0,)
    # Seat 2 is bound in turn: its 12-2 would start its own or the Mexican train.
    assert legal_moves(after) == (DRAW,)


def test_bound_seat_with_empty_boneyard_passes() -> None:
    state = bound([(7, 3), (12, 4)], [])
    assert legal_moves(state) == (PASS,)


# ---------------------------------------------------------------- several open doubles


def two_doubles(rules: Rules, seat1) -> State:
    """Seat 0 plays 9-9 on the Mexican train, then 5-5 on its own, then passes."""
    hand = [(9, 9), (5, 5), (1, 0)]
    trains = {0: [(12, 5)], MEX: [(12, 9)]}
    boneyard = [(11, 10), (10, 10)]
    state = deal([hand, seat1, *OTHERS], rules=rules, trains=trains, boneyard=boneyard)
    state = run(state, play(9, 9, MEX), play(5, 5, 0), DRAW, PASS)
    assert state.to_move == 1
    assert state.open_doubles == (MEX, 0)
    return state


def test_several_open_doubles_any_may_be_satisfied() -> None:
    state = two_doubles(RULES, [(9, 3), (5, 4), (2, 1)])
    assert set(legal_moves(state)) == {play(5, 4, 0), play(9, 3, MEX)}
    after = apply(state, play(9, 3, MEX))
    assert after.open_doubles == (0,)
    assert after.to_move == 2


def test_legal_moves_on_several_open_doubles_are_in_train_order() -> None:
    # Plays are listed by train index, then tile, whatever order the doubles came in.
    state = two_doubles(RULES, [(9, 3), (5, 4), (2, 1)])
    assert legal_moves(state) == (play(5, 4, 0), play(9, 3, MEX))


def test_several_open_doubles_reverse_takes_the_latest_first() -> None:
    rules = preset("standard", satisfy_order="reverse")
    # 5-5 on train 0 was played after 9-9 on the Mexican train (train 4).
    state = two_doubles(rules, [(9, 3), (5, 4), (2, 1)])
    assert legal_moves(state) == (play(5, 4, 0),)
    expected = "open doubles are satisfied in reverse order: the 5-5 on seat 0's train comes first"
    assert rejected(state, play(9, 3, MEX)) == expected
    after = apply(state, play(5, 4, 0))
    assert after.open_doubles == (MEX,)
    assert after.to_move == 2
    seat2 = deal(
        [[(1, 0)], [(2, 1)], [(9, 8), (12, 2)], [(11, 0)]],
        rules=rules,
        trains={0: [(12, 5), (5, 5), (5, 4)], MEX: [(12, 9), (9, 9)]},
        to_move=2,
    )
    assert legal_moves(seat2) == (play(9, 8, MEX),)


def test_reverse_order_draws_when_only_the_older_double_fits() -> None:
    rules = preset("standard", satisfy_order="reverse")
    state = two_doubles(rules, [(9, 3), (2, 1)])
    assert legal_moves(state) == (DRAW,)


# ---------------------------------------------------------------- dead doubles

# Every tile carrying a 5 is on the table: train 0 ends with the open 5-5.
DEAD_FIVES = {
    0: [(12, 5), (5, 0), (0, 1), (1, 5), (5, 2), (2, 3), (3, 5), (5, 4), (4, 6), (6, 5), (5, 5)],
    1: [(12, 7), (7, 5), (5, 8), (8, 9), (9, 5), (5, 10), (10, 11), (11, 5)],
}


def test_dead_double_binds_nobody() -> None:
    hands = [[(9, 7)], [(12, 3), (7, 7)], [(8, 6)], [(11, 9)]]
    state = deal(hands, trains=DEAD_FIVES, to_move=1, boneyard=[(10, 10)])
    assert legal_moves(state) == (play(12, 3, MEX),)
    assert view(state, 1).open_doubles == ()
    after = apply(state, play(12, 3, MEX))
    assert after.to_move == 2


def test_double_dead_when_played_binds_nobody() -> None:
    # All other 5s are on the table; seat 0 plays the last one, the 5-5.
    trains = {0: DEAD_FIVES[0][:-1], 1: DEAD_FIVES[1]}
    hands = [[(5, 5), (12, 3), (9, 7)], [(8, 3), (7, 7)], [(8, 6)], [(11, 9)]]
    state = deal(hands, trains=trains, boneyard=[(10, 10)])
    after = run(state, play(5, 5, 0), play(12, 3, MEX))
    assert after.to_move == 1
    assert legal_moves(after) == (play(8, 3, MEX),)


# ---------------------------------------------------------------- going out on a double


def test_going_out_on_a_double_ends_the_round_at_once() -> None:
    rules = preset("standard", rounds="single")
    hands = [[(5, 5)], [(5, 1), (3, 4)], [(2, 0)], [(11, 0)]]
    state = deal(hands, rules=rules, trains={0: [(12, 5)]}, boneyard=[(10, 10)])
    over = apply(state, play(5, 5, 0))
    assert over.outcome is not None
    assert legal_moves(over) == ()
    result = over.results[-1]
    assert result.end is RoundEnd.OUT
    assert result.out == (0,)
    assert result.values == (0, 13, 2, 11)
    assert result.scores == (0, 13, 2, 11)


def test_going_out_on_a_double_starts_the_next_round() -> None:
    hands = [[(5, 5)], [(5, 1), (3, 4)], [(2, 0)], [(11, 0)]]
    state = deal(hands, trains={0: [(12, 5)]}, boneyard=[(10, 10)])
    after = apply(state, play(5, 5, 0))
    assert after.round_index == 1
    assert after.engine == 11
    assert len(after.results) == 1
    assert after.results[0].out == (0,)


# ---------------------------------------------------------------- doubles_bind = false


def test_without_binding_the_double_still_forces_a_follow_up() -> None:
    rules = preset("standard", doubles_bind=False)
    state = double_on_own_train([(5, 5), (12, 3), (9, 1)], rules=rules)
    after = apply(state, play(5, 5, 0))
    assert after.to_move == 0
    assert after.ctx is Ctx.FOLLOW
    assert legal_moves(after) == (play(12, 3, MEX),)


def test_without_binding_the_next_seat_plays_anywhere_open() -> None:
    for marks in (False, True):
        rules = preset("standard", doubles_bind=False, unfinished_own_double_marks=marks)
        state = double_on_own_train([(5, 5), (12, 3), (9, 1)], rules=rules)
        after = run(state, play(5, 5, 0), play(12, 3, MEX))
        assert after.to_move == 1
        assert after.open_doubles == (0,)
        if marks:
            # 004: seat 0 left the double on its own train unfinished, so the
            # train is public and 5-1 may finish it, among the other plays.
            assert after.markers == (True, False, False, False)
            assert legal_moves(after) == (play(5, 1, 0), play(12, 9, 1), play(4, 3, MEX))
        else:
            # Seat 0's train stays private: 5-1 is not playable, the rest is.
            assert after.markers == NO_MARKERS
            assert legal_moves(after) == (play(12, 9, 1), play(4, 3, MEX))
