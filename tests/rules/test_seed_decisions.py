"""Hand-dealt scenarios for the readings of the seeds decided in issue 14.

Each test shows one **Decision** of spec/RULES.md that ties a preset to a sentence
of its seed (../shared/seeds/). Round 0 on double-12: the engine is 12. Boneyards
are given explicitly, in draw order.
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
    END,
    PASS,
    BindDuration,
    Ctx,
    FollowUp,
    IllegalMoveError,
    OwnDoubleFollowUp,
    RoundEnd,
    Rules,
    State,
    apply,
    binding,
    legal_moves,
    play,
    position,
    preset,
    tile,
    view,
)

from ._helpers import pass_to_round_end, run

MEX = 4


def rejected(state: State, move: object) -> str:
    with pytest.raises(IllegalMoveError) as info:
        apply(state, move)
    return str(info.value)


# ----------------------------------------------------------------
# doubles on marked and own trains (002, 004)


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
    assert rejected(after, play(6, 3, 2)) == "seat 2's train is not open to seat 0"
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


def test_follow_up_opens_only_the_latest_double_train() -> None:
    # The train of the double just played is open to its player whatever its marker,
    # and only the latest one's: after a second double, the first double's train is
    # open again only as its markers say.
    hands = [[(5, 5), (7, 7), (5, 2), (7, 1), (9, 8)], [(9, 1), (7, 0)], [(8, 2)], [(10, 0)]]
    trains = {0: [(12, 7)], 1: [(12, 5)], 2: [(12, 6)], 3: [(12, 8)], MEX: [(12, 11)]}
    s = position(preset("celko"), hands, trains=trains, markers=[1], boneyard=[(10, 10)])
    s = apply(s, play(5, 5, 1))
    assert s.markers == (False,) * 4  # 002: the play took seat 1's marker down
    assert legal_moves(s) == (play(7, 1, 0), play(7, 7, 0), play(5, 2, 1))
    s = apply(s, play(7, 7, 0))
    assert legal_moves(s) == (play(7, 1, 0),)
    assert rejected(s, play(5, 2, 1)) == "seat 1's train is not open to seat 0"
    s = apply(s, play(7, 1, 0))
    assert s.to_move == 1 and s.open_doubles == (1,)


def _own_double(
    rules: Rules, seat0: list[Pair], more: dict[int, list[Pair]] | None = None
) -> State:
    """Seat 0 to move with its train ending 5; seat 1's marker is up, its train ending 3."""
    table = {0: [(12, 5)], 1: [(12, 3)], **(more or {})}
    return position(rules, [seat0, *OTHERS], trains=table, markers=[1], boneyard=[(6, 6)])


def _left_unfinished(rules: Rules) -> State:
    """Seat 0 plays 5-5 on its own train, then follows up with 3-4 on seat 1's marked train;
    with `follow_up = "on-double"` (private-trains), where that follow-up is not open
    (Doubles in private-trains), it ends the turn instead."""
    state = _own_double(rules, [(5, 5), (3, 4), (9, 8), (10, 4)])
    leave = END if rules.follow_up is FollowUp.ON_DOUBLE else play(4, 3, 1)
    return run(state, play(5, 5, 0), leave)


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


# ---------------------------------------------------------------- private-trains (003)

# Four seats, no Mexican train: seat s's train is train s, and nothing else is on
# the table. `private-trains` sets follow_up = "on-double",
# own_double_follow_up = "optional" and bind_duration = "next-turn".
PRIVATE = preset("private-trains")
OPTIONAL_RULE = preset("private-trains+optional-rule")


def test_private_trains_draws_once_per_turn() -> None:
    # 003: "he or she must continue to draw one domino each time it is his or her turn".
    assert PRIVATE.draw_until_playable is False
    hands = [[(5, 4)], [(12, 1), (1, 0)], [(12, 2), (2, 0)], [(12, 6), (6, 0)]]
    s = position(PRIVATE, hands, boneyard=[(1, 1), (12, 3), (9, 8)])
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    # The drawn 1-1 fits nowhere: one draw a turn, then the marker, not another draw.
    assert s.drawn == tile(1, 1) and legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    assert s.to_move == 1 and s.markers == (True, False, False, False)
    assert len(s.boneyard) == 2
    s = run(s, play(12, 1, 1), play(12, 2, 2), play(12, 6, 3))
    # Its next turn: one more draw, and this one plays.
    assert s.to_move == 0 and legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert s.drawn == tile(12, 3) and legal_moves(s) == (play(12, 3, 0),)
    s = apply(s, play(12, 3, 0))
    assert s.to_move == 1 and s.markers == (False, False, False, False)
    assert s.boneyard == (tile(9, 8),)


def on_a_public_double(seat0, *, rules=PRIVATE, boneyard=((9, 8),), extra=None) -> State:
    """Seat 0 to move; seat 1's train 12-5 is public (marker up); seat 0 holds 5-5."""
    trains = {1: [(12, 5)], **(extra or {})}
    others = [[(11, 0)], [(10, 0)], [(8, 0)]]
    markers = [1, *(extra or {})]
    return position(rules, [seat0, *others], trains=trains, markers=markers, boneyard=boneyard)


def test_private_trains_follow_up_goes_on_the_double() -> None:
    # 003: "Playing a double and a corresponding tile to that double is the only way to
    # play two tiles in one turn".
    assert PRIVATE.follow_up is FollowUp.ON_DOUBLE
    s = on_a_public_double([(5, 5), (5, 2), (12, 3)])
    assert legal_moves(s) == (play(12, 3, 0), play(5, 2, 1), play(5, 5, 1))
    s = apply(s, play(5, 5, 1))
    assert s.ctx is Ctx.FOLLOW and s.to_move == 0
    assert legal_moves(s) == (play(5, 2, 1),)  # not 12-3 on its own train
    expected = "the tile after a double goes on that double, on seat 1's train"
    assert rejected(s, play(12, 3, 0)) == expected
    done = apply(s, play(5, 2, 1))
    assert done.to_move == 1 and done.open_doubles == ()
    assert done.trains[1].tiles == (tile(12, 5), tile(5, 5), tile(5, 2))
    # The default, `any` (000, 002, 004), lets the same follow-up go anywhere.
    anywhere = preset("private-trains", follow_up="any")
    s = apply(on_a_public_double([(5, 5), (5, 2), (12, 3)], rules=anywhere), play(5, 5, 1))
    assert legal_moves(s) == (play(12, 3, 0), play(5, 2, 1))


def test_private_trains_unable_to_follow_ends_turn() -> None:
    # 003: "If the players are still unable to play upon the doubles they have laid down,
    # they cannot lay any additional tiles down on any open trains, even if there is an
    # available play."
    s = on_a_public_double([(5, 5), (12, 3), (9, 1)], boneyard=[(12, 8), (9, 8)])
    s = apply(s, play(5, 5, 1))
    assert legal_moves(s) == (DRAW,)  # 12-3 would fit its own train: not now
    s = apply(s, DRAW)
    assert s.drawn == tile(12, 8) and legal_moves(s) == (PASS,)  # it fits train 0 only
    s = apply(s, PASS)
    # 003 is silent on the marker; like every other seed, it goes up.
    assert s.to_move == 1 and s.markers == (True, True, False, False)
    assert s.open_doubles == (1,) and binding(s) == (1,)


def test_private_trains_drawn_double_may_be_laid() -> None:
    # 003: "if the player obtains another double that is valid, he or she may lay that
    # down; however, he or she must follow that double up as well".
    extra = {2: [(12, 7)]}  # seat 2's train, public too, ends 7
    boneyard = [(7, 7), (12, 4), (7, 4), (9, 8)]
    s = on_a_public_double([(5, 5), (12, 3)], boneyard=boneyard, extra=extra)
    s = run(s, play(5, 5, 1), DRAW)
    assert s.drawn == tile(7, 7) and legal_moves(s) == (play(7, 7, 2),)
    s = apply(s, play(7, 7, 2))
    assert s.ctx is Ctx.FOLLOW and s.open_doubles == (1, 2)
    # Followed on-double in turn: 12-3 on its own train is not a follow-up of 7-7.
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert s.drawn == tile(12, 4) and legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    assert s.to_move == 1 and s.open_doubles == (1, 2) and s.markers[0]
    # Now the same with a 7 to follow with: the drawn double is followed, then the turn ends.
    s = on_a_public_double([(5, 5), (12, 3), (7, 1)], boneyard=boneyard, extra=extra)
    s = run(s, play(5, 5, 1), DRAW, play(7, 7, 2))
    assert legal_moves(s) == (play(7, 1, 2),)
    s = apply(s, play(7, 1, 2))
    assert s.to_move == 1 and s.open_doubles == (1,) and not s.markers[0]
    # A drawn single that fits only elsewhere is no exception.
    s = on_a_public_double([(5, 5), (1, 0)], boneyard=[(7, 3), (9, 8)], extra=extra)
    s = run(s, play(5, 5, 1), DRAW)
    assert s.drawn == tile(7, 3) and legal_moves(s) == (PASS,)


def test_private_trains_drawn_double_on_own_train_must_be_followed() -> None:
    # 003: "he or she must follow that double up as well, and must draw if he or she
    # cannot comply": the exception double is followed wherever it was laid, the seat's
    # own train included, although a double it chose to lay there need not be (issue 25).
    trains = {0: [(12, 7)], 1: [(12, 5)], 2: [(12, 9)]}
    others = [[(11, 0)], [(10, 0)], [(8, 0)]]

    def seat0_on_train_1(hand, boneyard):
        s = position(PRIVATE, [hand, *others], trains=trains, markers=[1, 2], boneyard=boneyard)
        s = run(s, play(5, 5, 1), DRAW)
        assert s.drawn == tile(7, 7) and legal_moves(s) == (play(7, 7, 0),)
        return apply(s, play(7, 7, 0))

    # Nothing to follow 7-7 with: it draws, not `end`; the drawn 8-3 fits nothing, so it passes.
    s = seat0_on_train_1([(5, 5), (12, 3)], [(7, 7), (8, 3), (7, 4)])
    assert s.ctx is Ctx.FOLLOW and s.open_doubles == (1, 0)
    assert legal_moves(s) == (DRAW,)
    assert rejected(s, END) == "seat 0 played a double and must play again, or draw"
    s = apply(s, DRAW)
    assert s.drawn == tile(8, 3) and legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    assert s.to_move == 1 and s.markers == (True, True, True, False)
    assert s.open_doubles == (1, 0)
    # The drawn 7-4 follows it, on the double only.
    s = seat0_on_train_1([(5, 5), (12, 3)], [(7, 7), (7, 4)])
    s = apply(s, DRAW)
    assert legal_moves(s) == (play(7, 4, 0),)
    s = apply(s, play(7, 4, 0))
    assert s.to_move == 1 and s.open_doubles == (1,) and s.markers == (False, True, True, False)
    # A 7 in hand: it must be played on the 7-7, the only legal move.
    s = seat0_on_train_1([(5, 5), (12, 3), (7, 1)], [(7, 7), (8, 3)])
    assert legal_moves(s) == (play(7, 1, 0),)
    # A second drawn double is the exception again: laid where a follow-up may go, then
    # followed in turn.
    s = seat0_on_train_1([(5, 5), (12, 3)], [(7, 7), (9, 9), (9, 4)])
    s = apply(s, DRAW)
    assert s.drawn == tile(9, 9) and legal_moves(s) == (play(9, 9, 2),)
    s = apply(s, play(9, 9, 2))
    assert legal_moves(s) == (DRAW,)
    s = run(s, DRAW, play(9, 4, 2))
    assert s.to_move == 1 and s.open_doubles == (1, 0)
    # A double drawn at the start of a turn and laid on its own train is no exception:
    # its follow-up stays optional.
    s = position(PRIVATE, [[(12, 3)], *others], trains=trains, markers=[1, 2], boneyard=[(7, 7)])
    s = run(s, DRAW, play(7, 7, 0))
    assert legal_moves(s) == (END,)


def test_private_trains_issue_example_drawn_double_on_own_train() -> None:
    # Issue 25's game (private-trains, double-9, 2 players, game seed 2), from its
    # decision: seat 1 plays 8-8 on seat 0's public train, draws 1-1 for the follow-up
    # and lays it on its own train; then it draws (3-1) and follows the 1-1 with it.
    rules = preset("private-trains", max_pip=9, players=2)
    hands = [[(3, 0), (5, 3)], [(8, 8), (6, 6), (5, 2)]]
    trains = {0: [(9, 8)], 1: [(9, 1)]}
    s = position(rules, hands, trains=trains, markers=[0, 1], boneyard=[(1, 1), (3, 1)], to_move=1)
    assert legal_moves(s) == (play(8, 8, 0),)
    s = run(s, play(8, 8, 0), DRAW)
    assert s.drawn == tile(1, 1) and legal_moves(s) == (play(1, 1, 1),)
    s = apply(s, play(1, 1, 1))
    assert s.markers == (True, False)  # its own train: its marker came down
    assert legal_moves(s) == (DRAW,)  # not `end`
    s = apply(s, DRAW)
    assert s.drawn == tile(3, 1) and legal_moves(s) == (play(3, 1, 1),)
    s = apply(s, play(3, 1, 1))
    assert s.to_move == 0 and s.open_doubles == (0,) and s.trains[1].end == 3


def own_double(seat0, *, rules=PRIVATE, boneyard=((9, 8),)) -> State:
    """Seat 0 to move, its train 12-5; seat 2's train 12-9 is public."""
    others = [[(11, 0), (12, 1)], [(10, 0), (12, 2)], [(8, 0), (12, 6)]]
    trains = {0: [(12, 5)], 2: [(12, 9)]}
    return position(rules, [seat0, *others], trains=trains, markers=[2], boneyard=boneyard)


def test_private_trains_own_double_follow_up_optional() -> None:
    # 003: "If players place doubles on their own trains, then they don't have the
    # obligation to play an additional tile. Instead, players can place a tile on
    # Mexican train if they have a matching tile." The preset has no Mexican train.
    assert PRIVATE.own_double_follow_up is OwnDoubleFollowUp.OPTIONAL
    s = apply(own_double([(5, 5), (5, 2), (9, 1)]), play(5, 5, 0))
    assert s.ctx is Ctx.FOLLOW
    # On the double or nowhere: 9-1 fits seat 2's public train, but a double and its
    # tile are "the only way to play two tiles in one turn".
    assert legal_moves(s) == (play(5, 2, 0), END)
    expected = (
        "after a double on one's own train the next tile goes on that double, "
        "on seat 0's train, or the turn ends"
    )
    assert rejected(s, play(9, 1, 2)) == expected
    ended = apply(s, END)
    assert ended.to_move == 1 and ended.markers == (False, False, True, False)
    assert ended.open_doubles == (0,)
    on_it = apply(s, play(5, 2, 0))
    assert on_it.to_move == 1 and on_it.open_doubles == ()
    # With a Mexican train (option `mexican_train = true`) the tile may go there instead,
    # and still on no other train.
    mexican = preset("private-trains", mexican_train=True)
    s = apply(own_double([(5, 5), (5, 2), (9, 1), (12, 4)], rules=mexican), play(5, 5, 0))
    assert legal_moves(s) == (play(5, 2, 0), play(12, 4, MEX), END)
    expected = (
        "after a double on one's own train the next tile goes on that double, "
        "on seat 0's train or on the Mexican train, or the turn ends"
    )
    assert rejected(s, play(9, 1, 2)) == expected
    instead = apply(s, play(12, 4, MEX))
    assert instead.to_move == 1 and instead.open_doubles == (0,)
    assert instead.trains[MEX].tiles == (tile(12, 4),)
    # With mexican_start_restricted, an empty Mexican train only when the double takes nothing.
    restricted = preset("private-trains", mexican_train=True, mexican_start_restricted=True)
    s = apply(own_double([(5, 5), (5, 2), (12, 4)], rules=restricted), play(5, 5, 0))
    assert legal_moves(s) == (play(5, 2, 0), END)
    s = apply(own_double([(5, 5), (9, 1), (12, 4)], rules=restricted), play(5, 5, 0))
    assert legal_moves(s) == (play(12, 4, MEX), END)
    # With `follow_up = "any"` an optional follow-up goes anywhere a follow-up may.
    anywhere = preset("private-trains", follow_up="any")
    s = apply(own_double([(5, 5), (5, 2), (9, 1)], rules=anywhere), play(5, 5, 0))
    assert legal_moves(s) == (play(5, 2, 0), play(9, 1, 2), END)
    elsewhere = apply(s, play(9, 1, 2))
    assert elsewhere.to_move == 1 and elsewhere.open_doubles == (0,)
    # Nothing to follow with: it may end the turn, and it does not draw.
    s = apply(own_double([(5, 5), (3, 1)]), play(5, 5, 0))
    assert legal_moves(s) == (END,)
    assert apply(s, END).markers == (False, False, True, False)
    expected = "a double on one's own train need not be followed: play on or end the turn"
    assert rejected(s, DRAW) == expected
    # With "required" the same double must be followed, drawing if need be.
    required = preset("private-trains", own_double_follow_up="required")
    s = apply(own_double([(5, 5), (3, 1)], rules=required), play(5, 5, 0))
    assert legal_moves(s) == (DRAW,)


def test_private_trains_double_binds_next_turn_only() -> None:
    # 003: "The next player now has the obligation to satisfy that double."
    assert PRIVATE.bind_duration is BindDuration.NEXT_TURN
    s = run(own_double([(5, 5), (9, 1)], boneyard=[(9, 8), (4, 3)]), play(5, 5, 0), END)
    # Seat 1 is bound: its 12-1 would start its own train, but it holds no 5.
    assert s.to_move == 1 and binding(s) == (0,)
    assert legal_moves(s) == (DRAW,)
    expected = "the open double 5-5 on seat 0's train must be satisfied first"
    assert rejected(s, play(12, 1, 1)) == expected
    s = apply(s, DRAW)
    assert legal_moves(s) == (PASS,)  # 9-8 satisfies nothing
    s = apply(s, PASS)
    assert s.markers == (False, True, True, False)
    # Seat 2: the double is an ordinary open end now, still open, binding nobody.
    assert s.to_move == 2 and s.open_doubles == (0,) and binding(s) == ()
    assert view(s, 2).open_doubles == (0,) and view(s, 2).binding == ()
    assert legal_moves(s) == (play(12, 2, 1),)
    s = run(s, play(12, 2, 1), play(12, 6, 3))
    # Seat 0's own turn: free as well, so it need not play on its own double.
    assert s.to_move == 0 and binding(s) == ()
    assert legal_moves(s) == (play(9, 1, 2),)


def test_private_trains_fast_phase_only_the_last_build_binds_the_starter() -> None:
    # bind_duration = "next-turn" with the fast phase: each build is a turn in seat order,
    # so only the double the last builder left open binds the starter's first turn.
    rules = preset("private-trains+fast-first-turn", max_pip=6, players=3)
    hands = [
        [(6, 5), (5, 5), (5, 0), (4, 1), (3, 2)],
        [(6, 3), (3, 3), (1, 0)],
        [(6, 4), (4, 4), (2, 0)],
    ]

    def built(last: tuple[object, ...]) -> State:
        s = position(rules, hands, first_turns=True)
        s = run(s, play(6, 5, 0), play(5, 5, 0), END, play(6, 3, 1), play(3, 3, 1), END)
        s = run(s, *last)
        assert (s.to_move, s.ctx) == (0, Ctx.START)
        return s

    s = built((play(6, 4, 2), play(4, 4, 2), END))
    assert s.open_doubles == (0, 1, 2) and binding(s) == (2,)
    assert legal_moves(s) == (play(4, 1, 2),)  # not 3-2 on the 3-3, not 5-0 on its own
    # The last builder left no double: the earlier ones bind nobody.
    s = built((play(6, 4, 2), END))
    assert s.open_doubles == (0, 1) and binding(s) == ()
    assert legal_moves(s) == (play(5, 0, 0),)


def test_private_trains_tile_played_instead_may_be_a_double() -> None:
    # The tile played instead of following an optional own double may itself be a
    # double; it is followed by the ordinary rule. On the Mexican train (option
    # `mexican_train = true`), with `follow_up = "on-double"`: on that double, drawing.
    rules = preset("private-trains", mexican_train=True)
    hands = [[(5, 5), (4, 4), (9, 1)], [(11, 0)], [(10, 0)], [(8, 0)]]
    trains = {0: [(12, 5)], 2: [(12, 9)], MEX: [(12, 4)]}
    s = position(rules, hands, trains=trains, markers=[2], boneyard=[(4, 3), (9, 8)])
    s = apply(s, play(5, 5, 0))
    assert legal_moves(s) == (play(4, 4, MEX), END)
    s = apply(s, play(4, 4, MEX))
    assert legal_moves(s) == (DRAW,)  # 9-1 would fit seat 2's public train
    s = apply(s, DRAW)
    assert legal_moves(s) == (play(4, 3, MEX),)
    s = apply(s, play(4, 3, MEX))
    assert s.to_move == 1 and s.open_doubles == (0,)
    # With `follow_up = "any"` and teams: another double on the side's train (seat 2's,
    # seat 0's partner) is optional again; one on the other side's public train is not.
    teams = preset("standard+teams", own_double_follow_up="optional")
    hands = [[(5, 5), (8, 8), (9, 9), (3, 1), (11, 10)], [(2, 0)], [(4, 0)], [(6, 0)]]
    trains = {0: [(12, 5)], 1: [(12, 9)], 2: [(12, 8)]}
    start = position(teams, hands, trains=trains, markers=[1, 3], boneyard=[(10, 10)])
    s = apply(start, play(5, 5, 0))
    assert legal_moves(s) == (play(9, 9, 1), play(8, 8, 2), END)
    partner = apply(s, play(8, 8, 2))
    assert legal_moves(partner) == (play(9, 9, 1), END)
    other = apply(s, play(9, 9, 1))
    assert legal_moves(other) == (play(8, 8, 2),)  # no END: it must be followed
    assert legal_moves(apply(other, play(8, 8, 2))) == (END,)  # a side's double again
    hands[0] = [(5, 5), (9, 9), (3, 1), (11, 10)]
    start = position(teams, hands, trains=trains, markers=[1, 3], boneyard=[(10, 10)])
    assert legal_moves(run(start, play(5, 5, 0), play(9, 9, 1))) == (DRAW,)


def test_private_trains_drawn_double_must_be_laid_unless_must_play_is_off() -> None:
    # 003's exception double "may" be laid: with must_play (the preset) a drawn tile that
    # can be played must be, this one too; with `must_play = false` the seat may pass.
    extra = {2: [(12, 7)]}
    for must_play, expected in ((True, (play(7, 7, 2),)), (False, (play(7, 7, 2), PASS))):
        rules = preset("private-trains", must_play=must_play)
        s = on_a_public_double([(5, 5), (12, 3)], rules=rules, boneyard=[(7, 7)], extra=extra)
        s = run(s, play(5, 5, 1), DRAW)
        assert s.drawn == tile(7, 7) and legal_moves(s) == expected


def test_optional_rule_double_binds_until_satisfied() -> None:
    # 003, Optional Rule: "all other plays are suspended for all players ... until the
    # double has been played upon successfully."
    assert OPTIONAL_RULE.bind_duration is BindDuration.UNTIL_SATISFIED
    start = own_double([(5, 5), (1, 0)], rules=OPTIONAL_RULE, boneyard=[(9, 8), (4, 3), (5, 4)])
    s = run(start, play(5, 5, 0), END, DRAW, PASS)
    # Seat 2 is bound in turn: its 12-2 waits, and it draws.
    assert s.to_move == 2 and binding(s) == (0,)
    assert legal_moves(s) == (DRAW,)
    s = run(s, DRAW, PASS)
    assert s.to_move == 3 and binding(s) == (0,)
    s = apply(s, DRAW)
    # Seat 3 draws 5-4 and satisfies the double on seat 0's private train.
    assert legal_moves(s) == (play(5, 4, 0),)
    s = apply(s, play(5, 4, 0))
    assert s.open_doubles == () and s.to_move == 0 and binding(s) == ()
    assert preset("standard+optional-rule") == preset("standard")


def _blocked_teams_round(to_move: int) -> State:
    rules = preset("private-trains+teams")
    # Nothing holds a 12: every seat passes. Hand values 1, 5, 11, 6: seat 0 holds the
    # least, but its side (seats 0 and 2) scores 12 against 11 for seats 1 and 3.
    hands = [[(1, 0)], [(3, 2)], [(6, 5)], [(4, 2)]]
    return pass_to_round_end(position(rules, hands, boneyard=[], to_move=to_move))


def test_private_trains_teams_lowest_side_starts() -> None:
    # 003: "whoever has the fewest points leads the next round": points as scored, so
    # with teams the side's score, shared by both partners.
    s = _blocked_teams_round(to_move=0)
    result = s.results[0]
    assert result.end is RoundEnd.BLOCKED
    assert result.values == (1, 5, 11, 6) and result.scores == (12, 11, 12, 11)
    assert s.round_index == 1 and s.starter == s.to_move == 1
    # Partners tie: the first of them clockwise after the last round's starter.
    s = _blocked_teams_round(to_move=2)
    assert s.starter == s.to_move == 3


# ---------------------------------------------------------------- which doubles bind now


def test_binding_lists_only_doubles_that_bind_now() -> None:
    # `open_doubles` is every live open double; `binding` only what confines the seat
    # to move now, and only in that seat's view.
    standard = preset("standard")
    hands = [[(5, 5), (12, 3), (9, 1)], [(5, 1), (12, 9)], [(3, 2)], [(11, 0)]]
    s = position(standard, hands, trains={0: [(12, 5)]}, boneyard=[(10, 10)])
    s = apply(s, play(5, 5, 0))
    # Its own follow-up: the double is open, and binds nobody.
    assert view(s, 0).open_doubles == (0,) and view(s, 0).binding == () == binding(s)
    s = apply(s, play(12, 3, 4))
    assert binding(s) == (0,) and view(s, 1).binding == (0,)
    assert view(s, 0).binding == () and view(s, 0).open_doubles == (0,)
    assert {m.train for m in legal_moves(s)} == {0}
    # With `reverse`, only the double to satisfy first; both stay open doubles.
    celko = preset("celko")
    hands = [[(5, 1), (8, 3), (2, 0)], [(2, 2)], [(3, 3)], [(4, 4)]]
    trains = {0: [(12, 5), (5, 5)], 4: [(12, 8), (8, 8)]}
    s = position(celko, hands, trains=trains, boneyard=[(1, 1)])
    assert s.open_doubles == (0, 4)  # position() opens them in train order
    assert binding(s) == (4,) and view(s, 0).open_doubles == (0, 4)
    assert legal_moves(s) == (play(8, 3, 4),)
    # A dead double is in neither: all seven tiles with a 1 are on the table.
    six = preset("standard", max_pip=6, players=2)
    trains = {
        0: [(6, 1), (1, 1)],
        1: [(6, 4), (4, 1), (1, 0)],
        2: [(6, 5), (5, 1), (1, 3), (3, 2), (2, 1)],
    }
    s = position(six, [[(2, 0)], [(6, 3)]], trains=trains, markers=[1], boneyard=[])
    assert s.open_doubles == (0,)
    assert view(s, 0).open_doubles == () and binding(s) == ()
    assert legal_moves(s) == (play(2, 0, 1),)


# ---------------------------------------------------------------- celko's double marker (002)


def _celko_example(satisfy_order: str) -> State:
    """002's example: seat 0 holds [1-1], [2-2], [3-3], [3-4] and [2-5].

    Double-6, engine 6. Train 0 (seat 0's) ends 1, the Mexican train (4) ends 2, and
    seat 2's train ends 3 with its marker up, so each double has a place to go.
    """
    rules = preset("celko", max_pip=6, players=4, satisfy_order=satisfy_order)
    hands = [
        [(1, 1), (2, 2), (3, 3), (3, 4), (2, 5), (0, 0)],
        [(2, 0), (6, 0), (1, 0)],
        [(4, 4)],
        [(5, 5)],
    ]
    trains = {0: [(6, 1)], 2: [(6, 3)], MEX: [(6, 2)]}
    return position(rules, hands, trains=trains, markers=[2], boneyard=[(4, 1)])


def _celko_three_doubles(satisfy_order: str) -> State:
    """002's example after the three doubles: "He plays his [1-1], places the doubles
    marker, and gets another turn", and so on."""
    return run(_celko_example(satisfy_order), *EXAMPLE_DOUBLES)


EXAMPLE_DOUBLES = (play(1, 1, 0), play(2, 2, MEX), play(3, 3, 2))


def test_celko_each_double_of_the_example_takes_the_marker_and_another_turn() -> None:
    # 002's example, a step at a time: "He plays his [1-1], places the doubles marker,
    # and gets another turn. He plays his [2-2], places the doubles marker, and gets
    # another turn. He plays his [3-3] places the doubles marker, and gets another turn."
    start = _celko_example("last")
    marked = []
    for move in EXAMPLE_DOUBLES:
        start = apply(start, move)
        assert start.to_move == 0  # another turn
        marked.append(start.marked_double)
    assert marked == [0, MEX, 2]  # the marker moves to each new double
    assert set(start.open_doubles) == {0, 2, MEX}  # all three open, the [3-3] marked


def test_celko_only_the_last_double_binds() -> None:
    # "If he puts the [3-4] on the [3-3], which frees up the last double played, he has
    # gotten off the train": the [1-1] and [2-2] stay open, and bind nobody.
    state = apply(_celko_three_doubles("last"), play(3, 4, 2))
    assert state.to_move == 1 and state.open_doubles == (0, MEX)
    assert binding(state) == () and view(state, 1).binding == ()
    assert legal_moves(state) == (play(6, 0, 1), play(2, 0, MEX))
    # "If he decides to play the [2-6] on the [2-2] ..., then the next player is
    # obligated to play on the [3-3] because it is still marked."
    state = apply(_celko_three_doubles("last"), play(2, 5, MEX))
    assert state.to_move == 1 and binding(state) == (2,)
    assert legal_moves(state) == (DRAW,)
    assert "3-3 on seat 2's train must be satisfied first" in rejected(state, play(6, 0, 1))
    assert "only the last double played binds" in rejected(state, play(1, 0, 0))
    # 000's variation (`reverse`) would pass the obligation on to the [2-2] instead.
    state = apply(_celko_three_doubles("reverse"), play(3, 4, 2))
    assert binding(state) == (MEX,) and legal_moves(state) == (play(2, 0, MEX),)


def test_celko_dead_last_double_binds_nobody_and_the_marker_stays_off_older_ones() -> None:
    # satisfy_order = "last": the double marker is on the 5-5 of the Mexican train, dead
    # (all seven 5s are on the table); it does not go back to the older, live 3-3 on
    # seat 1's train, so nothing binds and seat 1's private train stays shut.
    rules = preset("celko", max_pip=6, players=3)
    trains = {
        0: [(6, 4)],
        1: [(6, 0), (0, 5), (5, 2), (2, 3), (3, 3)],
        2: [(6, 1), (1, 5), (5, 3), (3, 4), (4, 5)],
        3: [(6, 5), (5, 5)],
    }
    hands = [[(4, 2), (3, 1), (0, 0)], [(2, 1)], [(2, 2)]]
    s = position(rules, hands, trains=trains, boneyard=[(1, 0)])
    assert s.open_doubles == (1, 3) and s.marked_double == 3
    assert binding(s) == () and view(s, 0).binding == ()
    assert legal_moves(s) == (play(4, 2, 0),)  # not 3-1 on seat 1's 3-3
    assert rejected(s, play(3, 1, 1)) == "seat 1's train is private: it has no marker"
    # With `any` the live 3-3 binds.
    anyone = position(
        preset("celko", max_pip=6, players=3, satisfy_order="any"),
        hands,
        trains=trains,
        boneyard=[(1, 0)],
    )
    assert binding(anyone) == (1,) and legal_moves(anyone) == (play(3, 1, 1),)
