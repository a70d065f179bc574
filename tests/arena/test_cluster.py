"""The arena on a Dask cluster (`--cluster local:2`): process units are played by the
workers (their bots started there), written here as whole logs, recorded once each,
and a tcp seat's games stay on the coordinator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.arena.ledger import ArenaLedger
from referee.logs.gamelog import find_log, read_log
from referee.text import file_stem

from ._arena import Running, arena_file, bot

pytest.importorskip("distributed")


def test_an_arena_plays_its_units_on_a_local_cluster(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path,
        {
            "greedy": bot("sample_bots/greedy_bot.py"),
            "random": bot("sample_bots/random_bot.py"),
            "lowest": bot("lowest.py"),
        },
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "2", "--cluster", "local:2")
    try:
        run.wait("games on the cluster", lambda led: led.count() >= 8)
        assert run.stop() == 0
    finally:
        run.close()
    led = ArenaLedger(out / "arena.db")
    try:
        games = led.games(stage="arena")
        assert len({g.idx for g in games}) == len(games) >= 8
        # Played on the workers: no process of an arena version was started here (the
        # only local ones are the validations' copies, NAME@K#N, and their batteries).
        local = [p.name for p in (out / "stderr").glob("*.stderr")]
        stems = {file_stem(v.name) for v in led.versions()}
        assert local and not [
            n for n in local if any(re.fullmatch(rf"{re.escape(s)}-\d+\.stderr", n) for s in stems)
        ], local
        for g in games:
            log = find_log(out / "logs", g.game_id)
            assert log is not None and read_log(log).complete
            record = led.record_of(g.idx)
            assert record is not None and record.log_sha256.startswith("sha256:")
        assert sum(v.games for v in led.versions()) == 2 * len(games)
    finally:
        led.close()
