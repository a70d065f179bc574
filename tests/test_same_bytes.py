"""Seeded games give the same bytes, on the wire and in the logs, as they always did.

The referee's hot path (connection I/O, the view builder, the log's flush policy)
is tuned for speed; none of that may change what a bot receives or what a log
holds. Here seeded games between real bot processes (the sample bots, and test
bots that send stale replies and illegal moves, so that errors, notices, a forfeit
and its auto moves are on the wire too) are played with every bot under
`spec/wiretap.py`, and the lines each bot received and sent, the full log and the
seat logs are compared with digests recorded before the tuning. Only what varies
from run to run is normalised, as `spec/examples.py` does for the spec's log
examples: the times (latency, the referee's own lateness, start, end, duration)
and the bots' command lines.

When a change to the referee is meant to change these bytes, run this file with
`SAME_BYTES_RECORD=1` to print the new digests, and read the diff of the files it
leaves in the test's temporary folder first.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from protocol import messages as m
from referee.bots.faults import Policy
from referee.bots.process import BotSpec
from referee.play.runner import run_game, seat_log_path
from referee.rules import preset

from .test_spec_examples import examples  # spec/examples.py, loaded once

ROOT = Path(__file__).resolve().parent.parent
BOTS = Path(__file__).resolve().parent / "bots"
KEY = bytes.fromhex("00112233445566778899aabbccddeeff")
CLOCK = m.TimeControl(move_ms=20_000, bank_ms=60_000, startup_ms=30_000)


SAMPLE = {
    "random": (str(ROOT / "sample_bots" / "random_bot.py"),),
    "greedy": (str(ROOT / "sample_bots" / "greedy_bot.py"),),
    "wrong_id": (str(BOTS / "wrong_id.py"),),
    "illegal": (str(BOTS / "illegal.py"), "index"),
}

# name: (rules, seed, bots, policy)
GAMES: dict[str, tuple[str, int, tuple[str, ...], Policy]] = {
    "three": ("standard", 11, ("random", "greedy", "random"), Policy.FORFEIT),
    "teams": (
        "standard+teams+fast-first-turn+announce",
        5,
        ("greedy", "random", "wrong_id", "random"),
        Policy.DEFAULT_MOVE,
    ),
    "faults": ("celko", 3, ("illegal", "random", "greedy"), Policy.FORFEIT),
}

# sha256 of each normalised file, recorded with the referee before issue 18's tuning;
# the logs' since their footers sum the decisions' times (`charged_ms`, `excused_ms`,
# normalised like the other times): the only lines that changed.
EXPECTED: dict[str, str] = {
    "faults/log": "5b3bf0e7285fdeff74276e59c3cc83bfbe390ffb08380da5d8a1cc009a394bf0",
    "faults/seat0.log": "bd1954c32e4e6d56e3c1a0073fdc9f16d8cebc25290c7e8129f4cb20c733fd56",
    "faults/seat0.wire": "c013d17a6dc1a5f14c310742ad463ab49a39156ab311c7d3ae5c7330b22f43bf",
    "faults/seat1.log": "886acc5108295c930d82bf45c23af57c5bbfd455600ea0b2362c2032719d8f04",
    "faults/seat1.wire": "72e2226e8f89835bbbdf6d6b0ff7f0e286356664e49fb63ecc278a940c8aeb43",
    "faults/seat2.log": "f7b33634707444c30543c0f71d5b7321435a9549c1e5043a3467165427630add",
    "faults/seat2.wire": "00dfc72ef975bfcef5cce70f6528a4aeeda3f10300af8456060c4a1791ae1b5d",
    "teams/log": "b9a108d0f87f563399532303a7dcdfadd2707e805953e1a8e6fb4d6433a80004",
    "teams/seat0.log": "50e55d216f09f3627340ce0d61c735f8273b35c5b330878f8fc17d512510b249",
    "teams/seat0.wire": "1eac2489dad02c5883d2bd93a4e2558962aa3cb5034e183213fd5f652988ac7d",
    "teams/seat1.log": "ee21305b226930a9b81fba4c866868d4f5e0a9942b43a5c7f5876f5bc193f8df",
    "teams/seat1.wire": "9c606df287dbe1e73829a70fdb07e87141f952eabe1c9026e90d3304d66ab8dc",
    "teams/seat2.log": "3931d1cd30c8dae6335f60948e4cfe268eb35bd110e08462e124f18633883b40",
    "teams/seat2.wire": "a9479726be330f99dbeb94b116d224acf4e21b78eea1d2582055ddfe7fe29a1e",
    "teams/seat3.log": "137b696f9ea88167d3032c2191a5a660dc4f49e6e308d5353c4f2cb947dd41d5",
    "teams/seat3.wire": "0c181e0932fb5327c8cf78a14dacc7300125b499f177011c9a4b8c35a75cbe6d",
    "three/log": "525e0bca505d7e5277f16e06f42af3344dea11c4131774afd62b5ededc834492",
    "three/seat0.log": "5d06ba9ef5536fd8667ce916279153605d696dd4c75ba9b5d9b5052b25f2d6e7",
    "three/seat0.wire": "ca668747de80abfc05f46fc6448c005034d9a0699ee15792464854d06b5e60c4",
    "three/seat1.log": "887575495302b061a24ff58524bff45c60eaed2286d4cb04bc01ee25ce68faf6",
    "three/seat1.wire": "4cd6d9811aea5c28b60d31f55928ccf3d2ffd6b3629b579108c4d4af32d774e0",
    "three/seat2.log": "c1a523c92f0585f20d0a402bd93615315397bfc5dc4d6673beb3c0a39b241c80",
    "three/seat2.wire": "17c936f0759dd9dbb6c00f0d157cd18e9b3ce3ccf845b5ad6ffc14fe3c2e8511",
}


def _normal_wire(path: Path) -> str:
    """A wiretap record as it is: every line a bot received and sent, in order."""
    return path.read_text(encoding="utf-8")


def _normal_log(path: Path) -> str:
    """A log as `spec/examples.py` normalises it, and the checkout's own folder (in the
    bots' command lines) written as ROOT: the digests hold wherever the tree is."""
    lines = path.read_text().splitlines()
    text = "".join(examples.normal_log(line) + "\n" for line in lines)
    return text.replace(str(ROOT), "ROOT")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(GAMES))
async def test_seeded_game_gives_the_same_bytes(name: str, tmp_path: Path) -> None:
    rules_name, seed, bots, policy = GAMES[name]
    rules = preset(rules_name, max_pip=6, players=len(bots))
    specs = []
    records = []
    for seat, bot in enumerate(bots):
        record = tmp_path / f"wire{seat}.jsonl"
        records.append(record)
        argv = (sys.executable, str(ROOT / "spec" / "wiretap.py"), str(record), "--")
        specs.append(BotSpec(bot, (*argv, sys.executable, *SAMPLE[bot])))
    log_path = tmp_path / f"{name}.jsonl"
    report = await run_game(
        specs,
        rules,
        seed,
        game_id=f"same-{name}",
        time=CLOCK,
        log_path=log_path,
        policy=policy,
        seat_logs=True,
        bot_seed_key=KEY,
    )
    assert report.result.decisions > 50
    texts = {"log": _normal_log(log_path)}
    for seat, record in enumerate(records):
        texts[f"seat{seat}.log"] = _normal_log(seat_log_path(log_path, seat))
        texts[f"seat{seat}.wire"] = _normal_wire(record)
    got = {f"{name}/{part}": _digest(text) for part, text in texts.items()}
    for part, text in texts.items():
        (tmp_path / f"normal-{part}").write_text(text)
    if os.environ.get("SAME_BYTES_RECORD"):
        print(json.dumps(got, indent=4))
        return
    differ = [key for key, digest in got.items() if EXPECTED.get(key) != digest]
    assert not differ, f"bytes changed: {', '.join(differ)} (normalised files in {tmp_path})"
