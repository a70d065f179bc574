"""Event formats by simulation (issue 45, part 5): how often the strongest bot wins, and
what it costs in games, for Swiss-grouped tables, group knockout, random tables and a
Swiss with a final, at tables of 4 and of 6.

Nothing is played: each event is run as `referee event` runs it (`Event.swiss`,
`Event.knockout`, `Event.single` and `_add_games` of referee/event/run.py, by the
functions below, which follow them step by step), with the real seating and ranking
functions of `referee.event.pairing`, and each table's games are drawn from a model of
bots of known strength:

- **Strengths**: N entrants evenly spaced from 0 (the weakest) to `--spread` (the
  strongest); the entrants' seeding (the file's order, which breaks the last ties and
  deals the knockout's snake) is a seeded shuffle, the same for every format of one
  event number.
- **A game**: the bot in seat position p has the performance s + D[p] + e, the ranks
  of the game go by performance (highest first) and its scores (pips) are
  round(PIPS × (winner's performance - own)), so the winner scores 0 as the bot that
  goes out does; equal pips share a rank, as in a real game.
  - D is the **deal's luck**: one normal vector per deal, one value per seat position
    (sd `--deal-noise`). A table plays each deal under every cyclic rotation of its
    seats (duplicate, spec/EVENTS.md), and in rotation r the bot in position p gets
    D[p]: over the rotations every bot gets every position's luck once, so rotating
    cancels the deal's luck as duplicate deals do. Every table of a round plays the
    same deals (one vector per deal and table size), as the real round's board.
  - e is the **play's luck**: normal, sd `--play-noise`, drawn for each bot in each
    game, independent of everything else.
  With the defaults (spread 1.5, both noises sd 1: a game's luck has sd 1.41, about
  the whole field's spread) the strongest of 24 wins a single game of 4 against
  three others drawn from the field about 40% of the time, and the strongest of 36
  a game of 6 about 29% (the run prints the figures it measures).
- **Formats** (each table plays `--deals` deals, one a round by default; points
  "beaten" as the event's default):
  - `swiss R`: R rounds of Swiss-grouped tables (`swiss_round`), ranked as
    `Event.swiss` ranks (score, opposition, seed).
  - `random R`: the baseline a Swiss is measured against, "a round robin of the same
    game count". A full round robin (every combination of 4 of 24 entrants: 10,626
    tables) is far longer than any Swiss, so here each of R rounds seats the entrants
    at random tables of the same sizes as the Swiss's (the same game count), with no
    pairing by score; the games are scored and ranked as a round-robin stage is
    (`_add_games`: mean placement points over the games, then `knockout_key`).
  - `swiss R + final`: a Swiss stage, then a final of its top `table` entries seeded
    in that order (one table, `--final-deals` deals), ranked as `Event.single` ranks a
    final; the event's ranking is the final's, then the Swiss's below the cut.
  - `knockout`: `Event.knockout`, by `eliminate = 1` and by `strikes = 2`.
- **Figures**, over `--events` events of each format: P(the strongest ranks first)
  with its 95% Wilson interval, P(it ranks in the top 3), its mean rank, Spearman's
  correlation of the event's ranking with the true strengths (the mean over events),
  the mean number of games, of rounds, and of games an entrant sat in. 1,000 events a
  format by default (about 50 s of CPU in all on the machine of bench/README.md):
  P(first) is then known to about ±0.03, which the printed interval states.

    python bench/bench_events.py                      # the default run (about a minute)
    python bench/bench_events.py --quick              # 200 events a format, to try it
    python bench/bench_events.py --seats 4 --entrants 16 --swiss-rounds 3 5 --seed 1
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from referee.event.pairing import (  # noqa: E402
    GameResult,
    PointsRule,
    Running,
    TableResult,
    add_bye,
    add_table,
    choose_byes,
    final_order,
    group_sizes,
    knockout_key,
    knockout_out,
    snake_groups,
    swiss_round,
    table_sizes,
)
from referee.event.run import _add_games  # noqa: E402

PIPS = 20.0  # pips per unit of performance behind the game's winner
MAX_ROUNDS = 1000  # a knockout that has not ended by then is a bug, not an event
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Model:
    """The luck of a game: the deal's (per seat position, cancelled by rotation) and the
    play's (per bot and game)."""

    deal_noise: float = 1.0
    play_noise: float = 1.0


@dataclass(frozen=True)
class Format:
    """One way to run the event."""

    kind: str  # "swiss", "random", "swiss+final", "knockout"
    rounds: int = 0  # swiss, random, swiss+final
    eliminate: int = 1  # knockout
    strikes: int = 0  # knockout

    @property
    def name(self) -> str:
        if self.kind == "knockout" and self.strikes:
            return f"knockout, strikes {self.strikes}"
        if self.kind == "knockout":
            return f"knockout, eliminate {self.eliminate}"
        if self.kind == "swiss+final":
            return f"swiss {self.rounds} + final"
        return f"{self.kind} {self.rounds}"


@dataclass
class Outcome:
    """One event as run: its ranking (best first), its games, and every round's seating
    (tables and byes, the stages one after the other)."""

    ranking: list[str]
    games: int = 0
    seat_games: int = 0  # games summed over the entrants (a game of k seats counts k)
    seating: list[tuple[list[tuple[str, ...]], list[str]]] = field(default_factory=list)


class Tables:
    """The games of one event, drawn from the model."""

    def __init__(
        self, strength: Mapping[str, float], model: Model, rng: random.Random, deals: int
    ) -> None:
        self.strength = strength
        self.model = model
        self.rng = rng
        self.deals = deals
        self.boards: dict[int, list[list[float]]] = {}
        self.outcome = Outcome([])

    def new_round(self, tables: Sequence[tuple[str, ...]], byes: Sequence[str]) -> None:
        """A new round: new deals (shared by its tables of one size)."""
        self.boards = {}
        self.outcome.seating.append((list(tables), list(byes)))

    def play(self, seats: tuple[str, ...], deals: int | None = None) -> TableResult:
        """A table's games: each deal of the round under every rotation of its seats."""
        k = len(seats)
        gauss = self.rng.gauss
        boards = self.boards.get(k)
        if boards is None:
            boards = [
                [gauss(0.0, self.model.deal_noise) for _ in range(k)]
                for _ in range(self.deals if deals is None else deals)
            ]
            self.boards[k] = boards
        games = []
        play = self.model.play_noise
        for board in boards:
            for r in range(k):
                rotated = seats[r:] + seats[:r]
                perf = [
                    self.strength[b] + board[p] + gauss(0.0, play) for p, b in enumerate(rotated)
                ]
                best = max(perf)
                scores = [round(PIPS * (best - x)) for x in perf]
                ranks = [1 + sum(o < s for o in scores) for s in scores]
                games.append(GameResult(rotated, tuple(ranks), tuple(scores)))
        self.outcome.games += len(games)
        self.outcome.seat_games += len(games) * k
        return TableResult(seats, tuple(games))


def fresh(entries: Sequence[str]) -> dict[str, Running]:
    """`Event._running`: a stage's totals, the entries seeded in their order."""
    return {n: Running(n, seed=i) for i, n in enumerate(entries)}


def swiss(
    entries: Sequence[str], rounds: int, tables: Tables, table: int, rule: PointsRule
) -> list[str]:
    """`Event.swiss`: the stage's ranking."""
    running = fresh(entries)
    for _ in range(rounds):
        seated, byes = swiss_round(running, table, "smaller")
        if not seated:
            break
        tables.new_round(seated, byes)
        for t in [tables.play(s) for s in seated]:
            add_table(running, t, rule, table)
        for n in byes:
            add_bye(running, n, rule, table)
    ranked = sorted(
        running.values(), key=lambda r: (r.withdrawn, -r.score, -r.opposition(running), r.seed)
    )
    return [r.name for r in ranked]


def random_tables(
    entries: Sequence[str],
    rounds: int,
    tables: Tables,
    table: int,
    rule: PointsRule,
    rng: random.Random,
) -> list[str]:
    """The baseline: `rounds` rounds of random tables of the Swiss's sizes, scored and
    ranked as a round-robin stage (`Event.single` with `_add_games`)."""
    running = fresh(entries)
    seeds = {n: r.seed for n, r in running.items()}
    played: list[GameResult] = []
    for _ in range(rounds):
        order = list(entries)
        rng.shuffle(order)
        sizes, count = table_sizes(len(order), table, "smaller")
        byes = choose_byes(order, count, running) if count else []
        for n in byes:
            running[n].byes += 1  # only to spread the byes: a round robin scores games
        left = [n for n in order if n not in byes]
        seated = []
        for size in sizes:
            seated.append(tuple(left[:size]))
            left = left[size:]
        tables.new_round(seated, byes)
        for s in seated:
            played += tables.play(s).games
    _add_games(running, played, rule, table)
    scores = {n: running[n].score for n in running}
    return sorted(
        running, key=lambda n: (running[n].withdrawn, knockout_key(n, scores, running, seeds))
    )


def final(
    entries: Sequence[str], tables: Tables, table: int, rule: PointsRule, deals: int
) -> list[str]:
    """`Event.single` for a final: one table of every entry."""
    running = fresh(entries)
    seeds = {n: r.seed for n, r in running.items()}
    seats = tuple(entries)
    tables.new_round([seats], [])
    add_table(running, tables.play(seats, deals), rule, table)
    scores = {n: running[n].score for n in running}
    return sorted(
        running, key=lambda n: (running[n].withdrawn, knockout_key(n, scores, running, seeds))
    )


def knockout(
    entries: Sequence[str],
    tables: Tables,
    table: int,
    rule: PointsRule,
    *,
    eliminate: int,
    strikes: int,
) -> list[str]:
    """`Event.knockout`: the stage's ranking (the final table, then the eliminated, the
    later rounds first)."""
    running = fresh(entries)
    seeds = {n: r.seed for n, r in running.items()}
    alive = list(entries)
    gone: list[list[str]] = []
    while len(alive) > table:
        if len(gone) >= MAX_ROUNDS:
            raise RuntimeError(f"a knockout of {len(entries)} still going after {MAX_ROUNDS}")
        order = sorted(alive, key=lambda n: (running[n].withdrawn, -running[n].score, seeds[n]))
        groups = snake_groups(order, group_sizes(len(order), table))
        tables.new_round(groups, [])
        played = [tables.play(g) for g in groups]
        for t in played:
            add_table(running, t, rule, table)
        out = knockout_out(
            played, running, seeds, rule=rule, full=table, eliminate=eliminate, strikes=strikes
        )
        alive = [n for n in alive if n not in out]
        gone.append(out)
    seats = tuple(alive)
    tables.new_round([seats], [])
    last = tables.play(seats)
    add_table(running, last, rule, table)
    top = final_order(last, running, seeds, rule)
    return top + [n for out in reversed(gone) for n in reversed(out)]


def run_event(
    fmt: Format,
    strength: Mapping[str, float],
    seeding: Sequence[str],
    table: int,
    model: Model,
    rng: random.Random,
    *,
    deals: int = 1,
    final_deals: int = 1,
    rule: PointsRule = "beaten",
) -> Outcome:
    """One event of `fmt` for the entrants in `seeding` (the top seed first)."""
    tables = Tables(strength, model, rng, deals)
    if fmt.kind == "swiss":
        ranking = swiss(seeding, fmt.rounds, tables, table, rule)
    elif fmt.kind == "random":
        ranking = random_tables(seeding, fmt.rounds, tables, table, rule, rng)
    elif fmt.kind == "swiss+final":
        first = swiss(seeding, fmt.rounds, tables, table, rule)
        ranking = final(first[:table], tables, table, rule, final_deals) + first[table:]
    elif fmt.kind == "knockout":
        ranking = knockout(
            seeding, tables, table, rule, eliminate=fmt.eliminate, strikes=fmt.strikes
        )
    else:
        raise ValueError(f"unknown format {fmt.kind!r}")
    tables.outcome.ranking = ranking
    return tables.outcome


def even_strengths(n: int, spread: float) -> dict[str, float]:
    """N entrants from the strongest (e00, `spread`) to the weakest (0), evenly spaced."""
    return {f"e{i:02d}": spread * (n - 1 - i) / max(1, n - 1) for i in range(n)}


def spearman(ranking: Sequence[str], strength: Mapping[str, float]) -> float:
    """Spearman's correlation of `ranking` (best first) with the strengths (distinct)."""
    n = len(ranking)
    if n < 2:
        return 1.0
    true = {b: i for i, b in enumerate(sorted(strength, key=lambda b: -strength[b]))}
    d2 = sum((i - true[b]) ** 2 for i, b in enumerate(ranking))
    return 1 - 6 * d2 / (n * (n * n - 1))


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Row:
    """One format's figures over many events."""

    fmt: Format
    events: int = 0
    wins: int = 0
    top3: int = 0
    ranks: list[int] = field(default_factory=list)
    rhos: list[float] = field(default_factory=list)
    games: list[int] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)
    per_entrant: list[float] = field(default_factory=list)
    cpu: float = 0.0

    def add(self, outcome: Outcome, strength: Mapping[str, float]) -> None:
        best = max(strength, key=lambda b: strength[b])
        rank = outcome.ranking.index(best) + 1
        self.events += 1
        self.wins += rank == 1
        self.top3 += rank <= 3
        self.ranks.append(rank)
        self.rhos.append(spearman(outcome.ranking, strength))
        self.games.append(outcome.games)
        self.rounds.append(len(outcome.seating))
        self.per_entrant.append(outcome.seat_games / len(strength))


def measure(
    formats: Sequence[Format],
    strength: Mapping[str, float],
    table: int,
    model: Model,
    events: int,
    seed: int,
    *,
    deals: int = 1,
    final_deals: int = 1,
    rule: PointsRule = "beaten",
) -> list[Row]:
    """Every format over `events` seeded events. Event i seats the same shuffled seeding
    in every format (the same draw of seeds), each format its own games."""
    names = list(strength)
    rows = [Row(f) for f in formats]
    for row in rows:
        began = time.process_time()
        for i in range(events):
            seeding = list(names)
            random.Random(f"seeding/{seed}/{table}/{len(names)}/{i}").shuffle(seeding)
            rng = random.Random(f"games/{seed}/{table}/{len(names)}/{row.fmt.name}/{i}")
            outcome = run_event(
                row.fmt, strength, seeding, table, model, rng,
                deals=deals, final_deals=final_deals, rule=rule,
            )  # fmt: skip
            row.add(outcome, strength)
        row.cpu = time.process_time() - began
    return rows


def single_game(
    strength: Mapping[str, float], table: int, model: Model, games: int, seed: int
) -> float:
    """How often the strongest finishes first in one game at a table of `table`, the
    other seats drawn at random from the field, in a random seat position."""
    best = max(strength, key=lambda b: strength[b])
    field_ = [b for b in strength if b != best]
    rng = random.Random(f"single/{seed}/{table}/{len(strength)}")
    first = 0
    for _ in range(games):
        seats = [best, *rng.sample(field_, table - 1)]
        rng.shuffle(seats)
        perf = [
            strength[b] + rng.gauss(0.0, model.deal_noise) + rng.gauss(0.0, model.play_noise)
            for b in seats
        ]
        first += seats[perf.index(max(perf))] == best
    return first / games


def formats_for(swiss_rounds: Sequence[int], eliminate: int, strikes: int) -> list[Format]:
    out: list[Format] = []
    for r in swiss_rounds:
        out += [Format("swiss", rounds=r), Format("random", rounds=r)]
    out.append(Format("swiss+final", rounds=swiss_rounds[0]))
    out.append(Format("knockout", eliminate=eliminate))
    out.append(Format("knockout", strikes=strikes))
    return out


def print_rows(rows: Sequence[Row], entrants: int) -> None:
    print(
        "| format | games | rounds | games an entrant | P(strongest first) [95%] | P(top 3)"
        " | mean rank | Spearman | CPU s |"
    )
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        low, high = wilson(row.wins, row.events)
        print(
            f"| {row.fmt.name} | {statistics.fmean(row.games):.1f}"
            f" | {statistics.fmean(row.rounds):.1f} | {statistics.fmean(row.per_entrant):.1f}"
            f" | {row.wins / row.events:.3f} [{low:.3f}, {high:.3f}]"
            f" | {row.top3 / row.events:.3f} | {statistics.fmean(row.ranks):.2f}"
            f" | {statistics.fmean(row.rhos):.3f} | {row.cpu:.1f} |"
        )
    print(f"(ranks out of {entrants}; figures over {rows[0].events} events a format)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="events a format (1000)")
    parser.add_argument("--quick", action="store_true", help="200 events a format")
    parser.add_argument("--seed", type=int, default=0, help="other seedings and games")
    parser.add_argument("--seats", type=int, nargs="+", default=[4, 6], help="table sizes")
    parser.add_argument(
        "--entrants", type=int, nargs="+", default=[24, 36], help="entrants, one per --seats"
    )
    parser.add_argument(
        "--swiss-rounds", type=int, nargs="+", default=[4, 6], help="Swiss lengths (4 6)"
    )
    parser.add_argument("--eliminate", type=int, default=1, help="knockout's eliminate (1)")
    parser.add_argument("--strikes", type=int, default=2, help="knockout's strikes (2)")
    parser.add_argument("--deals", type=int, default=1, help="deals a table a round (1)")
    parser.add_argument("--final-deals", type=int, default=1, help="deals of a final (1)")
    parser.add_argument("--spread", type=float, default=1.5, help="strongest - weakest (1.5)")
    parser.add_argument("--deal-noise", type=float, default=1.0, help="deal's luck, sd (1)")
    parser.add_argument("--play-noise", type=float, default=1.0, help="play's luck, sd (1)")
    args = parser.parse_args()
    if len(args.seats) != len(args.entrants):
        parser.error("--entrants: one number for each of --seats")
    if min(args.seats) < 2 or any(n <= s for s, n in zip(args.seats, args.entrants, strict=True)):
        parser.error("--seats at least 2, and more entrants than seats")
    events = 200 if args.quick else args.events
    model = Model(args.deal_noise, args.play_noise)
    formats = formats_for(args.swiss_rounds, args.eliminate, args.strikes)
    from _machine import cpu_model

    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"load:    {Path('/proc/loadavg').read_text().strip()} (/proc/loadavg, at the start)")
    print(
        f"model:   strengths evenly spaced 0 .. {args.spread:g}, deal noise sd"
        f" {args.deal_noise:g} (a seat position's, cancelled by rotation), play noise sd"
        f" {args.play_noise:g}; {args.deals} deal(s) a table a round, final {args.final_deals};"
        f" seed {args.seed}"
    )
    began, cpu = time.perf_counter(), time.process_time()
    for table, n in zip(args.seats, args.entrants, strict=True):
        strength = even_strengths(n, args.spread)
        p1 = single_game(strength, table, model, 20000, args.seed)
        print()
        print(
            f"## {n} entrants at tables of {table}: the strongest wins one game against"
            f" {table - 1} others of the field {p1:.1%} of the time (20,000 games)"
        )
        print()
        print_rows(
            measure(
                formats, strength, table, model, events, args.seed,
                deals=args.deals, final_deals=args.final_deals,
            ),
            n,
        )  # fmt: skip
    print()
    print(
        f"wall {time.perf_counter() - began:.1f} s, CPU {time.process_time() - cpu:.1f} s;"
        f" load at the end {Path('/proc/loadavg').read_text().strip()}"
    )


if __name__ == "__main__":
    main()
