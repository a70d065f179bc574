"""The `referee` command line: `rules` and `selfplay`, driven through click's CliRunner."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from referee.cli import COMMANDS, main
from referee.game.selfplay import play_random
from referee.league.config import load_config
from referee.rules import PRESETS, VARIANTS, preset

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(*args: str) -> Result:
    # A fixed width, so that rich lays the score table out the same everywhere.
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "120"})


def table_rows(text: str) -> list[list[str]]:
    """The cells of each body row of a rich table (box-drawing or ASCII borders)."""
    rows = []
    for line in ANSI.sub("", text).splitlines():
        if line.startswith(("│", "|")):
            rows.append([cell.strip() for cell in re.split(r"[│|]", line)[1:-1]])
    return rows


def toml_of(stdout: str) -> dict[str, object]:
    lines = stdout.splitlines()
    assert lines[0].startswith("# referee rules ")
    body = "\n".join(line for line in lines if not line.startswith("#"))
    parsed: dict[str, object] = tomllib.loads(body)
    return parsed


# ---------------------------------------------------------------- referee rules


def test_rules_lists_presets_and_variants() -> None:
    result = run("rules")
    assert result.exit_code == 0, result.output
    listed = {line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")}
    assert listed == set(PRESETS) | set(VARIANTS)
    assert result.stderr == ""


def test_rules_celko_with_six_players_prints_toml() -> None:
    result = run("rules", "celko", "--set", "players=6")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "# referee rules celko --set players=6"
    parsed = toml_of(result.stdout)
    rules = parsed["rules"]
    assert isinstance(rules, dict)
    # What a league file takes: no `players` in [rules], said as a comment instead.
    assert "players" not in rules
    assert result.stdout.splitlines()[1] == (
        "# players = 6: in a league file, the table size is [league] table"
    )
    assert rules["hand_size"] == 12
    assert rules["first_turn"] == "long"
    assert {**rules, "players": 6} == preset("celko", players=6).to_dict()


def test_rules_printed_are_a_league_files_rules_table(tmp_path: Path) -> None:
    result = run("rules", "celko", "--set", "players=6")
    assert result.exit_code == 0, result.output
    bots = "".join(f'[[bot]]\nname = "b{i}"\ncommand = ["true"]\n' for i in range(6))
    league = tmp_path / "league.toml"
    league.write_text(f'[league]\nname = "l"\ntable = 6\n{result.stdout}{bots}')
    config = load_config(league, check_programs=False)
    assert config.rules.to_dict() == preset("celko", players=6).to_dict()


@pytest.mark.parametrize("name", [*PRESETS, "standard+teams+swan-drive"])
def test_rules_prints_every_preset_resolved(name: str) -> None:
    result = run("rules", name)
    assert result.exit_code == 0, result.output
    resolved = preset(name).to_dict()
    assert result.stdout.splitlines()[1] == (
        f"# players = {resolved.pop('players')}: in a league file, the table size is [league] table"
    )
    assert toml_of(result.stdout) == {"rules": resolved}


def test_rules_several_sets_apply_in_order() -> None:
    result = run("rules", "standard", "--set", "max_pip=9", "--set", "players=7")
    assert result.exit_code == 0, result.output
    rules = toml_of(result.stdout)["rules"]
    assert isinstance(rules, dict)
    assert (rules["max_pip"], rules["hand_size"]) == (9, 6)
    assert "# players = 7:" in result.stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("rules", "standard", "--set", "nosuch=1"), "nosuch"),
        (("rules", "standard", "--set", "players=lots"), "players"),
        (("rules", "standard", "--set", "teams=maybe"), "teams"),
        (("rules", "standard", "--set", "first_turn=sideways"), "first_turn"),
        (("rules", "standard", "--set", "players=9"), "players=9"),
        (("rules", "standard", "--set", "max_pip=10"), "max_pip=10"),
        (("rules", "standard+teams", "--set", "players=5"), "teams"),
        (("rules", "standard", "--set", "players"), "players"),
        (("rules", "nosuch"), "nosuch"),
        (("rules", "celko+nosuch"), "nosuch"),
        (("rules", "--set", "players=6"), "--set"),
        (("selfplay", "--set", "teams=maybe"), "teams"),
        (("selfplay", "--players", "9"), "players=9"),
        (("selfplay", "--rules", "nosuch"), "nosuch"),
        (
            ("selfplay", "--seed", "-1"),
            "--seed -1 is out of range: a seed is a whole number from 0",
        ),
    ],
)
def test_bad_option_is_one_line_on_stderr_and_exit_2(args: tuple[str, ...], named: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.endswith("\n") and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("referee: error: ")
    assert named in result.stderr


# ---------------------------------------------------------------- referee selfplay


def test_selfplay_prints_thirteen_rounds_and_totals() -> None:
    result = run("selfplay", "--players", "4", "--seed", "1")
    assert result.exit_code == 0, result.output
    state, decisions = play_random(preset("standard", players=4), 1)
    assert state.outcome is not None
    assert f"seed 1, {decisions} decisions" in result.stdout
    rows = table_rows(result.stdout)
    rounds = [row for row in rows if row[0].isdigit()]
    assert [row[0] for row in rounds] == [str(k) for k in range(1, 14)]
    assert [row[1] for row in rounds] == [f"{e}-{e}" for e in range(12, -1, -1)]
    assert [tuple(int(c) for c in row[3:]) for row in rounds] == [r.scores for r in state.results]
    totals = next(row for row in rows if row[0] == "total")
    assert tuple(int(c) for c in totals[3:]) == state.outcome.scores
    ranks = next(row for row in rows if row[0] == "rank")
    assert tuple(int(c) for c in ranks[3:]) == state.outcome.ranks


def test_selfplay_with_teams() -> None:
    result = run("selfplay", "--rules", "standard+teams")
    assert result.exit_code == 0, result.output
    assert "team 0" in result.stdout and "team 1" in result.stdout
    rows = table_rows(result.stdout)
    rounds = [row for row in rows if row[0].isdigit()]
    assert len(rounds) == 13
    totals = next(row for row in rows if row[0] == "total")
    scores = [int(c) for c in totals[3:]]
    assert len(scores) == 4
    assert scores[0] == scores[2] and scores[1] == scores[3]  # partners share a score


def test_selfplay_is_repeatable() -> None:
    first = run("selfplay", "--rules", "celko", "--players", "3", "--seed", "7")
    second = run("selfplay", "--rules", "celko", "--players", "3", "--seed", "7")
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert "0.1.0" in result.stdout


def test_each_command_loads_its_own_module_only() -> None:
    """`referee rules` imports no other command's module (each command is loaded when
    used, `referee.cli.COMMANDS`), and every command of the list loads under its name."""
    code = (
        "import sys\n"
        "from referee.cli import main\n"
        "try:\n"
        "    main(['rules'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('referee.commands.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert [m for m in loaded if m != "referee.commands.common"] == ["referee.commands.rules"]
    context = click.Context(main)
    assert main.list_commands(context) == sorted(COMMANDS)
    for name in COMMANDS:
        command = main.get_command(context, name)
        assert command is not None and command.name == name
    assert main.get_command(context, "nosuch") is None
