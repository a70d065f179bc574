"""A bot's own words on its moves (issue 43, part 3): `note` and `info` on a `move`.

Real processes under `referee play`: `tests/bots/noter.py` says something on every
move (its note names its hand, as a bot's note may, with an escape sequence and a
newline in it), against `tests/bots/transcript.py`, which keeps every byte it is sent.

- The full log keeps each note and its numbers; seat 0's log (its author's) keeps
  them; seat 1's log has none, and not one byte seat 1 was sent names them.
- `replay --show` prints a note escaped and in quotes, with its numbers, to the views
  that see its author's hand; `--seat 1` shows none. The HTML replay carries the
  notes in the full view and seat 0's, never in seat 1's.
- A note over 280 characters, or an `info` number that is not a number, is a
  malformed reply: under `forfeit` the bot is forfeited with the fault on record;
  under `default-move` legal move 0 is played for it and the fault counted.
- The site's parts of the game: the public part holds no note, seat 0's part holds its
  notes, seat 1's none; put together they are each seat's view and the full view.
- In headless Chromium, at 400 and 1400 px: the full replay shows a note beside its
  move, as text (its markup is not run), to the spectator and its author's seat,
  not to seat 1's view; the bots' numbers are plotted (one line, seat 0's) and seat
  1's view plots none; seat 1's own page holds no note and no chart.
- The search bot says its estimate and how many worlds it searched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.logs.gamelog import read_log
from referee.logs.replay_seat import redact
from referee.site.gamedata import assemble, full_view, mask, public_part, seat_part, seat_view
from tests.test_replay_html import Browser
from tests.test_replay_html import browser as browser  # the fixture: one Chromium

PY = sys.executable
BIN = Path(PY).parent
ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
SHORT = ["--set", "max_pip=6", "--seed", "11"]


def referee(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [PY, "-m", "referee", *args], cwd=cwd, env=ENV, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One whole double-6 game (seven rounds) of the noter against the transcript bot."""
    where = tmp_path_factory.mktemp("notes")
    referee(
        "play",
        f"noter={PY} {BOTS / 'noter.py'}",
        f"heard={PY} {BOTS / 'transcript.py'} {where / 'heard.jsonl'}",
        *SHORT,
        "--log",
        "g.jsonl.gz",
        "--seat-logs",
        "-q",
        cwd=where,
    )
    return where


def test_the_log_keeps_each_note_and_only_its_authors_seat_log_has_them(game: Path) -> None:
    full = read_log(game / "g.jsonl.gz")
    said = [d for d in full.decisions if d.seat == 0]
    assert len(said) > 20 and all(d.note is not None and d.info is not None for d in said)
    first = said[0]
    assert first.note is not None and first.note.startswith(f"NOTE-MARKER {first.request} hand")
    assert first.info == {"request": first.request, "tiles": first.info["tiles"], "estimate": -2.5}
    assert all(d.note is None and d.info is None for d in full.decisions if d.seat == 1)
    own = read_log(game / "g.seat0.jsonl.gz", allow_redacted=True)
    assert [d.note for d in own.decisions if d.seat == 0] == [d.note for d in said]
    other = read_log(game / "g.seat1.jsonl.gz", allow_redacted=True)
    assert all(d.note is None and d.info is None for d in other.decisions)
    heard = (game / "heard.jsonl").read_bytes()
    assert heard.count(b'"type":"turn"') > 20  # it played, and was told every move
    assert b"NOTE-MARKER" not in heard and b'"estimate"' not in heard and b'"note"' not in heard
    seat1 = subprocess.run(
        ["gzip", "-dc", str(game / "g.seat1.jsonl.gz")], capture_output=True, check=True
    ).stdout
    assert b"NOTE-MARKER" not in seat1 and b'"note"' not in seat1


def test_replay_shows_notes_escaped_to_the_views_that_see_the_authors_hand(game: Path) -> None:
    shown = referee("replay", "g.jsonl.gz", "--show", cwd=game).stdout
    lines = [line for line in shown.splitlines() if "NOTE-MARKER" in line]
    assert len(lines) > 20
    assert "\x1b" not in shown and "note 'NOTE-MARKER" in lines[0]
    assert "\\x1b[31m\\nred'" in lines[0] and "info request=" in lines[0]
    assert "estimate=-2.5" in lines[0]
    for seat, says in (("1", False), ("0", True)):
        seen = referee("replay", "g.jsonl.gz", "--show", "--seat", seat, cwd=game).stdout
        assert ("NOTE-MARKER" in seen) is says
    referee("replay", "g.jsonl.gz", "--html", "full.html", cwd=game)
    referee("replay", "g.jsonl.gz", "--seat", "1", "--html", "seat1.html", cwd=game)
    referee("replay", "g.jsonl.gz", "--seat", "0", "--html", "seat0.html", cwd=game)
    assert "NOTE-MARKER" in (game / "full.html").read_text(encoding="utf-8")
    assert "NOTE-MARKER" in (game / "seat0.html").read_text(encoding="utf-8")
    assert "NOTE-MARKER" not in (game / "seat1.html").read_text(encoding="utf-8")


def test_the_sites_public_part_and_other_seats_parts_hold_no_note(game: Path) -> None:
    log = read_log(game / "g.jsonl.gz")
    assert all(d.note is None and d.info is None for d in redact(log, 1).decisions)
    assert all(d.note is not None for d in redact(log, 0).decisions if d.seat == 0)
    views = [seat_view(log, s) for s in (0, 1)]
    public = mask(views[0], 0)
    assert mask(views[1], 1) == public
    part = public_part(public)
    seats = {s: seat_part(v, public, s) for s, v in enumerate(views)}
    assert "NOTE-MARKER" not in repr(part) and "estimate" not in repr(part)
    assert "NOTE-MARKER" not in repr(seats[1]) and "estimate" not in repr(seats[1])
    assert repr(seats[0]).count("NOTE-MARKER") > 20 and "estimate" in repr(seats[0])
    for s in (0, 1):
        assert assemble(part, {s: seats[s]}, s) == views[s]
    assert assemble(part, seats, None) == full_view(log)


@pytest.mark.parametrize("width", [400, 1400])
def test_the_replay_page_shows_notes_as_text_and_plots_the_numbers(
    browser: Browser, game: Path, width: int
) -> None:
    full, seat1 = game / "full.html", game / "seat1.html"
    if not seat1.exists():  # made by the replay test above when it ran first
        referee("replay", "g.jsonl.gz", "--html", str(full), cwd=game)
        referee("replay", "g.jsonl.gz", "--seat", "1", "--html", str(seat1), cwd=game)
    first = next(d for d in read_log(game / "g.jsonl.gz").decisions if d.note is not None)
    caption = "document.getElementById('move').textContent"
    browser.open(full, width=width, height=900)
    browser.js(f"replay.go(replay.frameOfMove({first.n}))")
    for mode, says in ((0, True), (1, True), (2, True), (3, False)):  # spectator, all, seats
        browser.js(f"replay.setMode({mode})")
        text = browser.js(caption)
        assert ("note: \u201cNOTE-MARKER" in text) is says, (mode, text)
        lines = browser.js("document.querySelectorAll('#info-chart polyline').length")
        assert lines == (1 if says else 0), (mode, lines)
    browser.js("replay.setMode(0)")
    assert "<img src=x onerror=window.pwned=1></script>" in browser.js(caption)
    assert browser.js("window.pwned === undefined")
    assert browser.js("document.getElementById('info').hidden") is False
    keys = browser.js("[...document.querySelectorAll('#info-key option')].map(o => o.value)")
    assert keys == ["request", "tiles", "estimate"]
    assert browser.js("document.documentElement.scrollWidth <= innerWidth")
    assert browser.problems() == []
    browser.open(seat1, width=width, height=900)
    assert browser.js("document.getElementById('info').hidden") is True
    assert "NOTE-MARKER" not in browser.js("document.documentElement.outerHTML")
    assert browser.problems() == []


@pytest.mark.parametrize(
    ("mode", "policy", "where"),
    [("long", "forfeit", "$.note"), ("badinfo", "default-move", "$.info")],
)
def test_an_oversized_or_malformed_note_is_a_malformed_reply(
    tmp_path: Path, mode: str, policy: str, where: str
) -> None:
    referee(
        "play",
        f"noter={PY} {BOTS / 'noter.py'} {mode}",
        f"lowest={PY} {BOTS / 'lowest.py'}",
        *SHORT,
        "--set",
        "rounds=single",
        "--policy",
        policy,
        "--log",
        "g.jsonl.gz",
        "-q",
        cwd=tmp_path,
    )
    log = read_log(tmp_path / "g.jsonl.gz")
    faults = [f for d in log.decisions for f in d.faults if d.seat == 0]
    assert faults and all(f.kind == "malformed" and where in f.detail for f in faults)
    mine = [d for d in log.decisions if d.seat == 0]
    assert all(d.note is None and d.info is None for d in mine)
    if policy == "forfeit":
        assert len(faults) == 1 and all(d.auto for d in mine)
    else:  # legal move 0 played for it, each fault counted, up to the third
        assert mine[0].auto and len(faults) == min(3, len(mine))


def test_the_search_bot_says_its_estimate_and_its_worlds(tmp_path: Path) -> None:
    referee(
        "play",
        f"search={PY} {ROOT / 'sample_bots' / 'search_bot.py'} --worlds 8",
        f"lowest={PY} {BOTS / 'lowest.py'}",
        *SHORT,
        "--set",
        "rounds=single",
        "--log",
        "g.jsonl.gz",
        "-q",
        cwd=tmp_path,
    )
    said = [d for d in read_log(tmp_path / "g.jsonl.gz").decisions if d.note is not None]
    assert said, "the search bot said nothing"
    for d in said:
        assert d.seat == 0 and d.info is not None and d.note is not None
        assert d.info["worlds"] == 8 and d.info["moves"] >= 2
        assert d.note.startswith(f"{d.info['estimate']:+.1f} over 8 worlds")
