"""Nothing a bot sends, and no name a league holds, drives the organiser's terminal.

tests/bots/escapes.py names itself with a clear-screen sequence, answers one turn
with a line of escape sequences, then writes a window title, a clear screen,
colours, a NUL, a carriage return, C1 controls, a right-to-left override and rich
markup to stderr, and crashes. `referee play`, `check-bot`, `league`, `replay`,
`standings` and `site` run on it (and on a league.db whose names hold the same, as
an older referee kept them): what they print holds no raw control character (a
newline ends each line, and nothing else), and shows each one escaped, as
`referee.text.shown` writes it. What is stored (the log) keeps the text as it came.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from referee.cli import main
from referee.league.ledger import Ledger
from referee.logs.gamelog import find_log, read_log
from referee.rules import preset
from referee.text import escaped
from tests._procs import assert_none_left, new_token
from tests.league.test_run import misbehaving, sample, write_league
from tests.test_replay import write_game
from tests.test_site import record

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
ESCAPES = str(ROOT / "tests" / "bots" / "escapes.py")
RANDOM = str(ROOT / "sample_bots" / "random_bot.py")
CLOCKS = ["--startup-ms", "3000", "--move-ms", "300", "--bank-ms", "300", "--grace-ms", "50"]


def raw(text: str) -> list[str]:
    """The control characters in `text` that a terminal would act on: all but newlines."""
    return sorted({c for c in text if escaped(c) and c != "\n"})


def printed(result: Result) -> str:
    """All a command printed, stdout and stderr, checked to be UTF-8 without a raw
    control character."""
    text = result.stdout_bytes.decode("utf-8") + result.stderr_bytes.decode("utf-8")
    assert raw(text) == [], text
    return text


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "400"})


def test_play_shows_the_crash_line_fault_evidence_and_names_escaped(tmp_path: Path) -> None:
    token = new_token()
    bots = [
        f"random={shlex.join([PY, RANDOM, token])}",
        f"nasty={shlex.join([PY, ESCAPES, token])}",
    ]
    args = ["play", *bots, "--set", "max_pip=6", "--seed", "9", *CLOCKS]
    try:
        result = cli(*args, "--policy", "default-move", "--log-dir", str(tmp_path))
    finally:
        assert_none_left(token)
    assert result.exit_code == 0, result.output
    text = printed(result)
    # The fault of its turn 2 (a line that is not JSON), as it happened and in the table.
    fault = next(line for line in text.splitlines() if line.startswith("fault nasty"))
    assert "not json \\x1b[2J\\x1b]0;title\\x07 \\x9b" in fault
    # The crash: where its stderr is and its last line, escaped; markup shown as text.
    kept = tmp_path / "game-9-seat1-nasty.stderr"
    note = next(line for line in text.splitlines() if "stderr in" in line)
    assert note.startswith(f"nasty (seat 1): stderr in {kept}; last line: last words: ")
    assert note.endswith(
        "last words: \\x1b]0;pwned title\\x07\\x1b[2J\\x1b[H\\x1b[31;1mred\\x1b[0m"
        " nul\\x00 cr\\r bs\\x08 del\\x7f csi\\x9b31m \\u202eevil\\u202c [bold red]markup[/]"
    )
    # The file and the log keep what the bot wrote, as it wrote it.
    assert b"\x1b]0;pwned title\x07" in kept.read_bytes()
    log = read_log(tmp_path / "game-9.jsonl.gz")
    details = [f.detail for d in log.decisions for f in d.faults]
    assert any("not json \x1b[2J" in detail for detail in details)

    # The log shown again, move by move: the evidence is escaped there too.
    shown = cli("replay", str(tmp_path / "game-9.jsonl.gz"), "--show")
    assert shown.exit_code == 0, shown.output
    assert "not json \\x1b[2J" in printed(shown)


def test_check_bot_shows_what_the_bot_says_escaped(tmp_path: Path) -> None:
    token = new_token()
    try:
        result = cli("check-bot", "--rules", "standard", "--", PY, ESCAPES, token)
    finally:
        assert_none_left(token)
    assert result.exit_code == 1, result.output
    text = printed(result)
    assert "ready in" in text and "'\\x1b[2Jescapes\\x07' 'test'" in text  # its ready
    assert "FAIL  standard" in text and "not json \\x1b[2J\\x1b]0;title\\x07" in text


def test_a_league_of_the_bot_prints_nothing_raw_and_keeps_its_stderr(tmp_path: Path) -> None:
    token = new_token()
    bots = [
        sample("random", "random_bot.py", token),
        sample("greedy", "greedy_bot.py", token),
        misbehaving("nasty", "escapes.py", token),
    ]
    # Pinned keys: the same deals and bot seeds every run. On a fresh random key a game
    # can end before nasty's fourth turn (a 15-decision game did, in a full run), and
    # that process then never writes its escapes to stderr.
    keys = {"deal_key": "d00d" * 16, "bot_seed_key": "b07" * 8}
    path = write_league(tmp_path / "league", bots, table=3, deals=1, policy="default-move", **keys)
    out = tmp_path / "out"
    try:
        league = cli("league", str(path), "--out", str(out), "--site")
    finally:
        assert_none_left(token)
    assert league.exit_code == 0, league.output
    text = printed(league)
    assert "Finished game 3 of 3" in text and "nasty forfeited" in text
    # Every process of the bot wrote its escapes to its own stderr file, kept raw.
    kept = sorted(p.name for p in (out / "stderr").glob("nasty-*.stderr"))
    assert len(kept) == 3 and all(b"\x1b[2J" in (out / "stderr" / k).read_bytes() for k in kept)
    for command in (["standings", str(out)], ["site", str(out), "--with-stderr"]):
        again = cli(*command)
        assert again.exit_code == 0, again.output
        printed(again)
    log = find_log(out / "logs", "g00001")
    assert log is not None
    replayed = cli("replay", str(log), "--show")
    assert replayed.exit_code == 0 and "not json \\x1b[2J" in printed(replayed)


NASTY_NAMES = ["\x1b]0;title\x07a", "[bold red]b\x1b[2J", "c\u202e\x00\u009b"]


def test_names_a_ledger_holds_are_shown_escaped(tmp_path: Path) -> None:
    # A league.db from before names were checked: its names are shown, never obeyed.
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    ledger = Ledger(out / "league.db")
    ledger.db.execute(
        "INSERT INTO meta VALUES ('name', ?), ('bots', ?), ('scheduled', '3'), ('unit_games', '3')",
        ("\x1b[2Jleague[/]", json.dumps(NASTY_NAMES)),
    )
    rules = preset("standard", players=3, max_pip=6)
    for idx in range(3):
        seats = NASTY_NAMES[idx:] + NASTY_NAMES[:idx]
        game = f"g{idx + 1:05d}"
        log = write_game(out / "logs" / f"{game}.jsonl", rules, 40 + idx, names=seats, game=game)
        ledger.record(record(idx, 0, log, seats))
    ledger.close()
    standings = cli("standings", str(out))
    assert standings.exit_code == 0, standings.output
    text = printed(standings)
    assert "\\x1b[2Jleague[/]: 3 games" in text
    for name in ("\\x1b]0;title\\x07a", "[bold red]b\\x1b[2J", "c\\u202e\\x00\\x9b"):
        assert name in text
    site = cli("site", str(out))
    assert site.exit_code == 0 and "3 replays" in printed(site)
    # Each bot's page has a short name of its own; the names are HTML-escaped in it.
    pages = sorted((out / "site").glob("bot-*.html"))
    assert len(pages) == 3 and all(len(p.name) < 64 for p in pages)
    shown = cli("replay", str(out / "logs" / "g00001.jsonl"), "--show")
    assert shown.exit_code == 0 and "\\x1b]0;title\\x07a" in printed(shown)
