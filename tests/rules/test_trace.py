"""Hand-dealt scenarios for seed sentences that no other scenario test showed.

Each test is named in the `## Traceability` tables of spec/RULES.md, next to the
seed sentence it shows; tests/rules/test_traceability.py keeps those names true.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
    END,
    MEXICAN,
    PASS,
    Ctx,
    apply,
    legal_moves,
    new_game,
    play,
    position,
    preset,
    tile,
)

from ._helpers import run

MEX = 4  # the Mexican train with four seats


@pytest.mark.parametrize(("name", "players"), [("standard", 4), ("masters", 8), ("celko", 8)])
def test_each_seat_has_a_private_train_and_there_is_one_mexican_train(
    name: str, players: int
) -> None:
    # 004: trains "begin the game as private" and "there is only one Mexican Train";
    # 000: with 8 players the Mexican train still exists, off the hub.
    state = new_game(preset(name, players=players), 3)
    assert [t.owner for t in state.trains] == [*range(players), MEXICAN]
    assert all(t.tiles == () and t.end == state.engine for t in state.trains)
    assert state.markers == (False,) * players
    # 002 puts the double marker on the engine: the hub double binds nobody.
    assert state.open_doubles == ()


def test_a_tile_with_the_same_number_at_either_end_is_a_double() -> None:
    # 000: "A domino with the same number at either end is called a 'Double'": it is
    # followed up by the same seat and stays open; a tile with two numbers is not.
    assert tile(5, 5).is_double and not tile(5, 3).is_double
    rules = preset("masters")
    hands = [[(5, 5), (5, 3), (4, 0)], [(2, 0)], [(3, 0)], [(6, 0)]]
    state = position(rules, hands, trains={0: [(12, 5)]}, boneyard=[(10, 10)])
    double = apply(state, play(5, 5, 0))
    assert (double.to_move, double.ctx, double.open_doubles) == (0, Ctx.FOLLOW, (0,))
    single = apply(state, play(5, 3, 0))
    assert (single.to_move, single.ctx, single.open_doubles) == (1, Ctx.START, ())


def test_a_train_has_no_length_limit() -> None:
    rules = preset("standard")
    long_line = [(12, 5), (5, 0), (0, 1), (1, 2), (2, 3), (3, 4), (4, 6)]
    long_line += [(6, 7), (7, 8), (8, 9), (9, 10), (10, 11), (11, 3)]
    hands = [[(3, 0), (9, 1)], [(2, 0)], [(4, 0)], [(6, 0)]]
    state = position(rules, hands, trains={0: long_line}, boneyard=[(10, 10)])
    assert len(state.trains[0].tiles) == 13
    assert legal_moves(state) == (play(3, 0, 0),)
    assert apply(state, play(3, 0, 0)).trains[0].end == 0


def test_voluntary_draw_may_draw_while_able_and_pass_after_drawing() -> None:
    # 004: "unable (or chooses not to) play it": `must_play = false`.
    rules = preset("standard", must_play=False)
    hands = [[(5, 1), (9, 1)], [(2, 0)], [(4, 0)], [(6, 0)]]
    state = position(rules, hands, trains={0: [(12, 5)]}, boneyard=[(10, 5), (11, 0)])
    assert legal_moves(state) == (play(5, 1, 0), DRAW)
    drawn = apply(state, DRAW)
    # The drawn 10-5 fits the seat's own train; the seat may still pass.
    assert legal_moves(drawn) == (play(10, 5, 0), PASS)
    after = apply(drawn, PASS)
    assert after.to_move == 1 and after.markers == (True, False, False, False)


def test_voluntary_draw_ends_with_the_boneyard() -> None:
    # Decision: once the boneyard is empty a seat that can play must play.
    rules = preset("standard", must_play=False)
    hands = [[(5, 1), (9, 1)], [(2, 0)], [(4, 0)], [(6, 0)]]
    state = position(rules, hands, trains={0: [(12, 5)]}, boneyard=[])
    assert legal_moves(state) == (play(5, 1, 0),)


def test_double_left_open_on_another_train_does_not_mark_the_player() -> None:
    # 004: playing elsewhere after a double, the player does "not have to mark their
    # train for not finishing the double" when the double is not on its own train.
    rules = preset("standard")
    hands = [[(6, 6), (5, 2), (9, 1)], [(6, 1), (12, 9)], [(4, 0)], [(11, 0)]]
    trains = {0: [(12, 5)], MEX: [(12, 6)]}
    state = position(rules, hands, trains=trains, boneyard=[(10, 10)])
    state = apply(state, play(6, 6, MEX))
    assert state.ctx is Ctx.FOLLOW and legal_moves(state) == (play(5, 2, 0),)
    state = apply(state, play(5, 2, 0))
    assert state.to_move == 1
    assert state.markers == (False, False, False, False)
    assert state.open_doubles == (MEX,)
    # The next seat is bound: 12-9 would start its own train.
    assert legal_moves(state) == (play(6, 1, MEX),)


def test_satisfied_double_frees_every_train() -> None:
    # 004: nothing else is played "until someone finishes the double"; then the
    # table is free again, and the satisfied train keeps its owner's marker state.
    rules = preset("standard")
    hands = [[(6, 2), (5, 1)], [(12, 9), (3, 2)], [(4, 0)], [(11, 0)]]
    trains = {0: [(12, 5)], 1: [(12, 6), (6, 6)]}
    state = position(rules, hands, trains=trains, boneyard=[(10, 10)])
    assert legal_moves(state) == (play(6, 2, 1),)  # 5-1 on its own train must wait
    state = apply(state, play(6, 2, 1))
    assert state.open_doubles == () and state.markers == (False, False, False, False)
    assert state.to_move == 1
    assert legal_moves(state) == (play(3, 2, 1), play(12, 9, MEX))


def test_masters_later_turn_starts_the_train_with_one_tile() -> None:
    # 000: a seat that could not start on its first turn, and later draws a tile
    # that starts its train, "can only play this one domino and remove their marker".
    rules = preset("masters", max_pip=6, players=2)  # engine 6-6; Mexican train is 2
    hands = [[(5, 4), (3, 1), (1, 0)], [(6, 0), (2, 0), (3, 3)]]
    state = position(rules, hands, boneyard=[(6, 5), (2, 2)], first_turns=True)
    state = apply(state, PASS)  # unable to start, without drawing (first_train_draws)
    assert state.markers == (True, False)
    state = run(state, play(6, 0, 1), play(2, 0, 1), END)
    assert state.to_move == 0 and legal_moves(state) == (DRAW,)
    state = apply(state, DRAW)
    assert state.drawn == tile(6, 5)
    assert legal_moves(state) == (play(6, 5, 0), play(6, 5, 2))
    state = apply(state, play(6, 5, 0))
    # 5-4 would go on in a first turn: here the turn is over.
    assert state.to_move == 1 and state.ctx is Ctx.START
    assert state.markers == (False, False)
    assert tile(5, 4) in state.hands[0]
