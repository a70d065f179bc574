"""Scenario tests for the readings of the seeds taken in issue 14 (spec/RULES.md, **Decision**).

Hand-dealt positions, four seats, double-12, round 0: the engine is 12. Seat s's
train is train s; with a Mexican train it is train 4. Boneyards are given
explicitly, in draw order.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
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
