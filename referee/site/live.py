"""The results site kept up to date while a league runs (`league --site`, `serve --site`).

A build reads the ledger and the logs and writes files: work of a second or more on
a big league, which the trio loop playing the games must not wait for. So every
`every` recorded games a build starts in a worker thread, in the background: the
games play on meanwhile. One build at a time: if one is still running when the
next is due, that one is skipped (the next or the final build catches up). A build
that fails while the league runs is reported and the league goes on; the final
build, when the league ends, is awaited and its error reaches the command.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ..logs.outputs import WriteError
from ..text import shown
from .build import SiteError, SiteReport, build_site

log = logging.getLogger(__name__)


@dataclass
class LiveSite:
    """Where and how to build the site during and after a league."""

    out: Path
    to: Path | None = None
    title: str | None = None
    with_stderr: bool = False
    every: int = 0  # 0: only at the end
    notice: Callable[[str], None] | None = None  # how a failed refresh is reported
    builds: int = 0  # refreshes finished (for tests and the report)
    report: SiteReport | None = None  # the final build's
    _busy: bool = field(default=False, init=False)
    _nursery: trio.Nursery | None = field(default=None, init=False)

    def build(self) -> SiteReport:
        """One build, here and now (call it in a worker thread)."""
        return build_site(self.out, self.to, title=self.title, with_stderr=self.with_stderr)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the league runs: refreshes may start in the background; on the way
        out, a refresh in progress is waited for (a started build is never abandoned)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                yield
            finally:
                self._nursery = None

    def recorded(self, done: int) -> None:
        """A game was recorded, `done` in all: start a refresh if one is due and none runs."""
        if not self.every or done % self.every or self._busy or self._nursery is None:
            return
        self._busy = True
        self._nursery.start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            await trio.to_thread.run_sync(self.build, abandon_on_cancel=False)
            self.builds += 1
        except (SiteError, WriteError, OSError) as exc:
            text = f"site not refreshed: {exc}"
            if self.notice is not None:
                self.notice(text)
            else:
                log.warning("%s", shown(text))
        finally:
            self._busy = False

    async def final(self) -> SiteReport:
        """The last build, when the league is over."""
        return await trio.to_thread.run_sync(self.build, abandon_on_cancel=False)
