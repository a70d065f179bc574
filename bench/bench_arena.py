"""Arena benchmark, part 1: matchmaking quality, in-process (no bot processes).

What is measured: how fast a newcomer's leaderboard rank settles under the arena's
matchmaking (`referee.arena.matchmaking.table`), against random matchmaking
(`table(..., randomly=True)`) measured in the same run on the same seeds, and how
evenly each spreads the games over the bots. The goal: **a newcomer settles in at most
half the arena games random matchmaking needs** (ratio of medians <= 0.5).

- **Bots**: a pool of 10, each its own author, of graded strength: the engine's
  `greedy_player` with noise 0, 0.1, ..., 0.6, 0.75, 0.9 (the share of uniformly
  random moves) and `random_player` (`--ladder` sets other noises). The ladder is
  checked by playing it: every pair's games at two seats (a round robin) and every
  four-seat table's, from the bank below, and the pool's mean mu at the end of each
  trial, with the pairs out of order counted.
- **Games**: `standard`, double-12, one round (`rounds = "single"`), at tables of 2
  and, as a second configuration, of 4. A game's ranks (1 is best: fewest points) are
  drawn from a **bank of real engine games** of that table's kinds of player, played
  first: `--bank2` games of every 2-seat table of kinds, `--bank4` of every 4-seat one,
  each with the seats shuffled and a deal of its own. Playing every arena game afresh
  would cost about 240,000 engine games (a greedy game takes 5 to 15 ms); the bank keeps
  each game's real outcome, luck included, and both matchmakings draw from the same
  bank. The bank's games per second are printed: the engine's speed in this run.
- **Ratings**: OpenSkill Plackett-Luce as the league's standings rate a game
  (`rating_model()`, `model.rate(teams, ranks=...)`), from mu 25, sigma 25/3. The
  leaderboard orders by mu - 3 sigma.
- **Arena time**: tables are played one at a time and every bot is free for each new
  table; one game is one second of arena time, so a bot's `idle_s` is the games since
  its last one (or since it joined), which the matchmaking's idle weighting reads.
  No pair cap (the arena's default, `pair_cap_per_hour = 0`).
- **A trial** (seeded; `--runs` of them, the same seeds for both matchmakings): the
  pool, without bursts, warms up for `--warmup` games, then a newcomer joins, a copy of
  a pool kind (strong: the top one, medium: the fifth, weak: the random player), and
  the arena plays `--horizon` more games. Under the arena's matchmaking the newcomer
  has a burst of 12 games (`newcomer_games`), counted down per game it plays, with its
  opponents `met` in the burst; under random matchmaking no burst. The three
  strengths each continue the same warmed-up pool.
- **Settling**: the newcomer's **settle time** is the first arena game count (games
  the arena played since it joined, 0 at joining) from which its rank stays within
  one place of its final rank (its rank `--horizon` games after joining) to the end;
  also in the newcomer's own games by then. Median and 90th percentile (nearest rank)
  over the trials; the ratio is arena over random. **Twin**: the same measure for the
  pool bot of the newcomer's kind, from the join: how long the ranks of a bot that is
  no newcomer keep moving, the floor the ladder's spacing sets. And the share of trials
  whose newcomer is within one place of its final rank 12, 25, 50, ... games after
  joining: how close it is early, which the settle time (its last excursion) hides.
- **Spread**: max / min games per bot over windows of 60 games (60 s of arena time:
  the arena's per-hour caps scaled down 60 times, one game a second), in the warm-up
  (the pool), in the first two windows after the newcomer joins (when the arena feeds
  it) and after them (all 11): median and max over the windows of every trial.

    python bench/bench_arena.py              # the default run, about 2 minutes
    python bench/bench_arena.py --quick      # a smaller bank and 8 trials, under 30 s
    python bench/bench_arena.py --runs 10    # fewer trials
    python bench/bench_arena.py --ladder 0,0.15,0.4,0.7,1   # a coarser pool of 5
    python bench/bench_arena.py --seed 1     # other deals, bank and trials: a new sample

Everything is seeded: the same arguments print the same figures (but the times).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import arena_scale
from _machine import cpu_model

from referee.arena.matchmaking import Candidate, meeting_bound, overdue_games, table
from referee.arena.meetings import simulate
from referee.league.standings import rating_model
from referee.rules import Rules, preset
from referee.stats.players import Player, greedy_player, play_game, random_player

LADDER = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9, 1.0)  # greedy's noise; 1: random
SIZES = (2, 4)
NEWCOMER_GAMES = 12  # the arena's `newcomer_games` default
WINDOW = 60  # games: 60 s of arena time at one game a second
MU, SIGMA = 25.0, 25.0 / 3
GOAL = 0.5


@dataclass(frozen=True)
class Ladder:
    """The pool's kinds of player, strongest first as meant: greedy with a noise each
    (1.0: `random_player`), and the kinds the newcomers copy."""

    noises: tuple[float, ...]

    @property
    def kinds(self) -> list[str]:
        return ["random" if n >= 1 else f"g{n:g}" for n in self.noises]

    @property
    def newcomers(self) -> dict[str, int]:
        """Newcomer strength -> its kind."""
        last = len(self.noises) - 1
        return {"strong": 0, "medium": last // 2, "weak": last}

    def player(self, kind: int, seed: str) -> Player:
        noise = self.noises[kind]
        return random_player(seed) if noise >= 1 else greedy_player(seed, noise)


def rules_for(size: int) -> Rules:
    return preset("standard", players=size, rounds="single")


def compositions(ladder: Ladder, size: int) -> list[tuple[int, ...]]:
    """Every table of `size` player kinds the arena can seat: distinct kinds, or one
    newcomer's kind twice (the newcomer and its pool twin)."""
    kinds = range(len(ladder.noises))
    out = set(itertools.combinations(kinds, size))
    for twin in ladder.newcomers.values():
        others = [k for k in kinds if k != twin]
        for rest in itertools.combinations(others, size - 2):
            out.add(tuple(sorted((twin, twin, *rest))))
    return sorted(out)


@dataclass
class Bank:
    """Real games of each table of kinds: each outcome is the ranks of the kinds in the
    composition's (sorted) order."""

    ladder: Ladder
    size: int
    games: dict[tuple[int, ...], list[tuple[int, ...]]] = field(default_factory=dict)
    played: int = 0
    cpu: float = 0.0
    wins: list[float] = field(default_factory=list)  # by kind, in the ladder's tables
    rank_sum: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)

    @classmethod
    def fill(cls, ladder: Ladder, size: int, per_table: int, seed: int = 0) -> Bank:
        n = len(ladder.noises)
        bank = cls(ladder, size, wins=[0.0] * n, rank_sum=[0] * n, points=[0] * n, seats=[0] * n)
        rules = rules_for(size)
        cpu0 = time.process_time()
        for ci, comp in enumerate(compositions(ladder, size)):
            results = []
            for k in range(per_table):
                rng = random.Random(f"{seed}/bank/{size}/{comp}/{k}")
                order = list(range(size))  # seat s plays composition position order[s]
                rng.shuffle(order)
                players = [
                    ladder.player(comp[order[s]], f"{seed}/{size}/{comp}/{k}/{s}")
                    for s in range(size)
                ]
                deal = seed * 10_000_000 + ci * per_table + k
                outcome = play_game(rules, deal, players).outcome
                assert outcome is not None
                ranks = [0] * size
                first = sum(1 for r in outcome.ranks if r == 1)
                for s in range(size):
                    ranks[order[s]] = outcome.ranks[s]
                    kind = comp[order[s]]
                    if len(set(comp)) < size:
                        continue  # the ladder is read from tables of distinct kinds
                    bank.seats[kind] += 1
                    bank.rank_sum[kind] += outcome.ranks[s]
                    bank.points[kind] += outcome.scores[s]
                    if outcome.ranks[s] == 1:
                        bank.wins[kind] += 1 / first
                results.append(tuple(ranks))
            bank.games[comp] = results
            bank.played += per_table
        bank.cpu = time.process_time() - cpu0
        return bank

    def draw(self, kinds: Sequence[int], rng: random.Random) -> list[int]:
        """The ranks of the seats of a table of `kinds`, from one banked game (twins in a
        random order)."""
        order = sorted(range(len(kinds)), key=lambda i: (kinds[i], rng.random()))
        outcome = rng.choice(self.games[tuple(kinds[i] for i in order)])
        ranks = [0] * len(kinds)
        for pos, i in enumerate(order):
            ranks[i] = outcome[pos]
        return ranks


@dataclass
class Bot:
    name: str
    kind: int
    mu: float = MU
    sigma: float = SIGMA
    games: int = 0
    last_end: int = 0  # arena time (games) its last game ended, or it joined
    burst: int = 0
    met: dict[str, int] = field(default_factory=dict)
    since: dict[str, int] = field(default_factory=dict)  # its games since it met each other
    last: frozenset[str] = frozenset()  # its last table

    @property
    def rating(self) -> float:
        return self.mu - 3 * self.sigma


def clone(bots: list[Bot]) -> list[Bot]:
    return [replace(b, met=dict(b.met), since=dict(b.since)) for b in bots]


class Arena:
    """One simulated arena: bots, arena time, and one table at a time."""

    def __init__(self, bots: list[Bot], size: int, bank: Bank, rng: random.Random, randomly: bool):
        self.bots = bots
        self.size = size
        self.bank = bank
        self.rng = rng
        self.randomly = randomly
        self.now = 0
        self.model = rating_model()

    def play(self) -> list[Bot]:
        """Seat one table, play it, rate it; the bots that played."""
        by_name = {b.name: b for b in self.bots}
        candidates = [
            Candidate(
                b.name,
                b.name,  # each bot its own author
                b.mu,
                b.games,
                idle_s=float(self.now - b.last_end),
                burst=b.burst,
                met=b.met,
                since=b.since,
                last=b.last,
            )
            for b in self.bots
        ]
        overdue = overdue_games(len(self.bots), self.size)
        seated = table(candidates, self.size, self.rng, randomly=self.randomly, overdue=overdue)
        assert seated is not None, "every bot is free: a table can always be filled"
        bots = [by_name[c.name] for c in seated]
        ranks = self.bank.draw([b.kind for b in bots], self.rng)
        model = self.model
        teams = [[model.rating(mu=b.mu, sigma=b.sigma, name=b.name)] for b in bots]
        new = model.rate(teams, ranks=[float(r) for r in ranks])
        self.now += 1
        for b, team in zip(bots, new, strict=True):
            b.mu, b.sigma = team[0].mu, team[0].sigma
            b.games += 1
            b.last_end = self.now
            b.last = frozenset(o.name for o in bots)
            for o in self.bots:
                if o is not b:
                    b.since[o.name] = 0 if o in bots else b.since.get(o.name, b.games - 1) + 1
            if b.burst > 0:
                b.burst -= 1
                for o in bots:
                    if o is not b:
                        b.met[o.name] = b.met.get(o.name, 0) + 1
        return bots


MEETINGS = [(4, 2, 2), (6, 3, 2), (10, 2, 2), (12, 3, 4), (15, 3, 5), (16, 4, 4), (25, 8, 3)]


def meetings(quick: bool) -> int:
    """Part 3: the most games a version played between two meetings with another, in
    simulated arenas of n versions at tables of `size`, `jobs` at once
    (`referee.arena.meetings`), with the meeting rules and without them, against the
    stated bound (`referee.arena.matchmaking.meeting_bound`); and the tables in play."""
    seeds = 3 if quick else 10
    tables = 800 if quick else 3000
    load_before = os.getloadavg()
    print(f"meetings: {tables} tables a run, {seeds} seeds; worst = most games of one")
    print("version between two meetings with another (median and max over the seeds)")
    head = f"{'n':>3} {'size':>4} {'jobs':>4} | {'bound':>5} | {'with the rules':>22}"
    print(head + f" | {'without (before)':>22}")
    print(f"{'':15}| {'':5} | {'worst med max':>13} {'tables':>8} | {'worst med max':>13}")
    within = True
    for n, size, jobs in MEETINGS:
        fair = [simulate(n, size, jobs, s, tables) for s in range(seeds)]
        old = [simulate(n, size, jobs, s, tables, fair=False) for s in range(seeds)]
        bound = meeting_bound(n, size)
        worst = [m.worst for m in fair]
        within = within and max(worst) <= bound
        busy = statistics.median(m.tables_at_once for m in fair)
        print(
            f"{n:3} {size:4} {jobs:4} | {bound:5} | {statistics.median(worst):6.0f} "
            f"{max(worst):6} {busy:8.2f} | {statistics.median(m.worst for m in old):6.0f} "
            f"{max(m.worst for m in old):6}",
            flush=True,
        )
    print(f"load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"every run within its bound: {'yes' if within else 'NO'}")
    return 0 if within else 1


def rank_of(bot: Bot, bots: Sequence[Bot]) -> int:
    """Its place on the leaderboard by mu - 3 sigma (1 is best; ties share)."""
    mine = bot.rating
    return 1 + sum(1 for b in bots if b is not bot and b.rating > mine)


def spread(seated: list[list[str]], names: Sequence[str]) -> list[float]:
    """max / min games per bot of each whole window of `WINDOW` games (inf if some
    bot played none)."""
    out = []
    for start in range(0, len(seated) - WINDOW + 1, WINDOW):
        counts = dict.fromkeys(names, 0)
        for game in seated[start : start + WINDOW]:
            for name in game:
                counts[name] += 1
        low, high = min(counts.values()), max(counts.values())
        out.append(high / low if low else math.inf)
    return out


def settle(ranks: Sequence[int]) -> int:
    """The first index from which every rank is within one place of the last one."""
    final = ranks[-1]
    at = len(ranks) - 1
    while at > 0 and abs(ranks[at - 1] - final) <= 1:
        at -= 1
    return at


@dataclass
class Trial:
    settle: int  # arena games since joining
    own: int  # the newcomer's own games by then
    final: int  # its final rank
    twin: int  # its pool twin's settle time after the join, the same way
    near: tuple[bool, ...]  # within one place of its final rank at each of `CHECKPOINTS`


@dataclass
class Results:
    trials: dict[tuple[int, bool, str], list[Trial]] = field(default_factory=dict)
    spread: dict[tuple[int, bool, str], list[float]] = field(default_factory=dict)
    mu: dict[tuple[int, bool], list[float]] = field(default_factory=dict)  # pool's, summed
    sigma: dict[tuple[int, bool], float] = field(default_factory=dict)  # pool's, summed
    games: int = 0
    cpu: float = 0.0


CATCH_UP = 2  # windows after joining counted apart: the arena feeds the newcomer then
CHECKPOINTS = (12, 25, 50, 100, 200, 300)  # arena games after joining


def trial(
    size: int, randomly: bool, seed: str, bank: Bank, warmup: int, horizon: int, res: Results
) -> None:
    """One seeded warm-up, then each newcomer strength joining the same warmed-up pool."""
    cpu0 = time.process_time()
    way = "random" if randomly else "arena"
    kinds = bank.ladder.kinds
    pool = [Bot(name=name, kind=k) for k, name in enumerate(kinds)]
    arena = Arena(pool, size, bank, random.Random(f"arena/{size}/{way}/{seed}/warm-up"), randomly)
    seated = [[b.name for b in arena.play()] for _ in range(warmup)]
    res.spread.setdefault((size, randomly, "warm-up"), []).extend(spread(seated, kinds))
    joined_at = arena.now
    for strength, kind in bank.ladder.newcomers.items():
        bots = clone(pool)
        new = Bot("newcomer", kind, last_end=joined_at, burst=0 if randomly else NEWCOMER_GAMES)
        bots.append(new)
        twin = bots[kind]
        run = Arena(
            bots, size, bank, random.Random(f"arena/{size}/{way}/{seed}/{strength}"), randomly
        )
        run.now = joined_at
        ranks, twins, own = [rank_of(new, bots)], [rank_of(twin, bots)], [0]
        seated = []
        for _ in range(horizon):
            seated.append([b.name for b in run.play()])
            ranks.append(rank_of(new, bots))
            twins.append(rank_of(twin, bots))
            own.append(new.games)
        at = settle(ranks)
        res.trials.setdefault((size, randomly, strength), []).append(
            Trial(
                at,
                own[at],
                ranks[-1],
                settle(twins),
                tuple(abs(ranks[t] - ranks[-1]) <= 1 for t in CHECKPOINTS if t <= horizon),
            )
        )
        windows = spread(seated, [b.name for b in bots])
        res.spread.setdefault((size, randomly, "catch-up"), []).extend(windows[:CATCH_UP])
        res.spread.setdefault((size, randomly, "after"), []).extend(windows[CATCH_UP:])
        mu = res.mu.setdefault((size, randomly), [0.0] * len(kinds))
        for b in bots[: len(kinds)]:
            mu[b.kind] += b.mu
        res.sigma[(size, randomly)] = res.sigma.get((size, randomly), 0.0) + sum(
            b.sigma for b in bots[: len(kinds)]
        ) / len(kinds)
        res.games += horizon
    res.games += warmup
    res.cpu += time.process_time() - cpu0


def p90(values: Iterable[float]) -> float:
    """The 90th percentile, nearest rank: a value that was observed."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def inversions(values: Sequence[float], better_high: bool, apart: int = 1) -> int:
    """Pairs of kinds at least `apart` rungs apart out of the expected order (the kinds
    are listed strongest first)."""
    sign = 1 if better_high else -1
    return sum(
        1
        for i, j in itertools.combinations(range(len(values)), 2)
        if j - i >= apart and sign * values[i] < sign * values[j]
    )


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="seeded trials (default 40)")
    parser.add_argument("--quick", action="store_true", help="a smaller run, under 30 s")
    parser.add_argument("--warmup", type=int, default=300, help="games before the newcomer")
    parser.add_argument("--horizon", type=int, default=400, help="games after it joins")
    parser.add_argument("--bank2", type=int, default=None, help="banked games per 2-seat table")
    parser.add_argument("--bank4", type=int, default=None, help="banked games per 4-seat table")
    parser.add_argument(
        "--ladder",
        default=",".join(f"{n:g}" for n in LADDER),
        help="the pool: greedy's noise for each bot, strongest first, 1 for a random player "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="other deals, bank and trials (0: the default run)"
    )
    parser.add_argument(
        "--part",
        choices=["all", "matchmaking", "meetings", "scale"],
        default="all",
        help="part 1 (matchmaking), part 2 (scale: bench/arena_scale.py), part 3 "
        "(meetings: how long two versions go without meeting) or all",
    )
    args = parser.parse_args(argv)
    if args.part == "scale":
        return arena_scale.main(["--quick"] if args.quick else [])
    if args.part == "meetings":
        return meetings(args.quick)
    try:
        ladder = Ladder(tuple(float(x) for x in args.ladder.split(",")))
    except ValueError:
        parser.error("--ladder: comma-separated numbers")
    if len(ladder.noises) < max(SIZES) or not all(0 <= n <= 1 for n in ladder.noises):
        parser.error(f"--ladder: at least {max(SIZES)} noises, each from 0 to 1")
    kinds, newcomers = ladder.kinds, ladder.newcomers
    runs = args.runs or (8 if args.quick else 40)
    bank2 = args.bank2 or (24 if args.quick else 120)
    bank4 = args.bank4 or (4 if args.quick else 20)
    if min(runs, bank2, bank4, args.horizon) < 1 or args.warmup < 0:
        parser.error("--runs, --bank2, --bank4 and --horizon must be at least 1")

    load_before = os.getloadavg()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    print(
        f"machine: {platform.system()} {platform.machine()}, {cpu_model()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print("engine: standard, double-12, one round; bots: " + ", ".join(kinds))
    banks = {}
    for size, per in ((2, bank2), (4, bank4)):
        bank = Bank.fill(ladder, size, per, args.seed)
        banks[size] = bank
        print(
            f"bank, {size} seats: {len(bank.games)} tables of kinds x {per} games = "
            f"{bank.played} real games in {bank.cpu:.1f} s CPU "
            f"({bank.played / bank.cpu:.0f} games/s)",
            flush=True,
        )
    print()
    print("ladder, from the bank's tables of distinct kinds (listed strongest first, as meant):")
    print(f"{'kind':8} {'2 seats: win share':>19} {'mean pts':>9} {'4 seats: mean rank':>19}")
    b2, b4 = banks[2], banks[4]
    share = [b2.wins[k] / b2.seats[k] for k in range(len(kinds))]
    mean_rank = [b4.rank_sum[k] / b4.seats[k] for k in range(len(kinds))]
    for k, name in enumerate(kinds):
        print(f"{name:8} {share[k]:19.3f} {b2.points[k] / b2.seats[k]:9.1f} {mean_rank[k]:19.3f}")
    pairs = len(kinds) * (len(kinds) - 1) // 2
    print(
        f"out of order: 2 seats {inversions(share, True)} of {pairs} pairs "
        f"({inversions(share, True, 2)} two or more rungs apart), 4 seats "
        f"{inversions(mean_rank, False)} ({inversions(mean_rank, False, 2)})",
        flush=True,
    )
    print()
    print(
        f"arena: {len(kinds)} pool bots + 1 newcomer, each its own author, one table at a "
        f"time, 1 game = 1 s;\n  warm-up {args.warmup} games, then {args.horizon} after "
        f"joining; {runs} seeded trials per table size and matchmaking (the same seeds)"
    )
    res = Results()
    for size in SIZES:
        for randomly in (False, True):
            for i in range(runs):
                seed = f"{args.seed}/{i}"
                trial(size, randomly, seed, banks[size], args.warmup, args.horizon, res)
        print(f"  {size} seats done: {res.games:,} arena games, {res.cpu:.1f} s CPU", flush=True)
    for size in SIZES:
        for randomly in (False, True):
            joins = runs * len(newcomers)
            mus = [m / joins for m in res.mu[(size, randomly)]]
            gap = (mus[0] - mus[-1]) / (len(mus) - 1)
            print(
                f"  pool at the horizon, {size} seats, {'random' if randomly else 'arena '}: "
                f"mean mu {mus[0]:.1f} (top) to {mus[-1]:.1f}, {gap:.2f} a rung; mean sigma "
                f"{res.sigma[(size, randomly)] / joins:.2f}; {inversions(mus, True)} of {pairs} "
                f"pairs out of order ({inversions(mus, True, 2)} two or more rungs apart)"
            )
    print()
    print(
        f"settle: arena games after joining until the newcomer's rank (of {len(kinds) + 1}, "
        "by mu - 3 sigma) "
        "stays\n  within one place of its final rank; twin: the same for its pool twin (the "
        "bot of its kind),\n  counted from the join: how long the pool's own ranks keep moving"
    )
    head = (
        f"{'seats':>5} {'newcomer':8} {'final':>7} | {'arena med':>9} {'p90':>4} | "
        f"{'random med':>10} {'p90':>4} | {'ratio':>5} | {'twin: arena':>11} {'random':>6}"
    )
    print(head)
    print("-" * len(head))
    verdicts = []
    rows = [(size, strength) for size in SIZES for strength in [*newcomers, "all"]]
    for size, strength in rows:
        pick = list(newcomers) if strength == "all" else [strength]
        a = [t for s in pick for t in res.trials[(size, False, s)]]
        r = [t for s in pick for t in res.trials[(size, True, s)]]
        am, rm = statistics.median(t.settle for t in a), statistics.median(t.settle for t in r)
        if strength == "all":
            verdicts.append((size, am, rm))
        final = "/".join(f"{statistics.median(t.final for t in x):g}" for x in (a, r))
        print(
            f"{size:5} {strength:8} {final:>7} | "
            f"{am:9.1f} {p90(t.settle for t in a):4.0f} | "
            f"{rm:10.1f} {p90(t.settle for t in r):4.0f} | "
            f"{ratio(am, rm):>5} | {statistics.median(t.twin for t in a):11.1f} "
            f"{statistics.median(t.twin for t in r):6.1f}"
        )
    print()
    print("the same settle time in the newcomer's own games:")
    head = (
        f"{'seats':>5} {'newcomer':8} | {'arena med':>9} {'p90':>4} | "
        f"{'random med':>10} {'p90':>4} | {'ratio':>5}"
    )
    print(head)
    print("-" * len(head))
    for size, strength in rows:
        pick = list(newcomers) if strength == "all" else [strength]
        a = [t.own for s in pick for t in res.trials[(size, False, s)]]
        r = [t.own for s in pick for t in res.trials[(size, True, s)]]
        am, rm = statistics.median(a), statistics.median(r)
        print(
            f"{size:5} {strength:8} | {am:9.1f} {p90(a):4.0f} | {rm:10.1f} {p90(r):4.0f} | "
            f"{ratio(am, rm):>5}"
        )
    print()
    points = [t for t in CHECKPOINTS if t <= args.horizon]
    print("share of trials (all newcomers) within one place of the final rank, t arena games in:")
    head = f"{'seats':>5} {'matchmaking':11} | " + " ".join(f"{f't={t}':>6}" for t in points)
    print(head)
    print("-" * len(head))
    for size in SIZES:
        for randomly in (False, True):
            got = [t for s in newcomers for t in res.trials[(size, randomly, s)]]
            shares = [sum(t.near[i] for t in got) / len(got) for i in range(len(points))]
            way = "random" if randomly else "arena"
            print(f"{size:5} {way:11} | " + " ".join(f"{x:6.2f}" for x in shares))
    print()
    print(
        f"spread: max / min games per bot in each window of {WINDOW} games ({WINDOW} s of "
        f"arena time, one game a second:\n  an hour's caps scaled down {3600 // WINDOW}x); "
        f"median and max over the windows of every trial"
    )
    head = (
        f"{'seats':>5} {'windows':30} | {'arena median':>12} {'max':>6} | "
        f"{'random median':>13} {'max':>6}"
    )
    print(head)
    print("-" * len(head))
    periods = (
        ("warm-up", f"warm-up, {len(kinds)} bots"),
        ("catch-up", f"first {CATCH_UP * WINDOW} games after joining"),
        ("after", f"then to game {args.horizon // WINDOW * WINDOW} after joining"),
    )
    for size in SIZES:
        for key, label in periods:
            a, r = res.spread.get((size, False, key)), res.spread.get((size, True, key))
            if not a or not r:
                continue
            print(
                f"{size:5} {label:30} | {fmt(statistics.median(a)):>12} {fmt(max(a)):>6} | "
                f"{fmt(statistics.median(r)):>13} {fmt(max(r)):>6}"
            )
    print()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(
        f"{res.games:,} arena games in {res.cpu:.1f} s CPU ({res.games / res.cpu:,.0f}/s); "
        f"total CPU {cpu:.1f} s, wall {wall:.1f} s; load average {load_before[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after"
    )
    holds = all(rm and am / rm <= GOAL for _, am, rm in verdicts)
    said = ", ".join(f"{s} seats {ratio(am, rm)}" for s, am, rm in verdicts)
    print(
        f"goal: a newcomer settles in at most half the games random matchmaking needs "
        f"(ratio of medians over all newcomers <= {GOAL}): {'HOLDS' if holds else 'FAILS'} "
        f"({said})"
    )
    if args.part == "all":
        print()
        return arena_scale.main(["--quick"] if args.quick else [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
