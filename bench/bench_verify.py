"""What `referee verify` costs per 1,000 games, beside what re-deriving the same logs alone
costs (`referee replay`'s check, in the same run).

A real league is played first with the command line: 4 copies of bench/fast_bot.py
(legal move 0) at tables of 4, every deal in its 4 rotations, double-12, 13 rounds
(the standard rules), signed with a fresh key, checkpointed every 100 games, its key
revealed at the end, and its site built. Then, REPEATS times each:

- `verify OUT`: `referee verify` on the output folder (ledger, results.json, logs);
- `verify SITE`: on the published site (the logs' seeds restored from the reveal);
- `replay`: the reference, in this process: every log read and re-derived by the
  engine (`referee.logs.replay.verify`), which is most of what `verify` does.

Printed: min, median and max of each, the time per 1,000 games, and verify's cost
over the replay alone.

    python bench/bench_verify.py                # 200 games (a few minutes on 2 cores)
    python bench/bench_verify.py --deals 10     # 40 games: a quick try
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import cpu_model

from referee.logs.gamelog import read_log
from referee.logs.replay import verify

ROOT = Path(__file__).resolve().parents[1]
REFEREE = Path(sys.executable).with_name("referee")
REPEATS = 5


def league(folder: Path, deals: int) -> Path:
    """Play the league; its output folder."""
    bot = ROOT / "bench" / "fast_bot.py"
    bots = "".join(
        f'\n[[bot]]\nname = "fast-{k}"\ncommand = ["{sys.executable}", "{bot}"]\n' for k in range(4)
    )
    path = folder / "bench.toml"
    path.write_text(
        f"""
[league]
name = "bench-verify"
table = 4
deals = {deals}
seed = 1
out = "out"
sign = "org.key"
reveal = "at-end"

[rules]
preset = "standard"
{bots}""",
        encoding="utf-8",
    )
    subprocess.run([REFEREE, "keygen", "org.key"], cwd=folder, check=True, capture_output=True)
    subprocess.run(
        [REFEREE, "league", path, "--sandbox", "none", "--quiet", "--report-every", "100"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    subprocess.run([REFEREE, "site", folder / "out"], cwd=folder, check=True, capture_output=True)
    return folder / "out"


def timed_verify(where: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([REFEREE, "verify", where], capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"verify {where} failed:\n{done.stdout}{done.stderr}")
    return took


def timed_replay(logs: Path) -> float:
    start = time.perf_counter()
    for path in sorted(logs.glob("*.jsonl.gz")):
        if not verify(read_log(path)).ok:
            raise SystemExit(f"{path} does not re-derive")
    return time.perf_counter() - start


def figures(name: str, times: list[float], games: int) -> str:
    per = [t / games * 1000 for t in times]
    return (
        f"{name:12} min {min(times):7.2f} s  median {statistics.median(times):7.2f} s  "
        f"max {max(times):7.2f} s   per 1,000 games: median {statistics.median(per):6.1f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=50, help="deals (4 games each)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        began = time.perf_counter()
        out = league(Path(tmp), args.deals)
        games = 4 * args.deals
        print(f"league of {games} games played in {time.perf_counter() - began:.0f} s")
        print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        runs: dict[str, list[float]] = {"verify OUT": [], "verify SITE": [], "replay": []}
        for _ in range(REPEATS):  # interleaved, so a change of load hits all three alike
            runs["verify OUT"].append(timed_verify(out))
            runs["verify SITE"].append(timed_verify(out / "site"))
            runs["replay"].append(timed_replay(out / "logs"))
        for name, times in runs.items():
            print(figures(name, times, games))
        base = statistics.median(runs["replay"])
        for name in ("verify OUT", "verify SITE"):
            print(f"{name}: {statistics.median(runs[name]) / base:.2f}x the replay alone")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
