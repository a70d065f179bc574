"""Rounds under the `standard` preset: the deal, the engine, round ends, scoring, ranking.

Hand-dealt positions are four seats, double-12; seat s's train is train s and
the Mexican train is train 4. Boneyards are given explicitly.
"""

from __future__ import annotations

import random

import pytest

from referee.rules import (
    PASS,
    RoundEnd,
    RoundResult,
    Rules,
    State,
    Tile,
    apply,
    full_set,
    legal_moves,
    new_game,
    play,
    position,
    preset,
)
from referee.rules.scoring import outcome_of

SINGLE = preset("standard", rounds="single")
MEX = 4
# Train ends 6, 5, 7, 8 and 9 (Mexican): nothing below fits any of them.
ENDS = {0: [(12, 6)], 1: [(12, 5)], 2: [(12, 7)], 3: [(12, 8)], MEX: [(12, 9)]}


def run(state: State, *moves) -> State:
    for move in moves:
        state = apply(state, move)
    return state


def passes(state: State, count: int) -> State:
    """`count` passes in a row, each checked to be the only legal move."""
    for _ in range(count):
        assert legal_moves(state) == (PASS,)
        state = apply(state, PASS)
    return state


def result(
    number: int, scores: tuple[int, ...], engine: int = 12, out: tuple[int, ...] = ()
) -> RoundResult:
    """A hand-made round result; only the scores matter to the ranking."""
    hands = tuple(() for _ in scores)
    return RoundResult(number, engine, 0, RoundEnd.OUT, out, hands, scores, scores)


# ---------------------------------------------------------------- blocked rounds


def blocked_table(rules: Rules = SINGLE) -> State:
    hands = [[(9, 1)], [(2, 0), (0, 0)], [(3, 3)], [(11, 4)]]
    trains = {0: [(12, 5)], 1: [(12, 7)], 2: [(12, 6)]}
    return position(rules, hands, trains=trains, boneyard=[])


def test_round_blocked_when_nobody_can_ever_play() -> None:
    over = apply(blocked_table(), PASS)
    assert over.outcome is not None
    last = over.results[-1]
    assert last.end is RoundEnd.BLOCKED
    assert last.out == ()
    assert last.hands == ((Tile(9, 1),), (Tile(0, 0), Tile(2, 0)), (Tile(3, 3),), (Tile(11, 4),))
    assert last.values == (10, 52, 6, 15)
    assert last.scores == (10, 52, 6, 15)
    assert over.outcome.scores == (10, 52, 6, 15)
    assert over.outcome.ranks == (2, 4, 1, 3)


def test_double_blank_scores_zero_when_configured() -> None:
    rules = preset("standard", rounds="single", double_blank_score=0)
    last = apply(blocked_table(rules), PASS).results[-1]
    assert last.values == (10, 2, 6, 15)
    assert last.scores == (10, 2, 6, 15)


def test_blocked_round_starts_the_next_round() -> None:
    after = apply(blocked_table(preset("standard")), PASS)
    assert after.round_index == 1
    assert after.engine == 11
    assert after.outcome is None
    assert [r.end for r in after.results] == [RoundEnd.BLOCKED]


def test_open_double_nobody_can_satisfy_blocks_the_round() -> None:
    # Seat 1 could start the Mexican train, but the live 6-6 binds everyone.
    hands = [[(9, 1)], [(12, 2)], [(3, 0)], [(11, 4)]]
    state = position(SINGLE, hands, trains={0: [(12, 6), (6, 6)]}, boneyard=[], to_move=1)
    assert legal_moves(state) == (PASS,)
    over = apply(state, PASS)
    assert over.results[-1].end is RoundEnd.BLOCKED
    assert over.results[-1].scores == (10, 14, 3, 15)


def test_full_cycle_of_passes_is_not_a_block() -> None:
    # Seat 0's 5-3 fits only seat 1's private train. Seat 0 passes; seat 1 passes
    # and so opens its train; seats 2 and 3 pass; then seat 0 plays and goes out.
    hands = [[(5, 3)], [(2, 0)], [(4, 0)], [(1, 0)]]
    state = position(SINGLE, hands, trains=ENDS, boneyard=[])
    state = passes(state, 4)
    assert state.results == ()
    assert state.markers == (True, True, True, True)
    assert state.to_move == 0
    assert legal_moves(state) == (play(5, 3, 1),)
    over = apply(state, play(5, 3, 1))
    assert over.results[-1].end is RoundEnd.OUT
    assert over.results[-1].out == (0,)
    assert over.results[-1].scores == (0, 2, 4, 1)


def test_pass_that_opens_a_train_to_a_later_seat_is_not_a_block() -> None:
    # Seat 2's 5-3 fits only seat 1's train, which opens when seat 1 passes.
    hands = [[(1, 0)], [(2, 0)], [(5, 3)], [(4, 0)]]
    state = passes(position(SINGLE, hands, trains=ENDS, boneyard=[]), 2)
    assert state.results == ()
    assert state.to_move == 2
    assert legal_moves(state) == (play(5, 3, 1),)


def test_marker_raised_by_a_pass_lets_an_earlier_passer_play() -> None:
    # Seat 3 can play on the Mexican train, so the first passes block nothing.
    hands = [[(5, 3), (1, 1)], [(2, 0)], [(4, 0)], [(10, 9), (2, 2)]]
    state = position(SINGLE, hands, trains=ENDS, boneyard=[])
    state = run(passes(state, 3), play(10, 9, MEX))
    assert state.results == ()
    assert state.to_move == 0
    assert state.markers == (True, True, True, False)
    assert legal_moves(state) == (play(5, 3, 1),)
    state = apply(state, play(5, 3, 1))
    assert state.markers == (True, True, True, False)
    # Seat 1 cannot play on its train (now ending 3): its pass blocks the round.
    over = passes(state, 1)
    last = over.results[-1]
    assert last.end is RoundEnd.BLOCKED
    assert last.hands == ((Tile(1, 1),), (Tile(2, 0),), (Tile(4, 0),), (Tile(2, 2),))
    assert last.scores == (2, 2, 4, 4)


# ---------------------------------------------------------------- going out and scoring


def test_round_scores_are_the_pip_sums_of_the_hands_left() -> None:
    hands = [[(12, 1)], [(0, 0), (6, 6)], [(11, 10), (3, 2)], [(9, 4)]]
    over = apply(position(SINGLE, hands, boneyard=[(5, 5)]), play(12, 1, 0))
    last = over.results[-1]
    assert last.end is RoundEnd.OUT
    assert last.out == (0,)
    assert last.hands == ((), (Tile(0, 0), Tile(6, 6)), (Tile(3, 2), Tile(11, 10)), (Tile(9, 4),))
    assert last.values == (0, 62, 26, 13)
    assert last.scores == (0, 62, 26, 13)
    assert over.outcome is not None
    assert over.outcome.rounds == ((0, 62, 26, 13),)
    assert over.outcome.ranks == (1, 4, 3, 2)
    assert legal_moves(over) == ()


# ---------------------------------------------------------------- the engine double


@pytest.mark.parametrize(("seed", "draws", "holder"), [(18, 8, 3), (0, 26, 1)])
def test_engine_not_dealt_is_searched_for_in_seat_order(seed, draws, holder) -> None:
    rules = preset("standard")
    state = new_game(rules, seed)
    assert state.engine == 12
    assert state.engine_draws == tuple(k % 4 for k in range(draws))
    assert state.holder == holder
    assert state.starter == (holder + 1) % 4
    assert state.to_move == state.starter
    for seat in range(4):
        gone = 1 if seat == holder else 0
        assert len(state.hands[seat]) == 15 + state.engine_draws.count(seat) - gone
        assert Tile(12, 12) not in state.hands[seat]
    assert len(state.boneyard) == 91 - 60 - draws
    assert Tile(12, 12) not in state.boneyard
    everything = sorted([*state.boneyard, Tile(12, 12), *(t for h in state.hands for t in h)])
    assert everything == sorted(full_set(12))


def test_engine_dealt_needs_no_search() -> None:
    state = new_game(preset("standard"), 1)
    assert state.engine_draws == ()
    assert state.holder == 1
    assert state.starter == 2
    assert [len(h) for h in state.hands] == [15, 14, 15, 15]
    assert len(state.boneyard) == 31


# ---------------------------------------------------------------- dealing sizes

HAND_SIZES = [
    *((12, n, size) for n, size in {2: 15, 3: 15, 4: 15, 5: 12, 6: 12, 7: 10, 8: 10}.items()),
    *((6, n, size) for n, size in {2: 7, 3: 6, 4: 5}.items()),
    *((9, n, size) for n, size in {2: 10, 4: 10, 5: 8, 6: 8, 7: 6, 8: 6}.items()),
    (15, 4, 15),
    (15, 9, 11),
    (15, 12, 10),
    (18, 6, 15),
    (18, 7, 14),
    (18, 16, 10),
]


@pytest.mark.parametrize(("max_pip", "players", "size"), HAND_SIZES)
def test_hand_size_per_player_count(max_pip, players, size) -> None:
    rules = preset("standard", max_pip=max_pip, players=players)
    assert rules.hand == size
    state = new_game(rules, 7)
    draws = state.engine_draws
    for seat in range(players):
        gone = 1 if seat == state.holder else 0
        assert len(state.hands[seat]) == size + draws.count(seat) - gone
    total = (max_pip + 1) * (max_pip + 2) // 2
    assert len(state.boneyard) == total - players * size - len(draws)


# ---------------------------------------------------------------- round order


def going_out(rules: Rules, round_index: int, tile: tuple[int, int], results=()) -> State:
    """Seat 0 plays its only tile, `tile`, on its own empty train and goes out."""
    hands = [[tile], [(3, 2)], [(5, 4)], [(7, 6)]]
    state = position(rules, hands, boneyard=[(9, 8)], round_index=round_index, results=results)
    return apply(state, play(*tile, 0))


def test_round_orders() -> None:
    assert preset("standard").engines == tuple(range(12, -1, -1))
    assert preset("standard", rounds="ascending").engines == tuple(range(13))
    assert SINGLE.engines == (12,)
    assert new_game(preset("standard", rounds="ascending"), 1).engine == 0
    assert new_game(SINGLE, 1).engine == 12


def test_descending_goes_to_the_next_lower_double() -> None:
    after = going_out(preset("standard"), 0, (12, 1))
    assert (after.round_index, after.engine, after.outcome) == (1, 11, None)
    assert after.results[0].engine == 12
    assert after.results[0].scores == (0, 5, 9, 13)
    # The next round is a fresh deal: no tiles on the table, no markers.
    assert all(not t.tiles and t.end == 11 for t in after.trains)
    assert after.markers == (False, False, False, False)
    assert after.open_doubles == ()


def test_ascending_goes_to_the_next_higher_double() -> None:
    after = going_out(preset("standard", rounds="ascending"), 0, (1, 0))
    assert (after.round_index, after.engine, after.outcome) == (1, 1, None)
    assert after.results[0].engine == 0


def test_single_round_game_ends_after_one_round() -> None:
    over = going_out(SINGLE, 0, (12, 1))
    assert over.outcome is not None
    assert over.outcome.rounds == ((0, 5, 9, 13),)
    assert over.outcome.scores == (0, 5, 9, 13)


def test_descending_game_ends_after_the_double_blank_round() -> None:
    rules = preset("standard")
    earlier = [result(k, (10, 0, 0, 0), engine=12 - k, out=(1,)) for k in range(12)]
    over = going_out(rules, 12, (1, 0), results=earlier)
    assert over.outcome is not None
    assert len(over.results) == 13
    assert over.results[-1].engine == 0
    assert over.outcome.scores == (120, 5, 9, 13)
    assert over.outcome.ranks == (4, 1, 2, 3)


# ---------------------------------------------------------------- ranking a game


def ranks(*rounds: tuple[int, ...], rules: Rules = SINGLE) -> tuple[int, ...]:
    results = tuple(result(k, scores) for k, scores in enumerate(rounds))
    return outcome_of(rules, results).ranks


def test_lowest_total_wins() -> None:
    outcome = outcome_of(SINGLE, (result(0, (0, 10, 20, 30)), result(1, (25, 5, 5, 5))))
    assert outcome.scores == (25, 15, 25, 35)
    assert outcome.rounds == ((0, 10, 20, 30), (25, 5, 5, 5))
    assert outcome.ranks == (2, 1, 3, 4)
    assert outcome.order == (1, 0, 2, 3)


def test_equal_totals_go_to_the_most_zero_rounds() -> None:
    # Seats 0-2 total 30: seat 0 (0, 0, 30) has two zero rounds, so its lowest
    # non-zero round does not matter; seats 1 and 2 (1, 1, 28) stay tied.
    assert ranks((0, 1, 1, 30), (0, 1, 1, 0), (30, 28, 28, 5)) == (1, 2, 2, 4)


def test_then_the_lowest_non_zero_round() -> None:
    # All total 20 with one zero round: lowest non-zero 5 beats 10; seats 1 and 2 share.
    assert ranks((0, 0, 10, 5), (5, 10, 0, 15), (15, 10, 10, 10)) == (1, 2, 2, 4)


def test_lowest_non_zero_round_without_zero_rounds() -> None:
    # Seats 0 and 1 total 20 without a zero round: 5 beats 10.
    assert ranks((10, 5, 20, 1), (10, 15, 5, 40)) == (2, 1, 3, 4)


def test_remaining_tie_is_shared_and_skips_a_rank() -> None:
    outcome = outcome_of(SINGLE, (result(0, (10, 10, 5, 30)), result(1, (10, 10, 20, 30))))
    assert outcome.ranks == (1, 1, 3, 4)
    assert outcome.order == (0, 1, 2, 3)


# ---------------------------------------------------------------- teams


TEAMS = preset("standard+teams", rounds="single")


def test_team_scores_zero_when_a_partner_goes_out() -> None:
    hands = [[(6, 6), (3, 1)], [(12, 2)], [(0, 0), (4, 4)], [(9, 2)]]
    state = position(TEAMS, hands, boneyard=[(5, 5)], to_move=1)
    over = apply(state, play(12, 2, 1))
    last = over.results[-1]
    assert last.out == (1,)
    assert last.values == (16, 0, 58, 11)
    assert last.scores == (74, 0, 74, 0)
    assert over.outcome is not None
    assert over.outcome.scores == (74, 0, 74, 0)
    assert over.outcome.ranks == (2, 1, 2, 1)


def test_team_scores_both_hands_in_a_blocked_round() -> None:
    hands = [[(9, 1)], [(2, 0), (0, 0)], [(3, 3)], [(11, 4)]]
    state = position(TEAMS, hands, trains={MEX: [(12, 5)]}, boneyard=[])
    last = apply(state, PASS).results[-1]
    assert last.end is RoundEnd.BLOCKED
    assert last.values == (10, 52, 6, 15)
    assert last.scores == (16, 67, 16, 67)


def test_partners_share_ranks_and_count_once() -> None:
    six = preset("standard+teams", players=6, rounds="single")
    # Side 0 (seats 0, 3) is best; sides 1 and 2 tie for second, not third.
    assert ranks((10, 20, 20, 10, 20, 20), rules=six) == (1, 2, 2, 1, 2, 2)
    four = preset("standard+teams", rounds="single")
    assert ranks((10, 20, 10, 20), (0, 30, 0, 30), rules=four) == (1, 2, 1, 2)
    assert ranks((10, 10, 10, 10), rules=four) == (1, 1, 1, 1)


def test_first_turns_left_blocked_after_a_seat_went_out_end_the_round_as_out() -> None:
    # masters (first_turns_complete): seat 0 goes out in its long first turn; seat 1,
    # in its own, lays 0-0, draws the boneyard's last tile and passes; seat 2, still
    # waiting for its first turn, could play nothing. The round ends there, won by
    # going out (a game the property tests found: seed 1056, moves from Random(0)).
    rules = preset("masters", max_pip=6, players=3, rounds="single")
    state = new_game(rules, 1056)
    dealt = state.hands[2]
    chooser = random.Random(0)
    while not state.results:
        state = apply(state, chooser.choice(legal_moves(state)))
    last = state.results[-1]
    assert last.end is RoundEnd.OUT
    assert last.out == (0,)
    assert last.hands[0] == () and last.hands[2] == dealt  # seat 2 never had a turn
    assert state.outcome is not None and state.outcome.ranks[0] == 1
