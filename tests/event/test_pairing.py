"""The event's seating and ranking rules (`referee.event.pairing`), by hand-made results
and as properties over many seeded rounds."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.event.pairing import (
    GameResult,
    Running,
    TableResult,
    add_table,
    bye_points,
    game_points,
    group_sizes,
    knockout_out,
    snake_groups,
    swiss_order,
    swiss_round,
    table_sizes,
)


def test_placement_points_share_ties_and_scale_smaller_tables() -> None:
    assert game_points([1, 2, 3, 4], "beaten", 4) == [3, 2, 1, 0]
    assert game_points([1, 1, 3, 4], "beaten", 4) == [2.5, 2.5, 1, 0]
    assert game_points([2, 1, 3], "beaten", 4) == [1.5, 3, 0]  # first is worth 3 at any table
    assert game_points([1, 1, 3], "wins", 3) == [0.5, 0.5, 0]
    assert game_points([2, 1, 2, 4], (7.0, 5.0, 3.0, 1.0), 4) == [4, 7, 4, 1]
    assert bye_points("beaten", 4) == 1.5 and bye_points((7.0, 5.0, 3.0, 1.0), 4) == 4


def test_table_sizes_smaller_tables_or_byes() -> None:
    assert table_sizes(8, 4, "smaller") == ([4, 4], 0)
    assert table_sizes(10, 4, "smaller") == ([4, 3, 3], 0)
    assert table_sizes(10, 4, "bye") == ([4, 4], 2)
    assert table_sizes(5, 4, "smaller") == ([4], 1)  # 4 + 3 is 7, not 5: a bye
    assert table_sizes(3, 4, "smaller") == ([3], 0)
    assert table_sizes(1, 4, "smaller") == ([], 1)


def test_the_swiss_order_breaks_ties_by_opposition_then_seed() -> None:
    running = {n: Running(n, seed=i) for i, n in enumerate("abcd")}
    running["c"].score = running["d"].score = 2.0
    running["a"].score = 1.0
    running["d"].met = {"a": 1}  # d met a (1 point), c met nobody
    assert swiss_order(running) == ["d", "c", "a", "b"]
    running["d"].withdrawn = True
    assert swiss_order(running) == ["c", "a", "b"]


def test_a_swiss_round_avoids_a_repeat_meeting_when_it_can() -> None:
    running = {n: Running(n, seed=i) for i, n in enumerate("abcdef")}
    add_table(
        running,
        TableResult(("a", "b", "c"), (GameResult(("a", "b", "c"), (1, 2, 3), (0, 5, 9)),)),
        "beaten",
        3,
    )
    add_table(
        running,
        TableResult(("d", "e", "f"), (GameResult(("d", "e", "f"), (1, 2, 3), (0, 5, 9)),)),
        "beaten",
        3,
    )
    tables, byes = swiss_round(running, 3, "smaller")
    assert byes == []
    # By score a and d lead, then b and e: the leaders' table takes them and one more.
    assert tables[0][:2] == ("a", "d") and all(
        sum(running[x].met.get(y, 0) for x in t for y in t) <= 2 for t in tables
    )


def test_snake_groups_spread_the_seeds() -> None:
    assert snake_groups(list("abcdefgh"), group_sizes(8, 4)) == [
        ("a", "d", "e", "h"),
        ("b", "c", "f", "g"),
    ]
    assert group_sizes(10, 4) == [4, 3, 3] and group_sizes(4, 4) == [4]


def test_knockout_by_eliminate_and_by_strikes_never_below_the_final_table() -> None:
    names = "abcdefg"
    running = {n: Running(n, seed=i) for i, n in enumerate(names)}
    seeds = {n: i for i, n in enumerate(names)}
    groups = [
        TableResult(
            ("a", "d", "e", "g"), (GameResult(("a", "d", "e", "g"), (1, 2, 3, 4), (0, 3, 6, 9)),)
        ),
        TableResult(("b", "c", "f"), (GameResult(("b", "c", "f"), (3, 1, 2), (9, 0, 4)),)),
    ]
    for g in groups:
        add_table(running, g, "beaten", 4)
    out = knockout_out(groups, running, seeds, rule="beaten", full=4, eliminate=1, strikes=0)
    assert out == ["g", "b"] or out == ["b", "g"]
    out2 = knockout_out(groups, running, seeds, rule="beaten", full=4, eliminate=3, strikes=0)
    assert len(out2) == 3  # 7 - 4: the final table is kept whole
    strikes = knockout_out(groups, running, seeds, rule="beaten", full=4, eliminate=1, strikes=1)
    assert sorted(strikes) == ["b", "g"]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 40),
    table=st.integers(3, 8),
    remainder=st.sampled_from(["smaller", "bye"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_round_seats_each_entry_still_in_exactly_once(
    n: int, table: int, remainder: str, seed: int
) -> None:
    rng = random.Random(seed)
    running = {f"e{i}": Running(f"e{i}", seed=i) for i in range(n)}
    for rnd in range(4):
        tables, byes = swiss_round(running, table, remainder)
        seated = [x for t in tables for x in t]
        assert sorted(seated + byes) == sorted(r.name for r in running.values() if not r.withdrawn)
        assert len(set(seated)) == len(seated)
        assert all(len(t) in (table, table - 1) or len(tables) == 1 for t in tables)
        assert all(len(t) >= 2 for t in tables)
        if remainder == "bye":
            assert all(len(t) == table for t in tables) or len(tables) == 1
        # A second bye only once everyone has had one.
        assert max((r.byes for r in running.values()), default=0) <= rnd
        for t in tables:
            ranks = list(range(1, len(t) + 1))
            rng.shuffle(ranks)
            add_table(
                running,
                TableResult(t, (GameResult(t, tuple(ranks), tuple(ranks)),)),
                "beaten",
                table,
            )
        for b in byes:
            running[b].byes += 1
