"""What a running league prints: a bar in a terminal; in a file or pipe one line per
finished game (as cutechess-cli) and the standings every --report-every games, whole
lines that never wrap.
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

from rich.console import Console

from referee.league.progress import Display, finished_line
from tests._procs import new_token
from tests.league.test_run import (
    ENV,
    REFEREE,
    first,
    ledger_records,
    no_process_left,
    sample,
    write_league,
)
from tests.league.test_standings import rec

LINE = re.compile(r"Finished game (\d+) of (\d+) \((.+)\): ([\d-]+) \{(.+)\}")


def test_a_finished_game_in_one_short_line() -> None:
    won = rec(11, ["greedy", "random", "node"], [5, 30, 45], [1, 2, 3])
    assert (
        finished_line(won, 24)
        == "Finished game 12 of 24 (greedy, random, node): 5-30-45 {greedy wins}"
    )
    shared = rec(0, ["a", "b", "c"], [5, 5, 40], [1, 1, 3])
    assert finished_line(shared, 3).endswith(": 5-5-40 {a and b share first}")
    faulty = rec(
        2,
        ["a", "b", "c"],
        [0, 12, 60],
        [1, 2, 3],
        forfeited=[False, False, True],
        faults=[
            {"seat": 2, "kind": "crash", "detail": "x"},
            {"seat": 1, "kind": "timeout", "detail": "x"},
            {"seat": 1, "kind": "illegal", "detail": "x"},
        ],
    )
    assert finished_line(faulty, 9).endswith("{a wins; b 2 faults; c forfeited}")


def test_lines_in_a_pipe_a_bar_in_a_terminal_nothing_when_quiet() -> None:
    record = rec(0, ["a", "b"], [3, 9], [1, 2])
    said = {}
    for kind, console, quiet in (
        ("pipe", Console(file=io.StringIO(), width=80), False),
        ("terminal", Console(file=io.StringIO(), width=80, force_terminal=True), False),
        ("quiet", Console(file=io.StringIO(), width=80), True),
    ):
        with Display(console, "cup", total=4, done=1, quiet=quiet) as display:
            display.finished(record)
        assert display.counters.done == 2 and display.counters.leader == "a"
        said[kind] = console.file.getvalue()  # type: ignore[attr-defined]
    assert said["pipe"] == "Finished game 1 of 4 (a, b): 3-9 {a wins}\n"
    assert "Finished" not in said["terminal"] and "2/4" in said["terminal"]  # the bar
    assert said["quiet"] == ""


def test_a_league_in_a_pipe_prints_each_game_and_the_standings_every_n(tmp_path: Path) -> None:
    token = new_token()
    long_name = "greedy_with_a_name_long_enough_to_pass_eighty_columns_in_a_line"  # < 64
    bots = [
        sample(long_name, "greedy_bot.py", token),
        sample("random", "random_bot.py", token),
        first("first", token),
    ]
    path = write_league(tmp_path, bots, table=3, deals=2)  # 2 deals x 3 rotations
    out = tmp_path / "out"
    env = {k: v for k, v in ENV.items() if k != "COLUMNS"}  # a pipe, as under nohup
    args = ["league", str(path), "--out", str(out), "--jobs", "2", "--report-every", "2"]
    with no_process_left(token):
        done = subprocess.run(
            [REFEREE, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    records = {r.idx + 1: r for r in ledger_records(out)}
    finished = [(i, m) for i, line in enumerate(lines) if (m := LINE.fullmatch(line))]
    assert sorted(int(m[1]) for _, m in finished) == [1, 2, 3, 4, 5, 6]
    for _, m in finished:
        r = records[int(m[1])]
        assert m[2] == "6" and m[3] == ", ".join(r.seats)  # the names, whole, in seat order
        assert m[4] == "-".join(map(str, r.scores))
        winners = [n for n, rank in zip(r.seats, r.ranks, strict=True) if rank == 1]
        assert m[5].startswith(winners[0])
    assert any(len(line) > 80 for _, m in finished for line in [m[0]])  # and not wrapped
    # The standings after 2, 4 and 6 games, each after at least that many game lines,
    # with exactly those games counted, in the full table.
    for count in (2, 4, 6):
        title = lines.index(f"t: after {count} games")
        assert sum(1 for i, _ in finished if i < title) >= count
        body = [line for line in lines[title:] if line.startswith("│")][:3]
        assert {row.split("│")[3].strip() for row in body} == {str(count)}  # games each
        assert "μ ± σ" in lines[title + 2] and "latency ms" in lines[title + 2]
    assert lines.index("t: after 6 games") < lines.index("t: 6 games")  # then the final table
    assert any(line.startswith("rating: μ − 3σ (openskill") for line in lines)  # its legend
    assert "standings written to" in lines[-1]
