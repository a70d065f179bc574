"""Games of one deal never in play together (`league.apart`), over many random
schedules: each game is started once, never beside another game of its unit, and a
job is idle only when every game left waits for its unit; jobs end their games in any
order. Then the trio side: a job waits for a unit and is woken when it is free.

The schedules are random lists of units (a unit's games together, spread out, or
mixed), split between two sides (the league's own jobs and a cluster) that share
one `Apart`, as a league with TCP seats on a cluster does.
"""

from __future__ import annotations

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.league.apart import BLOCKED, Apart, Queue
from referee.league.schedule import Scheduled


def game(index: int, unit: int) -> Scheduled:
    return Scheduled(
        index=index, unit=unit, table=0, deal=unit, rotation=0, seed=unit, seats=("a", "b")
    )


@settings(max_examples=400, deadline=None)
@given(
    units=st.lists(st.integers(0, 7), min_size=1, max_size=40),
    sides=st.data(),
    jobs=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    data=st.data(),
)
def test_no_two_games_of_a_unit_at_once_and_no_job_idle_for_nothing(
    units: list[int], sides: st.DataObject, jobs: tuple[int, int], data: st.DataObject
) -> None:
    games = [game(i, u) for i, u in enumerate(units)]
    side_of = [sides.draw(st.integers(0, 1)) for _ in games]
    apart = Apart()
    left = [[g for g in games if side_of[g.index] == s] for s in (0, 1)]  # not taken yet
    queues = [apart.queue(list(mine)) for mine in left]
    running: list[tuple[int, Scheduled]] = []
    taken: list[int] = []

    def start(side: int, queue: Queue) -> None:
        while sum(1 for s, _ in running if s == side) < jobs[side]:
            if data.draw(st.booleans()):  # the cluster reads ahead to size its batches
                queue.fill(data.draw(st.integers(0, 12)))
            in_play = {g.unit for _, g in running}
            free = [g for g in left[side] if g.unit not in in_play]
            got = queue.take()
            if got is BLOCKED or got is None:
                # Idle only when nothing could start: no game left, or each one's unit
                # is in play (here or on the other side).
                assert free == []
                assert (got is None) == (left[side] == [])
                # What waits belongs to a unit in play: the queue reads no further ahead.
                assert all(g.unit in in_play for g in queue.waiting)
                return
            assert got.unit not in in_play  # the rule itself
            assert got == free[0]  # the first free game in schedule order
            assert apart.playing == in_play | {got.unit}
            left[side].remove(got)
            running.append((side, got))
            taken.append(got.index)

    while True:
        for side, queue in enumerate(queues):
            start(side, queue)
        if not running:
            break
        # Any game in play may end next.
        side, ended = running.pop(data.draw(st.integers(0, len(running) - 1)))
        apart.done(ended)
    assert sorted(taken) == list(range(len(games)))  # every game once
    assert left == [[], []] and apart.playing == set()
    # Within a unit, its games start in schedule order on each side.
    for side in (0, 1):
        for unit in set(units):
            order = [i for i in taken if units[i] == unit and side_of[i] == side]
            assert order == sorted(order)


@settings(max_examples=200, deadline=None)
@given(units=st.lists(st.integers(0, 5), min_size=1, max_size=30), jobs=st.integers(1, 6))
def test_with_every_game_of_one_side_jobs_play_as_many_units_as_they_can(
    units: list[int], jobs: int
) -> None:
    # Jobs that end their games in the order they took them: at each step as many games
    # run as there are jobs, or as there are units with a game left (whichever is less).
    apart = Apart()
    queue = apart.queue(game(i, u) for i, u in enumerate(units))
    running: list[Scheduled] = []
    left = list(units)
    while True:
        while len(running) < jobs and isinstance(got := queue.take(), Scheduled):
            running.append(got)
            left.remove(got.unit)
        units_left = len(set(left) | {g.unit for g in running})
        assert len(running) == min(jobs, units_left)
        if not running:
            break
        apart.done(running.pop(0))


def test_peek_shows_the_next_game_without_taking_it() -> None:
    apart = Apart()
    queue = apart.queue([game(0, 0), game(1, 0), game(2, 1)])
    assert queue.peek() == game(0, 0)
    assert queue.take() == game(0, 0)
    assert queue.peek() == game(2, 1)  # game 1 waits for unit 0
    assert queue.take() == game(2, 1)
    assert queue.peek() is BLOCKED and queue.take() is BLOCKED
    apart.done(game(0, 0))
    assert queue.take() == game(1, 0)
    assert queue.take() is None and queue.peek() is None


async def test_a_job_waits_for_its_unit_and_the_other_side_is_told(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Two jobs, one unit of two games and one of one: the job that plays unit 1 then
    # waits until game 0 of unit 0 is played. Games 0 and 1 take 5 s, game 2 takes 1 s.
    apart = Apart()
    queue = apart.queue([game(0, 0), game(1, 0), game(2, 1)])
    events: list[tuple[float, str, int]] = []
    woken: list[float] = []

    async def job() -> None:
        while (got := await apart.take(queue)) is not None:
            events.append((trio.current_time(), "start", got.index))
            await trio.sleep(1.0 if got.index == 2 else 5.0)
            events.append((trio.current_time(), "end", got.index))
            apart.done(got)

    with apart.waking(lambda: woken.append(trio.current_time())):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(job)
            nursery.start_soon(job)
    assert events == [
        (0.0, "start", 0),
        (0.0, "start", 2),
        (1.0, "end", 2),
        (5.0, "end", 0),
        (5.0, "start", 1),
        (10.0, "end", 1),
    ]
    assert woken == [1.0, 5.0, 10.0]
    assert apart._wakers == []
