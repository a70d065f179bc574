"""Size of compressed game logs: a real league of the sample bots, each game's
`.jsonl.gz` against the plain log it holds, and the time the compression takes.

The league is 4 players, double-12, 13 rounds (`preset = "standard"`, rounds
"descending"), tables of four with every deal in all four seat rotations, the
sample bots of every language (greedy, random, node, minimal), no sandbox.

    python bench/bench_logsize.py            # 2 deals: 8 games
    python bench/bench_logsize.py --deals 5
"""

from __future__ import annotations

import argparse
import gzip
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import cpu_model

from referee.logs.gamelog import GZIP_LEVEL

ROOT = Path(__file__).resolve().parents[1]

LEAGUE = """
[league]
name = "logsize"
format = "round-robin"
table = 4
deals = {deals}
duplicate = true
seed = 1
policy = "forfeit"

[rules]
preset = "standard"
rounds = "descending"

[time]
startup_ms = 10000
move_ms = 1000
bank_ms = 30000
"""

BOTS = {
    "greedy": "python sample_bots/greedy_bot.py",
    "random": "python sample_bots/random_bot.py",
    "node": "node sample_bots/js/bot.js",
    "minimal": "sh sample_bots/minimal.sh",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=2, help="deals (4 games each)")
    args = parser.parse_args()
    referee = Path(sys.executable).parent / "referee"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        text = LEAGUE.format(deals=args.deals)
        for name, command in BOTS.items():
            text += f'\n[[bot]]\nname = "{name}"\ncommand = "{command}"\ncwd = "{ROOT}"\n'
        (folder / "league.toml").write_text(text)
        out = folder / "out"
        # The venv's python first: the bots' `python` is the one running this.
        env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
        subprocess.run(
            [
                str(referee),
                "league",
                str(folder / "league.toml"),
                "--out",
                str(out),
                "--sandbox",
                "none",
            ],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        logs = sorted((out / "logs").iterdir())
        plain_files = [p.name for p in logs if not p.name.endswith(".jsonl.gz")]
        if plain_files:
            sys.exit(f"not compressed: {plain_files}")
        packed = [p.stat().st_size for p in logs]
        plain = []
        seconds = []
        for path in logs:
            data = gzip.decompress(path.read_bytes())
            plain.append(len(data))
            start = time.perf_counter()
            # What the referee does, without the file writes.
            gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
            seconds.append(time.perf_counter() - start)
    print(f"{len(logs)} games, 4 players, double-12, 13 rounds")
    print(
        f"machine: {platform.system()} {platform.machine()}, {cpu_model()}, "
        f"Python {platform.python_version()}"
    )
    print(
        f"plain log:      median {statistics.median(plain) / 1024:7.1f} KiB "
        f"(min {min(plain) / 1024:.1f}, max {max(plain) / 1024:.1f})"
    )
    print(
        f"compressed log: median {statistics.median(packed) / 1024:7.1f} KiB "
        f"(min {min(packed) / 1024:.1f}, max {max(packed) / 1024:.1f})"
    )
    ratio = sum(plain) / sum(packed)
    print(
        f"all logs: {sum(plain) / 1024:.1f} KiB -> {sum(packed) / 1024:.1f} KiB, "
        f"{ratio:.1f}x smaller ({100 * (1 - sum(packed) / sum(plain)):.0f}% saved)"
    )
    print(
        f"compression: median {statistics.median(seconds) * 1000:.1f} ms per game, "
        f"max {max(seconds) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
