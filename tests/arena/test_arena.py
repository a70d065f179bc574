"""The arena with real bot processes, through its command line: versions added,
updated and removed while it runs, a crashing newcomer rejected at validation, a bot
suspended for its faults, and `stop`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from referee.arena.ledger import ArenaLedger
from referee.bots.sandbox import check_bwrap

from ._arena import Running, arena_file, bot, games_of, referee, status


def test_entries_join_change_and_leave_while_the_arena_runs(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "random": bot("sample_bots/random_bot.py")},
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "1", "--site", str(tmp_path / "site"))
    try:
        run.wait("the file's bots to play", lambda led: led.count() >= 4)
        # A newcomer, added while it runs: validated, then its burst.
        added = referee(
            "arena",
            "add",
            str(out),
            "newbie",
            "--command",
            bot("sample_bots/greedy_bot.py"),
            "--author",
            "nina",
        )
        assert "newbie@1: added, waiting for validation" in added.stdout
        run.wait("newbie to play", lambda led: games_of(led, "newbie@1") >= 3)
        newbie = run.version("newbie@1")
        assert newbie is not None and newbie.reason.startswith("passed check-bot")
        # A crashing newcomer never plays: the reason and its stderr are kept.
        referee("arena", "add", str(out), "crasher", "--command", bot("crash_before_ready.py"))
        run.wait("crasher to be rejected", lambda led: status(led, "crasher@1") == "rejected")
        listed = referee("arena", "list", str(out)).stdout
        assert "crasher@1  rejected" in listed and "check-bot: handshake" in listed
        assert "stderr (stderr/crasher" in listed
        # An update: once validated, the new version plays and the old one is retired.
        before = games_of(run.ledger(), "random@1")
        referee("arena", "update", str(out), "random", "--command", bot("lowest.py"))
        run.wait("random@2 to play", lambda led: games_of(led, "random@2") >= 2)
        old = run.version("random@1")
        assert old is not None and old.status == "retired" and old.games >= before
        # A removal: no new game for it.
        referee("arena", "remove", str(out), "newbie")
        led = run.ledger()
        gone_at = games_of(led, "newbie@1")
        mark = led.count()
        led.close()
        run.wait("more games", lambda led: led.count() >= mark + 6)
        # At most the unit it was in when removed (two games) is played on.
        assert games_of(run.ledger(), "newbie@1") <= gone_at + 1
        assert run.stop() == 0
    finally:
        run.close()
    led = ArenaLedger(out / "arena.db")
    try:
        assert status(led, "newbie@1") == "removed"
        assert status(led, "crasher@1") == "rejected"
        assert games_of(led, "crasher@1") == 0
        # Every unit holds each of its rotations once; a removed version's units after
        # its removal were abandoned, never played on.
        rows = led.db.execute("SELECT unit, rotation, COUNT(*) FROM games GROUP BY unit, rotation")
        assert all(n == 1 for _, _, n in rows)
        unfinished = led.units("open")
        for unit in led.units():
            got = led.recorded_rotations(unit.id)
            assert got <= set(range(unit.games))
            if unit.state == "done":
                assert got == set(range(unit.games))
    finally:
        led.close()
    # The removed version keeps its place on the leaderboard, marked removed.
    board = json.loads(referee("arena", "status", str(out), "--json").stdout)["leaderboard"]
    assert {row["version"]: row["status"] for row in board}["newbie@1"] == "removed"
    site = tmp_path / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "greedy@1" in index and "random@2" in index
    row = next(r for r in index.split("<tr")[1:] if "newbie@1" in r)
    assert "removed" in row
    # The arena's last refresh of its site, when it stopped: nothing is in play; a
    # unit cut short by the stop is shown as unfinished.
    assert "<h2>In play</h2>" not in index
    assert ("<h2>Unfinished</h2>" in index) == bool(unfinished)
    page = (site / "bot-crasher.html").read_text(encoding="utf-8")
    assert "rejected" in page and "check-bot: handshake" in page


def test_a_bot_that_faults_in_arena_games_is_suspended_with_the_evidence(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path,
        {
            "greedy": bot("sample_bots/greedy_bot.py"),
            "random": bot("sample_bots/random_bot.py"),
            "flaky": bot("arena_flaky.py"),
        },
        max_fault_rate=0.5,
        fault_window=6,
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "1")
    try:
        run.wait("flaky to be suspended", lambda led: status(led, "flaky@1") == "suspended")
        flaky = run.version("flaky@1")
        assert flaky is not None
        assert flaky.reason.startswith("faults in ") and "max_fault_rate = 0.5" in flaky.reason
        evidence = json.loads(flaky.evidence)
        assert evidence and all("illegal" in e["fault"] for e in evidence)
        # It passed its validation: it misbehaves only against other versions.
        assert run.version("greedy@1").status == "active"  # type: ignore[union-attr]
        mark = run.ledger().count()
        run.wait("games after the suspension", lambda led: led.count() >= mark + 4)
        played = games_of(run.ledger(), "flaky@1")
        run.wait("more games", lambda led: led.count() >= mark + 8)
        assert games_of(run.ledger(), "flaky@1") == played
        listed = referee("arena", "list", str(out)).stdout
        assert "flaky@1  suspended" in listed and "illegal" in listed
        assert run.stop() == 0
    finally:
        run.close()


def test_old_replays_are_pruned_and_their_results_kept(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "random": bot("sample_bots/random_bot.py")},
        keep_replays=4,
    )
    out = tmp_path / "out"
    site = tmp_path / "site"
    run = Running(path, out, "--jobs", "1", "--site", str(site))
    try:
        run.wait("a dozen games", lambda led: led.count() >= 12)
        assert run.stop() == 0
    finally:
        run.close()
    led = ArenaLedger(out / "arena.db")
    try:
        games = led.games(stage=None)
        newest = max(g.idx for g in games)
        pruned = [g for g in games if g.pruned]
        assert pruned and all(g.idx <= newest - 4 for g in pruned)
        kept_logs = {p.name.split(".")[0] for p in (out / "logs").iterdir()}
        assert not kept_logs & {g.game_id for g in pruned}
        assert not any((site / "games").glob(f"{pruned[0].game_id}.*"))
        # Their results stay: on the ledger, the ratings and the lists.
        assert sum(v.games for v in led.versions()) == 2 * led.count()
        listing = (site / "games-1.html").read_text(encoding="utf-8")
        assert pruned[-1].game_id in listing
        assert f"replay.html?game={pruned[-1].game_id}" not in listing
    finally:
        led.close()


def test_a_rejected_bots_text_is_shown_escaped(tmp_path: Path) -> None:
    # tests/bots/escapes.py names itself with a clear-screen sequence and answers its
    # second turn with a line of escape sequences: validation rejects it with that line
    # as evidence, and neither `arena list` nor its site page shows a raw control.
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "random": bot("sample_bots/random_bot.py")},
    )
    out = tmp_path / "out"
    site = tmp_path / "site"
    run = Running(path, out, "--jobs", "1", "--site", str(site))
    try:
        run.started()
        referee("arena", "add", str(out), "nasty", "--command", bot("escapes.py"))
        run.wait("nasty to be rejected", lambda led: status(led, "nasty@1") == "rejected")
        assert run.stop() == 0
    finally:
        run.close()
    listed = referee("arena", "list", str(out)).stdout
    assert "nasty@1  rejected" in listed
    page = (site / "bot-nasty.html").read_text(encoding="utf-8")
    assert "not json \\x1b[2J" in listed and "not json \\x1b[2J" in page
    for text in (listed, page, run.output()):
        assert not any(c in text for c in "\x1b\x07\x00\x9b\u202e")


def test_an_arena_where_nothing_could_be_played_says_so_and_fails(tmp_path: Path) -> None:
    # One good bot and one that never gets ready: a table of two cannot be filled.
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "crasher": bot("crash_before_ready.py")},
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "1")
    try:
        run.wait("crasher to be rejected", lambda led: status(led, "crasher@1") == "rejected")
        run.wait("greedy to be accepted", lambda led: status(led, "greedy@1") == "active")
        deadline = time.monotonic() + 120
        while "waiting for entries" not in run.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "waiting for entries: 1 active versions of 1 authors can play" in run.output()
        assert run.stop() == 1
    finally:
        run.close()
    last = run.output().strip().splitlines()[-1]
    assert last.startswith("referee: error: nothing was played: 1 authors had an active")


@pytest.mark.skipif(
    check_bwrap() is not None and not os.environ.get("CI"),
    reason="SANDBOX TEST SKIPPED: bubblewrap cannot sandbox here",
)
def test_a_version_whose_folder_holds_a_fifo_is_rejected(tmp_path: Path) -> None:
    # A FIFO in a bot's folder would let the process of one rotation pass the deal's
    # hands to the process of the next, read-only view or not: refused before any game.
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "random": bot("sample_bots/random_bot.py")},
        sandbox="bwrap",
    )
    folder = tmp_path / "entrant"
    folder.mkdir()
    folder.chmod(0o755)
    os.mkfifo(folder / "pipe")
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "1")
    try:
        run.started()
        referee(
            "arena",
            "add",
            str(out),
            "piped",
            "--cwd",
            str(folder),
            "--command",
            bot("sample_bots/random_bot.py"),
        )
        run.wait("piped to be rejected", lambda led: status(led, "piped@1") == "rejected")
        piped = run.version("piped@1")
        assert piped is not None and piped.reason.startswith("sandbox: ")
        assert "FIFO" in piped.reason and piped.games == 0
        assert run.stop() == 0
    finally:
        run.close()
