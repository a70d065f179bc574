"""What people see while a game runs: a line per round, then the final table.

Printing lives here and in the CLI only; the game driver just calls a recorder.
Names, fault evidence and a bot's stderr are shown escaped (`referee.text`).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..bots.faults import FaultKind
from ..game.match import Decision, GameResult, Recorder
from ..rules import RoundEnd, RoundResult, Rules, State
from ..text import last_line, markup, shown


class RoundPrinter(Recorder):
    """Prints each round's result as it ends, with running totals."""

    def __init__(self, console: Console, rules: Rules, names: list[str] | None = None) -> None:
        self.console = console
        self.rules = rules
        self.names = names or [f"seat {s}" for s in range(rules.players)]
        self.totals = [0] * rules.players
        self.faults = 0

    def decision(self, record: Decision, state: State) -> None:
        """Mention faults, and what was ignored, as they happen."""
        for fault in record.faults:
            self.faults += 1
            self.console.print(
                f"[yellow]fault[/] {markup(self.names[fault.seat])}: {markup(fault)}"
            )
        for notice in record.notices:
            self.console.print(
                f"[dim]ignored[/] {markup(self.names[notice.seat])}: {markup(notice)}"
            )

    def round_end(self, result: RoundResult) -> None:
        """One line: round, engine, how it ended, each seat's score and total."""
        for s, v in enumerate(result.scores):
            self.totals[s] += v
        how = (
            "blocked"
            if result.end is RoundEnd.BLOCKED
            else "out: " + ", ".join(markup(self.names[s]) for s in result.out)
        )
        cells = "  ".join(
            f"{markup(self.names[s])} {result.scores[s]:>3} ({self.totals[s]})"
            for s in range(self.rules.players)
        )
        engine = f"{result.engine}-{result.engine}"
        self.console.print(f"round {result.number + 1:>2} [bold]{engine}[/] {how:<18} {cells}")


def result_table(rules: Rules, names: list[str], result: GameResult) -> Table:
    """Final standings: rank, bot, score, zero rounds, faults, forfeit."""
    table = Table(title="Result")
    table.add_column("rank", justify="right")
    table.add_column("seat", justify="right")
    table.add_column("bot")
    table.add_column("score", justify="right")
    table.add_column("zero rounds", justify="right")
    table.add_column("faults")
    order = sorted(range(rules.players), key=lambda s: (result.ranks[s], s))
    for s in order:
        kinds: dict[FaultKind, int] = {}
        for f in result.faults[s]:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        faults = ", ".join(f"{k.value} x{n}" for k, n in kinds.items()) or "-"
        if result.forfeited[s]:
            faults += " (forfeit)"
        zeros = sum(1 for r in result.outcome.rounds if r[s] == 0)
        table.add_row(
            str(result.ranks[s]),
            str(s),
            Text(shown(names[s])),
            str(result.outcome.scores[s]),
            str(zeros),
            faults,
        )
    return table


def stderr_notes(names: list[str], result: GameResult, stderr: list[Path | None]) -> list[str]:
    """One line for each seat that had a fault and wrote to stderr: where its stderr is
    kept, and its last line (a crashed bot's traceback ends with the reason), shown
    escaped: print them as plain text, not markup."""
    notes = []
    for s, path in enumerate(stderr):
        if result.faults[s] and path is not None and path.is_file() and path.stat().st_size:
            line = f"{names[s]} (seat {s}): stderr in {path}; last line: {last_line(path)}"
            notes.append(shown(line))
    return notes
