"""Re-deriving a logged game with the engine, and checking every recorded fact.

The header's rules and seed plus the logged moves determine everything else:
each move must be legal where it stands, each draw must draw the recorded
tile, each round must end where and how the log says with the recorded hands
and scores, and the footer's result must be the engine's. The first fact that
does not hold is reported with its line number, what the log says and what the
rules say.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..game.match import final_ranks
from ..rules import (
    IllegalMoveError,
    MoveKind,
    RoundEnd,
    RoundResult,
    Rules,
    RulesError,
    State,
    apply,
    new_game,
)
from .gamelog import DecisionLine, GameLog, header_rules, move_of_spec


@dataclass(frozen=True)
class Divergence:
    """The first recorded fact that the rules do not reproduce."""

    line: int
    log_says: str
    rules_say: str

    def __str__(self) -> str:
        return f"line {self.line}: the log says {self.log_says}; the rules say {self.rules_say}"


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking a log."""

    decisions: int
    rounds: int
    complete: bool
    divergence: Divergence | None

    @property
    def ok(self) -> bool:
        """True when every recorded fact holds."""
        return self.divergence is None


def rules_of(log: GameLog) -> Rules:
    """The rules a log's header names."""
    return header_rules(log.header)


@dataclass(frozen=True, slots=True)
class Step:
    """One logged decision with the positions around it."""

    line: DecisionLine
    before: State  # the position where the decision was made
    after: State  # after it: the next round's deal when it ended a round
    result: RoundResult | None  # the round this decision ended, if it did

    @property
    def n(self) -> int:
        """The decision number, from 1."""
        return self.line.n


def first_state(log: GameLog) -> State:
    """The first position of a full log (one `read_log` accepts without `allow_redacted`)."""
    assert log.header.seed is not None, "a full log holds its seed"
    return new_game(rules_of(log), log.header.seed)


def states(log: GameLog) -> Iterator[Step]:
    """Each decision of a full log with the engine states around it (the log must verify)."""
    state = first_state(log)
    for line in log.decisions:
        after = apply(state, move_of_spec(line.move))
        result = after.results[-1] if len(after.results) > len(state.results) else None
        yield Step(line, state, after, result)
        state = after


class _Checker:
    """Walks a log against the engine, remembering how far it got."""

    def __init__(self, log: GameLog, rules: Rules) -> None:
        self.log = log
        self.rules = rules
        self.state = first_state(log)
        self.decisions = 0
        self.rounds = 0

    def verdict(self, divergence: Divergence | None) -> Verdict:
        return Verdict(self.decisions, self.rounds, self.log.complete, divergence)

    def decision(self, count: int, line: DecisionLine) -> Divergence | None:
        state = self.state
        number = self.log.lines.get(line.n, 0)
        if line.n != count:
            return Divergence(number, f"decision number {line.n}", f"it is decision {count}")
        if state.outcome is not None:
            return Divergence(number, f"a decision in round {line.round}", "the game is over")
        if line.round != state.round_index:
            return Divergence(
                number, f"a decision in round {line.round}", f"round {state.round_index} is on"
            )
        if line.seat != state.to_move:
            return Divergence(number, f"seat {line.seat} moved", f"seat {state.to_move} is to move")
        move = move_of_spec(line.move)
        try:
            after = apply(state, move)
        except IllegalMoveError as exc:
            return Divergence(number, f"seat {line.seat} made the move {move}", f"illegal: {exc}")
        if move.kind is MoveKind.DRAW and line.drew is not None:
            drawn = after.drawn
            got = [drawn.hi, drawn.lo] if drawn is not None else None
            if got != list(line.drew):
                return Divergence(
                    number, f"seat {line.seat} drew {list(line.drew)}", f"it drew {got}"
                )
        self.decisions += 1
        self.state = after
        if len(after.results) > len(state.results):
            return self.round_end(after.results[-1], number)
        return None

    def round_end(self, result: RoundResult, number: int) -> Divergence | None:
        recorded = next((r for r in self.log.rounds if r.round == result.number), None)
        if recorded is None:
            last = self.decisions == len(self.log.decisions)
            if last and not self.log.complete:
                return None  # the log was cut before the round end was written
            return Divergence(number, "no round end after this move", f"round {result.number} ends")
        where = self.log.round_lines.get(result.number, number)
        reason = "out" if result.end is RoundEnd.OUT else "blocked"
        hands = [[[t.hi, t.lo] for t in h] for h in result.hands]
        recorded_hands = [[list(t) for t in h] for h in recorded.hands]
        checks: list[tuple[str, object, object]] = [
            ("engine", recorded.engine, result.engine),
            ("ended", recorded.reason, reason),
            ("out", recorded.out, list(result.out)),
            ("hands", recorded_hands, hands),
            ("values", recorded.values, list(result.values)),
            ("scores", recorded.scores, list(result.scores)),
        ]
        for what, said, derived in checks:
            if said != derived:
                return Divergence(where, f"round {recorded.round} {what} {said}", f"{derived}")
        self.rounds += 1
        return None

    def footer(self) -> Divergence | None:
        footer = self.log.footer
        assert footer is not None
        where = self.log.footer_line
        outcome = self.state.outcome
        if outcome is None:
            return Divergence(where, "the game is over", "it goes on")
        if self.rounds != len(self.log.rounds):
            return Divergence(where, f"{len(self.log.rounds)} round ends", f"{self.rounds}")
        if list(outcome.scores) != footer.scores:
            return Divergence(where, f"final scores {footer.scores}", f"{list(outcome.scores)}")
        if len(footer.forfeited) != self.rules.players:
            return Divergence(where, f"forfeits {footer.forfeited}", f"{self.rules.players} seats")
        ranks = list(final_ranks(outcome, footer.forfeited, self.rules))
        if ranks != footer.ranks:
            return Divergence(where, f"ranks {footer.ranks}", f"{ranks}")
        return None


def verify(log: GameLog) -> Verdict:
    """Re-derive the game and check every recorded fact, stopping at the first divergence."""
    try:
        rules = rules_of(log)
    except RulesError as exc:
        return Verdict(0, 0, log.complete, Divergence(1, "these rules", f"invalid: {exc}"))
    checker = _Checker(log, rules)
    for count, line in enumerate(log.decisions, start=1):
        divergence = checker.decision(count, line)
        if divergence is not None:
            return checker.verdict(divergence)
    if log.footer is None:
        return checker.verdict(None)
    return checker.verdict(checker.footer())
