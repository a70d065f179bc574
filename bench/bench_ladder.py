"""The baseline ladder, random < greedy < plan < search, measured two ways.

    python bench/bench_ladder.py rounds [--deals 10] [--first-deal N] [--worlds 16] [--seats 2 4]
    python bench/bench_ladder.py match  [--budget-ms 100] [--jobs 2] [--seats 2 4]
    python bench/bench_ladder.py latency [--seats 2 4 6 8] [--games 1]

`rounds` plays in-process games on duplicate deals (every deal once with NEW in
each seat, BASE in the others; the same deals for every pair) and prints, per pair
and table size, the rounds NEW won against BASE (at 2 seats: fewer points than its
opponent in that round; at 4: fewer than the mean of the three others), with a 95%
interval, and each side's mean points per game. The search plays a fixed number of
worlds per decision (`--worlds`; about what 100 ms buys on the machine in
bench/README.md), so the figures do not depend on the machine's load.

`match` runs `referee match NEW BASE` for each rung with real bot processes under
the project's default SPRT bounds (elo0=0, elo1=5, alpha=beta=0.05), at 2 seats
and at 4 (BASE's bot as the field in the other three seats), and prints the verdict
and the games it took; the search thinks `--budget-ms` a move (its own clock), so
a match stays within minutes.

`latency` times the search bot's own decisions (default settings, move_ms 1000,
against greedy) at each table size: the think time it takes from the clock.

The reference for the first two is the rung below on the same deals: each figure is NEW
against BASE in one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _machine import cpu_model  # noqa: E402

from protocol import messages as m  # noqa: E402
from protocol.bot import Game  # noqa: E402
from referee.botkit import plan  # noqa: E402
from referee.botkit.knowledge import Knowledge  # noqa: E402
from referee.botkit.search import search  # noqa: E402
from referee.game import wire  # noqa: E402
from referee.rules import Move, Rules, State, apply, legal_moves, new_game, preset  # noqa: E402

PAIRS = [("greedy", "random"), ("plan", "greedy"), ("search", "plan"), ("search", "greedy")]
BOTS = {
    "random": "sample_bots/random_bot.py",
    "greedy": "sample_bots/greedy_bot.py",
    "plan": "sample_bots/plan_bot.py",
    "search": "sample_bots/search_bot.py",
}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "sample_bots" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


Chooser = Callable[[State, int, list[Knowledge], random.Random, Rules], Move]


def chooser(kind: str, worlds: int) -> Chooser:
    """A player of one kind, in-process."""
    greedy = _load("greedy_bot")
    requests = [0]

    def by_turn(state: State, pick: Callable[[m.Turn], int]) -> Move:
        requests[0] += 1
        turn = wire.turn_request(state, requests[0], 1000, 30000)
        return legal_moves(state)[pick(turn)]

    def choose(
        state: State, seat: int, ks: list[Knowledge], rng: random.Random, rules: Rules
    ) -> Move:
        if kind == "random":
            return rng.choice(legal_moves(state))
        if kind == "greedy":
            return by_turn(state, lambda t: int(greedy.choose(t, None)))
        if kind == "plan":
            return by_turn(state, lambda t: plan.choose(t, rules))
        found = search(ks[seat], legal_moves(state), rng, deadline=math.inf, max_worlds=worlds)
        if found.worlds == 0 and len(set(legal_moves(state))) > 1:
            return by_turn(state, lambda t: plan.choose(t, rules))
        return found.move

    return choose


def play(rules: Rules, seed: int, players: list[Chooser]) -> State:
    """One whole game; every seat keeps its knowledge of the round for the search."""
    state = new_game(rules, seed)
    rng = random.Random(f"ladder/{seed}")
    ks = [Knowledge.at_start(state, s) for s in range(rules.players)]
    while state.outcome is None:
        seat = state.to_move
        move = players[seat](state, seat, ks, rng, rules)
        after = apply(state, move)
        if after.round_index != state.round_index:
            if after.outcome is None:
                ks = [Knowledge.at_start(after, s) for s in range(rules.players)]
        else:
            for k in ks:
                k.record(state, move, after)
        state = after
    return state


def interval(wins: float, n: int) -> tuple[float, float, float]:
    """A share and its 95% normal interval."""
    p = wins / n
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    return p, p - half, p + half


def rounds(
    deals: int, worlds: int, seats: list[int], only: list[str] | None, first: int = 29_000
) -> None:
    for n in seats:
        rules = preset("standard", players=n)
        for new, base in PAIRS:
            if only and f"{new}:{base}" not in only:
                continue
            started = time.perf_counter()
            won = lost = tied = 0
            new_points = base_points = 0.0
            games = 0
            for deal in range(deals):
                for tested in range(n):
                    kinds = [base] * n
                    kinds[tested] = new
                    players = [chooser(k, worlds) for k in kinds]
                    final = play(rules, first + deal, players)
                    for r in final.results:
                        mine = r.scores[tested]
                        others = sum(r.scores[s] for s in range(n) if s != tested) / (n - 1)
                        won += mine < others
                        lost += mine > others
                        tied += mine == others
                    assert final.outcome is not None
                    new_points += final.outcome.scores[tested]
                    base_points += sum(final.outcome.scores[s] for s in range(n) if s != tested) / (
                        n - 1
                    )
                    games += 1
            total = won + lost + tied
            share, low, high = interval(won + tied / 2, total)
            print(
                f"{n} seats  {new:>6} vs {base:<6} rounds won {won}/{total} (ties {tied}): "
                f"{share:.3f} [{low:.3f}, {high:.3f}]  points/game {new} {new_points / games:.1f}"
                f" {base} {base_points / games:.1f}  ({games} games, "
                f"{time.perf_counter() - started:.0f} s)",
                flush=True,
            )


def match(
    budget_ms: int, jobs: int, seats: list[int], max_games: int, only: list[str] | None
) -> None:
    python = sys.executable
    referee = str(Path(python).with_name("referee"))

    def command(kind: str) -> str:
        extra = f" --budget-ms {budget_ms}" if kind == "search" else ""
        return f"{python} {ROOT / BOTS[kind]}{extra}"

    for n in seats:
        for new, base in PAIRS[:3]:
            if only and f"{new}:{base}" not in only:
                continue
            argv = [
                referee,
                "match",
                f"{new}={command(new)}",
                f"{base}={command(base)}",
                "--table",
                str(n),
                "--jobs",
                str(jobs),
                "--max-games",
                str(max_games),
                "--json",
            ]
            if n > 2:
                argv += ["--field", command(base)]
            started = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            try:
                result = json.loads(done.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                print(f"{n} seats {new} vs {base}: match failed: {done.stderr[-500:]}")
                continue
            print(
                f"{n} seats  {new:>6} vs {base:<6} verdict {result['verdict'] or 'none'} "
                f"(by {result.get('decided_by')}) after {result['games']} games, "
                f"pairs W/D/L {result['wins']}/{result['draws']}/{result['losses']}, "
                f"Elo {result['elo']:+.0f} ± {result['elo_ci95']:.0f}  "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )


def latency(seats: list[int], games: int) -> None:
    """The search bot's own think time per decision, as `search_bot.py` decides it
    from a request with move_ms = 1000 (bank 30 s): min, median and max, by table."""
    import statistics

    search_bot = _load("search_bot")
    for n in seats:
        rules = preset("standard", players=n)
        times: list[float] = []
        for g in range(games):
            state = new_game(rules, 31_000 + g)
            bot = search_bot.SearchBot(search_bot.CAP_MS, None)
            start = m.GameStart(
                game=f"game-{g}",
                seat=0,
                players=n,
                names=[f"bot{i}" for i in range(n)],
                rules=wire.rules_info(rules),
                time=m.TimeControl(),
                seed=g,
                rounds=len(rules.engines),
            )
            game = Game(start=start, rng=random.Random(g))
            game.events.append(wire.round_start(state, 0))
            request = 0
            greedy = _load("greedy_bot")
            while state.outcome is None:
                moves = legal_moves(state)
                request += 1
                turn = wire.turn_request(state, request, 1000, 30000)
                if state.to_move == 0:
                    began = time.perf_counter()
                    move = moves[bot.choose(turn, game)]
                    if len(set(moves)) > 1:
                        times.append((time.perf_counter() - began) * 1000)
                else:
                    move = moves[greedy.choose(turn, None)]
                after = apply(state, move)
                for event in wire.events(state, move, after):
                    message = event.for_seat(0)
                    if message is not None:
                        game.events.append(message)
                if after.round_index != state.round_index and after.outcome is None:
                    game.events.append(wire.round_start(after, 0))
                state = after
        print(
            f"{n} seats: {len(times)} searched decisions at move_ms 1000: think time "
            f"min {min(times):.0f} ms, median {statistics.median(times):.0f} ms, "
            f"max {max(times):.0f} ms (the clock allows 1000 + 50 grace)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=["rounds", "match", "latency"])
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument(
        "--first-deal", type=int, default=29_000, help="rounds: the first deal's seed"
    )
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--budget-ms", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-games", type=int, default=400)
    parser.add_argument("--only", nargs="+", help="pairs to play, as NEW:BASE (e.g. search:plan)")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"machine: {cpu_model()}, load average {' '.join(load)}", flush=True)
    if args.part == "rounds":
        rounds(args.deals, args.worlds, args.seats, args.only, args.first_deal)
    elif args.part == "latency":
        latency(args.seats, args.games)
    else:
        match(args.budget_ms, args.jobs, args.seats, args.max_games, args.only)


if __name__ == "__main__":
    main()
