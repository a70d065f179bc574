"""The standings as shown: one column definition for the terminal, Markdown and CSV
tables; a terminal table fitted to its width with one line per bot and whole names;
the legend; and output to a file or pipe that never hard-wraps.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from referee.cli import main
from referee.consoles import PIPE_WIDTH, output_console
from referee.league.ledger import Ledger, Record
from referee.league.output import COLUMNS, chart_svg, csv_text, fitted_table, legend, markdown
from referee.league.run import print_standings
from referee.league.standings import Standings, compute
from tests.league.test_standings import hand_records

LONG = {"a": "greedy_deluxe_v2", "b": "random_walker", "c": "[bold]node|js"}


def renamed(names: dict[str, str]) -> list[Record]:
    """The hand-computed games of test_standings, with other names."""
    return [dataclasses.replace(r, seats=[names[s] for s in r.seats]) for r in hand_records()]


def standings(names: dict[str, str] = LONG) -> Standings:
    """The hand-computed league, with longer names (one of them markup)."""
    return compute(list(names.values()), renamed(names))


def shown(width: int, s: Standings | None = None) -> str:
    console = Console(file=io.StringIO(), width=width)
    print_standings(console, s or standings(), "cup: 4 games")
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(text, str)
    return text


def rows(text: str) -> list[list[str]]:
    """The cells of the standings table's body lines (the first table printed)."""
    table = text.split("Head to head")[0]
    return [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in table.splitlines()
        if line.startswith("│")
    ]


def headers(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in line.split("┃")[1:-1]]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_a_narrow_terminal_keeps_one_line_per_bot_and_whole_names(width: int) -> None:
    s = standings()
    text = shown(width, s)
    assert max(len(line) for line in text.splitlines()) <= width
    body = rows(text)
    assert len(body) == 3  # one line per bot: nothing wrapped
    assert [r[1] for r in body] == [b.name for b in s.bots]  # whole, and markup shown as is
    fit = fitted_table(s, "t", width)
    cols = fit.columns
    heads = headers(text)
    assert len(heads) == len(cols)
    # The essentials are always there, and what is left out is said.
    for essential in ("#", "bot", "points/game", "rating"):
        assert any(c.header == essential for c in cols)
    words = " ".join(text.split())  # the lines under the table wrap like any text
    left_out = [c.header for c in COLUMNS if c not in cols]
    if left_out:
        assert f"left out at {width} columns: {', '.join(left_out)} (all in standings.md)" in words
    # The legend explains each column shown, under the header shown.
    for c in cols:
        if c.meaning:
            named = f"{c.short} ({c.header})" if fit.short and c.short != c.header else c.header
            assert f"{named}: {c.meaning}" in words


def test_columns_go_least_important_first_and_wide_terminals_get_all() -> None:
    s = standings()
    at = {w: fitted_table(s, "t", w) for w in (60, 80, 120, 200)}
    assert at[200].columns == COLUMNS and not at[200].short
    assert set(at[60].columns) <= set(at[80].columns) <= set(at[120].columns)
    assert len(at[60].columns) < len(at[120].columns)
    # The first to go is μ ± σ (the rating says it), the last the interval.
    assert [c.header for c in at[120].left_out] in ([], ["μ ± σ"])
    assert "±95%" in [c.header for c in at[60].columns]
    wide = shown(200, s)
    assert headers(wide) == [c.header for c in COLUMNS]
    assert "left out" not in wide
    # Latency mean / worst and μ ± σ as the legend says.
    row = rows(wide)[[b.name for b in s.bots].index("greedy_deluxe_v2")]
    assert row[-1] == "1.0 / 9" and row[headers(wide).index("faults")] == "2"


def test_terminal_markdown_and_csv_come_from_one_column_list() -> None:
    s = standings()
    wide = shown(200, s)
    md = markdown(s, "cup")
    md_head = next(line for line in md.splitlines() if line.startswith("| #"))
    assert [c.strip() for c in md_head.strip("|").split(" | ")] == headers(wide)
    table = list(csv.reader(io.StringIO(csv_text(s))))
    assert table[0] == [name for c in COLUMNS for name, _ in c.csv]
    assert all(len(row) == len(table[0]) for row in table)
    # Every cell of the CSV is a plain value: no JSON, no pairs.
    for row in table[1:]:
        for value in row[2:]:
            assert value == "" or re.fullmatch(r"-?\d+(\.\d+)?", value), value
    # A name holding Markdown's cell separator is escaped there.
    assert "| [bold]node\\|js |" in md and "node|js" not in md


def test_the_legend_says_what_the_columns_mean() -> None:
    lines = legend(COLUMNS)
    text = "\n".join(lines)
    assert "rating: μ − 3σ (openskill" in text
    assert "latency ms: decision time in ms, mean / worst" in text
    assert "fewer points are better" in text
    assert "Student's t" in text and "t(0.975, n − 1)" in text
    assert len(lines) == sum(1 for c in COLUMNS if c.meaning)


def test_a_head_to_head_too_wide_for_the_terminal_is_left_to_the_file() -> None:
    names = {"a": "a" * 30, "b": "b" * 30, "c": "c" * 30}
    text = shown(80, standings(names))
    assert "head to head: too wide for 80 columns (it is in standings.md)" in text
    assert len(rows(text)) == 3
    assert "Head to head: row ahead" in shown(200, standings(names))


def test_output_to_a_pipe_is_not_wrapped_unless_columns_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = output_console()  # pytest's stdout is not a terminal
    assert not piped.is_terminal
    assert piped.width == PIPE_WIDTH and piped.soft_wrap
    monkeypatch.setenv("COLUMNS", "77")
    asked = output_console()
    assert asked.width == 77 and not asked.soft_wrap


def write_ledger(out: Path, records: list[Record], names: list[str]) -> None:
    ledger = Ledger(out / "league.db")
    ledger.db.execute("INSERT INTO meta VALUES ('name', 'cup'), ('bots', ?)", (json.dumps(names),))
    for r in records:
        ledger.record(r)
    ledger.close()


def test_referee_standings_in_a_pipe_and_at_a_given_width(tmp_path: Path) -> None:
    s = standings()
    write_ledger(tmp_path, renamed(LONG), list(LONG.values()))
    piped = CliRunner().invoke(main, ["standings", str(tmp_path)], env={"COLUMNS": None})
    assert piped.exit_code == 0, piped.output
    assert headers(piped.stdout) == [c.header for c in COLUMNS]  # the full table
    assert len(rows(piped.stdout)) == 3
    legend_line = next(line for line in piped.stdout.splitlines() if line.startswith("±95%"))
    assert len(legend_line) > 80 and legend_line.endswith("- below two units")  # not wrapped
    for width in (60, 80, 120):
        narrow = CliRunner().invoke(main, ["standings", str(tmp_path)], env={"COLUMNS": str(width)})
        assert narrow.exit_code == 0, narrow.output
        assert max(len(line) for line in narrow.stdout.splitlines()) <= width
        assert [r[1] for r in rows(narrow.stdout)] == [b.name for b in s.bots]


def test_the_chart_draws_any_name_as_text() -> None:
    # A name is the bot's own text: markup in it is escaped, a control character shown.
    import xml.etree.ElementTree as ET

    names = {"a": "$^$", "b": "中文名字的机器人", "c": "<script>x</script>&\tz"}
    svg = chart_svg(standings(names), "$_{$ <cup>")
    root = ET.fromstring(svg)  # well-formed XML
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "$_{$ <cup>" in texts
    for name in ("$^$", "中文名字的机器人", "<script>x</script>&\\tz"):
        assert name in texts, (name, texts)
    assert "<script>" not in svg
    lines = list(root.iter("{http://www.w3.org/2000/svg}polyline"))
    assert len(lines) == 2 * len(names)  # a rating and a points line per bot
