"""The starter kits' fixtures: requests recorded from a real game, one file per case.

    python spec/kit_fixtures.py           write kits/*/fixtures/*.jsonl
    python spec/kit_fixtures.py --check   exit 1 naming each fixture that is not what
                                          the referee sends now (`make examples` refreshes)

One real game between real bot processes (greedy in seat 0 under `spec/wiretap.py`,
random and greedy beside it), played by `referee play`'s own machinery with a fixed
seed, game id and bot-seed key, so a rerun gives the same bytes. Seat 0's record is
cut into files, each the lines that seat received, exactly as sent: `hello`,
`game_start`, then from the `round_start` of the round in question through the
message of interest. A file may hold several `turn` requests (the seat's earlier
turns of that round); the events after each are what the recorded bot played.

| file | ends with |
|---|---|
| first_turn.jsonl | the seat's first turn request of the game |
| follow_double.jsonl | a request whose `step` is `follow`: a double to follow |
| drawn_tile.jsonl | a request right after the seat drew (`view.drawn` set) with a play |
| pass.jsonl | a request whose only moves are `pass` or `end` |
| last_round.jsonl | the seat's last request of the game's last round |
| game_end.jsonl | the last round through `round_end` and `game_end` |

Every kit's unit test feeds each file to its protocol helper and strategy and checks
each reply is one of the request's legal moves. The same files go to every kit
(`kits/*/fixtures/`); tests/test_kits.py fails when they drift.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from referee.rules import preset  # noqa: E402

KITS = ROOT / "kits"
REFRESH = "make examples"
SEED = 29  # the deal: chosen so that every case below turns up in seat 0's game
RULES = preset("standard", players=3, max_pip=9)  # ten rounds, short lines

Test = Callable[[dict[str, Any]], bool]


def _examples() -> ModuleType:
    """spec/examples.py, whose game runner and wiretap reader this script shares."""
    spec = importlib.util.spec_from_file_location("spec_examples", ROOT / "spec" / "examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class FixtureError(Exception):
    """A case the recorded game does not show."""


def record() -> list[str]:
    """Every line seat 0 received in the game, in order."""
    ex = _examples()
    with tempfile.TemporaryDirectory(prefix="kit-fixtures-") as tmp:
        played = trio.run(
            ex.play,
            Path(tmp),
            "kit",
            [("greedy", ex.GREEDY), ("random", ex.RANDOM), ("greedy2", ex.GREEDY)],
            RULES,
            SEED,
        )
    return [text for direction, text in played.seats[0] if direction == "<"]


def _cut(lines: Sequence[str], parsed: Sequence[dict[str, Any]], end: int) -> str:
    """hello, game_start, and the lines from the last round_start up to `end` (included)."""
    start = max(i for i in range(end + 1) if parsed[i]["type"] == "round_start")
    head = [i for i, x in enumerate(parsed) if x["type"] in ("hello", "game_start")][:2]
    return "".join(lines[i] + "\n" for i in [*head, *range(start, end + 1)])


def _turn(test: Test) -> Test:
    return lambda x: x["type"] == "turn" and test(x)


def fixtures(lines: Sequence[str]) -> dict[str, str]:
    """The fixture files cut from seat 0's lines, by file name."""
    parsed = [json.loads(line) for line in lines]

    def first(name: str, test: Test) -> int:
        for i, x in enumerate(parsed):
            if test(x):
                return i
        raise FixtureError(f"seed {SEED} shows no case for {name}; choose another SEED")

    def last(name: str, test: Test) -> int:
        found = [i for i, x in enumerate(parsed) if test(x)]
        if not found:
            raise FixtureError(f"seed {SEED} shows no case for {name}; choose another SEED")
        return found[-1]

    def actions(x: dict[str, Any]) -> set[str]:
        return {move["action"] for move in x["legal"]}

    last_round = len(RULES.engines) - 1
    game_end = first("game_end", lambda x: x["type"] == "game_end")
    cases = {
        "first_turn": first("first_turn", _turn(lambda x: True)),
        "follow_double": first("follow_double", _turn(lambda x: x["view"]["step"] == "follow")),
        "drawn_tile": first(
            "drawn_tile",
            _turn(lambda x: x["view"]["drawn"] is not None and "play" in actions(x)),
        ),
        "pass": first("pass", _turn(lambda x: actions(x) <= {"pass", "end"})),
        "last_round": last("last_round", _turn(lambda x: x["view"]["round"] == last_round)),
        "game_end": game_end,
    }
    return {f"{name}.jsonl": _cut(lines, parsed, end) for name, end in cases.items()}


def kit_folders() -> list[Path]:
    """Every kit: a folder of kits/ with a kit.json."""
    return sorted(p.parent for p in KITS.glob("*/kit.json"))


def drift(files: dict[str, str]) -> list[str]:
    """Each kit fixture file that differs from `files` (or is missing), and each stray."""
    differ = []
    for kit in kit_folders():
        folder = kit / "fixtures"
        for name, text in files.items():
            path = folder / name
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                differ.append(str(path.relative_to(ROOT)))
        for path in sorted(folder.glob("*.jsonl")):
            if path.name not in files:
                differ.append(f"{path.relative_to(ROOT)} (not made by this script)")
    return differ


def main(argv: Sequence[str]) -> int:
    """Write the fixtures of every kit, or with `--check` report those that drifted."""
    try:
        files = fixtures(record())
    except FixtureError as exc:
        print(f"spec/kit_fixtures.py: {exc}", file=sys.stderr)
        return 2
    differ = drift(files)
    if "--check" in argv:
        if differ:
            print(
                f"kit fixtures not what the referee sends now: {', '.join(differ)}; "
                f"refresh them with `{REFRESH}`",
                file=sys.stderr,
            )
            return 1
        print(f"{len(files)} fixtures in {len(kit_folders())} kits are what the referee sends")
        return 0
    for kit in kit_folders():
        folder = kit / "fixtures"
        folder.mkdir(exist_ok=True)
        for path in folder.glob("*.jsonl"):
            if path.name not in files:
                path.unlink()
        for name, text in files.items():
            path = folder / name
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
    print(f"{len(files)} fixtures written to {len(kit_folders())} kits; changed: {len(differ)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
