"""Cost of hashing and signing a game (issue 27): the organiser's Ed25519 key
(`referee.proof.keys`) on what a league signs, and SHA-256 of a real game log.

- sign / verify a record: a raw signature of a ~300-byte line (a receipt: game id,
  seat, result, log digest);
- minisig / verify a file: a minisign signature (BLAKE2b-512 of the file, two
  Ed25519 signatures) of a 50 KB file, what `results.json` costs;
- SHA-256 of a game log: the plain `.jsonl` of one real game, played first by
  `referee play` between four greedy sample bots (standard, double-12, 13 rounds;
  `--seed` picks the deal), or a buffer of `--log-kb` random bytes with `--no-game`.

Each operation is timed one call at a time (`time.perf_counter_ns`), `--repeats`
times after a few warm-up calls: min / median / max in microseconds. The goal is
signing under 1 ms a game: a game's cost is the SHA-256 of its log plus one record
signed.

    python bench/bench_sign.py
    python bench/bench_sign.py --repeats 200 --no-game
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _machine import cpu_model

from referee.proof.keys import SigningKey

ROOT = Path(__file__).resolve().parents[1]
GOAL_US = 1000.0  # signing under 1 ms a game
WARM_UP = 5


def timed(call: Callable[[], object], repeats: int) -> list[float]:
    """Microseconds of each of `repeats` calls of `call`, after `WARM_UP` untimed ones."""
    for _ in range(WARM_UP):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        call()
        times.append((time.perf_counter_ns() - start) / 1000)
    return times


def game_log(seed: int) -> bytes:
    """The plain log of one game between four greedy sample bots."""
    bot = f"{sys.executable} {ROOT / 'sample_bots' / 'greedy_bot.py'}"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "game.jsonl"
        play = [sys.executable, "-m", "referee", "play", "--seed", str(seed), "--log", str(log)]
        subprocess.run(
            [*play, "-q", "--sandbox", "none", bot, bot, bot, bot],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        return log.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1000, help="timed calls of each")
    parser.add_argument("--seed", type=int, default=1, help="the deal of the game played")
    parser.add_argument("--no-game", action="store_true", help="hash random bytes instead")
    parser.add_argument("--log-kb", type=int, default=200, help="with --no-game: its size")
    args = parser.parse_args()

    load_before = os.getloadavg()
    if args.no_game:
        log, what = os.urandom(args.log_kb * 1000), f"{args.log_kb} KB of random bytes"
    else:
        log = game_log(args.seed)
        what = f"a game log (seed {args.seed}, 4 greedy bots)"
    key = SigningKey.generate()
    record = (
        b'{"game":"league-0042-r3","seat":2,"bots":["greedy","random","node","minimal"],'
        b'"result":{"rank":1,"points":[12,40,57,88]},'
        b'"log_sha256":"' + hashlib.sha256(log).hexdigest().encode() + b'",'
        b'"commitment":"' + hashlib.sha256(b"commitment").hexdigest().encode() + b'"}'
    )
    signature = key.sign(record)
    results = os.urandom(25_000).hex().encode()  # 50 KB
    comment = "referee results\tgames:1000\tsha256:" + hashlib.sha256(results).hexdigest()
    minisig = key.minisig(results, comment)

    rows = [
        (f"sign a record ({len(record)} B)", lambda: key.sign(record)),
        (f"verify a record ({len(record)} B)", lambda: key.public.verify(record, signature)),
        (f"minisig a file ({len(results) // 1000} KB)", lambda: key.minisig(results, comment)),
        (
            f"verify a minisig ({len(results) // 1000} KB)",
            lambda: key.public.verify_minisig(results, minisig),
        ),
        (f"SHA-256 of {len(log) / 1024:.1f} KiB", lambda: hashlib.sha256(log).digest()),
    ]
    medians = {}
    start = time.process_time()
    print(
        f"machine: {platform.system()} {platform.machine()}, {cpu_model()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"hashed: {what}; {args.repeats} timed calls each")
    print(f"{'operation':34} {'min':>9} {'median':>9} {'max':>9}  (µs)")
    for name, call in rows:
        times = timed(call, args.repeats)
        medians[name] = statistics.median(times)
        print(f"{name:34} {min(times):9.1f} {medians[name]:9.1f} {max(times):9.1f}")
    per_game = medians[rows[0][0]] + medians[rows[4][0]]
    print(
        f"a game (SHA-256 of its log + a record signed): {per_game:.1f} µs median, "
        f"{per_game / GOAL_US:.2f} of the 1 ms goal"
    )
    print(
        f"CPU {time.process_time() - start:.2f} s; load average "
        f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
