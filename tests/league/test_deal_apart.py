"""No two games of one deal in play at once: the seat rotations of a deal, played by
other processes of the same bots, never overlap, at `--jobs 4` nor on a cluster,
while the other deals keep every job busy.

Each game's time in play is taken from an ordered record of events made where the
league starts and ends games: around `play_scheduled` for the league's own jobs (the
bots are acquired inside it and released before it returns), and from a task's
submission to the delivery of its result on a cluster (the worker plays the game in
between). No sleep and no clock: only the order of the events counts. The scheduling
rule itself is tested over random schedules in test_apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.league import run as run_mod
from referee.league.cluster import Cluster
from referee.league.ledger import Record
from referee.league.remote import decode_job
from tests._procs import new_token
from tests.league.test_run import (
    check_logs,
    first,
    ledger_records,
    no_process_left,
    pinned,
    run,
    sample,
    write_league,
)

Events = list[tuple[str, int]]  # ("start" | "end", schedule index), in the order they came


def clashes(events: Events, records: list[Record]) -> list[tuple[int, int]]:
    """Pairs of games of one unit that were in play together, and the most games that
    were in play at once."""
    unit = {r.idx: r.unit for r in records}
    playing: set[int] = set()
    found = []
    for what, idx in events:
        if what == "start":
            found += [(other, idx) for other in playing if unit[other] == unit[idx]]
            playing.add(idx)
        else:
            playing.remove(idx)
    return found


def most_at_once(events: Events) -> int:
    now = most = 0
    for what, _ in events:
        now += 1 if what == "start" else -1
        most = max(most, now)
    return most


def one_table(tmp_path: Path, token: str, deals: int) -> Path:
    """Three bots at a table of three: one table, so a deal's three rotations are
    neighbours in the schedule, and `--jobs 4` would take them together."""
    bots = [
        sample("random", "random_bot.py", token),
        sample("greedy", "greedy_bot.py", token),
        first("first", token),
    ]
    return write_league(tmp_path, bots, table=3, deals=deals)


async def test_at_four_jobs_the_rotations_of_a_deal_never_overlap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = new_token()
    config = pinned(one_table(tmp_path, token, deals=4), tmp_path / "out")
    events: Events = []
    play = run_mod.play_scheduled

    async def watched(config: Any, game: Any, *args: Any, **kwargs: Any) -> Record:
        events.append(("start", game.index))
        try:
            return await play(config, game, *args, **kwargs)
        finally:
            events.append(("end", game.index))

    monkeypatch.setattr(run_mod, "play_scheduled", watched)
    with no_process_left(token):
        standings = await run(config, jobs=4)
    records = ledger_records(config.out)
    assert standings.games == 12 and [r.idx for r in records] == list(range(12))
    assert sorted(idx for what, idx in events if what == "start") == list(range(12))
    assert clashes(events, records) == []
    # Not one game at a time: the four deals started together, one game each.
    assert [what for what, _ in events[:4]] == ["start"] * 4
    assert len({records[idx].unit for _, idx in events[:4]}) == 4
    assert most_at_once(events) == 4
    check_logs(records, config.out / "logs")


def test_on_a_cluster_a_deal_has_one_game_in_flight_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = new_token()
    config = pinned(one_table(tmp_path, token, deals=3), tmp_path / "out")
    events: Events = []
    deliver = run_mod._deliver

    async def delivered(*args: Any) -> None:
        await deliver(*args)
        events.append(("end", args[-2].index))  # (..., game, done)

    monkeypatch.setattr(run_mod, "_deliver", delivered)

    def watch(cluster: Cluster) -> None:
        submit: Callable[..., Any] = cluster.client.submit

        def submitted(fn: Any, jobs: list[bytes], **options: Any) -> Any:
            events.extend(("start", decode_job(job).game.index) for job in jobs)
            return submit(fn, jobs, **options)

        cluster.client.submit = submitted

    async def league() -> None:
        cluster = await trio.to_thread.run_sync(Cluster.open, "local:2")
        try:
            watch(cluster)
            await run(config, jobs=2, cluster=cluster)
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(cluster.close)

    with no_process_left(token):
        trio.run(league)
    records = ledger_records(config.out)
    assert [r.idx for r in records] == list(range(9))
    assert sorted(idx for what, idx in events if what == "start") == list(range(9))
    assert clashes(events, records) == []
    # The three deals went out at once, one game each.
    assert [what for what, _ in events[:3]] == ["start"] * 3
    assert len({records[idx].unit for _, idx in events[:3]}) == 3
    check_logs(records, config.out / "logs")
