"""How long a league game takes to get its bots ready, with `restart = "always"`.

    .venv/bin/python bench/bench_startup.py [--rounds 10] [--seats 4] [--sandbox none|bwrap]

Uses the league's own pool (`referee.league.pool.BotPool`) with fresh processes of
`sample_bots/random_bot.py` (a Python bot: an interpreter start and the protocol
helper's import), and times, interleaved round by round:

- `one`: one bot started and greeted (`hello` answered): the floor for a game;
- `one by one`: the game's seats acquired one after another, as games did before;
- `at once`: the seats acquired together (`BotPool.acquire_all`), as games do now.

Each round ends every bot politely (`bye`) outside the timed part. Run with
PYTHONPATH set to an older checkout to time its keeper (`at once` is skipped
where the pool has no `acquire_all`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from referee.league.config import load_config
from referee.league.pool import BotPool

ROOT = Path(__file__).resolve().parents[1]
Got = list[tuple[Any, str]]  # (process or None, why), one per seat


def league(folder: Path, seats: int, sandbox: str) -> Path:
    lines = ["[league]", 'name = "startup"', f"table = {seats}", "", "[time]"]
    lines += ["startup_ms = 60000"]
    for n in range(seats):
        command = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
        lines += ["", "[[bot]]", f'name = "b{n}"', f"command = {command!r}".replace("'", '"')]
        lines += ['restart = "always"', f'sandbox = "{sandbox}"']
    path = folder / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


async def bench(rounds: int, seats: int, sandbox: str) -> dict[str, list[float]]:
    folder = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    config = load_config(league(folder, seats, sandbox))
    bots = list(config.bots)
    times: dict[str, list[float]] = {"one": [], "one by one": []}
    together = hasattr(BotPool, "acquire_all")
    if together:
        times["at once"] = []
    async with trio.open_nursery() as nursery:
        pool = BotPool(config, nursery, folder)
        deal = 0

        async def timed(name: str, start: Callable[[], Awaitable[Got]]) -> None:
            began = time.perf_counter()
            got = await start()
            times[name].append(time.perf_counter() - began)
            assert all(proc is not None for proc, _ in got), got
            async with trio.open_nursery() as stoppers:
                for bot, (proc, _) in zip(bots, got, strict=False):
                    stoppers.start_soon(pool.release, bot, proc, True)

        async def one() -> Got:
            return [await pool.acquire(bots[0], deal)]

        async def one_by_one() -> Got:
            return [await pool.acquire(bot, deal) for bot in bots]

        async def at_once() -> Got:
            return list(await pool.acquire_all(bots, deal))

        await timed("one", one)  # warm-up: the keeper starts, files are cached
        times["one"].clear()
        for _ in range(rounds):
            deal += 1
            await timed("one", one)
            await timed("one by one", one_by_one)
            if together:
                await timed("at once", at_once)
        await pool.close()
        nursery.cancel_scope.cancel()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--sandbox", choices=("none", "bwrap"), default="none")
    args = parser.parse_args()
    times = trio.run(bench, args.rounds, args.seats, args.sandbox)
    import referee

    print(f"{Path(referee.__file__).parent}, {args.seats} seats, sandbox {args.sandbox}")
    for name, values in times.items():
        ms = sorted(v * 1000 for v in values)
        print(f"{name:>10}: min {ms[0]:6.1f} ms  median {statistics.median(ms):6.1f} ms")


if __name__ == "__main__":
    main()
