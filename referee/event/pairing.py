"""How an event seats its entries and ranks them: placement points, Swiss-grouped tables,
knockout groups and their eliminations. Pure functions of the results so far, so a
resumed event seats every round as a straight run does (spec/EVENTS.md states every
rule; the functions here are that text in code).

Entries are named by strings; `seed` is an entry's position in the stage's seeding
(0 is the top seed: the file's order in the first stage, the previous stage's ranking
after it). Nothing here draws lots: every tie is broken by a stated rule, the seed
last.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

MIN_SEATS = 2  # the rules' smallest game

# What a game's placement is worth (`points`): "beaten", one point per entry finished
# behind (a tie with another entry is half a point), scaled at a smaller table so that
# first is worth `table - 1` and last 0 at every table; "wins", 1 for first place
# (shared first places share it). An explicit list gives each place's points at a full
# table, a tie sharing the mean of the places it spans.
PointsRule = str | tuple[float, ...]
POINTS = ("beaten", "wins")


@dataclass(frozen=True)
class GameResult:
    """One game of a table: its seats and each seat's rank (1 best; a tie shares the
    rank) and score (its pips: lower is better)."""

    seats: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[int, ...]

    def last(self) -> set[str]:
        """The seats that finished last (every one of them, on a tie)."""
        worst = max(self.ranks)
        return {s for s, r in zip(self.seats, self.ranks, strict=True) if r == worst}


@dataclass(frozen=True)
class TableResult:
    """A table of a round: who sat there and the games it played (a duplicate board
    under every rotation of its seats)."""

    seats: tuple[str, ...]
    games: tuple[GameResult, ...]


def game_points(ranks: Sequence[int], rule: PointsRule, full: int) -> list[float]:
    """Each seat's placement points for one game with `ranks`, at a table of `len(ranks)`
    seats in an event of `full`-seat tables."""
    k = len(ranks)
    if isinstance(rule, tuple):
        if len(rule) != k:
            raise ValueError(f"a points list of {len(rule)} places for a table of {k}")
        out = []
        for r in ranks:
            tied = sum(1 for x in ranks if x == r)
            out.append(sum(rule[r - 1 : r - 1 + tied]) / tied)
        return out
    if rule == "wins":
        firsts = sum(1 for r in ranks if r == 1)
        return [1 / firsts if r == 1 else 0.0 for r in ranks]
    if rule != "beaten":
        raise ValueError(f"unknown points rule {rule!r}")
    scale = (full - 1) / (k - 1) if k > 1 else 0.0
    return [
        scale * (sum(1 for x in ranks if x > r) + 0.5 * (sum(1 for x in ranks if x == r) - 1))
        for r in ranks
    ]


def bye_points(rule: PointsRule, full: int) -> float:
    """What a bye is worth in a round: an average game's points at a full table."""
    if isinstance(rule, tuple):
        return sum(rule) / len(rule)
    if rule == "wins":
        return 1 / full
    return (full - 1) / 2


def table_scores(table: TableResult, rule: PointsRule, full: int) -> dict[str, float]:
    """Each seat's round score: its mean placement points over the table's games (0
    for a table that played none)."""
    totals = dict.fromkeys(table.seats, 0.0)
    for game in table.games:
        for seat, pts in zip(game.seats, game_points(game.ranks, rule, full), strict=True):
            totals[seat] += pts
    n = len(table.games)
    return {s: (t / n if n else 0.0) for s, t in totals.items()}


@dataclass
class Running:
    """An entry's totals so far in a stage."""

    name: str
    seed: int
    score: float = 0.0
    rounds: int = 0
    byes: int = 0
    lasts: int = 0  # games finished last (strikes, in a knockout with `strikes`)
    pips: int = 0  # the games' own scores, summed (lower is better)
    games: int = 0
    met: dict[str, int] = field(default_factory=dict)  # opponent -> tables shared
    withdrawn: bool = False  # faulted out: never seated again (spec/EVENTS.md)

    def opposition(self, running: Mapping[str, Running]) -> float:
        """The sum of the running scores of every opponent met, once per table shared."""
        return sum(running[o].score * n for o, n in self.met.items() if o in running)


def add_table(running: dict[str, Running], table: TableResult, rule: PointsRule, full: int) -> None:
    """Count one finished table into the entries' totals."""
    scores = table_scores(table, rule, full)
    for seat in table.seats:
        r = running[seat]
        r.score += scores[seat]
        r.rounds += 1
        for other in table.seats:
            if other != seat:
                r.met[other] = r.met.get(other, 0) + 1
    for game in table.games:
        last = game.last()
        for seat, score in zip(game.seats, game.scores, strict=True):
            r = running[seat]
            r.games += 1
            r.pips += score
            if seat in last and len(game.seats) > 1:
                r.lasts += 1


def add_bye(running: dict[str, Running], name: str, rule: PointsRule, full: int) -> None:
    """Count a bye: an average result (`bye_points`), no opponent, no game."""
    r = running[name]
    r.score += bye_points(rule, full)
    r.rounds += 1
    r.byes += 1


def swiss_order(running: Mapping[str, Running]) -> list[str]:
    """The entries still in, best first: by running score, then by the opposition's
    scores (the Buchholz of chess Swiss events: who had the harder tables), then by
    the seed."""
    active = [r for r in running.values() if not r.withdrawn]
    return [
        r.name for r in sorted(active, key=lambda r: (-r.score, -r.opposition(running), r.seed))
    ]


def table_sizes(n: int, table: int, remainder: str) -> tuple[list[int], int]:
    """The sizes of a round's tables for `n` entries, best tables first, and how many
    entries sit out with a bye. `remainder` "smaller": tables one seat smaller at the
    bottom take up the rest when they can (else byes); "bye": full tables only."""
    if n < MIN_SEATS:
        return [], n
    if n <= table:
        return [n], 0
    full, rest = divmod(n, table)
    if rest == 0:
        return [table] * full, 0
    if remainder == "smaller" and table - 1 >= MIN_SEATS:
        tables = math.ceil(n / table)
        small = tables * table - n
        if small <= tables:
            return [table] * (tables - small) + [table - 1] * small, 0
    return [table] * full, rest


def choose_byes(order: Sequence[str], count: int, running: Mapping[str, Running]) -> list[str]:
    """Who sits out: from the bottom of `order`, the entries with the fewest byes so far
    (nobody has a second bye while another entry has none)."""
    chosen: list[str] = []
    pool = list(reversed(order))
    while len(chosen) < count:
        fewest = min(running[n].byes for n in pool if n not in chosen)
        chosen.append(next(n for n in pool if n not in chosen and running[n].byes == fewest))
    return chosen


def cut_tables(
    order: Sequence[str], sizes: Sequence[int], running: Mapping[str, Running]
) -> list[tuple[str, ...]]:
    """Cut `order` (best first) into tables of `sizes`, avoiding repeat meetings where it
    can: each table starts with the best entry not seated yet and takes, one seat at a
    time, the entry among the next few (twice the table's size) that has met the
    table's entries the fewest times, the better placed on equal counts. An entry is
    never moved further than that window, so score groups stay together."""
    left = list(order)
    tables: list[tuple[str, ...]] = []
    for size in sizes:
        seated = [left.pop(0)]
        while len(seated) < size:
            window = left[: max(2 * size, 1)]
            pick = min(
                range(len(window)),
                key=lambda i: (sum(running[window[i]].met.get(s, 0) for s in seated), i),
            )
            seated.append(left.pop(pick))
        tables.append(tuple(seated))
    return tables


def swiss_round(
    running: Mapping[str, Running], table: int, remainder: str
) -> tuple[list[tuple[str, ...]], list[str]]:
    """A Swiss round's tables (best first) and its byes."""
    order = swiss_order(running)
    sizes, byes = table_sizes(len(order), table, remainder)
    out = choose_byes(order, byes, running) if byes else []
    seated = [n for n in order if n not in out]
    return cut_tables(seated, sizes, running), out


def group_sizes(n: int, table: int) -> list[int]:
    """Knockout groups for `n` entries: as few groups as tables of `table` seats need,
    their sizes differing by at most one (larger groups first)."""
    if n <= table:
        return [n]
    groups = math.ceil(n / table)
    base, extra = divmod(n, groups)
    return [base + 1] * extra + [base] * (groups - extra)


def snake_groups(order: Sequence[str], sizes: Sequence[int]) -> list[tuple[str, ...]]:
    """Deal `order` (best first) into groups of `sizes` as a snake: 1, 2, ..., g, g, ...,
    2, 1, so every group gets a share of the strong and the weak."""
    groups: list[list[str]] = [[] for _ in sizes]
    g, step = 0, 1
    for name in order:
        while len(groups[g]) >= sizes[g]:
            g, step = _snake_next(g, step, len(sizes))
        groups[g].append(name)
        g, step = _snake_next(g, step, len(sizes))
    return [tuple(x) for x in groups]


def _snake_next(g: int, step: int, n: int) -> tuple[int, int]:
    if n == 1:
        return 0, 1
    nxt = g + step
    if 0 <= nxt < n:
        return nxt, step
    return g, -step  # the turn: the end group takes two in a row


def knockout_key(
    name: str, scores: Mapping[str, float], running: Mapping[str, Running], seeds: Mapping[str, int]
) -> tuple[float, int, int, int]:
    """Best first within a group: the round's score, then fewer last places, then fewer
    pips over the event's games, then the better seed (never a draw of lots)."""
    r = running[name]
    return (-scores[name], r.lasts, r.pips, seeds[name])


def knockout_out(
    groups: Sequence[TableResult],
    running: Mapping[str, Running],
    seeds: Mapping[str, int],
    *,
    rule: PointsRule,
    full: int,
    eliminate: int,
    strikes: int,
) -> list[str]:
    """Who leaves after a knockout round (worst first), given each group's games.

    With `strikes`, every entry with that many last places so far; else the lowest
    `eliminate` of each group by `knockout_key`. Never so many that fewer than `full`
    entries stay: then the worst of them leave (by the round's score, scaled to a
    full table, then by `knockout_key`), so the next round is the final table."""
    alive = [n for g in groups for n in g.seats]
    scores: dict[str, float] = {}
    for g in groups:
        scores.update(table_scores(g, rule, full))
    if strikes:
        out = [n for n in alive if running[n].lasts >= strikes or running[n].withdrawn]
    else:
        out = []
        for g in groups:
            ranked = sorted(g.seats, key=lambda n: knockout_key(n, scores, running, seeds))
            withdrawn = [n for n in ranked if running[n].withdrawn]
            bottom = [n for n in reversed(ranked) if n not in withdrawn]
            out += withdrawn + bottom[: max(0, min(eliminate, len(g.seats) - 1) - len(withdrawn))]
    room = len(alive) - min(full, len(alive))

    def worst_first(n: str) -> tuple[bool, float, int, int, int]:
        score, lasts, pips, seed = knockout_key(n, scores, running, seeds)
        return (not running[n].withdrawn, -score, -lasts, -pips, -seed)

    out.sort(key=worst_first)
    return out[:room]


def final_order(
    table: TableResult, running: Mapping[str, Running], seeds: Mapping[str, int], rule: PointsRule
) -> list[str]:
    """A final table's ranking: by its score, then `knockout_key`'s rules."""
    scores = table_scores(table, rule, len(table.seats))
    return sorted(table.seats, key=lambda n: knockout_key(n, scores, running, seeds))
