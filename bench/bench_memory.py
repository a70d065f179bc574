"""What a concurrent league game costs in memory, beyond its bots' own.

    .venv/bin/python bench/bench_memory.py [--games 16 --games 64] [--sandbox none|bwrap]
                                            [--tree DIR] [--repeat N]

Runs `referee league` with G games at once (`--jobs G`, four seats a game, G
deals of one game each) between copies of `bench/idle_bot.sh`, a shell bot that
answers `hello` and never a turn: once every game's log exists, all G games are
at their first turn and stay there. Then it sums the PSS (/proc/PID/smaps_rollup,
so pages shared between processes count once in all) of the referee and every
process below it, by kind: the referee, the keepers (`referee/bots/keeper.py`), bwrap,
and the bots (everything else). Ctrl-C ends the league.

The cost of a game is the growth of everything but the bots from the smallest G to
the largest, divided by the difference in games: the referee's fixed cost cancels
out. `--tree DIR` measures another checkout of the referee (the one before a change:
`git archive COMMIT | tar -x -C DIR`), run as `python -m referee` with it first on
PYTHONPATH; interleave runs of both for a fair comparison.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.bots.keeper import descendants

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BOT = HERE / "idle_bot.sh"


def pss_kb(pid: int) -> int:
    """The proportional set size of `pid` in KiB, 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(root: int) -> list[int]:
    """`root` and every live process below it."""
    return [root, *descendants(root)]


def kind(pid: int, referee: int) -> str:
    """referee, keeper, bwrap or bot."""
    if pid == referee:
        return "referee"
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "bot"
    if any(arg.endswith(b"referee/bots/keeper.py") for arg in args):
        return "keeper"
    return "bwrap" if comm == "bwrap" else "bot"


def league_file(folder: Path, games: int, sandbox: str) -> Path:
    lines = [
        "[league]",
        'name = "memory"',
        "table = 4",
        f"deals = {games}",
        "duplicate = false",
        "seed = 1",
        "",
        "[rules]",
        "max_pip = 6",
        'rounds = "single"',
        "",
        "[time]",
        "startup_ms = 60000",
        "move_ms = 600000",
        "bank_ms = 600000",
    ]
    for n in range(4):
        lines += ["", "[[bot]]", f'name = "idle{n}"', f'command = ["sh", "{BOT}"]']
        lines += [f'sandbox = "{sandbox}"']
    path = folder / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def measure(games: int, sandbox: str, tree_dir: Path | None) -> dict[str, float]:
    """PSS in KiB by kind, and process counts, with `games` games at their first turn."""
    folder = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    try:
        path = league_file(folder, games, sandbox)
        out = folder / "out"
        env = dict(os.environ)
        if tree_dir is not None:
            env["PYTHONPATH"] = str(tree_dir)
        command = [sys.executable, "-m", "referee", "league", str(path), "--jobs", str(games)]
        process = subprocess.Popen(
            [*command, "--out", str(out), "-q"],
            cwd=tree_dir or ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 300
            while len(list(out.glob("**/*.jsonl"))) < games:
                if process.poll() is not None or time.monotonic() > deadline:
                    assert process.stderr is not None
                    raise SystemExit(f"the league did not start: {process.stderr.read()!r}")
                time.sleep(0.2)
            time.sleep(2.0)  # every game has sent its first turn, and waits
            sums = {"referee": 0.0, "keeper": 0.0, "bwrap": 0.0, "bot": 0.0}
            counts = dict.fromkeys(sums, 0.0)
            for pid in tree(process.pid):
                which = kind(pid, process.pid)
                sums[which] += pss_kb(pid)
                counts[which] += 1
            return {**sums, **{f"n_{k}": v for k, v in counts.items()}}
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, action="append", help="games at once (repeatable)")
    parser.add_argument("--sandbox", choices=("none", "bwrap"), default="none")
    parser.add_argument("--tree", type=Path, help="another checkout of the referee to measure")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    sizes = sorted(set(args.games or [16, 64]))
    runs: dict[int, list[dict[str, float]]] = {g: [] for g in sizes}
    for _ in range(args.repeat):
        for games in sizes:
            runs[games].append(measure(games, args.sandbox, args.tree))
    print(f"sandbox {args.sandbox}, {args.tree or ROOT}; PSS in MB (median of {args.repeat})")
    print("games  referee  keepers  bwrap    bots  | non-bot/game  processes (k/b/w)")
    medians: dict[int, dict[str, float]] = {}
    for games in sizes:
        med = {k: statistics.median(r[k] for r in runs[games]) for k in runs[games][0]}
        medians[games] = med
        other = (med["referee"] + med["keeper"] + med["bwrap"]) / 1024
        print(
            f"{games:5}  {med['referee'] / 1024:7.1f}  {med['keeper'] / 1024:7.1f}  "
            f"{med['bwrap'] / 1024:5.1f}  {med['bot'] / 1024:6.1f}  |  {other / games:8.2f}  "
            f"     {med['n_keeper']:.0f}/{med['n_bot']:.0f}/{med['n_bwrap']:.0f}"
        )
    if len(sizes) >= 2:
        low, high = medians[sizes[0]], medians[sizes[-1]]

        def non_bot(m: dict[str, float]) -> float:
            return m["referee"] + m["keeper"] + m["bwrap"]

        added = (non_bot(high) - non_bot(low)) / (sizes[-1] - sizes[0]) / 1024
        parts = {
            k: (high[k] - low[k]) / (sizes[-1] - sizes[0]) / 1024
            for k in ("referee", "keeper", "bwrap")
        }
        detail = ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
        print(f"a game adds {added:.2f} MB beyond its bots' own ({detail})")


if __name__ == "__main__":
    main()
