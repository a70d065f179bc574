"""What people see while a game runs: a line per round, then the final table.

Printing lives here and in the CLI only; the game driver just calls a recorder.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .faults import FaultKind
from .match import Decision, GameResult, Recorder
from .rules import RoundEnd, RoundResult, Rules, State


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
                f"[yellow]fault[/] {escape(self.names[fault.seat])}: {escape(str(fault))}"
            )
        for notice in record.notices:
            self.console.print(
                f"[dim]ignored[/] {escape(self.names[notice.seat])}: {escape(str(notice))}"
            )

    def round_end(self, result: RoundResult) -> None:
        """One line: round, engine, how it ended, each seat's score and total."""
        for s, v in enumerate(result.scores):
            self.totals[s] += v
        how = (
            "blocked"
            if result.end is RoundEnd.BLOCKED
            else "out: " + ", ".join(self.names[s] for s in result.out)
        )
        cells = "  ".join(
            f"{self.names[s]} {result.scores[s]:>3} ({self.totals[s]})"
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
            names[s],
            str(result.outcome.scores[s]),
            str(zeros),
            faults,
        )
    return table
