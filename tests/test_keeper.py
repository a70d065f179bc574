"""The referee's keeper under a burst: bots asked for while it is busy all start.

Requests queue on one socket to the keeper, as many as its send buffer holds, so
a league's first games, which start every bot together, must wait their turn
rather than fail. Here the keeper is stopped (SIGSTOP) while thirty bots with a
20 KB environment each (600 KB of requests, three times a default buffer) are
asked for at once, then let go; each bot is a shell loop that answers `hello`.
Every one must answer, and none may be left once all are stopped.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import trio

from protocol import messages as m
from referee.bots.process import KEEPER, BotSpec, start_bot
from referee.bots.session import goodbye, handshake
from tests._procs import assert_none_left, new_token

IDLE_BOT = Path(__file__).resolve().parents[1] / "bench" / "idle_bot.sh"
BOTS = 30
PAD = "x" * 20_000


async def test_bots_asked_for_while_the_keeper_is_stopped_all_start() -> None:
    token = new_token()
    hello = m.Hello(referee="test", players=2, rules=m.RulesInfo(), time=m.TimeControl())
    started: list[int] = []
    async with trio.open_nursery() as nursery:

        async def one(index: int) -> None:
            argv = ("sh", str(IDLE_BOT), token)
            bot = await start_bot(BotSpec(name=f"b{index}", argv=argv, env={"PAD": PAD}))
            nursery.start_soon(bot.watch)
            nursery.start_soon(bot.connection.writer)
            try:
                await handshake(bot.connection, hello, 60)
                started.append(bot.pid)
            finally:
                await goodbye(bot.connection)
                await bot.stop()

        with trio.fail_after(120):
            await one(0)  # the keeper runs now
            keeper = KEEPER.pid
            assert keeper is not None
            os.kill(keeper, signal.SIGSTOP)
            try:
                async with trio.open_nursery() as starters:
                    for index in range(1, BOTS + 1):
                        starters.start_soon(one, index)
                    await trio.sleep(0.5)  # every request is made: the queue is full
                    os.kill(keeper, signal.SIGCONT)
            finally:
                os.kill(keeper, signal.SIGCONT)
        nursery.cancel_scope.cancel()
    assert len(set(started)) == BOTS + 1
    assert KEEPER.pid == keeper  # the same keeper served them all
    assert_none_left(token)
