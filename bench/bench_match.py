"""The referee's cost per decision next to its floor, measured side by side in one run.

Each repetition plays A then B (A B A B ...):

- A, the referee: one game of four `bench/fast_bot.py` processes through
  `referee.play.runner.run_game` (keepers, clocks, the game log). Its steady state runs
  from the end of the handshake (`on_start`) to the end of the last round (a
  `Recorder`): the referee's CPU time (`time.process_time`, this process only) and
  wall time per decision. Start-up (starting the bots and the handshake) and stop
  (goodbye, ending the processes, closing the log) are timed apart. Each bot writes
  at `bye` how many bytes the referee sent it for its turns (`fast_bot.py`).
- B, the floor: the same number of round trips through raw trio pipes, no referee
  class: four `fast_bot.py` processes started once (no keeper), one line to each in
  turn as large as A's mean traffic to the asked seat in the same repetition, each
  answered by the bot's short move line (it parses the line as in a game).

Ratios are A over B, CPU to CPU and wall to wall, per repetition; the summary gives
their minimum, median and maximum. Run: python bench/bench_match.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import trio
from _machine import cpu_model

from protocol.messages import TimeControl
from referee.bots.process import BotSpec
from referee.game.match import Recorder
from referee.play.runner import run_game
from referee.rules import RoundResult, preset

HERE = Path(__file__).resolve().parent
BOT = (sys.executable, str(HERE / "fast_bot.py"))
SEATS = 4
WARM_UP = 200  # untimed round trips when the floor's bots start
COUNTED = re.compile(r"fast_bot: turns (\d+) bytes (\d+)")


def now() -> tuple[float, float]:
    """(wall, CPU of this process) in seconds."""
    return time.perf_counter(), time.process_time()


@dataclass(frozen=True)
class Span:
    """Wall and CPU seconds between two marks."""

    wall: float
    cpu: float

    @classmethod
    def between(cls, start: tuple[float, float], end: tuple[float, float]) -> Span:
        return cls(end[0] - start[0], end[1] - start[1])


@dataclass(frozen=True)
class Game:
    """One referee game: its decisions, the three phases, the bytes per turn."""

    decisions: int
    startup: Span
    play: Span
    stop: Span
    request_bytes: float


class EndOfPlay(Recorder):
    """Marks the end of each round; the last mark ends the game's play."""

    def __init__(self) -> None:
        self.mark = now()

    def round_end(self, result: RoundResult) -> None:
        self.mark = now()


async def referee_game(seed: int, folder: Path) -> Game:
    """Play one game; time its start-up, steady play and stop."""
    rules = preset("standard", players=SEATS)
    spec = BotSpec("fast", BOT)
    end = EndOfPlay()
    started: list[tuple[float, float]] = []
    began = now()
    report = await run_game(
        [spec] * SEATS,
        rules,
        seed,
        game_id=f"bench-{seed}",
        time=TimeControl(move_ms=5000, bank_ms=60000),
        log_path=folder / f"bench-{seed}.jsonl",
        stderr_dir=folder,
        recorder=end,
        on_start=lambda names: started.append(now()),
    )
    finished = now()
    turns = sent = 0
    for path in folder.glob(f"bench-{seed}-seat*.stderr"):
        found = COUNTED.search(path.read_text())
        if found is None:
            raise SystemExit(f"{path}: the bot did not say what it was sent")
        turns += int(found[1])
        sent += int(found[2])
    decisions = report.result.decisions
    if report.result.forfeited.count(True) or turns != decisions:
        raise SystemExit(f"game {seed}: {turns} turns answered of {decisions} decisions")
    return Game(
        decisions,
        Span.between(began, started[0]),
        Span.between(started[0], end.mark),
        Span.between(end.mark, finished),
        sent / turns,
    )


def turn_line(i: int, size: int) -> bytes:
    """A turn request of `size` bytes as the bot reads it (the id is what it parses)."""
    head = b'{"type":"turn","id":%010d,"pad":"' % i
    return head + b"x" * max(0, size - len(head) - 3) + b'"}\n'


class Floor:
    """Raw round trips through trio pipes to bot processes, no referee class."""

    def __init__(self, procs: list[trio.Process]) -> None:
        self.procs = procs
        self.sent = 0

    @classmethod
    async def start(cls) -> Floor:
        procs = [
            await trio.lowlevel.open_process(
                BOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
            for _ in range(SEATS)
        ]
        floor = cls(procs)
        await floor.round_trips(WARM_UP, 1500)
        return floor

    async def round_trips(self, count: int, size: int) -> Span:
        """`count` requests of `size` bytes, to each bot in turn, each answered."""
        began = now()
        for _ in range(count):
            proc = self.procs[self.sent % len(self.procs)]
            assert proc.stdin is not None and proc.stdout is not None
            await proc.stdin.send_all(turn_line(self.sent, size))
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = await proc.stdout.receive_some(4096)
                if not chunk:
                    raise SystemExit("a floor bot closed its pipe")
                reply += chunk
            self.sent += 1
        return Span.between(began, now())

    async def close(self) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            await proc.stdin.send_all(b'{"type":"bye"}\n')
            await proc.stdin.aclose()
            await proc.wait()


@dataclass(frozen=True)
class Repetition:
    game: Game
    floor: Span

    @property
    def referee_cpu(self) -> float:
        return self.game.play.cpu / self.game.decisions

    @property
    def referee_wall(self) -> float:
        return self.game.play.wall / self.game.decisions

    @property
    def floor_cpu(self) -> float:
        return self.floor.cpu / self.game.decisions

    @property
    def floor_wall(self) -> float:
        return self.floor.wall / self.game.decisions


async def measure(reps: int, folder: Path) -> list[Repetition]:
    """`reps` repetitions of A (a referee game) then B (its floor)."""
    floor = await Floor.start()
    out = []
    try:
        for rep in range(reps):
            game = await referee_game(rep, folder)
            span = await floor.round_trips(game.decisions, round(game.request_bytes))
            r = Repetition(game, span)
            out.append(r)
            print(
                f"rep {rep + 1:2}: {game.decisions} decisions, {game.request_bytes:.0f} B/turn;"
                f" referee {r.referee_cpu * 1e6:6.1f} µs CPU {r.referee_wall * 1e6:6.1f} µs wall;"
                f" floor {r.floor_cpu * 1e6:5.1f} µs CPU {r.floor_wall * 1e6:5.1f} µs wall;"
                f" x{r.referee_cpu / r.floor_cpu:.2f} CPU"
                f" x{r.referee_wall / r.floor_wall:.2f} wall",
                flush=True,
            )
    finally:
        await floor.close()
    return out


def spread(values: list[float], scale: float, digits: int) -> str:
    """'min | median | max' as table cells."""
    cells = (min(values), statistics.median(values), max(values))
    return " | ".join(f"{v * scale:,.{digits}f}" for v in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="repetitions of A then B")
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    args = parser.parse_args()
    reps = 3 if args.quick else args.reps
    if reps < 1:
        parser.error("--reps: at least 1")
    print(f"machine: {cpu_model()}, {platform.machine()}, Python {platform.python_version()}")
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        rows = trio.run(measure, reps, Path(tmp))
    load1 = os.getloadavg()[0]
    games = [r.game for r in rows]
    print()
    print(
        f"{reps} repetitions, standard rules, {SEATS} players, 13 rounds;"
        f" {statistics.median(g.decisions for g in games):.0f} decisions a game (median),"
        f" {statistics.median(g.request_bytes for g in games):,.0f} bytes to the asked seat"
        f" a decision; load average {load0:.1f} at the start, {load1:.1f} at the end"
    )
    print()
    print("| per decision | min | median | max |")
    print("|---|---:|---:|---:|")
    print(f"| referee CPU, µs | {spread([r.referee_cpu for r in rows], 1e6, 1)} |")
    print(f"| referee wall, µs | {spread([r.referee_wall for r in rows], 1e6, 1)} |")
    print(f"| floor CPU, µs | {spread([r.floor_cpu for r in rows], 1e6, 1)} |")
    print(f"| floor wall, µs | {spread([r.floor_wall for r in rows], 1e6, 1)} |")
    print(f"| **CPU / CPU** | {spread([r.referee_cpu / r.floor_cpu for r in rows], 1, 2)} |")
    print(f"| **wall / wall** | {spread([r.referee_wall / r.floor_wall for r in rows], 1, 2)} |")
    print(f"| start-up a game, wall ms | {spread([g.startup.wall for g in games], 1e3, 1)} |")
    print(f"| start-up a game, CPU ms | {spread([g.startup.cpu for g in games], 1e3, 1)} |")
    print(f"| stop a game, wall ms | {spread([g.stop.wall for g in games], 1e3, 1)} |")
    print(f"| stop a game, CPU ms | {spread([g.stop.cpu for g in games], 1e3, 1)} |")


if __name__ == "__main__":
    main()
