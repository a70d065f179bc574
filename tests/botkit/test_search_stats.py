"""When the search overrules the plan and when it stops early, on hand-made scores and
on real decisions.

The search compares every candidate with the plan's move by paired differences
(the same worlds and rollout numbers for both). It may overrule the plan only
after `MIN_WORLDS` worlds and by the 97.5% Student t quantile; it stops before its
deadline once the choice is settled: no other candidate better than the chosen one
by `INDIFFERENT` points at the 99.5% quantile.
"""

from __future__ import annotations

import math
import random

import pytest

from referee.botkit import search as s
from referee.rules import legal_moves, preset

from ._games import decisions


def rows_of(diffs: list[float], spread: float = 0.0) -> list[list[float]]:
    """Rows of two candidates, the plan's (0) and another (1) that beats it by `diffs`;
    both share a per-world luck that pairing removes."""
    rng = random.Random(1)
    out = []
    for d in diffs:
        luck = rng.uniform(-50, 50) + spread
        out.append([luck, luck + d])
    return out


def paired_of(rows: list[list[float]], plan: int = 0) -> s._Paired:
    paired = s._Paired(len(rows[0]), plan)
    for r in rows:
        paired.add(r)
    return paired


def test_the_plan_is_never_overruled_before_the_minimum_world_count() -> None:
    # A large and steady lead over the plan's move, but one world short.
    short = rows_of([10.0, 11.0] * (s.MIN_WORLDS // 2) + [10.0])[: s.MIN_WORLDS - 1]
    assert not s._clearly_better(short, 1, 0)
    assert s._choice(short, 0) == 0
    enough = rows_of([10.0, 11.0] * (s.MIN_WORLDS // 2))
    assert len(enough) == s.MIN_WORLDS
    assert s._clearly_better(enough, 1, 0) and s._choice(enough, 0) == 1


@pytest.mark.parametrize(("ratio", "better"), [(2.2, False), (2.5, True)])
def test_the_switch_uses_the_t_quantile_not_two_standard_errors(ratio: float, better: bool) -> None:
    # Eight worlds whose paired mean is `ratio` standard errors: above the normal's 1.96
    # and the old fixed 2.0 either way, but only the second clears t(7) = 2.365.
    n = s.MIN_WORLDS
    base = [1.0, -1.0] * (n // 2)  # mean 0, sample sd sqrt(n / (n - 1))
    sd = math.sqrt(n / (n - 1))
    shift = ratio * sd / math.sqrt(n)
    rows = rows_of([b + shift for b in base])
    assert s._clearly_better(rows, 1, 0) is better


def test_candidates_that_score_alike_in_every_world_settle_at_the_minimum() -> None:
    rows = rows_of([0.0] * s.MIN_WORLDS)
    assert s._settled(rows, paired_of(rows))
    assert not s._settled(rows[:-1], paired_of(rows[:-1]))  # one world short


def test_a_close_and_noisy_alternative_is_not_settled() -> None:
    rows = rows_of([3.0, -2.0, 4.0, -1.0, 2.0, -3.0, 5.0, 0.0] * 2)
    assert s._choice(rows, 0) == 0  # not clearly better...
    assert not s._settled(rows, paired_of(rows))  # ...nor clearly no better


def test_a_clear_winner_against_the_plan_settles_and_is_chosen() -> None:
    rows = [[0.0, 20.0 + (i % 3), 1.0 + (i % 2)] for i in range(12)]
    paired = paired_of(rows)
    assert s._choice(rows, 0) == 1
    assert s._settled(rows, paired)
    # A third candidate that may be as good as the winner keeps the search going.
    rows = [[0.0, 20.0 + (i % 3), 20.0 + 6 * (-1) ** i] for i in range(12)]
    assert not s._settled(rows, paired_of(rows))


def test_the_running_sums_give_the_paired_means_and_variances() -> None:
    rng = random.Random(5)
    rows = [[rng.gauss(0, 30) for _ in range(4)] for _ in range(40)]
    paired = paired_of(rows, plan=2)
    for j in range(4):
        diffs = [r[j] - r[2] for r in rows]
        assert paired.sums[j] == pytest.approx(sum(diffs))
        assert paired.squares[j] == pytest.approx(sum(d * d for d in diffs))


def test_real_searches_stop_early_only_when_settled_and_stay_deterministic() -> None:
    # Fixed world counts (no clock): a search that stops early does so at the same world
    # on a second run, and only once its rows say so; others use every world.
    most = 24
    early = full = 0
    for seed in range(2):
        for i, point in enumerate(decisions(preset("standard", players=3), seed, known=True)):
            if i % 5 or point.known is None:
                continue
            legal = legal_moves(point.state)
            if len(set(legal)) < 2:
                continue
            known = point.known[point.state.to_move]
            runs = [
                s.search(known, legal, random.Random(i), deadline=math.inf, max_worlds=most)
                for _ in range(2)
            ]
            assert runs[0] == runs[1]
            found = runs[0]
            assert s.MIN_WORLDS <= found.worlds <= most or found.fallback
            if found.worlds < most:
                early += 1
            else:
                full += 1
            if early >= 3 and full >= 3:
                return
    pytest.fail(f"early {early}, full {full}: expected both kinds of decision")
