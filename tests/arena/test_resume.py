"""An arena SIGKILLed in the middle of its games and started again: the same ledger,
every recorded game kept as it was, none counted twice, none lost (the units cut
short are played to their end first), and every recorded game's log whole."""

from __future__ import annotations

from pathlib import Path

from referee.arena.ledger import ArenaLedger
from referee.logs.gamelog import find_log, read_log
from tests._procs import assert_none_left, new_token

from ._arena import Running, arena_file, bot


def rows(out: Path) -> dict[int, tuple[object, ...]]:
    led = ArenaLedger(out / "arena.db")
    try:
        found = led.db.execute(
            "SELECT idx, unit, rotation, game_id, seats, scores, ranks, record FROM games"
        ).fetchall()
        return {int(r[0]): tuple(r[1:]) for r in found}
    finally:
        led.close()


def test_a_killed_arena_resumes_with_no_game_lost_or_doubled(tmp_path: Path) -> None:
    token = new_token()  # on every bot's command line: none may outlive the kill
    # Whole double-6 games (seven rounds), so that a unit's second game is in play for
    # a while after its first is recorded.
    path = arena_file(
        tmp_path,
        {
            "greedy": bot("sample_bots/greedy_bot.py", token),
            "random": bot("sample_bots/random_bot.py", token),
            "lowest": bot("lowest.py", token),
        },
        rules="max_pip = 6",
    )
    out = tmp_path / "out"
    cut: dict[int, int] = {}
    for _ in range(5):  # the kill may land just after the unit's last game: again, then
        first = Running(path, out, "--jobs", "2")
        try:
            # Killed while a unit is half played: one game of it recorded, the next in play.
            first.wait(
                "a unit half played",
                lambda led: (
                    led.count() >= 6
                    and any(
                        0 < len(led.recorded_rotations(u.id)) < u.games
                        for u in led.units("open", "arena")
                    )
                ),
            )
            first.kill()
        finally:
            first.close()
        # Their keepers end the bots of a referee killed at once (tests/test_orphans.py).
        assert_none_left(token, timeout_s=60.0)
        led = ArenaLedger(out / "arena.db")
        cut = {u.id: u.games for u in led.units("open", "arena")}
        led.close()
        if cut:
            break
    before = rows(out)
    assert cut, "no unit was cut short in five kills"
    second = Running(path, out, "--jobs", "2")
    try:
        second.wait(
            "the cut units played and more games",
            lambda led: (
                not (set(cut) & {u.id for u in led.units("open")})
                and led.count() >= len(before) + 6
            ),
        )
        assert second.stop() == 0
    finally:
        second.close()
    after = rows(out)
    # Nothing recorded before the kill changed or went.
    assert {k: after[k] for k in before} == before
    led = ArenaLedger(out / "arena.db")
    try:
        for unit, games in cut.items():
            assert led.recorded_rotations(unit) == set(range(games))
        # Each game once, under the index its unit fixed.
        for idx, (unit, rotation, *_rest) in after.items():
            first_idx = led.db.execute("SELECT first FROM units WHERE id = ?", (unit,)).fetchone()
            assert idx == first_idx[0] + rotation
        totals = sum(v.games for v in led.versions())
        assert totals == 2 * led.count()  # two seats a game, every game counted once
    finally:
        led.close()
    for _, _, game_id, *_rest in after.values():
        log = find_log(out / "logs", str(game_id))
        assert log is not None, game_id
        assert read_log(log).complete, game_id
