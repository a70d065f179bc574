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
    "faults/log": "f423874a4b7ba7a2089b39fe54d6b52f522ff1a25c0e0ceca6d27c3b06421b6f",
    "faults/seat0.log": "a7446899a357a7d035b736b6edd33d3f3c954adb8f39fe2f8e291bfb5abb3833",
    "faults/seat0.wire": "c013d17a6dc1a5f14c310742ad463ab49a39156ab311c7d3ae5c7330b22f43bf",
    "faults/seat1.log": "8d8a777ef8009d0549a1e4a4fbd99f7f7d08aea5849a781bf8fb2c5e965798fb",
    "faults/seat1.wire": "8b6f038a95efd3bb4c568e1478135cdba28390e2ad5a8c3d055fa0437dd5eeaf",
    "faults/seat2.log": "902dd57c1e0185128a77042cc4d92b5b67d7a53d9c783d69ace6caadac459d08",
    "faults/seat2.wire": "80fdc08801f0d7ae61c5c5f745a28611023ac3858f4b3ce7e8efbf5d2f91f0a4",
    "teams/log": "b032af1dbd768f2497246de19e7b10eeecae83181bdae80ba5fd9e0d98b2cb48",
    "teams/seat0.log": "e3f0aeb05880c21807cb2ec6ab45d2a0e0396ec02b2f2799b0f1024a6b8ac66c",
    "teams/seat0.wire": "1c416c5f9a238489e0f585ca8e16e928bcb92d2a0fcb115e282f4ecaa26a28ce",
    "teams/seat1.log": "6934f8310c513818dcfd567477af46249132a6be7b74b4e24ca50dd15cb8f749",
    "teams/seat1.wire": "9c6cd8aebb1fee01ff985090301d55dfe30beb1a538e8db0ae16997e9bc7d0f9",
    "teams/seat2.log": "fbd0aa90dcf2744f1061dc05ce3b5141b601b8814e4e2af05ca728591f0473e9",
    "teams/seat2.wire": "2f00acc5c8808c58905a60305a8da1f6b399104652526cf3db5e699586b4a0c4",
    "teams/seat3.log": "98b9c4c8849a785c435cc00e4e173a6deea78acdaec149a834f231453055b2e8",
    "teams/seat3.wire": "4c2a97a458dcbf3edba680227a184261cb852cff37c53d46119495cc3f6b652a",
    "three/log": "aa6f9f608f6195d41307a21355076e51f084a8c21de24f6b2b58774f8edfd7f0",
    "three/seat0.log": "9b9e7019b425d73c39cf3d33a97869a620752f39dbdba489314691e6c706ef64",
    "three/seat0.wire": "345914d6f049812054fb21fbbd56ab3b35315617cd803e49b17b790e1df147c5",
    "three/seat1.log": "fdb515e46befcd15d6aad0199ad055152e7cac067cc54b0d9d0d20dc19faa797",
    "three/seat1.wire": "aec1f65074ed42e61b380c484234f4ab13e4ef783ab34c0af635d1a9d322cc76",
    "three/seat2.log": "43a1e9d385b66b5a27a0a748323ccf2cc6109ebf325dfe444805a740ac48eb7a",
    "three/seat2.wire": "f1e2350aed6aceac130a43081d6e83197b06fd75d6aa5123ca786999f7954292",
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
