"""The final: once entries are frozen, the top three of a real arena play a duplicate
round-robin on fresh deals that stops as soon as every adjacent pair is separated, and
a final that cannot separate two equal bots says so when its budget runs out."""

from __future__ import annotations

import json
from pathlib import Path

from referee.arena.ledger import ArenaLedger

from ._arena import Running, arena_file, bot, referee

# Whole games on the double-6 set: seven short rounds, so the better bot wins a game
# far more surely than a round, and a final is over in a few dozen deals.
RULES = "max_pip = 6"


def warm(tmp_path: Path, bots: dict[str, str]) -> Path:
    """An arena that played a few games of each bot, stopped and frozen."""
    out = tmp_path / "out"
    run = Running(arena_file(tmp_path, bots, rules=RULES), out, "--jobs", "2")
    try:
        run.wait(
            "every bot to play",
            lambda led: (
                all(v.games >= 4 for v in led.versions(("active",)))
                and len(led.versions(("active",))) == len(bots)
            ),
        )
        assert run.stop() == 0
    finally:
        run.close()
    status = json.loads(referee("arena", "status", str(out), "--json").stdout)
    assert status["running"] is False
    board = status["leaderboard"]
    assert [row["place"] for row in board] == list(range(1, len(bots) + 1))
    ratings = [row["rating"] for row in board]
    assert ratings == sorted(ratings, reverse=True)
    assert all(row["games"] >= 4 and row["fault_rate"] == 0 for row in board)
    assert referee("arena", "final", str(out), "--top", "3", check=False).returncode == 2
    referee("arena", "freeze", str(out))
    late = referee("arena", "add", str(out), "late", "--command", bot("lowest.py"), check=False)
    assert late.returncode == 2 and "frozen" in late.stderr
    return out


def test_a_final_separates_strong_medium_and_weak_and_stops_early(tmp_path: Path) -> None:
    out = warm(
        tmp_path,
        {
            "greedy": bot("sample_bots/greedy_bot.py"),
            "half": bot("half_greedy.py"),
            "random": bot("sample_bots/random_bot.py"),
        },
    )
    budget = 3000
    done = referee(
        "arena", "final", str(out), "--top", "3", "--budget", str(budget), "-j", "2", "-q"
    )
    lines = done.stdout.splitlines()
    assert [line.split()[1] for line in lines[:3]] == ["greedy@1", "half@1", "random@1"]
    assert lines[3].startswith("every adjacent pair separated at 95% after ")
    result = json.loads((out / "final.json").read_text(encoding="utf-8"))
    assert result["complete"] is True and result["games"] < budget
    assert [p["separated"] for p in result["pairs"]] == [True, True]
    led = ArenaLedger(out / "arena.db")
    try:
        finals = led.units(stage="final")
        # Fresh deals: no final unit reuses an arena unit's deal (each unit its own seed).
        assert {u.id for u in finals}.isdisjoint({u.id for u in led.units(stage="arena")})
        assert all(u.state == "done" and u.games == 2 for u in finals)
        assert led.count("final") == result["games"]
    finally:
        led.close()
    referee("arena", "site", str(out))
    page = (out / "site" / "final.html").read_text(encoding="utf-8")
    assert "every adjacent pair separated" in page


def test_a_final_says_which_pairs_it_could_not_separate(tmp_path: Path) -> None:
    random_bot = bot("sample_bots/random_bot.py")
    out = warm(tmp_path, {"r1": random_bot, "r2": random_bot, "r3": random_bot})
    done = referee("arena", "final", str(out), "--top", "3", "--budget", "24", "-q", check=False)
    assert done.returncode == 1
    last = done.stdout.splitlines()[-1]
    assert last.startswith("the budget of 24 games ran out after 4 rounds (24 games)")
    assert "not separated: " in last
    # Resumed with another field size: refused, in one line.
    again = referee("arena", "final", str(out), "--top", "2", check=False)
    assert again.returncode == 2 and "--top 3" in again.stderr
