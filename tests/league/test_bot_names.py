"""Bot names in a league file: refused in one line when no bot can have them.

A name with an escape sequence, a NUL, a right-to-left override or 300 characters
stops `referee league` before anything starts, with one line that names the bot
(`bot[N].name`), shows the name escaped and names the file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.text import escaped
from tests._procs import assert_none_left, new_token
from tests.league.test_run import sample, write_league

PY = sys.executable


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("\x1b]0;title\x07\x1b[2J", "'\\x1b]0;title\\x07\\x1b[2J' holds control characters"),
        ("nul\x00", "'nul\\x00' holds control characters (\\x00)"),
        ("\u202eevil", "'\\u202eevil' holds control characters (\\u202e)"),
        ("n" * 300, "(300 characters) is 300 characters long; at most 64"),
        ("<" * 90, "is 90 characters long; at most 64"),
        ("", "'' is empty"),
    ],
)
def test_a_name_no_bot_can_have_stops_the_league_in_one_line(
    name: str, said: str, tmp_path: Path
) -> None:
    token = new_token()
    bots = [sample("random", "random_bot.py", token), sample(name, "greedy_bot.py", token)]
    path = write_league(tmp_path, bots, table=2, deals=1)
    result = CliRunner().invoke(main, ["league", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    line = result.stderr.removesuffix("\n")
    assert "\n" not in line and not any(escaped(c) for c in line), line
    assert line.startswith("referee: error: bot[1].name: '"), line
    assert said in line and line.endswith(f"(in {path})"), line
    assert len(line) < 400 + len(str(path))
    assert not (tmp_path / "out").exists()
    assert_none_left(token)


def test_a_league_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    bots = [sample("a", "random_bot.py", "x"), sample("b", "random_bot.py", "x")]
    path = write_league(tmp_path, bots, table=2, name="\x1b]0;league\x07")
    result = CliRunner().invoke(main, ["league", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        "referee: error: league.name: '\\x1b]0;league\\x07' holds control characters\n"
    )
