"""Bot names in a league file: refused in one line when no bot can have them, and
turned into short, safe file names of their own when they can.

A name with an escape sequence, a NUL, a right-to-left override or 300 characters
stops `referee league` before anything starts, with one line that names the bot
(`bot[N].name`), shows the name escaped and names the file. Names far from plain
ASCII (30 CJK characters, 64 `<`, an HTML tag) play a whole league with its results
site: every file and folder the league writes has a short name, each bot its own
page and stderr files, and the pages show the names HTML-escaped.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.site.pages import bot_file
from referee.text import NAME_MAX, escaped
from tests._procs import assert_none_left, new_token
from tests.league.test_run import LOUD, inline, sample, write_league

PY = sys.executable
CJK = "日本語の名前を持つとても長いボットの名前です。三十文字になるまで続けます"[:30]
CJK_TOO = "中文名字的机器人名字非常非常长长长长长长长长长长长长长长长长长长长长"[:30]


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


def test_names_far_from_ascii_play_a_league_and_its_site_with_short_file_names(
    tmp_path: Path,
) -> None:
    token = new_token()
    names = [CJK, CJK_TOO, "<" * NAME_MAX, "<script>alert(1)"]
    assert len(CJK) == len(CJK_TOO) == 30
    bots = [inline(name, LOUD, token) for name in names]  # each process says it started
    path = write_league(tmp_path / "league", bots, table=4, deals=1)
    out = tmp_path / "out"
    runner = CliRunner()
    try:
        league = runner.invoke(main, ["league", str(path), "--out", str(out), "--site", "-q"])
    finally:
        assert_none_left(token)
    assert league.exit_code == 0, league.output
    site = runner.invoke(main, ["site", str(out), "--with-stderr"])
    assert site.exit_code == 0, site.output
    # Every file and folder the league and its site wrote has a short name.
    written = list(out.rglob("*"))
    longest = max(len(part.encode()) for p in written for part in p.relative_to(out).parts)
    assert longest <= 100, longest
    # Each bot has a page and stderr files of its own, linked from its page.
    pages = [out / "site" / bot_file(n) for n in names]
    assert len(set(pages)) == 4 and all(p.is_file() for p in pages)
    index = (out / "site" / "index.html").read_text(encoding="utf-8")
    stderr = {p.name for p in (out / "site" / "stderr").iterdir()}
    assert len(stderr) == len(list((out / "stderr").iterdir())) == 16  # 4 rotations each
    for name, page in zip(names, pages, strict=True):
        assert f'href="{page.name}"' in index
        text = page.read_text(encoding="utf-8")
        links = [f for f in stderr if f'href="stderr/{f}"' in text]
        assert len(links) == 4, (name, links)
        assert all(f'href="stderr/{f}"' not in text for f in stderr - set(links))
    # Names are text in the pages, never markup.
    assert "&lt;script&gt;alert(1)" in index and "<script>alert(1)" not in index
    assert "&lt;" * NAME_MAX in index
    assert CJK in index and CJK_TOO in index
