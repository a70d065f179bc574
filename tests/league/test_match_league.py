"""format = "match" leagues with real bot processes: paired duplicate units through
the league's pool, ledger, resume and cluster, stopping at exactly the same unit
whatever runs the games (several jobs or a cluster), and refusing a bad [match]
in one line.

Greedy against random on double-6, one round, tested as H0 -100 against H1 +100:
greedy is far better there, so H1 comes within a few units. Deals and bots' seeds
are pinned, so two runs play the same games and must reach the same verdict.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from referee.league.config import ConfigError, load_config
from referee.logs.gamelog import read_log
from tests._procs import assert_none_left, new_token
from tests.league.test_run import (
    DEAL_KEY_HEX,
    ENV,
    KEY_HEX,
    REFEREE,
    first,
    ledger_records,
    sample,
    toml_value,
    write_league,
)

SPRT = {"elo0": -100, "elo1": 100}


def match_league(folder: Path, token: str, field: int = 0, **match: Any) -> Path:
    bots = [sample("greedy", "greedy_bot.py", token), sample("random", "random_bot.py", token)]
    bots += [first(f"f{i}", token) for i in range(field)]
    path = write_league(
        folder,
        bots,
        table=2 + max(0, field - 1),
        format="match",
        bot_seed_key=KEY_HEX,
        deal_key=DEAL_KEY_HEX,
    )
    lines = ["[match]", 'new = "greedy"', 'base = "random"']
    lines += [f"{k} = {toml_value(v)}" for k, v in match.items()]
    if "sprt" not in match:
        lines.append("sprt = { elo0 = -100, elo1 = 100 }")
    text = path.read_text().replace("[rules]", "\n".join(lines) + "\n\n[rules]", 1)
    path.write_text(text)
    return path


def league(path: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [REFEREE, "league", str(path), "--out", str(out), "--sandbox", "none", *extra]
    return subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=240)


def test_a_match_league_decides_reports_and_resumes(tmp_path: Path) -> None:
    token = new_token()
    path = match_league(tmp_path / "m", token, max_games=400)
    out = tmp_path / "out"
    done = league(path, out, "--jobs", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    units = [line for line in lines if line.startswith("units ")]
    final = [line for line in lines if not line.startswith("units ")]
    assert [int(line.split()[1]) for line in units] == list(range(1, len(units) + 1))
    assert final[0].startswith(f"Results of greedy vs random: {len(units)} units, ")
    assert final[1].startswith("Elo difference: ") and "LOS: " in final[1]
    assert re.search(r"- H1 was accepted by the (LLR|mixture test)$", final[2]), final[2]
    assert final[3].startswith("standings written to ")
    standings = json.loads((out / "standings.json").read_text())
    summary = standings["match"]
    assert summary["verdict"] == "H1" and summary["units"] == len(units)
    assert (summary["new"], summary["base"]) == ("greedy", "random")
    assert summary["games"] == standings["games"] == 2 * len(units)  # counted units only
    assert "## Match" in (out / "standings.md").read_text()
    # Each unit: one deal, NEW (greedy) where BASE (random) sits in the other game; the
    # tested seat moves round the table. Games of the units after the verdict that were
    # recorded before the stop are not counted.
    records = {r.idx: r for r in ledger_records(out)}
    for unit in range(len(units)):
        a, b = records[2 * unit], records[2 * unit + 1]
        assert a.seed == b.seed and a.unit == b.unit == unit
        tested = unit % 2
        assert a.seats[tested] == "greedy" and b.seats[tested] == "random"
        assert a.seats[1 - tested] == "random" and b.seats[1 - tested] == "greedy"
        ha, hb = read_log(Path(a.log_path)).header, read_log(Path(b.log_path)).header
        assert ha.seed == hb.seed and ha.bot_seed_key == hb.bot_seed_key
    assert_none_left(token)

    # Resumed: the same verdict from the ledger, and no game played.
    before = len(records)
    again = league(path, out, "--resume")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[:3] == final[:3]  # no unit line: nothing was counted anew
    assert len(ledger_records(out)) == before
    assert json.loads((out / "standings.json").read_text())["match"] == summary

    # `referee standings` on the match's folder: its report and the counted units.
    shown = subprocess.run(
        [REFEREE, "standings", str(out)], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-3:] == final[:3]
    as_json = subprocess.run(
        [REFEREE, "standings", str(out), "--json"],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    again_json = json.loads(as_json.stdout)
    assert again_json["match"] == summary and again_json["games"] == 2 * len(units)

    # Pinned deals and seeds: a cluster of two workers stops at the same unit as three
    # jobs here did, with the same statistics.
    other = league(path, tmp_path / "cluster", "-q", "--cluster", "local:2")
    assert other.returncode == 0, other.stderr
    assert json.loads((tmp_path / "cluster" / "standings.json").read_text())["match"] == summary
    assert_none_left(token)


def test_a_match_with_a_field_runs_out_undecided_exit_1(tmp_path: Path) -> None:
    token = new_token()
    path = match_league(tmp_path / "m", token, field=2, max_games=6, luck=True)
    out = tmp_path / "out"
    done = league(path, out, "--jobs", "2")
    assert done.returncode == 1, done.stderr
    assert "- no decision (--max-games ran out)" in done.stdout
    records = sorted(ledger_records(out), key=lambda r: r.idx)
    assert len(records) == 6
    for a, b in zip(records[::2], records[1::2], strict=True):
        tested = a.unit % 3
        assert (a.seats[tested], b.seats[tested]) == ("greedy", "random")
        field = [s for i, s in enumerate(a.seats) if i != tested]
        assert field == ["f0", "f1"] == [s for i, s in enumerate(b.seats) if i != tested]
    assert_none_left(token)


def test_a_bad_match_table_is_named(tmp_path: Path) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"new": "nobody"}, "match.new: 'nobody' is not a bot of this league"),
        ({"base": "greedy"}, "match.base: 'greedy' is new too"),
        ({"sprt": "{ elo0 = 5, elo1 = 0 }"}, "match.sprt: "),
        ({"max_games": 1}, "match.max_games: 1 is too small"),
        ({"colour": 1}, "match.colour: unknown key"),
    ]
    for extra, words in cases:
        path = match_league(tmp_path / "bad", "x", **extra)
        text = path.read_text()
        if "new" in extra:  # the test's own line comes first: keep the case's
            text = text.replace('new = "greedy"\n', "", 1)
        if "base" in extra:
            text = text.replace('base = "random"\n', "", 1)
        if "sprt" in extra:
            text = text.replace('sprt = "{ elo0 = 5, elo1 = 0 }"', "sprt = { elo0 = 5, elo1 = 0 }")
        path.write_text(text)
        with pytest.raises(ConfigError) as caught:
            load_config(path, check_programs=False)
        assert str(caught.value).startswith(words), caught.value
    path = match_league(tmp_path / "table", "x", field=1)
    path.write_text(path.read_text().replace("table = 2", "table = 3"))
    with pytest.raises(ConfigError, match=r"league\.table: 3 seats, but a match of new, base"):
        load_config(path, check_programs=False)
    path = write_league(tmp_path / "rr", [first("a", "x"), first("b", "x")], table=2)
    path.write_text(path.read_text() + '\n[match]\nnew = "a"\n')
    with pytest.raises(ConfigError, match='match: only for format = "match"'):
        load_config(path, check_programs=False)
    done = subprocess.run(
        [REFEREE, "league", str(path)], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stderr.startswith("referee: error: match: only for")


def test_a_tcp_bot_that_would_see_a_deal_twice_is_refused_unless_accepted(tmp_path: Path) -> None:
    tcp = {"transport": "tcp", "token": "t0ken-Lq3v9XcB0mYt6RkWe1ZsNd"}
    greedy, random = sample("greedy", "greedy_bot.py", "x"), sample("random", "random_bot.py", "x")
    cases = [
        # new over tcp facing base: it plays both games of each unit
        ([{**tcp, "name": "greedy"}, random], 2, True),
        # a tcp bot of the field sits in both games
        ([greedy, random, {**tcp, "name": "remote"}, first("f0", "x")], 3, True),
        # new over tcp with a field: only in its own game of each unit
        ([{**tcp, "name": "greedy"}, random, first("f0", "x")], 2, False),
    ]
    for i, (bots, table, refused) in enumerate(cases):
        path = write_league(tmp_path / str(i), bots, table=table, format="match")
        text = '[match]\nnew = "greedy"\nbase = "random"\n\n[rules]'
        path.write_text(path.read_text().replace("[rules]", text, 1))
        if refused:
            with pytest.raises(ConfigError, match=r"match: tcp bot .* both games of each unit"):
                load_config(path, check_programs=False)
            text = path.read_text().replace(
                "[league]", "[league]\naccept_tcp_duplicate_risk = true"
            )
            path.write_text(text)
        assert load_config(path, check_programs=False).match is not None
