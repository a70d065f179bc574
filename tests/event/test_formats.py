"""The other event formats with real bot processes (a round-robin qualifier and a final),
and bad event files, each a one-line error naming what is wrong before anything starts."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.event.config import load_event
from referee.league.config import ConfigError
from referee.league.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
PY = json.dumps(sys.executable)
KEY = "00112233445566778899aabbccddeeff"


def bot(name: str, script: str) -> str:
    return f'[[bot]]\nname = "{name}"\ncommand = [{PY}, "{ROOT / script}"]\n'


BOTS = "".join(
    bot(n, f"sample_bots/{s}_bot.py")
    for n, s in (("g1", "greedy"), ("r1", "random"), ("g2", "greedy"), ("r2", "random"))
)


def write(folder: Path, stages: str, event: str = "", bots: str = BOTS) -> Path:
    table = "" if "table =" in event else "table = 3\n"
    text = (
        f'[event]\nname = "rr"\n{table}seed = 2\nout = "out"\n'
        f'deal_key = "{KEY * 2}"\nbot_seed_key = "{KEY}"\n{event}\n'
        f'[rules]\nmax_pip = 6\nrounds = "single"\n\n{bots}\n{stages}'
    )
    path = folder / "event.toml"
    path.write_text(text, encoding="utf-8")
    return path


def play(path: Path) -> subprocess.CompletedProcess[str]:
    """`referee event` on the file at `path`, unsandboxed, two jobs, in its folder."""
    return subprocess.run(
        [sys.executable, "-m", "referee", "event", str(path), "--sandbox", "none", "-j", "2"],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_round_robin_qualifier_then_a_final(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[stage]]\nformat = "round-robin"\nadvance = 3\n\n[[stage]]\nformat = "final"\n'
        "deals = 2\n",
    )
    done = play(path)
    assert done.returncode == 0, done.stderr
    event = json.loads((tmp_path / "out" / "event.json").read_text())
    rr, final = event["stages"]
    assert [len(s["rounds"]) for s in event["stages"]] == [1, 1]
    ledger = Ledger(tmp_path / "out" / rr["rounds"][0]["folders"][0] / "league.db")
    try:
        records = ledger.records()
    finally:
        ledger.close()
    # Every combination of 3 of the 4 entries, each deal under its 3 rotations; the
    # combinations have their own deals (an entry sits at several of them).
    assert len(records) == 4 * 3 and len({r.seed for r in records}) == 4
    assert sorted(rr["ranking"]) == ["g1", "g2", "r1", "r2"]
    assert final["entries"] == rr["advanced"] == rr["ranking"][:3]
    assert final["rounds"][0]["tables"] == [final["entries"]]
    assert sorted(final["ranking"]) == sorted(final["entries"])
    assert rr["ranking"][3] in done.stdout and "below the cut of 3" in done.stdout
    assert (tmp_path / "out" / "site" / "index.html").is_file()


@pytest.mark.parametrize(
    ("stages", "event", "error"),
    [
        ("", "", "an event needs at least one [[stage]]"),
        ('[[stage]]\nformat = "ladder"\n', "", "stage[0].format: one of swiss"),
        ('[[stage]]\nformat = "swiss"\nswiss_rounds = 0\n', "", "stage[0].swiss_rounds: a whole"),
        ('[[stage]]\nformat = "swiss"\nbogus = 1\n', "", "stage[0].bogus: not a key"),
        ('[[stage]]\nformat = "final"\n', "", "a final seats one table of 3, and 4 entries"),
        (
            '[[stage]]\nformat = "swiss"\nadvance = 9\n[[stage]]\nformat = "final"\n',
            "",
            "stage[0].advance: 9, but 4 entries play it",
        ),
        ('[[stage]]\nformat = "swiss"\nadvance = 3\n', "", "the last stage advances nobody"),
        (
            '[[stage]]\nformat = "knockout"\neliminate = 1\nstrikes = 2\n',
            "",
            "eliminate or strikes, not both",
        ),
        ('[[stage]]\nformat = "swiss"\n', 'points = "most"', "event.points:"),
        ('[[stage]]\nformat = "swiss"\nremainder = "smaller"\n', "points = [2, 1, 0]", "do not"),
        ('[[stage]]\nformat = "swiss"\n', "rounds = 2", "event.rounds: not a key of [event]"),
        ('[[stage]]\nformat = "swiss"\nrounds = 2\n', "", "stage[0].rounds: not a key of a swiss"),
        ('[[stage]]\nformat = "knockout"\n', "table = 2", "a knockout needs tables of 3"),
        ('[[stage]]\nformat = "swiss"\n[[bot]]\nname = "me"\ncommand = "human"\n', "", "a person"),
    ],
)
def test_a_bad_event_file_is_one_line_naming_the_key(
    tmp_path: Path, stages: str, event: str, error: str
) -> None:
    path = write(tmp_path, stages, event)
    with pytest.raises(ConfigError) as caught:
        load_event(path, check_programs=False)
    assert error in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_says_a_bad_file_in_one_line_and_starts_nothing(tmp_path: Path) -> None:
    tcp = '[[bot]]\nname = "net"\ntransport = "tcp"\ntoken = "' + "x" * 43 + '"\n'
    path = write(tmp_path, '[[stage]]\nformat = "swiss"\n', bots=BOTS + tcp)
    done = subprocess.run(
        [sys.executable, "-m", "referee", "event", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "tcp bots are not seated in events" in done.stderr
    assert not (tmp_path / "out").exists()


def test_swiss_byes_then_a_knockout_by_strikes(tmp_path: Path) -> None:
    bots = BOTS + bot("g3", "sample_bots/greedy_bot.py")
    path = write(
        tmp_path,
        '[[stage]]\nformat = "swiss"\nswiss_rounds = 1\nremainder = "bye"\nadvance = 4\n\n'
        '[[stage]]\nformat = "knockout"\nstrikes = 1\n',
        bots=bots,
    )
    done = play(path)
    assert done.returncode == 0, done.stderr
    event = json.loads((tmp_path / "out" / "event.json").read_text())
    swiss, knockout = event["stages"]
    (only,) = swiss["rounds"]
    # Five entries at tables of 3 with byes: one table, the two lowest seeds sit out
    # with an average game's points (1 for "beaten" at tables of 3).
    assert [len(t) for t in only["tables"]] == [3] and only["byes"] == ["g3", "r2"]
    assert all(only["scores"][n] == 1.0 for n in only["byes"])
    assert all(swiss["totals"][n]["byes"] == 1 for n in only["byes"])
    # Strikes: every entry out had a last place; the last round is the final table.
    *groups, final = knockout["rounds"]
    out = [n for r in groups for n in r["out"]]
    assert out and all(knockout["totals"][n]["lasts"] >= 1 for n in out)
    assert len(final["tables"]) == 1 and len(final["tables"][0]) == 3
    assert "last places" in done.stdout


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[league]\nformat = "swiss"\n', 'league.format: "swiss" is a stage of an event'),
        ('[event]\nname = "x"\n', "an event's file ([event]): run `referee event"),
    ],
)
def test_a_league_file_asking_for_an_event_says_how(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text(text + BOTS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "referee", "league", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and error in done.stderr and done.stderr.count("\n") == 1


def test_no_deal_is_in_play_at_two_tables_of_a_round_at_once(tmp_path: Path) -> None:
    # Two tables of 3 share the round's board; with two jobs they would play it side by
    # side, and two entries (of one author, say) could pass a hand between them while
    # both play it. Each bot notes when each game began for it (it read game_start) and
    # when it sent its last move in it, and the hand it was dealt. (Not when it read
    # game_end: under load a process may be frozen as idle before it read it.)
    times = tmp_path / "times.jsonl"
    bots = "".join(
        f'[[bot]]\nname = "c{i}"\ncommand = [{PY}, "{ROOT / "tests/bots/clocked.py"}", "{times}"]\n'
        for i in range(6)
    )
    path = write(tmp_path, '[[stage]]\nformat = "swiss"\nswiss_rounds = 1\n', bots=bots)
    done = play(path)
    assert done.returncode == 0, done.stderr
    games = [json.loads(line) for line in times.read_text().splitlines()]
    assert len(games) == 2 * 3 * 3  # two tables, three rotations, three seats
    by_hand: dict[str, list[tuple[int, int]]] = {}
    for g in games:
        assert g["last"] is not None  # every seat moves in a game of double-6
        by_hand.setdefault(json.dumps(g["hand"]), []).append((g["began"], g["last"]))
    # Each seat's hand was dealt in all six games of the deal (both tables' rotations).
    assert sorted(len(v) for v in by_hand.values()) == [6, 6, 6]
    for spans in by_hand.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, "two games of one deal were in play at once"


def test_an_event_where_nothing_could_be_played_fails(tmp_path: Path) -> None:
    dead = "".join(bot(f"x{i}", "tests/bots/exit_at_once.py") for i in range(3))
    path = write(tmp_path, '[[stage]]\nformat = "swiss"\nswiss_rounds = 2\n', bots=dead)
    done = play(path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nothing could be played: every seat of every game of the round forfeited" in (
        done.stderr
    )
    assert "final standings" not in done.stdout
    # No round is written as played, and nothing says the event ended.
    state = tmp_path / "out" / "event.json"
    assert not state.exists() or json.loads(state.read_text())["stages"][0]["rounds"] == []
    # Its folder is still an event's: verify and reveal say why they cannot, in one line.
    for command in ("verify", "reveal"):
        said = subprocess.run(
            [sys.executable, "-m", "referee", command, str(tmp_path / "out")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert said.returncode == 2 and said.stderr.count("\n") == 1, said.stderr
        assert "the event has recorded no round yet" in said.stderr
