"""Hand-dealt scenarios for masters' first turn: `first_train_until_stuck` and `first_train_draws`.

000: a seat extends its first train "until they can't put down any more", and a
seat "unable to start their train in their first turn" simply puts its marker
out. `masters` sets both options; the cases with an option off are what `long`
does without it (celko, or masters with `--set`). See spec/RULES.md, First turns.
Double-6 unless said otherwise, round 0: the engine is 6-6. Seat s's train is
train s; the Mexican train is train `players`. Boneyards are given in draw order.
"""

from __future__ import annotations

from typing import Any

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
    apply,
    legal_moves,
    play,
    position,
    preset,
    tile,
)

from ._helpers import run

MEX = 2  # the Mexican train with two players


def masters(**overrides: Any) -> Rules:
    return preset("masters", max_pip=6, players=2, **overrides)


def _rejected(state: State, move: object) -> str:
    with pytest.raises(IllegalMoveError) as info:
        apply(state, move)
    return str(info.value)


# ---------------------------------------------------------------- first_train_until_stuck


def test_masters_first_train_goes_on_while_a_tile_fits() -> None:
    hands = [[(6, 5), (6, 2), (5, 4), (5, 1), (3, 3)], [(6, 3), (3, 0), (2, 2)]]
    s = position(masters(), hands, first_turns=True)
    # Own train only (6-2 and 6-5 would start the Mexican train in a later turn).
    assert legal_moves(s) == (play(6, 2, 0), play(6, 5, 0))
    s = apply(s, play(6, 5, 0))
    # Two tiles fit: the seat chooses which, but it may not stop.
    assert (s.ctx, legal_moves(s)) == (Ctx.CONTINUE, (play(5, 1, 0), play(5, 4, 0)))
    assert "goes on while a tile" in _rejected(s, END)
    s = apply(s, play(5, 4, 0))
    # Nothing fits 4 (5-1 would have fitted 5, a moment ago): now it ends.
    assert legal_moves(s) == (END,)
    s = apply(s, END)
    assert s.trains[0].tiles == (tile(6, 5), tile(5, 4))
    assert (s.to_move, s.markers) == (1, (False, False))
    # Seat 1's first train goes on too: 3-0 fits after 6-3, and 2-2 fits nothing after.
    assert legal_moves(s) == (play(6, 3, 1),)
    s = apply(s, play(6, 3, 1))
    assert legal_moves(s) == (play(3, 0, 1),)
    s = run(s, play(3, 0, 1), END)
    # Seat 0's second turn is one tile, anywhere open.
    assert legal_moves(s) == (play(6, 2, MEX),)
    s = apply(s, play(6, 2, MEX))
    assert (s.to_move, s.ctx) == (1, Ctx.START)


def test_long_first_train_may_end_after_each_tile_with_until_stuck_off() -> None:
    rules = masters(first_train_until_stuck=False)
    hands = [[(6, 5), (6, 2), (5, 4), (4, 1)], [(6, 3), (3, 0), (2, 2)]]
    s = position(rules, hands, first_turns=True)
    assert legal_moves(s) == (play(6, 2, 0), play(6, 5, 0))
    s = apply(s, play(6, 5, 0))
    assert (s.to_move, s.ctx) == (0, Ctx.CONTINUE)
    assert legal_moves(s) == (play(5, 4, 0), END)
    s = apply(s, play(5, 4, 0))
    assert legal_moves(s) == (play(4, 1, 0), END)
    s = apply(s, END)  # 4-1 still fits: stopping is the seat's choice
    assert s.trains[0].tiles == (tile(6, 5), tile(5, 4))
    assert s.hands[0] == (tile(4, 1), tile(6, 2))
    assert (s.to_move, s.ctx, s.markers) == (1, Ctx.START, (False, False))
    s = run(s, play(6, 3, 1), play(3, 0, 1))
    assert legal_moves(s) == (END,)
    s = apply(s, END)
    assert legal_moves(s) == (play(4, 1, 0), play(6, 2, MEX))


def _after_seat_0_goes_out(seat1: list[tuple[int, int]], boneyard: list[tuple[int, int]]) -> State:
    """Three seats, first turns: seat 0 goes out with 6-5, 5-4; seats 1 and 2 still owe theirs."""
    rules = preset("masters", max_pip=6, players=3, rounds="single")
    hands = [[(6, 5), (5, 4)], seat1, [(5, 0), (4, 4)]]
    s = position(rules, hands, boneyard=boneyard, first_turns=True)
    s = run(s, play(6, 5, 0), play(5, 4, 0))
    assert s.outcome is None and s.hands[0] == () and s.to_move == 1
    return s


def _seat_2_passes_undrawn_and_the_round_ends(s: State, values: tuple[int, ...]) -> None:
    assert s.to_move == 2 and legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    assert s.outcome is not None
    (result,) = s.results
    assert result.end is RoundEnd.OUT and result.out == (0,)
    assert result.values == values


def test_masters_first_turns_after_going_out_build_until_stuck_without_drawing() -> None:
    # first_turns_complete: the seats still owing a first turn take it as masters
    # plays it: on while a tile fits, and a seat unable to start passes undrawn.
    s = _after_seat_0_goes_out([(6, 1), (2, 1), (3, 3)], [(6, 0), (2, 0)])
    s = apply(s, play(6, 1, 1))
    assert legal_moves(s) == (play(2, 1, 1),)
    s = run(s, play(2, 1, 1), END)
    _seat_2_passes_undrawn_and_the_round_ends(s, (0, 6, 13))


def test_masters_first_turns_after_going_out_draw_to_follow_a_double() -> None:
    # Those first turns are first turns like any other: a double the seat cannot follow
    # is drawn for, as in any follow-up (First turns), while a seat unable to start its
    # train still passes without drawing.
    s = _after_seat_0_goes_out([(6, 3), (3, 3), (1, 0)], [(3, 2), (2, 0)])
    s = run(s, play(6, 3, 1), play(3, 3, 1))
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert s.drawn == tile(3, 2) and legal_moves(s) == (play(3, 2, 1),)
    s = apply(s, play(3, 2, 1))
    assert legal_moves(s) == (END,)  # nothing left fits the 2: the train ends
    s = apply(s, END)
    _seat_2_passes_undrawn_and_the_round_ends(s, (0, 1, 13))


# ---------------------------------------------------------------- first_train_draws


def test_masters_unable_to_start_marks_without_drawing() -> None:
    hands = [[(5, 4), (3, 1)], [(6, 0), (1, 0), (4, 4)]]
    # 6-1 on top of the boneyard would start seat 0's train: it is not drawn.
    s = position(masters(), hands, boneyard=[(6, 1), (2, 0)], first_turns=True)
    assert legal_moves(s) == (PASS,)
    assert "does not draw in its first turn" in _rejected(s, DRAW)
    s = apply(s, PASS)
    assert (s.to_move, s.markers) == (1, (True, False))
    assert s.boneyard == (tile(2, 0), tile(6, 1))  # drawn from the end: nothing taken
    assert s.hands[0] == (tile(3, 1), tile(5, 4)) and s.trains[0].tiles == ()
    assert s.first_pending[0] is False
    # Seat 1's first turn is its own train only, public train 0 or not.
    assert legal_moves(s) == (play(6, 0, 1),)
    s = run(s, play(6, 0, 1), play(1, 0, 1), END)
    # Seat 0's next turn is an ordinary one: it draws, and 6-1 starts its train
    # as one tile (000: "they can only play this one domino and remove their marker").
    assert s.to_move == 0 and legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert legal_moves(s) == (play(6, 1, 0), play(6, 1, MEX))
    s = apply(s, play(6, 1, 0))
    assert (s.to_move, s.markers) == (1, (False, False))


def test_masters_unable_to_start_with_an_empty_boneyard_passes_and_may_block() -> None:
    rules = preset("masters", max_pip=6, players=2, rounds="single")
    s = position(rules, [[(5, 4), (3, 1)], [(6, 0), (4, 4)]], boneyard=[], first_turns=True)
    assert legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    # Seat 1 can still start: the round goes on.
    assert s.outcome is None and legal_moves(s) == (play(6, 0, 1),)
    s = run(s, play(6, 0, 1), END)
    assert legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    # Nobody can ever play again: the pass blocks the round.
    assert s.outcome is not None and s.results[0].end is RoundEnd.BLOCKED
    assert s.results[0].values == (13, 8)


def test_no_first_train_draw_with_voluntary_draw_passes_instead() -> None:
    # must_play = false: where the seat could have drawn instead of starting, it
    # may pass instead; with an empty boneyard it must start, as in any turn.
    rules = masters(must_play=False)
    hands = [[(6, 5), (3, 1)], [(6, 0)]]
    s = position(rules, hands, boneyard=[(2, 0)], first_turns=True)
    assert legal_moves(s) == (play(6, 5, 0), PASS)
    s = apply(s, PASS)
    assert (s.to_move, s.markers, s.boneyard) == (1, (True, False), (tile(2, 0),))
    empty = position(rules, hands, boneyard=[], first_turns=True)
    assert legal_moves(empty) == (play(6, 5, 0),)


def test_masters_unfollowed_double_in_first_train_still_draws() -> None:
    # first_train_draws concerns the start only: a double is followed as in any turn.
    s = position(
        masters(), [[(6, 5), (5, 5), (2, 1)], [(6, 0)]], boneyard=[(5, 0), (1, 1)], first_turns=True
    )
    s = run(s, play(6, 5, 0), play(5, 5, 0))
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert s.drawn == tile(5, 0) and legal_moves(s) == (play(5, 0, 0),)
    s = apply(s, play(5, 0, 0))
    # The drawn follow-up satisfied the double; nothing fits 0: the train ends.
    assert s.open_doubles == () and legal_moves(s) == (END,)


@pytest.mark.parametrize("until_stuck", [True, False])
def test_first_train_draws_on_a_drawn_starter_goes_on(until_stuck: bool) -> None:
    # A train started by a drawn tile is a first train: with until_stuck it goes
    # on while a tile fits, without it the seat may stop after any tile.
    rules = masters(first_train_draws=True, first_train_until_stuck=until_stuck)
    s = position(rules, [[(5, 4), (3, 1)], [(6, 0)]], boneyard=[(6, 1), (2, 0)], first_turns=True)
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert s.drawn == tile(6, 1) and legal_moves(s) == (play(6, 1, 0),)
    s = apply(s, play(6, 1, 0))
    assert (s.to_move, s.ctx) == (0, Ctx.CONTINUE)
    expected = (play(3, 1, 0),) if until_stuck else (play(3, 1, 0), END)
    assert legal_moves(s) == expected
    s = apply(s, play(3, 1, 0))
    assert legal_moves(s) == (END,)


def test_first_train_draws_on_an_unfit_draw_marks_the_train() -> None:
    rules = masters(first_train_draws=True)
    s = position(rules, [[(5, 4), (3, 1)], [(6, 0)]], boneyard=[(2, 0), (6, 1)], first_turns=True)
    s = apply(s, DRAW)
    assert s.drawn == tile(2, 0) and legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    assert (s.to_move, s.markers) == (1, (True, False))
    assert s.trains[0].tiles == ()
    assert s.hands[0] == (tile(2, 0), tile(3, 1), tile(5, 4))
    assert s.first_pending[0] is False  # the next turn is an ordinary one


def test_with_teams_a_first_train_goes_on_while_a_tile_fits_either_of_the_sides() -> None:
    # Teams: a side's trains are "one and the same" (spec/RULES.md, Teams): seat 2 may
    # build on its own train (2) or its partner's (0), and under first_train_until_stuck
    # it goes on while a tile of its hand fits the open end of either.
    rules = preset("masters", max_pip=6, players=4, teams=True)
    hands = [[(1, 1)], [(0, 0)], [(4, 2), (2, 3), (6, 1), (5, 5)], [(0, 1)]]
    s = position(rules, hands, trains={0: [(6, 4)]}, to_move=2, first_turns=True)
    assert legal_moves(s) == (play(4, 2, 0), play(6, 1, 2))  # no other train
    s = run(s, play(4, 2, 0), play(2, 3, 0))
    # Nothing fits 3 on train 0, but 6-1 starts train 2, the side's other: no end yet.
    assert (s.ctx, legal_moves(s)) == (Ctx.CONTINUE, (play(6, 1, 2),))
    assert "goes on while a tile" in _rejected(s, END)
    s = apply(s, play(6, 1, 2))
    assert legal_moves(s) == (END,)  # 5-5 fits neither 3 nor 1: now it may end
