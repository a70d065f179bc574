"""The running arena's site refreshes: one build at a time, no sooner than `REFRESH_S`
after the one before it started, and the run's last build never waits for a pending
one (trio's fake clock; the builds are counted, not made)."""

from __future__ import annotations

from typing import cast

import trio
import trio.testing

from referee.arena.config import ArenaConfig
from referee.arena.site import REFRESH_S, ArenaSite, Built


class Counted(ArenaSite):
    """An arena site whose builds record when they started and whether live."""

    def __init__(self) -> None:
        super().__init__(cast(ArenaConfig, None))
        self.starts: list[tuple[float, bool]] = []

    async def built(self, live: bool) -> Built:
        self.starts.append((trio.current_time(), live))
        await trio.sleep(0.03)  # a build takes a while; the fake clock's time
        return Built(0, 0, 0, 0.03)


async def test_refreshes_are_spaced_and_folded(autojump_clock: trio.testing.MockClock) -> None:
    site = Counted()
    async with site.running():
        site.recorded()  # the first game: built at once
        await trio.sleep(0.01)
        assert [t for t, _ in site.starts] == [0.0]
        for _ in range(50):  # a busy arena: fifty games in half a second
            site.recorded()
            await trio.sleep(0.01)
        assert len(site.starts) == 1  # folded into one refresh, waiting for its turn
        await trio.sleep(REFRESH_S)
        assert len(site.starts) == 2 and site.starts[1][0] == REFRESH_S
        await trio.sleep(5 * REFRESH_S)  # nothing new: nothing built
        assert len(site.starts) == 2
        now = trio.current_time()
        site.recorded()  # long after the last: at once
        await trio.sleep(0.01)
        assert len(site.starts) == 3 and site.starts[2][0] == now
        await trio.sleep(0.05)
        assert site.builds == 3


async def test_the_last_build_does_not_wait_for_a_pending_refresh(
    autojump_clock: trio.testing.MockClock,
) -> None:
    site = Counted()
    async with site.running():
        site.recorded()
        await trio.sleep(0.01)
        site.recorded()  # due at REFRESH_S
        await trio.sleep(0.1)  # the first build is over: the next waits for its turn
        began = trio.current_time()
        await site.final()
        ended = trio.current_time()
    assert ended - began < REFRESH_S / 10
    # The pending refresh was dropped: the last build (not live) replaced it.
    assert [live for _, live in site.starts] == [True, False]
    assert site.builds == 2
