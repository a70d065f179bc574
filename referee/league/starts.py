"""Bots that do not start: each is named at once, and a league that cannot be played
stops instead of recording games nobody played.

A game in which a seat's bot failed to start is still a game (the seat forfeits and
the others play on), so a league whose bots cannot start at all would otherwise
play every game, rank the bots by the luck of the deals and exit 0. `Starts` watches
the games as they finish, before they are recorded:

- The first failed start of each bot is reported at once, in one line: the bot,
  the game, the command, the folder it ran in, and its stderr file with its last
  line (the fault's detail, made by the pool).
- A game in which some bot failed to start, and that bot has not yet started in any
  game of the league, is held back instead of recorded. It is recorded as soon as
  every such bot of it has started in some game.
- The league cannot be played when a bot fails to start in each of its first
  `limit` games (in every game it had, if it had fewer), or when every seat of a
  game failed to start before any bot ever started. The run then stops with that
  line: the held games are never recorded (their logs are removed), so nothing
  that was not played is a result, and `--resume` plays them once the bot is fixed.

With `limit` 0 (`--keep-going`) nothing is held: every game is recorded as it
comes, and the failed starts are still named once each and listed in the
standings.

Imports: `faults` and `records` only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..bots.faults import FaultKind
from .records import Record

START_FAILURES = 2  # `league.start_failures`'s default


class CannotPlay(Exception):
    """The league cannot be played: a bot never starts. `str` is the one line to show."""


def failed_seats(record: Record) -> list[tuple[str, str]]:
    """The bots of `record` that failed to start, with why, in seat order."""
    return [
        (record.seats[f["seat"]], str(f["detail"]))
        for f in record.faults
        if f["kind"] == FaultKind.STARTUP_FAILURE.value
    ]


@dataclass
class Starts:
    """Which bots have started, which games are held back, and whether to stop."""

    limit: int
    started: set[str] = field(default_factory=set)  # in some game, recorded or held
    named: set[str] = field(default_factory=set)  # whose failed start has been shown
    failures: Counter[str] = field(default_factory=Counter)  # before the bot ever started
    held: list[Record] = field(default_factory=list)
    stopped: str | None = None

    @classmethod
    def of(cls, records: list[Record], limit: int) -> Starts:
        """The watch of a league whose ledger holds `records` (a resumed league): a bot
        that started in one of them has started."""
        starts = cls(limit)
        for rec in records:
            failed = {bot for bot, _ in failed_seats(rec)}
            starts.started.update(b for b in rec.seats if b not in failed)
        return starts

    def see(self, record: Record) -> tuple[list[str], list[Record]]:
        """A game as it finished: the lines to show now, and the games to record now
        (none, this one, and/or games held until now), in the order they finished.
        Sets `stopped` (the line saying why) when the league cannot be played."""
        failed = failed_seats(record)
        lines = []
        for bot, why in failed:
            if bot not in self.named:
                self.named.add(bot)
                lines.append(f"{bot} failed to start in {record.game_id}: {why}")
        failed_bots = {bot for bot, _ in failed}
        never = not self.started
        self.started.update(b for b in record.seats if b not in failed_bots)
        if self.limit == 0:
            return lines, [record]
        waiting = failed_bots - self.started
        if never and failed and len(failed_bots) == len(set(record.seats)):
            bot, why = failed[0]
            self.stopped = (
                f"no bot could start in {record.game_id}, the league's first game to end: "
                f"{bot}: {why}"
            )
            self.held.append(record)  # never recorded: its log goes with the others
            return lines, []
        for bot in waiting:
            self.failures[bot] += 1
            if self.failures[bot] >= self.limit:
                n = self.failures[bot]
                self.stopped = (
                    f"{bot} failed to start in each of its first {n} game{'s' * (n != 1)} "
                    f"(last {record.game_id}): {dict(failed)[bot]}"
                )
                self.held.append(record)
                return lines, []
        if waiting:
            self.held.append(record)
            return lines, []
        ready = []
        still = []
        for rec in self.held:
            if {bot for bot, _ in failed_seats(rec)} <= self.started:
                ready.append(rec)
            else:
                still.append(rec)
        self.held = still
        return lines, [*ready, record]

    def finish(self) -> None:
        """At the end of the league's games: games still held mean a bot that failed to
        start in every game it had (fewer than `limit`)."""
        if self.stopped is None and self.held:
            rec = self.held[-1]
            bot, why = next((b, w) for b, w in failed_seats(rec) if b not in self.started)
            n = self.failures[bot]
            self.stopped = (
                f"{bot} failed to start in every game it had ({n}; last {rec.game_id}): {why}"
            )

    def drop_held(self) -> list[Path]:
        """Forget the held games (the league stopped) and remove their logs, which no
        ledger row vouches for; the logs removed."""
        gone = []
        for rec in self.held:
            path = Path(rec.log_path)
            if path.is_file():
                path.unlink()
                gone.append(path)
        self.held = []
        return gone
