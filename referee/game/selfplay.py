"""Self-play: one game between in-process random players, shown as a score table.

This is the demo before bots and leagues exist, and a quick way to see a rule
set in action: `referee selfplay --rules celko --players 6`.
"""

from __future__ import annotations

import random

from rich.table import Table

from ..consoles import output_console
from ..rules import Outcome, RoundEnd, Rules, State, apply, legal_moves, new_game


def play_random(rules: Rules, seed: int) -> tuple[State, int]:
    """Play a whole game choosing uniformly among legal moves; the end state and decisions."""
    rng = random.Random(f"selfplay/{seed}")
    state = new_game(rules, seed)
    decisions = 0
    while state.outcome is None:
        state = apply(state, rng.choice(legal_moves(state)))
        decisions += 1
    return state, decisions


def score_table(rules: Rules, state: State, title: str) -> Table:
    """Scores by round with each round's engine and how it ended, then totals and ranks."""
    outcome = state.outcome
    assert isinstance(outcome, Outcome)
    table = Table(title=title)
    table.add_column("round", justify="right")
    table.add_column("engine", justify="right")
    table.add_column("ended")
    for seat in range(rules.players):
        label = f"seat {seat}"
        if rules.teams:
            label += f" (team {rules.team_of(seat)})"
        table.add_column(label, justify="right")
    for result in state.results:
        how = (
            "blocked"
            if result.end is RoundEnd.BLOCKED
            else "out: " + ", ".join(str(s) for s in result.out)
        )
        table.add_row(
            str(result.number + 1),
            f"{result.engine}-{result.engine}",
            how,
            *(str(v) for v in result.scores),
        )
    table.add_section()
    table.add_row("total", "", "", *(str(v) for v in outcome.scores), style="bold")
    table.add_row("rank", "", "", *(str(v) for v in outcome.ranks), style="bold")
    return table


def run(rules: Rules, seed: int) -> None:
    """Play one random game and print its table."""
    state, decisions = play_random(rules, seed)
    title = f"{rules.players} random players, seed {seed}, {decisions} decisions"
    output_console().print(score_table(rules, state, title))
