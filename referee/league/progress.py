"""What a running league shows while it plays.

In a terminal: a progress bar (games done, time left, faults, leader). Anywhere
else (a file, a pipe, nohup, a CI log), where a bar cannot redraw itself and
would show nothing until the end: one line per finished game, as cutechess-cli
prints them:

    Finished game 12 of 24 (greedy, random, node): 5-30-45 {greedy wins}

The names are in seat order and the points (fewer are better) follow them.
`quiet` shows neither. Printing only: the runner decides what is shown when. Names
(and whatever a notice quotes) are shown escaped (`referee.text`), never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from ..text import markup, shown
from .ledger import Record


@dataclass
class Progressed:
    """Counters the progress line shows."""

    done: int = 0
    faults: int = 0
    leader: str = "-"
    points: dict[str, list[int]] = field(default_factory=dict)  # name -> [total, games]
    recorded: set[int] = field(default_factory=set)  # schedule indices, for the reports

    def add(self, record: Record) -> None:
        """Count one recorded game, in constant time: the loop must never stall on this."""
        self.done += 1
        self.recorded.add(record.idx)
        self.faults += len(record.faults)
        for name, score in zip(record.seats, record.scores, strict=True):
            tally = self.points.setdefault(name, [0, 0])
            tally[0] += score
            tally[1] += 1
        # The leader shown while running: lowest mean points so far (ratings come at the end).
        self.leader = min(self.points, key=lambda n: self.points[n][0] / self.points[n][1])


def finished_line(record: Record, total: int) -> str:
    """One finished game in one line: who sat where, the points, and in braces who won
    and which seats forfeited or erred."""
    names = ", ".join(record.seats)
    points = "-".join(str(s) for s in record.scores)
    first = [n for n, r in zip(record.seats, record.ranks, strict=True) if r == 1]
    notes = [f"{first[0]} wins" if len(first) == 1 else f"{' and '.join(first)} share first"]
    for seat, name in enumerate(record.seats):
        faults = sum(1 for f in record.faults if f["seat"] == seat)
        if record.forfeited[seat]:
            notes.append(f"{name} forfeited")
        elif faults:
            notes.append(f"{name} {faults} fault{'s' if faults > 1 else ''}")
    return f"Finished game {record.idx + 1} of {total} ({names}): {points} {{{'; '.join(notes)}}}"


class Display:
    """The progress of one league run on `console`: a bar in a terminal, else lines."""

    def __init__(self, console: Console, title: str, total: int, done: int, quiet: bool) -> None:
        self.console = console
        self.title = title
        self.total = total
        self.counters = Progressed(done=done)
        self.quiet = quiet
        self.lines = not quiet and not console.is_terminal
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            # Not markup: the leader is a bot's name (shown escaped when it is set).
            TextColumn("faults {task.fields[faults]}  leader {task.fields[leader]}", markup=False),
            console=console,
            disable=quiet or self.lines,
            transient=False,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> Display:
        self._progress.start()
        self._task = self._progress.add_task(
            markup(self.title), total=self.total, completed=self.counters.done, faults=0, leader="-"
        )
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def say(self, text: str, style: str | None = None) -> None:
        """A line of plain text, shown escaped (never read as markup: bot names may hold
        brackets)."""
        self.console.print(shown(text), style=style, markup=False, highlight=False, soft_wrap=True)

    def finished(self, record: Record) -> None:
        """Count a newly recorded game and show it."""
        self.counters.add(record)
        if self.lines:
            self.say(finished_line(record, self.total))
        if self._task is not None:
            self._progress.update(
                self._task,
                completed=self.counters.done,
                faults=self.counters.faults,
                leader=shown(self.counters.leader),
            )

    def notice(self, text: str) -> None:
        """Something the person running the league should know now (a worker lost)."""
        self.say(text, style="yellow")
