"""Bot processes kept between games, so a bot that loads a model starts once.

A process is checked with a ping before it is reused. One that crashed, was
forfeited, or belongs to a bot with `restart = "always"` is ended after its
game; the next game gets a fresh one. Every process lives in the league's
nursery and is ended when the pool closes, whatever the reason.

No process ever plays two games of the same deal: a process that kept the hand
it was dealt in one seat rotation would know another seat's hand, and the
boneyard's order, in the next. A game gets a kept process that has not seen its
deal, or a fresh one; so with duplicate deals a bot has about one process per
seat rotation, each reused across deals (process k plays rotation k of every
deal). A TCP bot is one program the referee cannot restart: the league file
must accept that risk for a duplicate league (see league.config).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import trio

from protocol import ProtocolError
from protocol import messages as m

from .. import __version__
from ..bots.connection import BotGoneError, BotStalledError
from ..bots.process import BotProcess, start_bot
from ..bots.sandbox import Hidden, empty_scratch
from ..bots.session import PING_S, StartupError, TcpSession, goodbye, handshake, ping
from ..game.wire import rules_info
from ..proof.commitment import FileCache, bot_files
from ..text import file_stem
from .config import BotEntry, LeagueConfig, hidden_places

log = logging.getLogger(__name__)


Bot = BotProcess | TcpSession


class TcpBots(Protocol):
    """Where the pool takes TCP bots from and gives them back: `referee.net.server.BotServer`.

    The pool owns this interface and the server satisfies it, so the pool (and the
    league that runs it) never imports the server, which runs leagues itself."""

    async def take_all(
        self, names: Sequence[str], timeout_s: float, failed: Mapping[str, float] | None = None
    ) -> dict[str, TcpSession | str]:
        """The sessions of all `names`, taken in one step; a reason for each that has none."""

    async def first_nonces(self, names: Sequence[str], timeout_s: float) -> dict[str, str | None]:
        """Each of `names`' nonce from its first login (`""` if it sent none), waiting
        until each has logged in once or `timeout_s` has passed (None: not logged in)."""

    def park(self, session: TcpSession) -> None:
        """`session` waits for its next game."""

    async def end(self, session: TcpSession, *, polite: bool) -> None:
        """Close `session`; its bot may log in again."""

    async def close(self) -> None:
        """Say `bye` to every session still open (when the league ends)."""


def league_hello(config: LeagueConfig, name: str, max_line: int = m.MAX_LINE_DEFAULT) -> m.Hello:
    """The `hello` bot `name` of the league gets: its own clocks, if it has them, and
    the longest line it may send (a tcp bot's is the server's `max_line`)."""
    return m.Hello(
        referee=f"mexican-train-referee {__version__}",
        players=config.table,
        rules=rules_info(config.rules),
        time=config.bot_time(name),
        max_line=max_line,
    )


async def _each(task: Callable[[int], Awaitable[None]], indices: Iterable[int]) -> None:
    """Run `task` for each of `indices` at once; return when all are done."""
    async with trio.open_nursery() as nursery:
        for index in indices:
            nursery.start_soon(task, index)


class BotPool:
    """Idle bot processes by bot name; TCP bots come from the server, if there is one."""

    def __init__(
        self,
        config: LeagueConfig,
        nursery: trio.Nursery,
        stderr_dir: Path,
        server: TcpBots | None = None,
        hide: Sequence[Hidden] = (),
    ) -> None:
        self.config = config
        # Sandboxed bots see none of the league's files: those of the config as it is
        # now (its output folder may have been changed since it was read), and `hide`.
        self.hidden = (*hidden_places(config), *hide)
        self.server = server
        self.nursery = nursery
        self.stderr_dir = stderr_dir
        self.idle: dict[str, list[BotProcess]] = defaultdict(list)
        self.live: set[BotProcess] = set()
        self.deals: dict[BotProcess, set[int]] = {}  # the deal seeds each process was given
        # The digests of the files each process's command named when it started (what
        # every game it plays logs it played with), and of files already hashed.
        self.files: dict[BotProcess, dict[str, str]] = {}
        self._hashed: FileCache = {}
        self.started = 0
        self.closed = False  # after close(): nothing is started or kept any more
        # Pings counted per bot: its nonces do not depend on the order in which the
        # seats of a game, checked together, happen to be pinged.
        self._pings: dict[Bot, int] = defaultdict(int)

    async def _answers(self, bot: Bot, name: str) -> bool:
        """Whether a bot kept from an earlier game answers a ping, so it may be reused."""
        self._pings[bot] += 1
        try:
            await ping(bot.connection, self._pings[bot], PING_S)
        except (BotGoneError, BotStalledError, trio.TooSlowError, ProtocolError) as exc:
            log.info("%s: not reused (%s)", name, exc)
            return False
        return True

    async def _all_answer(self, sessions: dict[str, TcpSession]) -> dict[str, bool]:
        """`_answers` for several sessions at once: one ping's wait, not one each."""
        answered: dict[str, bool] = {}

        async def check(name: str, session: TcpSession) -> None:
            answered[name] = await self._answers(session, name)

        async with trio.open_nursery() as nursery:
            for name, session in sessions.items():
                nursery.start_soon(check, name, session)
        return answered

    async def acquire_tcp(self, bots: Sequence[BotEntry]) -> list[tuple[TcpSession | None, str]]:
        """Ready sessions for all the TCP seats of one game (distinct bots), taken
        together (`BotServer.take_all`) and checked with a ping; None and why for a
        seat that has none.

        A session that does not answer is ended and the others are given back before
        the game waits again: it never holds a bot while it waits for one that another
        game may hold. Its bot gets `startup_ms` from that moment to be back."""
        if self.server is None:
            return [(None, "a tcp bot needs `referee serve`") for _ in bots]
        names = [b.name for b in bots]
        failed: dict[str, float] = {}
        while True:
            wait_s = max(self.config.bot_time(n).startup_ms for n in names) / 1000
            taken = await self.server.take_all(names, wait_s, failed)
            sessions = {n: s for n, s in taken.items() if isinstance(s, TcpSession)}
            answered = await self._all_answer(sessions)
            if all(answered.values()):
                return [
                    (s, "") if isinstance(s := taken[n], TcpSession) else (None, s) for n in names
                ]
            now = trio.current_time()
            for name, session in sessions.items():
                if answered[name]:
                    self.server.park(session)
                else:
                    failed.setdefault(name, now)
                    await self.server.end(session, polite=False)

    async def acquire(self, bot: BotEntry, deal: int) -> tuple[Bot | None, str]:
        """A ready process (or TCP session) for `bot` to play the deal with seed `deal`,
        one that never played it, or None and why it could not start.

        A game with several TCP seats takes them with one `acquire_tcp`, and its
        process seats with one `acquire_all`."""
        if bot.tcp:
            return (await self.acquire_tcp([bot]))[0]
        return (await self.acquire_all([bot], deal))[0]

    async def acquire_all(
        self, bots: Sequence[BotEntry], deal: int
    ) -> list[tuple[BotProcess | None, str]]:
        """`acquire` for the process seats of one game (no TCP bot among them), all at
        once: kept processes are pinged together and fresh ones started and greeted
        together, so a game starts in about the time of its slowest bot, not the sum."""
        if self.closed:
            return [(None, "the league was ended")] * len(bots)
        got: list[tuple[BotProcess | None, str] | None] = [None] * len(bots)

        async def reuse(index: int) -> None:
            proc = await self._reuse(bots[index], deal)
            if proc is not None:
                got[index] = (proc, "")

        await _each(reuse, range(len(bots)))
        # Named in seat order before any starts, so stderr files number as seats do.
        paths = {i: self._stderr_path(bot.name) for i, bot in enumerate(bots) if not got[i]}

        async def start(index: int) -> None:
            got[index] = await self._start(bots[index], deal, paths[index])

        await _each(start, paths)
        return [item if item is not None else (None, "not started") for item in got]

    async def _reuse(self, bot: BotEntry, deal: int) -> BotProcess | None:
        """A kept process of `bot` that never played `deal` and answers a ping; None
        when there is none (those that do not answer are ended)."""
        idle = self.idle[bot.name]
        while True:
            fresh = [p for p in idle if deal not in self.deals[p]]
            if not fresh:
                return None
            proc = fresh[-1]  # the most recently used: the others may be ended first
            idle.remove(proc)
            proc.thaw()
            if await self._answers(proc, bot.name):
                self.deals[proc].add(deal)
                return proc
            await self._end(proc)

    def _stderr_path(self, name: str) -> Path:
        """`STEM-K.stderr`, STEM the bot's name as a file name (`file_stem`), K the
        league's count of processes started."""
        stem = file_stem(name)
        self.started += 1
        path = self.stderr_dir / f"{stem}-{self.started}.stderr"
        while path.exists():  # a resumed league keeps the stderr of the earlier run
            self.started += 1
            path = self.stderr_dir / f"{stem}-{self.started}.stderr"
        return path

    async def _start(self, bot: BotEntry, deal: int, path: Path) -> tuple[BotProcess | None, str]:
        """A fresh process of `bot`, greeted, for the deal `deal`; None and why not."""
        spec = bot.spec
        if spec.sandbox == "bwrap":
            spec = dataclasses.replace(spec, hidden=(*spec.hidden, *self.hidden))
        # Hashed as the process starts (in a thread: a large program takes a while), as
        # the commitment hashed them: the version this process runs, whatever changes later.
        files = await trio.to_thread.run_sync(
            bot_files, bot.spec.argv, bot.spec.cwd, self.config.path.parent, self._hashed
        )
        try:
            proc = await start_bot(spec, path)
        except OSError as exc:
            return None, f"cannot start {bot.spec.command}: {exc}; in {spec.cwd or os.getcwd()}"
        self.live.add(proc)
        self.deals[proc] = {deal}
        self.files[proc] = files
        self.nursery.start_soon(proc.drain_stderr)
        self.nursery.start_soon(proc.connection.writer)
        self.nursery.start_soon(proc.watch)
        try:
            hello = league_hello(self.config, bot.name)
            await handshake(proc.connection, hello, hello.time.startup_ms / 1000)
        except StartupError as exc:
            note = await proc.exit_note()
            await self._end(proc)
            return None, f"{exc}{note}{await proc.start_note()}"
        return proc, ""

    def files_of(self, proc: Bot) -> dict[str, str] | None:
        """The digests of the files `proc`'s command named when it started (by the word
        of the command that names each); None for a tcp bot, whose files are its own."""
        if isinstance(proc, TcpSession):
            return None
        return self.files.get(proc)

    async def release(self, bot: BotEntry, proc: Bot, healthy: bool) -> None:
        """Keep `proc` for the next game of `bot`, or end it."""
        if isinstance(proc, TcpSession):
            assert self.server is not None
            if healthy and proc.returncode is None:
                self.server.park(proc)
            else:
                self._pings.pop(proc, None)
                await self.server.end(proc, polite=healthy)
            return
        if healthy and bot.restart != "always" and proc.returncode is None and not self.closed:
            scratch = proc.scratch_folder()
            if scratch is not None:
                empty_scratch(scratch)  # nothing carries over from one game to the next
            # No idle process computes while another plays its deal: one that cannot be
            # frozen for sure (a bot whose processes outrun the SIGSTOPs, without a
            # freezer cgroup) is ended instead, and the next game gets a fresh one.
            if await proc.freeze() and not self.closed:
                self.idle[bot.name].append(proc)
                return
            if not self.closed:
                log.info("%s: not kept: its processes could not all be frozen", bot.name)
        await self._end(proc, polite=healthy)

    async def retire(self, name: str) -> None:
        """End the kept processes of bot `name`: it plays no more games here (an arena's
        version replaced, removed or suspended)."""
        idle = self.idle.pop(name, [])
        for proc in idle:
            await self._end(proc, polite=True)

    async def _end(self, proc: BotProcess, polite: bool = False) -> None:
        proc.thaw()  # a kept process, stopped while idle, hears its bye
        if polite:
            await goodbye(proc.connection)
        await proc.stop()
        self.live.discard(proc)
        self.deals.pop(proc, None)
        self.files.pop(proc, None)
        self._pings.pop(proc, None)

    async def close(self) -> None:
        """End every process, idle or not (shielded: runs on cancellation too)."""
        self.closed = True
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for proc in list(self.live):
                    proc.thaw()
                    if proc.returncode is None:
                        nursery.start_soon(goodbye, proc.connection)
                    nursery.start_soon(proc.stop)
            self.live.clear()
            self.idle.clear()
            self.deals.clear()
            self.files.clear()
