"""The referee's CPU per decision in steady state, between real bot processes.

    python bench/bench_decision.py [--games 4] [--repeat 5] [--players 4] [--no-monitor]

Starts `--players` copies of `bench/fast_bot.py` (legal move 0, parses only the
request id) under their keepers, handshakes them once, then plays `--games`
seeded games of `standard` (double-12, 13 rounds) over the same connections with
`referee.game.match.Game` and a `LogWriter` (the full log, as `referee play` writes it),
timing only `Game.play` and the log: start-up, handshakes and stopping are left
out. Each repetition prints the referee's CPU (`time.process_time`) and wall time
per decision; the last line gives min, median and max.

For A/B comparisons run it with `PYTHONPATH` naming another checkout's tree,
alternating; for instruction counts run it under `valgrind --tool=callgrind` with
`--no-monitor` (the loop-lag monitor wakes by the wall clock, which valgrind
slows), and subtract a run of one game from a run of two (bench/README.md, issue 18).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

from protocol import messages as m
from referee.bots.process import BotProcess, BotSpec, start_bot
from referee.bots.session import handshake
from referee.game import lag
from referee.game.match import Game, Seat
from referee.logs.gamelog import LogBot, LogWriter, make_header
from referee.rules import preset

HERE = Path(__file__).resolve().parent
CLOCK = m.TimeControl(move_ms=5000, bank_ms=60000)
KEY = bytes(16)


async def play(
    procs: list[BotProcess], games: int, first_seed: int, log_dir: Path
) -> tuple[int, float, float]:
    """Decisions, CPU seconds and wall seconds of `games` seeded games."""
    players = len(procs)
    rules = preset("standard", players=players)
    decisions = 0
    cpu = wall = 0.0
    for seed in range(first_seed, first_seed + games):
        header = make_header(
            game=f"bench-{seed}",
            rules=rules,
            seed=seed,
            bots=[LogBot(seat=i, name=f"fast{i}", command="fast_bot.py") for i in range(players)],
            time=CLOCK,
            policy="forfeit",
            max_faults=3,
            bot_seed_key=KEY,
        )
        seats = [
            Seat(name=f"fast{i}", connection=p.connection, diagnose=p.diagnose)
            for i, p in enumerate(procs)
        ]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        writer = LogWriter(log_dir / f"bench-{seed}.jsonl", header)
        game = Game(
            seats,
            rules,
            seed,
            game_id=f"bench-{seed}",
            time=CLOCK,
            recorder=writer,
            bot_seed_key=KEY,
        )
        result = await game.play()
        writer.finish(result)
        cpu += time.process_time() - cpu0
        wall += time.perf_counter() - wall0
        assert not any(result.forfeited), result.faults
        decisions += result.decisions
    return decisions, cpu, wall


async def main_async(args: argparse.Namespace) -> None:
    if not args.no_monitor:
        lag.ensure_running()
    spec = BotSpec("fast", (sys.executable, str(HERE / "fast_bot.py")))
    procs = [await start_bot(spec) for _ in range(args.players)]
    cpus: list[float] = []
    walls: list[float] = []
    async with trio.open_nursery() as nursery:
        for p in procs:
            nursery.start_soon(p.connection.writer)
            nursery.start_soon(p.watch)
            nursery.start_soon(p.drain_stderr)
        hello = m.Hello(
            referee="bench",
            players=args.players,
            rules=m.RulesInfo(**preset("standard", players=args.players).to_dict()),
            time=CLOCK,
        )
        for p in procs:
            await handshake(p.connection, hello, 30)
        with tempfile.TemporaryDirectory() as tmp:
            if args.warmup:
                await play(procs, 1, 1000, Path(tmp))
            for rep in range(args.repeat):
                n, cpu, wall = await play(procs, args.games, 0, Path(tmp))
                cpus.append(cpu / n * 1e6)
                walls.append(wall / n * 1e6)
                print(
                    f"run {rep + 1}: {n} decisions, CPU {cpus[-1]:.1f} µs/decision, "
                    f"wall {walls[-1]:.1f} µs/decision",
                    flush=True,
                )
        for p in procs:
            p.connection.send(m.Bye(reason="done"))
            await p.connection.flush()
        async with trio.open_nursery() as stoppers:
            for p in procs:
                stoppers.start_soon(p.stop)
        nursery.cancel_scope.cancel()
    if len(cpus) > 1:
        print(
            f"CPU µs/decision min {min(cpus):.1f} median {statistics.median(cpus):.1f} "
            f"max {max(cpus):.1f}; wall min {min(walls):.1f} median "
            f"{statistics.median(walls):.1f} max {max(walls):.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="seeded games per repetition")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--no-monitor", action="store_true", help="no loop-lag monitor")
    parser.add_argument("--no-warmup", dest="warmup", action="store_false")
    trio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
