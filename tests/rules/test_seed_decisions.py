"""Scenario tests for the readings of the seeds taken in issue 14 (spec/RULES.md, **Decision**).

Hand-dealt positions, four seats, double-12, round 0: the engine is 12. Seat s's
train is train s; with a Mexican train it is train 4. Boneyards are given
explicitly, in draw order.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
    PASS,
    IllegalMoveError,
    Rules,
    State,
    apply,
    legal_moves,
    play,
    position,
    preset,
    view,
)

from ._helpers import run

# ----------------------------------------------------------------
# doubles on marked and own trains (002, 004)

MEX = 4


def _rejected(state: State, move: object) -> str:
    with pytest.raises(IllegalMoveError) as info:
        apply(state, move)
    return str(info.value)


def _double_on_marked_train(rules: Rules) -> State:
    """Seat 0 to move; seat 1's marker is up and its train ends 5; seat 2's is private."""
    hands = [[(5, 5), (5, 2), (6, 3), (11, 4)], [(9, 1), (7, 0)], [(8, 2)], [(10, 0)]]
    trains = {0: [(12, 7)], 1: [(12, 5)], 2: [(12, 6)], 3: [(12, 8)], MEX: [(12, 11)]}
    return position(rules, hands, trains=trains, markers=[1], boneyard=[(10, 10)])


@pytest.mark.parametrize(
    "rules",
    [preset("celko"), preset("standard", any_play_clears_marker=True)],
    ids=["celko", "standard-any-play-clears-marker"],
)
def test_follow_up_on_own_double_on_marked_train(rules: Rules) -> None:
    state = _double_on_marked_train(rules)
    assert legal_moves(state) == (play(5, 2, 1), play(5, 5, 1), play(11, 4, MEX))
    after = apply(state, play(5, 5, 1))
    # Playing on seat 1's marked train took seat 1's marker down (002) ...
    assert after.markers == (False, False, False, False)
    assert view(after, 0).trains[1].public is False
    # ... yet the double just played may still be followed on, or left (002: "can
    # be, but does not have to be, placed on the double").
    assert after.to_move == 0
    assert legal_moves(after) == (play(5, 2, 1), play(11, 4, MEX))
    # Only the followed double's train is opened: seat 2's private train stays shut.
    assert _rejected(after, play(6, 3, 2)) == "seat 2's train is not open to seat 0"
    done = apply(after, play(5, 2, 1))
    assert done.open_doubles == ()
    assert done.trains[1].end == 2
    assert done.to_move == 1
    # Left instead, the double binds the next seat as usual.
    left = apply(after, play(11, 4, MEX))
    assert left.open_doubles == (1,)
    assert left.to_move == 1
    assert legal_moves(left) == (DRAW,)


Pair = tuple[int, int]
OTHERS: list[list[Pair]] = [[(5, 1), (7, 2)], [(1, 0)], [(10, 9)]]


def _own_double(
    rules: Rules, seat0: list[Pair], more: dict[int, list[Pair]] | None = None
) -> State:
    """Seat 0 to move with its train ending 5; seat 1's marker is up, its train ending 3."""
    table = {0: [(12, 5)], 1: [(12, 3)], **(more or {})}
    return position(rules, [seat0, *OTHERS], trains=table, markers=[1], boneyard=[(6, 6)])


def _left_unfinished(rules: Rules) -> State:
    """Seat 0 plays 5-5 on its own train, then follows up with 3-4 on seat 1's marked train."""
    state = _own_double(rules, [(5, 5), (3, 4), (9, 8), (10, 4)])
    return run(state, play(5, 5, 0), play(4, 3, 1))


def test_unfinished_own_double_makes_train_public() -> None:
    rules = preset("standard")
    assert rules.unfinished_own_double_marks is True
    state = _left_unfinished(rules)
    assert state.to_move == 1
    assert state.open_doubles == (0,)
    # 004: the double was played on seat 0's own train and left unfinished.
    assert state.markers == (True, True, False, False)
    assert view(state, 2).trains[0].public is True
    # Seat 1 satisfies it; seat 0's marker stays up, so seat 2 may play there too.
    state = apply(state, play(5, 1, 0))
    assert state.markers == (True, True, False, False)
    assert legal_moves(state) == (play(1, 0, 0),)

    # Finished in the same turn: nothing to mark.
    done = run(_own_double(rules, [(5, 5), (5, 4), (9, 8)]), play(5, 5, 0), play(5, 4, 0))
    assert done.markers == (False, True, False, False)
    # Left unfinished on another train (the Mexican): nothing to mark either.
    other = _own_double(rules, [(9, 9), (3, 4), (8, 2), (10, 4)], {MEX: [(12, 9)]})
    other = run(other, play(9, 9, MEX), play(4, 3, 1))
    assert other.open_doubles == (MEX,)
    assert other.markers == (False, True, False, False)
    # A second double in the same turn does not excuse the first: 5-5 stays open.
    chain = _own_double(rules, [(5, 5), (3, 3), (3, 4), (10, 4)])
    chain = run(chain, play(5, 5, 0), play(3, 3, 1), play(4, 3, 1))
    assert chain.open_doubles == (0,)
    assert chain.markers == (True, True, False, False)
    # Only a double played in this turn counts: one left from an earlier turn
    # (here unbound, with doubles_bind off) raises nothing when the seat plays on.
    unbound = preset("standard", doubles_bind=False)
    earlier = _own_double(unbound, [(3, 4), (9, 8), (10, 4)], {0: [(12, 5), (5, 5)]})
    earlier = apply(earlier, play(4, 3, 1))
    assert earlier.open_doubles == (0,)
    assert earlier.markers == (False, True, False, False)
    # A dead double (every 5 on the table once 5-5 is down) counts as unfinished too.
    fives = {
        0: [(12, 5), (5, 0), (0, 1), (1, 5), (5, 2), (2, 3), (3, 5), (5, 4), (4, 6), (6, 5)],
        1: [(12, 7), (7, 5), (5, 8), (8, 9), (9, 5), (5, 10), (10, 11), (11, 5)],
    }
    hands = [[(5, 5), (12, 3), (9, 7)], [(8, 3), (7, 7)], [(8, 6)], [(11, 9)]]
    dead = position(rules, hands, trains=fives, boneyard=[(10, 10)])
    dead = run(dead, play(5, 5, 0), play(12, 3, MEX))
    assert dead.markers == (True, False, False, False)
    assert legal_moves(dead) == (play(8, 3, MEX),)  # it binds nobody

    # Teams: seats 0 and 2 share a side (trains 0 and 2). Seat 0's own marker goes
    # up, as a pass would raise it. The double, played on the side's train, took the
    # side's markers down, so the train is not public yet (004: neither end is public
    # "until neither partner can play"); it is once seat 2 fails to play too.
    hands = [[(5, 5), (12, 3), (9, 8), (10, 4)], [(5, 1), (7, 2)], [(10, 7)], [(9, 1), (8, 4)]]
    for marks in (True, False):
        teams = preset("standard+teams", unfinished_own_double_marks=marks)
        state = position(teams, hands, trains={2: [(12, 5)]}, boneyard=[(6, 6), (11, 11)])
        state = run(state, play(5, 5, 2), play(12, 3, MEX))
        assert state.open_doubles == (2,)
        assert state.markers == (marks, False, False, False)
        assert view(state, 1).trains[2].public is False
        # Seat 1 satisfies the double; seat 2 cannot play and passes.
        state = run(state, play(5, 1, 2), DRAW, PASS)
        assert state.to_move == 3
        assert state.markers == (marks, False, True, False)
        seen = view(state, 3).trains
        assert (seen[0].public, seen[2].public) == (marks, marks)
        assert legal_moves(state) == ((play(9, 1, 2),) if marks else (DRAW,))


@pytest.mark.parametrize("name", ["masters", "celko", "private-trains", "standard-off"])
def test_unfinished_own_double_option_off(name: str) -> None:
    if name == "standard-off":
        rules = preset("standard", unfinished_own_double_marks=False)
    else:
        rules = preset(name)
    assert rules.unfinished_own_double_marks is False
    state = _left_unfinished(rules)
    assert state.to_move == 1
    assert state.open_doubles == (0,)
    # Seat 0's train stays private; seat 1's marker is down only where any play on
    # a marked train takes it down (celko).
    seat1 = not rules.any_play_clears_marker
    assert state.markers == (False, seat1, False, False)
    assert view(state, 2).trains[0].public is False
