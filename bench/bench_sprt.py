"""SPRT benchmark: false positives, power, and the games that pairing and luck correction save.

Everything runs in-process with the engine and its local players
(`referee.stats.players`), no bot processes. Games are 2 players, double-6,
one round (`rounds = "single"`), so that thousands of them take seconds.

1. Pools. For unit i, game A is NEW (seat 0) against BASE (seat 1) on deal i;
   game B is its duplicate twin, the same deal with the seats swapped; game C
   is the same seating as B on a different deal. A paired unit is (A, B), an
   independent unit (A, C): two games each, identical except for the deal.
   For part of the pool each game's luck is computed too (rollouts: costly).
2. Tests. Each SPRT draws units at random (with replacement) from a pool, in
   order, until it accepts a hypothesis: the bootstrap of whole tests on the
   measured distribution of units. For a bot against itself the pool is made
   symmetric (each unit also as its mirror, NEW and BASE exchanged), so its
   true Elo difference is exactly 0 = elo0. To compare designs at one true
   difference, the other pools are moved to the score of elo1 and their luck
   centred (`shifted`). Parts 1 to 4 measure the GSPRT alone (`mixture=False`):
   the designs' savings, on pools whose shifted results may leave [0, 1].
3. Savings (parts 3 and 4) are given with two 95% intervals: the variance
   ratio's, a delta-method interval over the pool's units (how much the pool
   itself may be off), and the games saving's, a delta-method interval over
   the simulated tests (how much the simulation may be off, given the pool).
4. Part 5 puts the test `referee match` runs (the GSPRT with the mixture test
   beside it, sharing α and β) next to the GSPRT alone, for elo0 = 0, elo1 = 5:
   both are fed the same stream of units in each simulated run. Its pools stay
   in [0, 1]: a target score is reached by drawing from the pool and from its
   mirror (NEW and BASE exchanged) in the right proportion (`Source`).
5. Part 6 plays units as `referee match` does at tables of 3 to 8 seats (a field
   of other bots in the other seats) and compares the Elo the match measures
   with the same pair's head-to-head Elo at two seats: the factor that elo1 of
   a match with a field must be scaled by.

`--seed S` draws other deals, bot seeds and tests (0 gives the figures in
bench/README.md), so that two runs are two independent measurements.

    python bench/bench_sprt.py                 # the default run, parts 1 to 6
    python bench/bench_sprt.py --parts 4       # one part (each part alone fits in minutes)
    python bench/bench_sprt.py --parts 3 --seed 1   # part 3 again on fresh deals and tests
    python bench/bench_sprt.py --quick         # a smaller run, to try the script
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import multiprocessing
import os
import platform
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from _machine import cpu_model

from referee.rules import Rules, preset
from referee.stats import Sprt, Unit, Verdict, bounds, game_score, score_of_elo
from referee.stats.elo import Z95
from referee.stats.luck import FeatureValue, RolloutValue, Value, fit_scale, luck
from referee.stats.mixture import SHARE
from referee.stats.players import Player, greedy_player, play_game, play_recorded, random_player

RULES = preset("standard", players=2, max_pip=6, rounds="single")
ELO0, ELO1, ALPHA, BETA = 0.0, 30.0, 0.05, 0.05
MAX_UNITS = 20_000  # a test still undecided after this many units counts as undecided
ROLLOUTS = 8
SEED_STRIDE = 10**7  # unit indices of run --seed S start at S·SEED_STRIDE
PILOT_AT = 10**6  # the pilot's units start this far after the run's first unit

# The matches: (NEW, BASE), each a function of a seed giving a player.
MATCHES: dict[str, tuple[Callable[[object], Player], Callable[[object], Player]]] = {
    "greedy-vs-itself": (greedy_player, greedy_player),
    "greedy-vs-noisy": (greedy_player, lambda seed: greedy_player(seed, noise=0.1)),
    "greedy-vs-random": (greedy_player, random_player),
}
VALUE_OF: dict[str, Value] = {
    "pips": FeatureValue(pips=1.0),
    "playable": FeatureValue(playable=1.0),
    "rollout": RolloutValue(ROLLOUTS),
}
FEATURES = ("pips", "playable")


@dataclass(frozen=True)
class Row:
    """One unit index of a pool: the three games' scores (and lucks) for NEW's seat."""

    a: float  # NEW's score in game A (seat 0)
    b: float  # BASE's score in game B (seat 0, same deal as A)
    c: float  # BASE's score in game C (seat 0, another deal)
    luck_a: dict[str, float]
    luck_b: dict[str, float]
    luck_c: dict[str, float]
    seconds: dict[str, float]  # CPU time spent on each value's luck, over the unit's games


def _games(job: tuple[str, int, tuple[str, ...], str]) -> Row:
    """Plays unit `index` of match `name` (those of games A, B, C named in `which`), with
    the lucks named in `values`; a game not played scores nan."""
    name, index, values, which = job
    make_new, make_base = MATCHES[name]
    deal, other = 1_000_003 * index + 17, 1_000_003 * index + 18
    seats = {
        "a": (deal, [make_new(("new", index)), make_base(("base", index))]),
        "b": (deal, [make_base(("base", index)), make_new(("new", index))]),
        "c": (other, [make_base(("base", index)), make_new(("new", index))]),
    }
    scores: dict[str, float] = {"c": math.nan}
    lucks: dict[str, dict[str, float]] = {"c": {}}
    seconds = dict.fromkeys(values, 0.0)
    for game, (seed, players) in seats.items():
        if game not in which:
            continue
        if not values:
            end = play_game(RULES, seed, players)
            scores[game] = game_score(end.outcome.ranks, 0) if end.outcome else 0.5
            lucks[game] = {}
            continue
        end, steps = play_recorded(RULES, seed, players)
        scores[game] = game_score(end.outcome.ranks, 0) if end.outcome else 0.5
        lucks[game] = {}
        for value in values:
            started = time.process_time()
            lucks[game][value] = luck(steps, 0, VALUE_OF[value], seed).total
            seconds[value] += time.process_time() - started
    return Row(scores["a"], scores["b"], scores["c"], lucks["a"], lucks["b"], lucks["c"], seconds)


def pool(
    workers: multiprocessing.pool.Pool,
    name: str,
    start: int,
    count: int,
    values: tuple[str, ...] = (),
    which: str = "abc",
) -> list[Row]:
    """Rows `start` .. `start + count - 1` of match `name`, with the lucks named in `values`."""
    jobs = [(name, i, values, which) for i in range(start, start + count)]
    return workers.map(_games, jobs, chunksize=max(1, count // 64))


def units(rows: Sequence[Row], design: str, scales: dict[str, float] | None) -> list[Unit]:
    """The units of a design: "paired" (A, B) or "independent" (A, C), luck-corrected with
    the value named by `scales` (value name -> factor) when given."""
    out = []
    for row in rows:
        base = row.b if design == "paired" else row.c
        luck_base = row.luck_b if design == "paired" else row.luck_c
        ln = lb = 0.0
        for value, factor in (scales or {}).items():
            ln += factor * row.luck_a[value]
            lb += factor * luck_base[value]
        # BASE's luck was computed for seat 0, the seat BASE sat in.
        out.append(Unit(new=row.a, base=base, luck_new=ln, luck_base=lb))
    return out


def shifted(pool_units: Sequence[Unit], target: float) -> list[Unit]:
    """The pool made to hold what holds in truth, with a chosen true score: its luck
    centred (mean zero, as proven in spec/STATS.md; a small pool misses it by sampling)
    and its raw results moved to mean `target`. Same spread, same shape."""
    luck = statistics.mean(u.luck for u in pool_units)
    delta = target - statistics.mean(u.raw for u in pool_units)
    return [
        Unit(u.new + 2 * delta, u.base, u.luck_new - 2 * luck, u.luck_base, u.games)
        for u in pool_units
    ]


def mirrored(pool_units: Sequence[Unit]) -> list[Unit]:
    """The pool and every unit's mirror (NEW and BASE exchanged): mean exactly ½."""
    return [*pool_units, *(Unit(u.base, u.new, u.luck_base, u.luck_new) for u in pool_units)]


@dataclass(frozen=True)
class Tests:
    """The outcome of many whole tests on one pool."""

    h1: int
    h0: int
    undecided: int
    games: list[int]

    @property
    def count(self) -> int:
        return self.h1 + self.h0 + self.undecided

    def quantile(self, q: float) -> float:
        ordered = sorted(self.games)
        return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def stream(seed: int, name: str = "bench-sprt") -> str:
    """The prefix of the random streams of run `seed` (run 0 keeps the figures' own)."""
    return name if seed == 0 else f"{name}/seed-{seed}"


def _tests(job: tuple[Sequence[Unit], int, int, bool, str]) -> tuple[int, int, int, list[int]]:
    pool_units, first, count, fit, prefix = job
    h1 = h0 = undecided = 0
    games = []
    for t in range(first, first + count):
        rng = random.Random(f"{prefix}/{t}")
        sprt = Sprt(ELO0, ELO1, ALPHA, BETA, fit_luck=fit, mixture=False)
        verdict = None
        while verdict is None and sprt.state.units < MAX_UNITS:
            verdict = sprt.add(pool_units[rng.randrange(len(pool_units))])
        games.append(sprt.state.games)
        if verdict is Verdict.H1:
            h1 += 1
        elif verdict is Verdict.H0:
            h0 += 1
        else:
            undecided += 1
    return h1, h0, undecided, games


def run_tests(
    workers: multiprocessing.pool.Pool,
    pool_units: Sequence[Unit],
    count: int,
    seed: int,
    fit: bool = False,
) -> Tests:
    """`count` whole SPRTs drawing units from `pool_units`, split among the workers; with
    `fit`, each test fits its luck factor on its own earlier units (`fit_luck`). Test t
    of every call draws the same unit indices (common random numbers across designs)."""
    size = max(1, count // 16)
    prefix = stream(seed)
    jobs = [
        (pool_units, first, min(size, count - first), fit, prefix)
        for first in range(0, count, size)
    ]
    h1 = h0 = undecided = 0
    games: list[int] = []
    for a, b, c, g in workers.map(_tests, jobs):
        h1, h0, undecided = h1 + a, h0 + b, undecided + c
        games.extend(g)
    return Tests(h1, h0, undecided, games)


def counted(pool_units: Sequence[Unit], fitted: bool = False) -> list[float]:
    """Each unit's counted result; with `fitted`, raw − c·luck with the best factor c for
    this pool (what a factor fitted as the test goes tends to)."""
    if fitted:
        c = fit_scale([u.raw for u in pool_units], [u.luck for u in pool_units])
        return [u.raw - c * u.luck for u in pool_units]
    return [u.value for u in pool_units]


def _log_interval(ratio: float, influence: Sequence[float]) -> tuple[float, float]:
    """The 95% interval of a positive ratio whose logarithm's error is the mean of the
    samples' `influence` (the delta method: se = sd(influence) / √n)."""
    se = statistics.stdev(influence) / math.sqrt(len(influence))
    return ratio * math.exp(-Z95 * se), ratio * math.exp(Z95 * se)


def variance_ratio(base: Sequence[float], other: Sequence[float]) -> tuple[float, float, float]:
    """Var(base) / Var(other) over the same units (`base[i]` and `other[i]` from unit i),
    with its delta-method 95% interval: unit i moves log V̂ by ((xᵢ − x̄)²/V − 1)/n, so
    the log ratio's error is the mean of (bᵢ − b̄)²/V_b − (oᵢ − ō)²/V_o (checked against
    a percentile bootstrap on 3,000 units: the same ends to 0.01)."""
    vb, vo = statistics.pvariance(base), statistics.pvariance(other)
    mb, mo = statistics.fmean(base), statistics.fmean(other)
    influence = [(b - mb) ** 2 / vb - (o - mo) ** 2 / vo for b, o in zip(base, other, strict=True)]
    return (vb / vo, *_log_interval(vb / vo, influence))


def mean_ratio(base: Sequence[int], other: Sequence[int]) -> tuple[float, float, float]:
    """mean(base) / mean(other) over paired samples (test t of both drew the same units
    while both ran), with its delta-method 95% interval."""
    mb, mo = statistics.fmean(base), statistics.fmean(other)
    influence = [b / mb - o / mo for b, o in zip(base, other, strict=True)]
    return (mb / mo, *_log_interval(mb / mo, influence))


def _times(ratio: tuple[float, float, float]) -> str:
    value, low, high = ratio
    return f"{value:5.2f}x [{low:4.2f}-{high:4.2f}]"


@dataclass(frozen=True)
class Line:
    """One design of a saving table: its units, whether to simulate tests, and how."""

    label: str
    units: list[Unit]
    simulate: bool = True
    fit: bool = False
    baseline: bool = False  # the independent raw design the others are compared with


def _raw_line(label: str, rows: Sequence[Row], design: str) -> Line:
    """A design's raw units; the independent design is the baseline of what follows."""
    return Line(label, units(rows, design, None), baseline=design == "independent")


def saving_table(
    workers: multiprocessing.pool.Pool,
    lines: Sequence[Line],
    target: float,
    tests: int,
    seed: int,
) -> None:
    """Prints variance per game and simulated tests (pools shifted to `target`) per line;
    each ratio is against the latest baseline line above it (the same pool's units), with
    its 95% interval: over the pool's units for the variance, over the tests for games."""
    print(
        f"   {'design':34s} {'var/game':>8s} {'var x [95%, pool]':>19s} {'H1':>6s} "
        f"{'median':>6s} {'p90':>6s} {'mean':>6s} {'saving [95%, tests]':>19s}"
    )
    base: list[float] = []
    base_games: list[int] = []
    for line in lines:
        values = counted(line.units, fitted=line.fit)
        var = statistics.pvariance(values) * line.units[0].games
        if line.baseline:
            base = values
        text = f"   {line.label:34s} {var:8.4f} "
        text += f"{'1.00x':>19s}" if line.baseline else _times(variance_ratio(base, values))
        if line.simulate:
            result = run_tests(workers, shifted(line.units, target), tests, seed, fit=line.fit)
            if line.baseline:
                base_games = result.games
            saving = (
                f"{'1.00x':>19s}" if line.baseline else _times(mean_ratio(base_games, result.games))
            )
            text += (
                f" {result.h1 / result.count:6.3f} {result.quantile(0.5):6.0f} "
                f"{result.quantile(0.9):6.0f} {statistics.mean(result.games):6.0f} {saving}"
            )
        print(text)


MIX_ELO0, MIX_ELO1 = 0.0, 5.0  # part 5: the README's and the command's default test


@dataclass(frozen=True)
class Source:
    """Units drawn from a pool, or (with probability `mirror`) a pool unit's mirror, NEW
    and BASE exchanged: every result stays in [0, 1] and the mean is any chosen score
    between the pool's and its mirror's (`aimed`)."""

    units: list[Unit]
    mirror: float = 0.0

    def draw(self, rng: random.Random) -> Unit:
        u = self.units[rng.randrange(len(self.units))]
        if rng.random() < self.mirror:
            return Unit(u.base, u.new, u.luck_base, u.luck_new, u.games)
        return u

    @property
    def score(self) -> float:
        mean = statistics.mean(u.raw for u in self.units)
        return (1.0 - self.mirror) * mean + self.mirror * (1.0 - mean)


def aimed(pool_units: list[Unit], target: float) -> Source:
    """The pool and its mirror mixed so that the mean result is `target`."""
    mean = statistics.mean(u.raw for u in pool_units)
    if mean == 0.5:
        return Source(pool_units, 0.5)
    mirror = (mean - target) / (2.0 * mean - 1.0)
    if not 0.0 <= mirror <= 1.0:
        raise ValueError(f"score {target} is not between {mean} and {1 - mean}")
    return Source(pool_units, mirror)


@dataclass(frozen=True)
class Race:
    """One simulated run of both tests on one stream of units: each one's verdict
    ("H1", "H0" or "-" undecided) and the units it counted; the combined test's
    decider ("llr" or "mixture")."""

    plain: str
    plain_units: int
    mixed: str
    mixed_units: int
    decided_by: str | None


def _race(job: tuple[Source, int, int, str]) -> list[Race]:
    """Runs of both tests, each on its own stream of units. The GSPRT alone has the same
    LLR as the combined test on the same units (the LLR depends on the units and on elo0,
    elo1 only) and narrower bounds: its verdict is read off the combined test's LLR at
    the first unit that leaves its bounds, and only when the combined test stops first
    (its mixture) does the GSPRT alone go on, from the same counts, by itself. That
    costs one LLR a unit instead of two."""
    source, first, count, tag = job
    lower, upper = bounds(ALPHA, BETA)
    out = []
    for t in range(first, first + count):
        rng = random.Random(f"{tag}/{t}")
        mixed = Sprt(MIX_ELO0, MIX_ELO1, ALPHA, BETA)
        plain: tuple[str, int] | None = None
        while mixed.verdict is None and mixed.state.units < MAX_UNITS:
            mixed.add(source.draw(rng))
            llr = mixed.state.llr
            if plain is None and (llr >= upper or llr <= lower):
                plain = ("H1" if llr >= upper else "H0", mixed.state.units)
        if plain is None:
            alone = Sprt(
                MIX_ELO0,
                MIX_ELO1,
                ALPHA,
                BETA,
                mixture=False,
                state=dataclasses.replace(
                    mixed.state,
                    mixture=False,
                    mix_h1=[],
                    mix_h0=[],
                    verdict=None,
                    decided_by=None,
                    bins={k: list(v) for k, v in mixed.state.bins.items()},
                ),
            )
            while alone.verdict is None and alone.state.units < MAX_UNITS:
                alone.add(source.draw(rng))
            plain = (alone.verdict.value if alone.verdict else "-", alone.state.units)
        verdict = mixed.verdict.value if mixed.verdict else "-"
        out.append(Race(*plain, verdict, mixed.state.units, mixed.state.decided_by))
    return out


def race(workers: multiprocessing.pool.Pool, source: Source, count: int, tag: str) -> list[Race]:
    """`count` runs of both tests on `source`, split among the workers."""
    size = max(1, count // 16)
    jobs = [(source, first, min(size, count - first), tag) for first in range(0, count, size)]
    return [r for part in workers.map(_race, jobs) for r in part]


def _quantiles(values: Sequence[int]) -> str:
    ordered = sorted(values)
    median = ordered[len(ordered) // 2]
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"{median:6d} {p90:6d} {statistics.mean(ordered):7.0f}"


def mixture_part(
    workers: multiprocessing.pool.Pool,
    raw: dict[str, list[Row]],
    tests: int,
    others: int,
    seed: int,
) -> None:
    """Part 5: false positives under H0 and the units needed from a clean sweep to a small
    difference, the GSPRT alone beside the GSPRT with the mixture, in the same runs."""
    sweep = Sprt(MIX_ELO0, MIX_ELO1, ALPHA, BETA, mixture=False)
    mixed = Sprt(MIX_ELO0, MIX_ELO1, ALPHA, BETA)
    for sprt in (sweep, mixed):
        while sprt.add(Unit(1.0, 0.0)) is None:
            pass
    print(
        f"5. The mixture test beside the GSPRT: elo0={MIX_ELO0:g} elo1={MIX_ELO1:g} "
        f"alpha={ALPHA} beta={BETA}; both tests on the same units in each run; {tests} runs "
        f"under H0, {others} for each other truth; undecided after {MAX_UNITS} units"
    )
    print(
        f"   a clean sweep (every unit won): the GSPRT alone stops at unit "
        f"{sweep.state.units}, with the mixture at unit {mixed.state.units} "
        f"({mixed.state.decided_by})"
    )
    paired = {name: units(rows, "paired", None) for name, rows in raw.items()}
    noisy = paired["greedy-vs-noisy"]
    lines = [
        ("H0: greedy vs itself", aimed(paired["greedy-vs-itself"], 0.5)),
        ("small: noisy mixed to elo1", aimed(noisy, score_of_elo(MIX_ELO1))),
        ("medium: greedy vs noisy", Source(noisy)),
        ("large: greedy vs random", Source(paired["greedy-vs-random"])),
        ("large, worse: random vs greedy", Source(paired["greedy-vs-random"], 1.0)),
    ]
    print(
        f"   {'truth':31s} {'Elo':>6s}  {'test':8s} {'runs':>5s} {'H1':>6s} {'95% interval':>13s} "
        f"{'H0':>6s} {'undec.':>6s} {'by mix':>6s}  units: {'median':>6s} {'p90':>6s} {'mean':>7s}"
    )
    for label, source in lines:
        count = tests if label.startswith("H0") else others
        runs = race(
            workers, source, count, f"{stream(seed, 'bench-sprt/mixture')}/{label.split(':')[0]}"
        )
        for name, verdicts, counts in (
            ("GSPRT", [r.plain for r in runs], [r.plain_units for r in runs]),
            ("+mixture", [r.mixed for r in runs], [r.mixed_units for r in runs]),
        ):
            h1, h0, none = (verdicts.count(v) for v in ("H1", "H0", "-"))
            low, high = binomial_ci(h1, count)
            by_mix = sum(r.decided_by == "mixture" for r in runs) if name != "GSPRT" else 0
            shares = " ".join(f"{k / count:6.3f}" for k in (h0, none, by_mix))
            print(
                f"   {label:31s} {_elo(source.score):+6.1f}  {name:8s} {count:5d} "
                f"{h1 / count:6.3f} {low:6.3f}-{high:.3f} {shares}         {_quantiles(counts)}"
            )
            label = ""
        if count == tests:  # under H0: the false positives the mixture itself made
            h1_mix = sum(r.mixed == "H1" and r.decided_by == "mixture" for r in runs)
            own = f"its own bound {SHARE * ALPHA:.0%}"
            print(f"   {'':31s} H1 by the mixture in {h1_mix} of {count} runs ({own})")


def binomial_ci(k: int, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _elo(score: float) -> float:
    return 400 * math.log10(score / (1 - score))


def first_unit(args: argparse.Namespace) -> int:
    """The index of the run's first unit: run --seed S plays deals no other run plays."""
    return int(args.seed) * SEED_STRIDE


def luck_pool(
    workers: multiprocessing.pool.Pool,
    name: str,
    args: argparse.Namespace,
    count: int,
    values: tuple[str, ...],
    which: str = "abc",
) -> list[Row]:
    """`count` units of match `name` with the lucks named in `values`, timed."""
    wall0 = time.perf_counter()
    rows = pool(workers, name, first_unit(args), count, values, which)
    spent = {v: sum(r.seconds[v] for r in rows) / (len(which) * len(rows)) for v in values}
    costs = ", ".join(f"{v} {1000 * t:.1f}" for v, t in spent.items())
    print(
        f"pool:    {count} units of {name} with luck ({costs} ms CPU per game); "
        f"{time.perf_counter() - wall0:.0f} s"
    )
    return rows


def part1(
    workers: multiprocessing.pool.Pool, raw: dict[str, list[Row]], args: argparse.Namespace
) -> None:
    """False positives of the GSPRT alone, greedy against itself."""
    luck_self = luck_pool(
        workers, "greedy-vs-itself", args, args.luck_units // 2, ("rollout",), "ab"
    )
    rollout = {"rollout": 1.0}
    print()
    print(
        f"1. False positives: greedy against itself, mirrored pools (true Elo 0); "
        f"{args.tests} tests each"
    )
    for label, pool_units, fit in (
        ("paired, raw", mirrored(units(raw["greedy-vs-itself"], "paired", None)), False),
        (
            "independent, raw",
            mirrored(units(raw["greedy-vs-itself"], "independent", None)),
            False,
        ),
        ("paired, rollout luck", mirrored(units(luck_self, "paired", rollout)), False),
        ("paired, rollout, fitted", mirrored(units(luck_self, "paired", rollout)), True),
    ):
        result = run_tests(workers, pool_units, args.tests, args.seed, fit=fit)
        low, high = binomial_ci(result.h1, result.count)
        print(
            f"   {label:22s} H1 {result.h1:4d}/{result.count} = {result.h1 / result.count:.3f} "
            f"(95% {low:.3f}-{high:.3f}); games median {result.quantile(0.5):.0f}, "
            f"p90 {result.quantile(0.9):.0f}"
        )


def part2(
    workers: multiprocessing.pool.Pool, raw: dict[str, list[Row]], args: argparse.Namespace
) -> None:
    """Power of the GSPRT alone, greedy against random."""
    print()
    print(f"2. Power: greedy against random; {args.tests} tests each")
    for design in ("paired", "independent"):
        rows = units(raw["greedy-vs-random"], design, None)
        score = statistics.mean(u.value for u in rows)
        result = run_tests(workers, rows, args.tests, args.seed)
        print(
            f"   {design:22s} score {score:.3f} (Elo {_elo(score):.0f}); H1 {result.h1}/"
            f"{result.count}; games median {result.quantile(0.5):.0f}, "
            f"p90 {result.quantile(0.9):.0f}"
        )


def saving_part(
    workers: multiprocessing.pool.Pool,
    raw: Sequence[Row],
    with_luck: Sequence[Row],
    scales: dict[str, dict[str, float]],
    args: argparse.Namespace,
) -> None:
    """The saving table of parts 3 and 4: pairing on the raw pool, then pairing and each
    luck correction on the pool with luck, every ratio with its intervals."""
    lines = [
        Line(f"independent, raw ({len(raw)})", units(raw, "independent", None), baseline=True),
        Line(f"paired, raw ({len(raw)})", units(raw, "paired", None)),
    ]
    for design in ("independent", "paired"):
        lines.append(_raw_line(f"{design}, raw ({len(with_luck)})", with_luck, design))
        for value, scale in scales.items():
            corrected = units(with_luck, design, scale)
            lines.append(Line(f"{design}, {value} luck", corrected, value == "rollout"))
        lines.append(
            Line(
                f"{design}, rollout luck, fitted",
                units(with_luck, design, scales["rollout"]),
                fit=True,
            )
        )
    saving_table(workers, lines, score_of_elo(ELO1), args.saving_tests, args.seed)
    for design in ("paired", "independent"):
        diffs = [u.value - u.raw for u in units(with_luck, design, scales["rollout"])]
        se = statistics.stdev(diffs) / math.sqrt(len(diffs))
        print(
            f"   unbiasedness, {design}: mean(corrected - raw) = {statistics.mean(diffs):+.4f} "
            f"± {Z95 * se:.4f} (95%), expectation 0"
        )


def part3(
    workers: multiprocessing.pool.Pool, raw: dict[str, list[Row]], args: argparse.Namespace
) -> None:
    """The saving of pairing and luck correction, greedy against noisy greedy."""
    with_luck = luck_pool(workers, "greedy-vs-noisy", args, args.luck_units, tuple(VALUE_OF))
    pilot = pool(workers, "greedy-vs-noisy", first_unit(args) + PILOT_AT, args.pilot, FEATURES)
    # Rollout values are game scores already (factor 1); each feature value gets the
    # least-squares factor fitted on the pilot's games, which no test counts.
    scales: dict[str, dict[str, float]] = {}
    for value in FEATURES:
        scores = [r.a for r in pilot] + [r.c for r in pilot]
        lucks = [r.luck_a[value] for r in pilot] + [r.luck_c[value] for r in pilot]
        scales[value] = {value: fit_scale(scores, lucks)}
    scales["rollout"] = {"rollout": 1.0}
    print(
        f"pilot:   {args.pilot} units; scales "
        + ", ".join(f"{v} {scales[v][v]:.4f}" for v in FEATURES)
    )
    print()
    measured = statistics.mean(u.raw for u in units(raw["greedy-vs-noisy"], "paired", None))
    print(
        f"3. The saving: greedy against greedy with 10% random moves (measured score "
        f"{measured:.3f}, Elo {_elo(measured):.1f}); every pool shifted to the score of "
        f"elo1, {score_of_elo(ELO1):.4f}, so that all designs face the same true difference; "
        f"{args.saving_tests} tests each"
    )
    saving_part(workers, raw["greedy-vs-noisy"], with_luck, scales, args)


def part4(
    workers: multiprocessing.pool.Pool, raw: dict[str, list[Row]], args: argparse.Namespace
) -> None:
    """Pairing and luck correction for bots that play unalike."""
    with_luck = luck_pool(workers, "greedy-vs-random", args, args.luck_units, ("rollout",))
    print()
    measured = statistics.mean(u.raw for u in units(raw["greedy-vs-random"], "paired", None))
    print(
        f"4. Bots that play unalike: greedy against random (measured score {measured:.3f}, "
        f"Elo {_elo(measured):.1f}), shifted to elo1 as in 3; {args.saving_tests} tests each"
    )
    saving_part(workers, raw["greedy-vs-random"], with_luck, {"rollout": {"rollout": 1.0}}, args)


# Part 6: (NEW, BASE) pairs, the fields around them, and the tables: (set, seat counts).
FIELD_PAIRS: dict[str, tuple[Callable[[object], Player], Callable[[object], Player]]] = {
    "greedy-vs-noisier": (greedy_player, lambda seed: greedy_player(seed, noise=0.2)),
    "greedy-vs-unplanned": (greedy_player, lambda seed: greedy_player(seed, plan=False)),
}
FIELDS: dict[str, Callable[[object], Player]] = {
    "greedy": greedy_player,
    "noisy": lambda seed: greedy_player(seed, noise=0.1),
    "random": random_player,
}
TABLES = ((6, (3, 4)), (9, (3, 4, 5, 6, 7, 8)))  # double-6 deals 2 to 4 seats, double-9 2 to 8


@cache
def _table(max_pip: int, seats: int) -> Rules:
    return preset("standard", players=seats, max_pip=max_pip, rounds="single")


def _field_unit(job: tuple[int, int, str, int]) -> tuple[str, float]:
    """Unit `index` of pair `name` at a table of `seats` (double-`max_pip`, one round),
    as `referee match` plays it: the tested seat is `index mod seats`; game 1 seats NEW
    there, game 2 BASE, on the same deal with every other seat's bot and every seat's bot
    seed the same. With two seats the other seat holds the other bot (chess's pair);
    with more, a field: every other seat one kind of bot (greedy, noisy or random, in
    turn for each round of the table, so that every seat is tested with each). Returns
    the field's name ("" for none) and the unit's paired result."""
    max_pip, seats, name, index = job
    rules = _table(max_pip, seats)
    make_new, make_base = FIELD_PAIRS[name]
    field = "" if seats == 2 else list(FIELDS)[(index // seats) % len(FIELDS)]
    tested = index % seats
    deal = 1_000_003 * index + 19
    scores = []
    for tested_bot, other_bot in ((make_new, make_base), (make_base, make_new)):
        players = [
            tested_bot((index, s))
            if s == tested
            else (FIELDS[field]((index, s)) if field else other_bot((index, s)))
            for s in range(seats)
        ]
        end = play_game(rules, deal, players)
        scores.append(game_score(end.outcome.ranks, tested) if end.outcome else 0.5)
    return field, (1.0 + scores[0] - scores[1]) / 2.0


@dataclass(frozen=True)
class Estimate:
    """A match's Elo from its units' mean result, with the delta-method standard error."""

    elo: float
    se: float
    low: float  # the ends of the 95% interval of the score, turned into Elo
    high: float

    @classmethod
    def of(cls, results: Sequence[float]) -> Estimate:
        m = statistics.fmean(results)
        se_m = statistics.stdev(results) / math.sqrt(len(results))
        slope = 400.0 / math.log(10.0) / (m * (1.0 - m))  # d elo / d score at m
        low, high = _elo(m - Z95 * se_m), _elo(m + Z95 * se_m)
        return cls(_elo(m), slope * se_m, low, high)

    def __str__(self) -> str:
        return f"{self.elo:+6.1f} [{self.low:+6.1f}, {self.high:+6.1f}]"


def fieller(top: Estimate, bottom: Estimate) -> tuple[float, float]:
    """Fieller's 95% interval of top.elo / bottom.elo for two independent estimates (the
    ratios ρ with (t − ρb)² ≤ z²(se_t² + ρ²se_b²)); unbounded when bottom is not clear
    of 0."""
    t, b, st, sb = top.elo, bottom.elo, top.se, bottom.se
    a = b * b - Z95 * Z95 * sb * sb
    if a <= 0.0:
        return (-math.inf, math.inf)
    root = Z95 * math.sqrt(t * t * sb * sb + b * b * st * st - Z95 * Z95 * sb * sb * st * st)
    return ((t * b - root) / a, (t * b + root) / a)


def part6(
    workers: multiprocessing.pool.Pool, raw: dict[str, list[Row]], args: argparse.Namespace
) -> None:
    """A field's effect on the Elo a match measures, per table size."""
    n = args.field_units
    print()
    print(
        f"6. Fields: the Elo a match measures with a field, against the same pair's Elo "
        f"head to head (two seats, no field); one round, {n} units per line; the field's "
        f"kind goes round {', '.join(FIELDS)} (its Elo apart by field after the interval)"
    )
    print(
        f"   {'set':9s} {'seats':>5s} {'pair':20s} {'Elo [95%]':>23s}  "
        + " ".join(f"{f:>7s}" for f in FIELDS)
        + f"  {'factor [95%, Fieller]':>22s}"
    )
    start = first_unit(args)
    for max_pip, tables in TABLES:
        for name in FIELD_PAIRS:
            alone = None
            for seats in (2, *tables):
                jobs = [(max_pip, seats, name, i) for i in range(start, start + n)]
                found = workers.map(_field_unit, jobs, chunksize=max(1, n // 64))
                estimate = Estimate.of([u for _, u in found])
                text = f"   double-{max_pip:<2d} {seats:5d} {name:20s} {estimate!s:>23s}  "
                if alone is None:
                    alone = estimate
                    print(text + "(head to head)")
                    continue
                by_field = [Estimate.of([u for f, u in found if f == kind]) for kind in FIELDS]
                low, high = fieller(estimate, alone)
                print(
                    text
                    + " ".join(f"{e.elo:+7.1f}" for e in by_field)
                    + f"  {estimate.elo / alone.elo:5.2f} [{low:4.2f}, {high:4.2f}]"
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--units", type=int, default=3000, help="units per raw pool")
    parser.add_argument(
        "--luck-units",
        type=int,
        default=1000,
        help="units with rollout luck in 3 and 4 (half as many in 1)",
    )
    parser.add_argument("--pilot", type=int, default=400, help="units to fit feature scales")
    parser.add_argument("--tests", type=int, default=1000, help="whole SPRTs per line of 1, 2")
    parser.add_argument(
        "--saving-tests", type=int, default=500, help="whole SPRTs per line of 3, 4"
    )
    parser.add_argument("--mix-tests", type=int, default=1000, help="runs under H0 in 5")
    parser.add_argument("--mix-others", type=int, default=300, help="runs per other line of 5")
    parser.add_argument("--field-units", type=int, default=3000, help="units per line of 6")
    parser.add_argument("--parts", default="1,2,3,4,5,6", help="which parts (default all)")
    parser.add_argument(
        "--seed", type=int, default=0, help="other deals and tests (0: bench/README.md's)"
    )
    parser.add_argument("--quick", action="store_true", help="small pools and 200 tests")
    args = parser.parse_args(argv)
    if args.quick:
        args.units, args.luck_units, args.pilot, args.field_units = 600, 40, 60, 300
        args.tests = args.saving_tests = args.mix_tests = args.mix_others = 200
    numbers = ("jobs", "units", "luck_units", "pilot", "tests", "saving_tests", "mix_tests")
    for name in (*numbers, "mix_others", "field_units"):
        if getattr(args, name) < 2:
            parser.error(f"--{name.replace('_', '-')} must be at least 2")
    if not 0 <= args.seed < 100:
        parser.error("--seed must lie in 0..99")
    try:
        parts = {int(x) for x in args.parts.split(",")}
    except ValueError:
        parser.error(f"--parts {args.parts!r}: numbers from 1 to 6, comma-separated")
    if not parts or not parts <= {1, 2, 3, 4, 5, 6}:
        parser.error(f"--parts {args.parts!r}: numbers from 1 to 6, comma-separated")

    print(f"machine: {platform.platform()}; {cpu_model()}; {os.cpu_count()} CPUs")
    print(f"python:  {platform.python_implementation()} {platform.python_version()}")
    print(f"load:    {Path('/proc/loadavg').read_text().strip()} (/proc/loadavg, at the start)")
    print(
        f"games:   2 players, double-6, one round; parts 1-4: SPRT elo0={ELO0:g} "
        f"elo1={ELO1:g} alpha={ALPHA} beta={BETA}; rollouts={ROLLOUTS} greedy playouts "
        f"per value; seed {args.seed}"
    )
    wall0 = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as workers:
        raw: dict[str, list[Row]] = {}
        if parts & {1, 2, 3, 4, 5}:
            raw = {name: pool(workers, name, first_unit(args), args.units) for name in MATCHES}
            print(f"pools:   {args.units} units per match; {time.perf_counter() - wall0:.0f} s")
        for number, part in ((1, part1), (2, part2), (3, part3), (4, part4)):
            if number in parts:
                part(workers, raw, args)
        if 5 in parts:
            print()
            mixture_part(workers, raw, args.mix_tests, args.mix_others, args.seed)
        if 6 in parts:
            part6(workers, raw, args)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print()
    print(
        f"done in {time.perf_counter() - wall0:.0f} s wall, "
        f"{children.ru_utime + children.ru_stime:.0f} s CPU in {args.jobs} worker processes; "
        f"load at the end {Path('/proc/loadavg').read_text().strip()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
