"""Scoring: a finished round's scores, and the game's ranking with the brief's tie-breaks.

Round score = pip sum of the hand left (the double-blank counts
`double_blank_score`); a seat that went out scores 0. With teams a side scores
0 when either partner went out, else the sum of both hands. Ranking: lowest
total; ties go to the most zero-point rounds, then the lowest non-zero round
score; a tie that remains is shared.
"""

from __future__ import annotations

from .options import Rules
from .state import Outcome, RoundEnd, RoundResult
from .tiles import Tile


def hand_value(hand: tuple[Tile, ...], double_blank: int) -> int:
    """What a hand scores: its pips, the double-blank counting `double_blank`."""
    return sum(double_blank if t == (0, 0) else t[0] + t[1] for t in hand)


def finish_round(
    rules: Rules,
    index: int,
    engine: int,
    starter: int,
    end: RoundEnd,
    hands: tuple[tuple[Tile, ...], ...],
) -> RoundResult:
    """The result of a round that ended with these hands."""
    n = rules.players
    values = tuple(hand_value(h, rules.double_blank_score) for h in hands)
    out = tuple(s for s in range(n) if not hands[s])
    side: dict[int, int] = {}
    for seat in range(n):
        team = rules.team_of(seat)
        side[team] = side.get(team, 0) + values[seat]
    for seat in out:
        side[rules.team_of(seat)] = 0
    scores = tuple(side[rules.team_of(s)] for s in range(n))
    return RoundResult(index, engine, starter, end, out, hands, values, scores)


def _key(rounds: list[int]) -> tuple[int, int, int]:
    nonzero = [r for r in rounds if r]
    return (sum(rounds), -rounds.count(0), min(nonzero) if nonzero else 0)


def outcome_of(rules: Rules, results: tuple[RoundResult, ...]) -> Outcome:
    """Totals, scores by round and ranks (1 best, ties shared) after the last round."""
    n = rules.players
    rounds = tuple(r.scores for r in results)
    totals = tuple(sum(r[s] for r in rounds) for s in range(n))
    keys = [_key([r[s] for r in rounds]) for s in range(n)]
    # Rank sides, not seats: partners share one rank and count once against the others.
    sides = {rules.team_of(s): keys[s] for s in range(n)}
    ranks = tuple(1 + sum(1 for k in sides.values() if k < keys[s]) for s in range(n))
    return Outcome(totals, rounds, ranks)
