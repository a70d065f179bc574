"""A tcp bot joins a running arena late, plays single games (one program the arena
cannot restart never sees a deal twice), and leaves: the arena plays on without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from referee.arena.ledger import ArenaLedger

from ._arena import ROOT, Running, arena_file, bot, games_of, referee, status


def test_a_tcp_bot_joins_late_plays_single_games_and_leaves(tmp_path: Path) -> None:
    path = arena_file(
        tmp_path,
        {"greedy": bot("sample_bots/greedy_bot.py"), "random": bot("sample_bots/random_bot.py")},
    )
    out = tmp_path / "out"
    run = Running(path, out, "--jobs", "1", "--port", "0")
    connect = None
    try:
        run.wait("games before it joins", lambda led: led.count() >= 4)
        added = referee("arena", "add", str(out), "net", "--tcp", "--author", "tia")
        lines = added.stdout.splitlines()
        assert lines[0] == "net@1: added (tcp)"
        token = lines[1]
        assert token.startswith("mxt_") and "--name net@1" in added.stderr
        led = ArenaLedger(out / "arena.db")
        try:  # the ledger keeps the token's SHA-256 only
            assert token not in (led.version("net@1").bot.__repr__())  # type: ignore[union-attr]
        finally:
            led.close()
        token_file = tmp_path / "net.token"
        token_file.write_text(token + "\n", encoding="utf-8")
        token_file.chmod(0o600)
        address = (out / "address").read_text(encoding="utf-8").strip()
        # Said once the arena lets it log in: a login before that is refused.
        run.wait("net@1 to be let in", lambda led: "net@1 joins (tcp)" in run.output())
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        connect = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "referee",
                "connect",
                address,
                "--name",
                "net@1",
                "--token-file",
                str(token_file),
                "--no-reconnect",
                "--",
                sys.executable,
                str(ROOT / "sample_bots" / "random_bot.py"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        run.wait("net@1 to play", lambda led: games_of(led, "net@1") >= 3)
        assert status(run.ledger(), "net@1") == "active"
        connect.kill()
        connect.wait()
        led = run.ledger()
        played, mark = games_of(led, "net@1"), led.count()
        led.close()
        run.wait("games without it", lambda led: led.count() >= mark + 6)
        # At most the game it was in when it left.
        assert games_of(run.ledger(), "net@1") <= played + 1
        assert run.stop() == 0
    finally:
        if connect is not None and connect.poll() is None:
            connect.kill()
        run.close()
    led = ArenaLedger(out / "arena.db")
    try:
        units = [u for u in led.units(stage="arena") if "net@1" in u.seats]
        assert units and all(u.games == 1 for u in units)
        others = [u for u in led.units(stage="arena") if "net@1" not in u.seats]
        assert others and all(u.games == 2 for u in others)
    finally:
        led.close()
    assert token not in run.output()
