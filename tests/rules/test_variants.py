"""Hand-dealt scenarios for each variant: teams, branching doubles, swan drive,
fast and delayed first turns, and the one-tile announcement on `standard`.

See spec/RULES.md (Variants, First turns, One-tile announcement).
"""

from __future__ import annotations

import pytest

from referee.rules import (
    DRAW,
    END,
    MEXICAN,
    PASS,
    Ctx,
    IllegalMoveError,
    RoundEnd,
    State,
    Train,
    apply,
    legal_moves,
    new_game,
    play,
    position,
    preset,
    tile,
    view,
)

from ._helpers import assert_views_private, run

# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    "name",
    [
        "standard+teams",
        "standard+branching-doubles",
        "standard+swan-drive",
        "standard+fast-first-turn",
        "standard+delayed-first-turn",
        "standard+announce",
        "masters+teams+swan-drive",
    ],
)
def test_views_are_private_along_a_dealt_game(name: str) -> None:
    state = new_game(preset(name), 4)
    for _ in range(80):
        if state.results or state.is_over:
            break
        assert_views_private(state)
        state = apply(state, legal_moves(state)[0])


# ---------------------------------------------------------------- teams

TEAMS = preset("standard+teams", max_pip=6)  # 4 seats: sides {0, 2} and {1, 3}; Mexican = 4
TEAM_TRAINS = {0: [(6, 5)], 1: [(6, 4)], 2: [(6, 3)], 4: [(6, 2)]}
TEAM_OTHERS = [[(1, 1)], [(0, 0)], [(2, 2)]]


def test_teams_trains_belong_to_sides() -> None:
    s = position(TEAMS, [[(1, 0)], *TEAM_OTHERS])
    assert [t.owner for t in s.trains] == [0, 1, 0, 1, MEXICAN]


@pytest.mark.parametrize("seat", [0, 2])
def test_teams_either_partner_plays_on_either_train(seat: int) -> None:
    hands = [[(1, 1)], [(0, 0)], [(2, 2)], [(3, 3)]]
    hands[seat] = [(5, 1), (3, 0), (4, 0)]
    s = position(TEAMS, hands, trains=TEAM_TRAINS, to_move=seat)
    assert legal_moves(s) == (play(5, 1, 0), play(3, 0, 2))  # 4-0 fits private train 1


def test_teams_side_train_is_public_only_with_both_markers_up() -> None:
    hand = [(5, 1), (3, 0), (4, 0)]
    s = position(TEAMS, [hand, *TEAM_OTHERS], trains=TEAM_TRAINS, markers=[1])
    assert legal_moves(s) == (play(5, 1, 0), play(3, 0, 2))
    assert [t.public for t in view(s, 0).trains] == [False, False, False, False, True]
    s = position(TEAMS, [hand, *TEAM_OTHERS], trains=TEAM_TRAINS, markers=[1, 3])
    assert legal_moves(s) == (play(5, 1, 0), play(4, 0, 1), play(3, 0, 2))
    assert [t.public for t in view(s, 0).trains] == [False, True, False, True, True]
    assert_views_private(s)


def test_teams_play_by_either_partner_takes_both_markers_down() -> None:
    hands = [[(1, 1)], [(0, 0)], [(5, 1), (3, 0)], [(3, 3)]]
    s = position(TEAMS, hands, trains=TEAM_TRAINS, markers=[0, 2, 3], to_move=2)
    s = apply(s, play(5, 1, 0))  # seat 2 plays on its partner's end
    assert s.markers == (False, False, False, True)
    s = position(TEAMS, hands, trains=TEAM_TRAINS, markers=[0], to_move=2)
    s = apply(s, play(3, 0, 2))
    assert s.markers == (False, False, False, False)


def test_teams_opponent_play_on_public_side_train_leaves_markers_up() -> None:
    hands = [[(1, 1)], [(5, 1), (4, 4)], [(2, 2)], [(3, 3)]]
    s = position(TEAMS, hands, trains=TEAM_TRAINS, markers=[0, 2], to_move=1)
    s = apply(s, play(5, 1, 0))
    assert s.markers == (True, False, True, False)


def test_teams_score_by_side() -> None:
    rules = preset("standard+teams", max_pip=6, rounds="single")
    hands = [[(5, 1)], [(4, 0), (1, 1)], [(4, 4), (0, 0)], [(3, 2)]]
    trains = {0: [(6, 5)], 1: [(6, 4)]}
    s = position(rules, hands, trains=trains)
    s = apply(s, play(5, 1, 0))
    assert s.outcome is not None
    (result,) = s.results
    assert result.out == (0,) and result.values == (0, 6, 58, 5)
    assert result.scores == (0, 11, 0, 11)
    assert s.outcome.ranks == (1, 2, 1, 2)


# ---------------------------------------------------------------- branching doubles

BRANCH = preset("standard+branching-doubles", max_pip=6)  # Mexican = 4; branches from 5


def test_branching_double_opens_two_branches_when_satisfied() -> None:
    hands = [[(5, 3), (2, 2)], [(5, 2), (4, 4)], [(5, 1), (3, 3)], [(1, 1)]]
    s = position(BRANCH, hands, trains={0: [(6, 5), (5, 5)]}, to_move=1)
    assert legal_moves(s) == (play(5, 2, 0),)
    s = apply(s, play(5, 2, 0))
    assert len(s.trains) == 7 and s.open_doubles == ()
    assert s.trains[0] == Train(0, (tile(6, 5), tile(5, 5), tile(5, 2)), 2)
    assert s.trains[5] == Train(0, (), 5, 0)
    assert s.trains[6] == Train(0, (), 5, 0)
    branches = view(s, 2).trains[5:]
    assert [(b.index, b.owner, b.parent, b.end, b.public) for b in branches] == [
        (5, 0, 0, 5, False),
        (6, 0, 0, 5, False),
    ]
    assert_views_private(s)
    # Seat 2 may not play on seat 0's private branches; nothing else fits.
    assert s.to_move == 2 and legal_moves(s) == (DRAW,)


def test_branching_without_the_variant_opens_nothing() -> None:
    rules = preset("standard", max_pip=6)
    hands = [[(5, 3)], [(5, 2), (4, 4)], [(5, 1)], [(1, 1)]]
    s = position(rules, hands, trains={0: [(6, 5), (5, 5)]}, to_move=1)
    s = apply(s, play(5, 2, 0))
    assert len(s.trains) == 5


def test_branches_are_playable_by_whoever_may_play_on_the_parent() -> None:
    hands = [[(5, 3), (2, 2), (0, 0)], [(5, 2), (4, 4)], [(5, 1), (3, 3)], [(1, 1)]]
    bone = [(4, 3), (4, 1)]
    s = position(BRANCH, hands, trains={0: [(6, 5), (5, 5)]}, to_move=1, boneyard=bone)
    s = run(s, play(5, 2, 0), DRAW, PASS, DRAW, PASS)
    assert s.to_move == 0
    assert legal_moves(s) == (play(2, 2, 0), play(5, 3, 5), play(5, 3, 6))
    s = apply(s, play(5, 3, 5))
    assert s.trains[5] == Train(0, (tile(5, 3),), 3, 0)
    # Seat 0's marker goes up after it fails to play; its branches become public.
    s = position(BRANCH, hands, trains={0: [(6, 5), (5, 5)]}, to_move=1, markers=[0])
    s = apply(s, play(5, 2, 0))
    assert s.to_move == 2
    assert legal_moves(s) == (play(5, 1, 5), play(5, 1, 6))
    assert view(s, 2).trains[5].public and view(s, 2).trains[6].public


def test_owner_play_on_a_branch_takes_its_marker_down() -> None:
    hands = [[(5, 3), (0, 0)], [(5, 2), (4, 4)], [(3, 3)], [(1, 1)]]
    trains = {0: [(6, 5), (5, 5)]}
    s = position(BRANCH, hands, trains=trains, to_move=1, markers=[0], boneyard=[(4, 3), (4, 1)])
    s = run(s, play(5, 2, 0), DRAW, PASS, DRAW, PASS)
    assert s.to_move == 0 and s.markers == (True, False, True, True)
    s = apply(s, play(5, 3, 6))
    assert s.markers == (False, False, True, True)


def test_branches_number_in_opening_order_and_keep_the_parent_owner() -> None:
    hands = [[(3, 1), (2, 2)], [(5, 2), (4, 4)], [(0, 0), (1, 1)], [(4, 1)]]
    trains = {0: [(6, 5), (5, 5)], 4: [(6, 3), (3, 3)]}
    s = position(BRANCH, hands, trains=trains, to_move=1, boneyard=[(2, 1), (4, 0)])
    assert s.open_doubles == (0, 4)
    s = apply(s, play(5, 2, 0))
    assert len(s.trains) == 7
    s = run(s, DRAW, PASS)  # seat 2 cannot satisfy the 3-3; seat 3 neither
    s = run(s, DRAW, PASS)
    assert s.to_move == 0 and legal_moves(s) == (play(3, 1, 4),)
    s = apply(s, play(3, 1, 4))
    assert s.trains[7] == Train(MEXICAN, (), 3, 4)
    assert s.trains[8] == Train(MEXICAN, (), 3, 4)
    assert view(s, 1).trains[7].public


def test_a_double_on_a_branch_opens_branches_of_the_branch() -> None:
    rules = preset("standard+branching-doubles", max_pip=9)  # engine 9-9; nobody else has a 9
    hands = [[(5, 5), (5, 2), (5, 4), (4, 4), (4, 1), (0, 0)], [(8, 8)], [(7, 7)], [(6, 6)]]
    bone = [(8, 1), (8, 2), (8, 3), (7, 1), (7, 2), (7, 3)]
    s = position(rules, hands, trains={0: [(9, 5)]}, boneyard=bone)
    s = run(s, play(5, 5, 0), play(5, 2, 0))  # seat 0 satisfies its own double
    assert s.trains[5:] == (Train(0, (), 5, 0), Train(0, (), 5, 0))
    s = run(s, DRAW, PASS, DRAW, PASS, DRAW, PASS)
    s = run(s, play(5, 4, 5), DRAW, PASS, DRAW, PASS, DRAW, PASS)
    s = run(s, play(4, 4, 5), play(4, 1, 5))
    assert s.trains[5] == Train(0, (tile(5, 4), tile(4, 4), tile(4, 1)), 1, 0)
    assert s.trains[7:] == (Train(0, (), 4, 5), Train(0, (), 4, 5))
    assert [t.parent for t in view(s, 1).trains] == [-1, -1, -1, -1, -1, 0, 0, 5, 5]


# ---------------------------------------------------------------- swan drive

SWAN = preset("standard+swan-drive", max_pip=9)  # engine 9-9; Mexican = 4
# Own train ends 5, Mexican 6, seat 1's 7 (public), seat 2's 8 (private), seat 3's 4 (public).
SWAN_TRAINS = {0: [(9, 5)], 1: [(9, 7)], 2: [(9, 8)], 3: [(9, 4)], 4: [(9, 6)]}
SWAN_OTHERS = [[(1, 1), (2, 2)], [(3, 3), (8, 8)], [(7, 7), (5, 5)]]


def swan(hand: list[tuple[int, int]], **kw: object) -> State:
    return position(SWAN, [hand, *SWAN_OTHERS], trains=SWAN_TRAINS, markers=[1, 3], **kw)


def test_swan_drive_mexican_may_be_played_or_skipped() -> None:
    s = swan([(5, 0), (6, 1), (7, 2), (8, 2), (4, 1), (0, 0)])
    s = apply(s, play(5, 0, 0))
    assert (s.to_move, s.ctx) == (0, Ctx.SWAN)
    assert set(legal_moves(s)) == {play(6, 1, 4), play(7, 2, 1), END}
    s = apply(s, play(7, 2, 1))  # skips the Mexican train
    # Seat 2's train is private: passed over. Seat 3's is public: reached.
    assert s.ctx is Ctx.SWAN and legal_moves(s) == (play(4, 1, 3), END)
    s = apply(s, play(4, 1, 3))
    assert legal_moves(s) == (END,)  # the drive has passed the last train
    s = apply(s, END)
    assert (s.to_move, s.ctx) == (1, Ctx.START)
    assert s.hands[0] == (tile(0, 0), tile(6, 1), tile(8, 2))
    assert s.markers == (False, True, False, True)  # others' markers stay up


def test_swan_drive_reached_public_train_may_not_be_skipped() -> None:
    s = swan([(5, 0), (6, 1), (4, 1), (0, 0)])
    s = apply(s, play(5, 0, 0))
    assert legal_moves(s) == (play(6, 1, 4), END)  # 4-1 on seat 3's train is out of reach
    s = apply(s, play(6, 1, 4))
    assert s.ctx is Ctx.SWAN and legal_moves(s) == (END,)


def test_swan_drive_may_end_at_once() -> None:
    s = swan([(5, 0), (6, 1), (7, 2), (0, 0)])
    s = run(s, play(5, 0, 0), END)
    assert (s.to_move, s.ctx) == (1, Ctx.START)
    assert s.hands[0] == (tile(0, 0), tile(6, 1), tile(7, 2))


def test_swan_drive_only_after_a_play_on_own_train() -> None:
    s = swan([(5, 0), (6, 1), (7, 2), (0, 0)])
    s = apply(s, play(6, 1, 4))
    assert (s.to_move, s.ctx) == (1, Ctx.START)
    s = swan([(5, 0), (6, 1), (7, 2), (0, 0)])
    s = apply(s, play(7, 2, 1))
    assert (s.to_move, s.ctx) == (1, Ctx.START)


def test_swan_drive_order_is_clockwise_from_the_seat() -> None:
    # Seat 2 (own train ends 8): Mexican, then seat 3, seat 0, seat 1.
    hands = [[(1, 1), (2, 2)], [(0, 0), (3, 3)], [(8, 0), (7, 2), (4, 1), (6, 3)], [(5, 5)]]
    s = position(SWAN, hands, trains=SWAN_TRAINS, markers=[1, 3], to_move=2)
    s = apply(s, play(8, 0, 2))
    assert set(legal_moves(s)) == {play(6, 3, 4), play(4, 1, 3), END}
    s = apply(s, play(4, 1, 3))
    assert legal_moves(s) == (play(7, 2, 1), END)  # seat 0's private train is passed over


def test_swan_drive_double_is_finished_on_its_train() -> None:
    s = swan([(5, 0), (6, 6), (6, 2), (7, 3), (0, 0)])
    s = run(s, play(5, 0, 0), play(6, 6, 4))
    assert (s.to_move, s.ctx) == (0, Ctx.FOLLOW)
    assert legal_moves(s) == (play(6, 2, 4),)  # not 7-3 on seat 1's train
    s = apply(s, play(6, 2, 4))
    assert s.ctx is Ctx.SWAN and legal_moves(s) == (play(7, 3, 1), END)


def test_swan_drive_unfinished_double_draws_then_passes() -> None:
    s = swan([(5, 0), (6, 6), (7, 3), (0, 0)], boneyard=[(3, 1), (2, 1)])
    s = run(s, play(5, 0, 0), play(6, 6, 4))
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert s.drawn == tile(3, 1) and legal_moves(s) == (PASS,)
    s = apply(s, PASS)
    assert s.to_move == 1 and s.markers == (True, True, False, True)
    assert s.open_doubles == (4,)


def test_swan_drive_drawn_tile_finishing_the_double_is_played_and_drive_goes_on() -> None:
    s = swan([(5, 0), (6, 6), (7, 3), (0, 0)], boneyard=[(6, 1), (2, 1)])
    s = run(s, play(5, 0, 0), play(6, 6, 4), DRAW)
    assert legal_moves(s) == (play(6, 1, 4),)
    s = apply(s, play(6, 1, 4))
    assert s.ctx is Ctx.SWAN and legal_moves(s) == (play(7, 3, 1), END)


def test_swan_drive_plays_are_listed_by_train_index() -> None:
    # legal_moves lists plays by train index, then tile; the drive's order is a rule
    # about which trains are open, not about the order of the list.
    s = swan([(5, 0), (6, 1), (7, 2), (0, 0)])
    s = apply(s, play(5, 0, 0))
    assert legal_moves(s) == (play(7, 2, 1), play(6, 1, 4), END)


def test_swan_drive_views_are_private() -> None:
    s = swan([(5, 0), (6, 1), (7, 2), (0, 0)])
    s = apply(s, play(5, 0, 0))
    assert view(s, 0).step is Ctx.SWAN
    assert_views_private(s)


# ---------------------------------------------------------------- fast first turn

FAST = preset("standard+fast-first-turn", max_pip=6, players=3)  # Mexican = 3


def test_fast_first_turn_build_phase() -> None:
    hands = [[(4, 1), (2, 0)], [(6, 5), (5, 4), (2, 2)], [(6, 3), (3, 3), (3, 1), (1, 0)]]
    s = position(FAST, hands, to_move=1, first_turns=True)
    assert (s.to_move, s.ctx) == (1, Ctx.BUILD)
    assert legal_moves(s) == (play(6, 5, 1), END)  # no Mexican train, no DRAW
    s = run(s, play(6, 5, 1), play(5, 4, 1))
    assert (s.to_move, s.ctx) == (1, Ctx.BUILD) and legal_moves(s) == (END,)
    s = apply(s, END)
    assert (s.to_move, s.ctx) == (2, Ctx.BUILD)
    s = run(s, play(6, 3, 2), play(3, 3, 2))
    assert s.ctx is Ctx.BUILD_FOLLOW and legal_moves(s) == (play(3, 1, 2),)
    s = apply(s, play(3, 1, 2))
    assert s.ctx is Ctx.BUILD and legal_moves(s) == (play(1, 0, 2), END)
    s = apply(s, END)
    assert (s.to_move, s.ctx) == (0, Ctx.BUILD) and legal_moves(s) == (END,)
    s = apply(s, END)
    # Everyone has built: normal turns begin at the starter, one tile at a time.
    assert (s.to_move, s.ctx) == (1, Ctx.START)
    assert legal_moves(s) == (DRAW,)
    assert s.markers == (False, False, False)


def test_fast_first_turn_normal_turns_after_the_phase() -> None:
    hands = [[(4, 1), (2, 0)], [(6, 5), (6, 4), (2, 2)], [(6, 3), (1, 0)]]
    s = position(FAST, hands, to_move=1, first_turns=True)
    s = run(s, play(6, 5, 1), END, END, END)
    assert (s.to_move, s.ctx) == (1, Ctx.START)
    assert legal_moves(s) == (play(6, 4, 3),)
    s = apply(s, play(6, 4, 3))
    assert (s.to_move, s.ctx) == (2, Ctx.START)
    assert legal_moves(s) == (play(6, 3, 2),)


def test_fast_first_turn_unfollowed_double_binds_after_the_phase() -> None:
    hands = [[(4, 1), (2, 0)], [(6, 5), (3, 2), (1, 1)], [(6, 3), (3, 3), (1, 0)]]
    s = position(FAST, hands, to_move=2, first_turns=True)
    s = run(s, play(6, 3, 2), play(3, 3, 2))
    assert legal_moves(s) == (END,)  # no tile fits the 3-3: the build may end
    s = run(s, END, END, play(6, 5, 1), END)
    assert (s.to_move, s.ctx) == (2, Ctx.START)
    s = run(s, DRAW, PASS)  # seat 2 cannot satisfy its own 3-3 either
    assert s.to_move == 0 and legal_moves(s) == (DRAW,)
    s = run(s, DRAW, PASS)
    assert s.to_move == 1 and legal_moves(s) == (play(3, 2, 2),)


def test_fast_first_turn_views_hide_other_builds() -> None:
    hands = [[(4, 1), (2, 0)], [(6, 5), (5, 4), (2, 2)], [(6, 3), (3, 3), (1, 0)]]
    s = position(FAST, hands, to_move=1, first_turns=True)
    s = run(s, play(6, 5, 1), play(5, 4, 1), END, play(6, 3, 2), play(3, 3, 2))
    assert s.ctx is Ctx.BUILD_FOLLOW
    assert_views_private(s)
    for seat in (0, 1):
        v = view(s, seat)
        assert v.trains[2].tiles == () and v.trains[2].end == 6
        assert not v.trains[2].open_double and v.open_doubles == ()
        assert v.hand_counts[2] == 3
    v0 = view(s, 0)
    assert v0.trains[1].tiles == () and v0.trains[1].end == 6
    assert v0.hand_counts == (2, 3, 3)
    v1 = view(s, 1)
    assert v1.trains[1].tiles == (tile(6, 5), tile(5, 4)) and v1.trains[1].end == 4
    assert v1.hand_counts == (2, 1, 3)
    v2 = view(s, 2)
    assert v2.trains[2].tiles == (tile(6, 3), tile(3, 3)) and v2.open_doubles == (2,)
    assert v2.trains[1].tiles == () and v2.hand_counts == (2, 3, 1)
    s = run(s, END, END)
    assert s.ctx is Ctx.START
    v0 = view(s, 0)
    assert v0.trains[1].tiles == (tile(6, 5), tile(5, 4))
    assert v0.trains[2].tiles == (tile(6, 3), tile(3, 3))
    assert v0.hand_counts == (2, 1, 1) and v0.open_doubles == (2,)


# ---------------------------------------------------------------- delayed first turn

DELAYED = preset("standard+delayed-first-turn", max_pip=6, players=3)  # Mexican = 3
DELAYED_TRAINS = {1: [(6, 2)], 3: [(6, 4)]}
DELAYED_OTHERS = [[(1, 1), (2, 0)], [(3, 3), (0, 0)]]


def delayed(hand: list[tuple[int, int]], **kw: object) -> State:
    return position(DELAYED, [hand, *DELAYED_OTHERS], trains=DELAYED_TRAINS, **kw)


def test_delayed_first_turn_starts_own_train_with_a_string() -> None:
    s = delayed([(6, 5), (5, 1), (1, 0), (3, 2)])
    assert legal_moves(s) == (play(6, 5, 0), DRAW)
    s = apply(s, play(6, 5, 0))
    assert (s.to_move, s.ctx) == (0, Ctx.CONTINUE)
    assert legal_moves(s) == (play(5, 1, 0), END)
    s = run(s, play(5, 1, 0), play(1, 0, 0))
    assert legal_moves(s) == (END,)
    s = apply(s, END)
    assert (s.to_move, s.ctx) == (1, Ctx.START)
    assert s.trains[0].tiles == (tile(6, 5), tile(5, 1), tile(1, 0))


def test_delayed_first_turn_string_stays_on_own_train() -> None:
    s = delayed([(6, 5), (5, 4), (4, 0), (3, 2)])
    s = apply(s, play(6, 5, 0))
    assert legal_moves(s) == (play(5, 4, 0), END)  # 4-x does not go on the Mexican train


def test_delayed_first_turn_may_draw_instead_and_then_pass() -> None:
    s = delayed([(6, 5), (3, 2)], boneyard=[(2, 1), (5, 0)])
    s = apply(s, DRAW)
    # 004: after the draw the seat "may then begin their first turn or pass".
    assert s.drawn == tile(2, 1) and legal_moves(s) == (play(6, 5, 0), PASS)
    s = apply(s, PASS)
    assert s.to_move == 1 and s.markers == (True, False, False)
    assert s.trains[0].tiles == ()


def test_delayed_first_turn_drawn_tile_starting_own_train_is_optional() -> None:
    s = delayed([(5, 1), (3, 2)], boneyard=[(6, 5), (2, 1)])
    assert legal_moves(s) == (DRAW,)
    s = apply(s, DRAW)
    assert legal_moves(s) == (play(6, 5, 0), PASS)
    t = apply(s, PASS)
    assert t.to_move == 1 and t.markers == (True, False, False)
    s = apply(s, play(6, 5, 0))
    assert s.ctx is Ctx.CONTINUE and legal_moves(s) == (play(5, 1, 0), END)


def test_delayed_first_turn_drawn_tile_for_another_train_must_be_played() -> None:
    s = delayed([(6, 5), (3, 2)], boneyard=[(4, 1), (2, 1)])
    s = apply(s, DRAW)
    # The drawn tile fits the Mexican train: play it there or begin the first train,
    # but no pass.
    assert legal_moves(s) == (play(6, 5, 0), play(4, 1, 3))


def test_delayed_first_turn_compulsory_with_an_empty_boneyard() -> None:
    s = delayed([(6, 5), (5, 1), (3, 2)], boneyard=[])
    assert legal_moves(s) == (play(6, 5, 0),)
    s = apply(s, play(6, 5, 0))
    assert s.ctx is Ctx.CONTINUE and legal_moves(s) == (play(5, 1, 0), END)


def test_delayed_first_turn_other_plays_are_one_tile_and_compulsory() -> None:
    s = delayed([(6, 5), (5, 1), (4, 0)])
    assert legal_moves(s) == (play(6, 5, 0), play(4, 0, 3))  # no DRAW: a play exists
    t = apply(s, play(4, 0, 3))
    assert (t.to_move, t.ctx) == (1, Ctx.START)
    t = apply(s, play(6, 5, 0))
    assert (t.to_move, t.ctx) == (0, Ctx.CONTINUE)


def test_delayed_first_turn_after_starting_own_train_one_tile_a_turn() -> None:
    s = position(
        DELAYED,
        [[(5, 1), (1, 0), (3, 2)], *DELAYED_OTHERS],
        trains={**DELAYED_TRAINS, 0: [(6, 5)]},
    )
    assert legal_moves(s) == (play(5, 1, 0),)
    s = apply(s, play(5, 1, 0))
    assert (s.to_move, s.ctx) == (1, Ctx.START)


def test_delayed_first_turn_marked_seat_starts_its_string_and_clears_marker() -> None:
    s = delayed([(6, 5), (5, 1), (3, 2)], markers=[0])
    s = run(s, play(6, 5, 0), play(5, 1, 0), END)
    assert s.markers == (False, False, False)
    assert s.trains[0].tiles == (tile(6, 5), tile(5, 1))


def test_delayed_first_turn_views_are_private() -> None:
    s = delayed([(6, 5), (5, 1), (3, 2)])
    s = apply(s, play(6, 5, 0))
    assert view(s, 0).step is Ctx.CONTINUE
    assert_views_private(s)


# ---------------------------------------------------------------- announce on standard

ANNOUNCE = preset("standard+announce", max_pip=6)  # Mexican = 4
ANN_TRAINS = {0: [(6, 5)]}
ANN_OTHERS = [[(1, 1)], [(2, 2)], [(3, 3)]]


def test_announce_variant_lists_plays_leaving_one_tile_twice() -> None:
    s = position(ANNOUNCE, [[(5, 2), (6, 1)], *ANN_OTHERS], trains=ANN_TRAINS)
    assert legal_moves(s) == (
        play(5, 2, 0, announce=True),
        play(5, 2, 0),
        play(6, 1, 4, announce=True),
        play(6, 1, 4),
    )
    plain = preset("standard", max_pip=6)
    s = position(plain, [[(5, 2), (6, 1)], *ANN_OTHERS], trains=ANN_TRAINS)
    assert legal_moves(s) == (play(5, 2, 0), play(6, 1, 4))
    with pytest.raises(IllegalMoveError):
        apply(s, play(5, 2, 0, announce=True))


def test_announce_variant_rejects_announcing_with_more_tiles_left() -> None:
    s = position(ANNOUNCE, [[(5, 2), (6, 1), (0, 0)], *ANN_OTHERS], trains=ANN_TRAINS)
    assert legal_moves(s) == (play(5, 2, 0), play(6, 1, 4))
    with pytest.raises(IllegalMoveError):
        apply(s, play(5, 2, 0, announce=True))


def test_announce_variant_penalty_and_no_penalty() -> None:
    boneyard = [(4, 1), (4, 2), (4, 3)]
    s = position(ANNOUNCE, [[(5, 2), (1, 0)], *ANN_OTHERS], trains=ANN_TRAINS, boneyard=boneyard)
    t = apply(s, play(5, 2, 0, announce=True))
    assert t.to_move == 1 and t.hands[0] == (tile(1, 0),) and len(t.boneyard) == 3
    t = apply(s, play(5, 2, 0))
    assert t.to_move == 1
    assert t.hands[0] == (tile(1, 0), tile(4, 1), tile(4, 2))
    assert t.boneyard == (tile(4, 3),)
    assert_views_private(t)


def test_announce_variant_going_out_ends_the_round() -> None:
    rules = preset("standard+announce", max_pip=6, rounds="single")
    s = position(rules, [[(5, 2)], *ANN_OTHERS], trains=ANN_TRAINS)
    assert legal_moves(s) == (play(5, 2, 0),)
    s = apply(s, play(5, 2, 0))
    assert s.outcome is not None and s.results[0].end is RoundEnd.OUT


# ---------------------------------------------------------------- optional own double, first train


@pytest.mark.parametrize(
    "name",
    [
        "masters",  # long, until stuck
        "celko",  # long, ending at will
        "private-trains+fast-first-turn",
        "private-trains+delayed-first-turn",
    ],
)
def test_optional_own_double_in_a_first_train_may_be_left(name: str) -> None:
    # First turns, Decision: with own_double_follow_up = "optional" a double in a first
    # train (always on one's own train) need not be followed, as outside first turns;
    # "must still be followed" is the default, "required".
    def first_train(hand: list[tuple[int, int]], follow_up: str) -> State:
        rules = preset(name, max_pip=6, players=2, own_double_follow_up=follow_up)
        s = position(rules, [hand, [(4, 1)]], boneyard=[(3, 0), (2, 0)], first_turns=True)
        return run(s, play(6, 5, 0), play(5, 5, 0))

    s = first_train([(6, 5), (5, 5), (5, 2), (2, 1), (4, 3), (3, 3)], "optional")
    assert s.to_move == 0 and s.ctx in (Ctx.FOLLOW, Ctx.BUILD_FOLLOW)
    # On the double, or end (even while a tile fits, with until stuck); nothing else.
    assert legal_moves(s) == (play(5, 2, 0), END)
    left = apply(s, END)
    assert left.to_move == 1 and left.open_doubles == (0,)
    assert left.trains[0].tiles == (tile(6, 5), tile(5, 5))
    assert not left.first_pending[0] and not left.markers[0]
    # Followed, the first train goes on as before: until stuck in masters.
    on = apply(s, play(5, 2, 0))
    assert on.to_move == 0 and on.open_doubles == ()
    expected = (play(2, 1, 0),) if name == "masters" else (play(2, 1, 0), END)
    assert legal_moves(on) == expected
    # Nothing to follow with: it ends, and does not draw.
    s = first_train([(6, 5), (5, 5), (4, 3), (3, 3)], "optional")
    assert legal_moves(s) == (END,)
    assert apply(s, END).boneyard == s.boneyard
    # With "required" the same double must be followed.
    s = first_train([(6, 5), (5, 5), (5, 2), (2, 1), (4, 3), (3, 3)], "required")
    assert legal_moves(s) == (play(5, 2, 0),)
