"""Hidden information in the arena: real processes of tests/bots/deal_memory.py (each
writes the game id and hand of every game it plays) at tables of 2 and 3 with
duplicate deals, two tables at once: no process ever plays two games of one deal, every
rotation of a deal is one unit, and processes are still reused across deals."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from referee.arena.ledger import ArenaLedger

from ._arena import Running, arena_file, bot


def test_no_process_plays_a_deal_twice_and_rotations_are_one_unit(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path, {f"m{i}": bot("deal_memory.py", "arena") for i in range(5)}, tables=[2, 3]
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "2")
    try:
        run.wait(
            "games at both sizes",
            lambda led: (
                led.count() >= 30 and len({u.size for u in led.units("done", "arena")}) == 2
            ),
        )
        assert run.stop() == 0
    finally:
        run.close()
    led = ArenaLedger(out / "arena.db")
    try:
        unit_of = {g.game_id: g.unit for g in led.games(stage=None)}
        for unit in led.units("done", "arena"):
            games = led.games(unit=unit.id)
            assert unit.games == unit.size == len(games)
            # Every rotation of the deal: each version in every seat once.
            for name in unit.seats:
                assert sorted(g.seats.index(name) for g in games) == list(range(unit.size))
    finally:
        led.close()
    played: dict[str, list[str]] = {}
    for stderr in sorted((out / "stderr").glob("m*.stderr")):
        lines = stderr.read_text(encoding="utf-8").splitlines()
        played[stderr.name] = [json.loads(x)["game"] for x in lines if x.startswith("{")]
    for process, games in played.items():
        # (A game in play at the stop was abandoned: not recorded, its unit resumes
        # in the next run, by processes of that run.)
        units = [unit_of[g] for g in games if g in unit_of]
        assert len(units) == len(set(units)), f"{process} played one deal twice: {games}"
    assert max(len(g) for g in played.values()) >= 3  # kept processes play on
    # Every seat of every recorded game is in one process's file.
    seats = Counter(g for games in played.values() for g in games if g in unit_of)
    led = ArenaLedger(out / "arena.db")
    try:
        assert seats == Counter({g.game_id: len(g.seats) for g in led.games(stage=None)})
    finally:
        led.close()
