"""The referee's in-process work per decision, stage by stage, for instruction counts.

    python bench/bench_stages.py STAGES GAMES
    bench/bench_stages.py --count [--tree OTHER-CHECKOUT]   # every stage under callgrind

Replays `bench/bench_decision.py`'s games (`standard`, 4 players, seeds 0, 1, ...;
every seat plays legal move 0) with no bots and no I/O, switching on only the
stages named in STAGES (letters, each on top of the engine, which always runs):

    R build the turn request     C encode it
    V build the events           W encode them (the public form once, each private one)
    S round starts (built and encoded for every seat)
    L the log writer (a decision line each decision, a round end each round)
    D decode the bot's reply     K check it against the position (`move_of`)

It prints the number of decisions played. `--count` runs every cumulative set of
stages under `valgrind --tool=callgrind` for one game and for two, and prints the
instructions per decision of each (two games less one, divided by the second game's
decisions) and what each stage adds: counts that do not move with the machine's
load. What the stages leave out (the pipes, trio's loop, the clocks and lag
monitor, the game loop itself) is the whole referee's count (`bench_decision.py`
under callgrind, bench/README.md) less the last line.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from protocol import decode_from_bot, encode
from protocol import messages as m
from referee.game import wire
from referee.game.match import Decision, settle_gc
from referee.logs.gamelog import LogBot, LogWriter, make_header
from referee.rules import apply, legal_moves, new_game, preset

ROOT = Path(__file__).resolve().parent.parent
CLOCK = m.TimeControl(move_ms=5000, bank_ms=60000)
ORDER = "RCVWSLDK"
NAMES = {
    "": "engine (legal moves, apply)",
    "R": "build the turn request",
    "C": "encode it",
    "V": "build the events",
    "W": "encode the events",
    "S": "round starts",
    "L": "the log",
    "D": "decode the reply",
    "K": "check the reply",
}


def play(stages: str, games: int) -> int:
    """Play `games` seeded games with `stages` on; the number of decisions."""
    rules = preset("standard", players=4)
    settle_gc()
    folder = Path(tempfile.mkdtemp())
    request = 0
    for seed in range(games):
        writer = None
        if "L" in stages:
            header = make_header(
                game=f"bench-{seed}",
                rules=rules,
                seed=seed,
                bots=[LogBot(seat=i, name=f"fast{i}", command="fast_bot.py") for i in range(4)],
                time=CLOCK,
                policy="forfeit",
                max_faults=3,
                bot_seed_key=bytes(16),
            )
            writer = LogWriter(folder / f"bench-{seed}.jsonl", header)
        state = new_game(rules, seed)
        if "S" in stages:
            for seat in range(4):
                encode(wire.round_start(state, seat))
        while state.outcome is None:
            request += 1
            before = state
            if "R" in stages:
                turn = wire.turn_request(state, request, 5000, 60000)
                if "C" in stages:
                    encode(turn)
            move = legal_moves(state)[0]
            if "D" in stages:
                reply = decode_from_bot(f'{{"type":"move","id":{request},"index":0}}')
                if "K" in stages and isinstance(reply, m.MoveReply):
                    move = wire.move_of(reply, state)
            state = apply(state, move)
            if "V" in stages:
                for event in wire.events(before, move, state):
                    if "W" in stages:
                        encode(event.public)
                        if event.private is not None:
                            encode(event.private)
            if writer is not None:
                decision = Decision(
                    before.to_move, request, move, 1.234, False, (), before.round_index, 0.0, ()
                )
                writer.decision(decision, state)
            if state.round_index != before.round_index or state.outcome is not None:
                if writer is not None:
                    writer.round_end(state.results[-1])
                if state.outcome is None and "S" in stages:
                    for seat in range(4):
                        encode(wire.round_start(state, seat))
        if writer is not None:
            writer.close()
    return request


def instructions(python: str, stages: str, games: int, folder: Path, tree: Path) -> tuple[int, int]:
    """(instructions, decisions) of one run under callgrind, with `tree`'s referee."""
    out = folder / f"cg.{stages or '-'}.{games}"
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--dump-instr=no",
            f"--callgrind-out-file={out}",
            python,
            __file__,
            stages or "-",
            str(games),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
    )
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if found is None:
        raise SystemExit(f"{out}: no instruction total")
    return int(found[1]), int(run.stdout.split()[-1])


def count(python: str, tree: Path) -> None:
    """Every cumulative set of stages under callgrind; a table of instructions."""
    folder = Path(tempfile.mkdtemp())
    # Once without callgrind first: a module compiled in one run and not the other
    # (a stale .pyc) would be counted as the game's work.
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    subprocess.run([python, __file__, ORDER, "1"], check=True, capture_output=True, env=env)
    print("| stages | instructions/decision | the stage adds |\n|---|---:|---:|")
    last = 0
    for n in range(len(ORDER) + 1):
        stages = ORDER[:n]
        one, d1 = instructions(python, stages, 1, folder, tree)
        two, d2 = instructions(python, stages, 2, folder, tree)
        per = round((two - one) / (d2 - d1))
        added = f"{per - last:,}" if n else ""
        print(f"| {NAMES[stages[-1:]]} | {per:,} | {added} |", flush=True)
        last = per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="?", default="-", help="letters of RCVWSLDK, or -")
    parser.add_argument("games", nargs="?", type=int, default=1)
    parser.add_argument("--count", action="store_true", help="every stage under callgrind")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--tree", type=Path, default=ROOT, help="whose referee (A/B)")
    args = parser.parse_args()
    if args.count:
        count(args.python, args.tree)
        return
    stages = "" if args.stages == "-" else args.stages
    if set(stages) - set(ORDER):
        raise SystemExit(f"stages: {stages!r} has letters outside {ORDER}")
    print(play(stages, args.games))


if __name__ == "__main__":
    main()
