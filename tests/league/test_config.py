"""LEAGUE.toml: what a good file gives, and the error a bad one gives, naming its key.

Most cases go through `parse_config` with a dict (no file, no program lookup); a
few go through `load_config` and the `referee league` command line, which must
print the same one-line error and exit with status 2 before any game starts.
"""

from __future__ import annotations

import copy
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from referee.bots.faults import Policy
from referee.cli import main
from referee.league.config import ConfigError, LeagueConfig, load_config, parse_config
from referee.rules import preset

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = str(ROOT / "sample_bots" / "random_bot.py")

Data = dict[str, Any]


def base() -> Data:
    """A good league of four bots at tables of three."""
    return {
        "league": {"name": "t", "table": 3, "deals": 2, "seed": 5},
        "rules": {"max_pip": 6, "rounds": "single"},
        "bot": [{"name": n, "command": [PY, RANDOM_BOT]} for n in ("a", "b", "c", "d")],
    }


def parse(data: Data, tmp_path: Path, check_programs: bool = False) -> LeagueConfig:
    return parse_config(data, tmp_path / "league.toml", check_programs=check_programs)


def changed(edit: Callable[[Data], None]) -> Data:
    data = copy.deepcopy(base())
    edit(data)
    return data


def setter(*path: str | int, value: Any) -> Callable[[Data], None]:
    """An edit that sets data[path...] = value."""

    def edit(data: Data) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def deleter(*path: str | int) -> Callable[[Data], None]:
    def edit(data: Data) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


def gauntlet(challengers: Any, table: int = 3) -> Callable[[Data], None]:
    def edit(data: Data) -> None:
        data["league"].update(format="gauntlet", challengers=challengers, table=table)

    return edit


# (edit, the key the message must start with, a fragment of the message)
BAD: dict[str, tuple[Callable[[Data], None], str, str]] = {
    "unknown top key": (setter("leage", value={}), "leage: unknown key", "league"),
    "league not a table": (setter("league", value=3), "league: expected a table", ""),
    "unknown league key": (setter("league", "tabel", value=3), "league.tabel: unknown", "table"),
    "bot not an array": (setter("bot", value={"name": "a"}), "bot: expected", ""),
    "one bot": (lambda d: d.update(bot=d["bot"][:1]), "bot: a league needs at least 2", ""),
    "bot not a table": (setter("bot", 1, value="b"), "bot[1]: expected a table", ""),
    "unknown bot key": (setter("bot", 1, "cmd", value="x"), "bot[1].cmd: unknown", "command"),
    "bot without a name": (deleter("bot", 2, "name"), "bot[2].name", ""),
    "empty name": (setter("bot", 0, "name", value=""), "bot[0].name", ""),
    "name with a space": (setter("bot", 0, "name", value="my bot"), "bot[0].name", "spaces"),
    "name with a slash": (setter("bot", 0, "name", value="a/b"), "bot[0].name", "slashes"),
    "name twice": (setter("bot", 3, "name", value="b"), "bot[3].name", "used twice"),
    "no command": (deleter("bot", 1, "command"), "bot[1].command", ""),
    "empty command list": (setter("bot", 1, "command", value=[]), "bot[1].command: empty", ""),
    "blank command": (setter("bot", 1, "command", value="   "), "bot[1].command: empty", ""),
    "command of numbers": (setter("bot", 1, "command", value=[1, 2]), "bot[1].command", ""),
    "cwd missing": (setter("bot", 0, "cwd", value="no/such/dir"), "bot[0].cwd", "not a folder"),
    "cwd not a string": (setter("bot", 0, "cwd", value=5), "bot[0].cwd", ""),
    "env not a table": (setter("bot", 0, "env", value="X=1"), "bot[0].env", ""),
    "env value not a string": (setter("bot", 0, "env", value={"X": 1}), "bot[0].env.X", ""),
    "restart unknown": (setter("bot", 2, "restart", value="sometimes"), "bot[2].restart", ""),
    "memory_mb negative": (
        setter("bot", 0, "memory_mb", value=-1),
        "bot[0].memory_mb",
        "not negative",
    ),
    "cpu_s a string": (setter("bot", 0, "cpu_s", value="9"), "bot[0].cpu_s", ""),
    "max_files a bool": (setter("bot", 0, "max_files", value=True), "bot[0].max_files", ""),
    "table of one": (setter("league", "table", value=1), "league.table", "2 to 8"),
    "table of nine": (setter("league", "table", value=9), "league.table", "2 to 8"),
    "table above bots": (setter("league", "table", value=5), "league.table", "only 4 bots"),
    "table a string": (setter("league", "table", value="3"), "league.table", ""),
    "table a bool": (setter("league", "table", value=True), "league.table", ""),
    "rules option unknown": (
        setter("rules", "max_pips", value=6),
        "rules.max_pips: unknown key (did you mean max_pip?)",
        "must_play",
    ),
    "rules value bad": (
        setter("rules", "rounds", value="sideways"),
        'rules.rounds: "sideways"; expected one of "descending", "ascending", "single"',
        "",
    ),
    "rules preset unknown": (setter("rules", "preset", value="nope"), "rules.preset:", "nope"),
    "rules bool a string": (
        setter("rules", "must_play", value="yes"),
        'rules.must_play: expected true or false, got "yes"',
        "",
    ),
    "rules bool a number": (
        setter("rules", "must_play", value=0),
        "rules.must_play: expected true or false, got 0",
        "",
    ),
    "rules number a bool": (
        setter("rules", "max_pip", value=True),
        "rules.max_pip: expected a whole number, got true",
        "",
    ),
    "rules players": (
        setter("rules", "players", value=3),
        "rules.players: in a league",
        "table in [league]",
    ),
    "rules a combination": (setter("rules", "teams", value=True), "rules: teams needs", ""),
    "rules preset a number": (setter("rules", "preset", value=3), "rules.preset", ""),
    "rules not a table": (setter("rules", value=[]), "rules: expected a table", ""),
    "format unknown": (setter("league", "format", value="swiss"), "league.format", "swiss"),
    "gauntlet, no challenger": (gauntlet([]), "league.challengers", "at least one"),
    "gauntlet, stranger": (gauntlet(["zed"]), "league.challengers", "'zed'"),
    "gauntlet, small field": (gauntlet(["a", "b", "c"]), "league.table", "field"),
    "gauntlet, not a list": (gauntlet("a"), "league.challengers", ""),
    "challengers in a round-robin": (
        setter("league", "challengers", value=["a"]),
        "league.challengers",
        "gauntlet",
    ),
    "deals zero": (setter("league", "deals", value=0), "league.deals", "at least 1"),
    "deals a float": (setter("league", "deals", value=1.5), "league.deals", ""),
    "duplicate a string": (setter("league", "duplicate", value="yes"), "league.duplicate", ""),
    "seed a string": (setter("league", "seed", value="5"), "league.seed", ""),
    "seed a bool": (setter("league", "seed", value=False), "league.seed", ""),
    "policy unknown": (setter("league", "policy", value="lenient"), "league.policy", "forfeit"),
    "max_faults a string": (setter("league", "max_faults", value="3"), "league.max_faults", ""),
    "jobs a string": (setter("league", "jobs", value="2"), "league.jobs", ""),
    "name a number": (setter("league", "name", value=7), "league.name", ""),
    "out a number": (setter("league", "out", value=7), "league.out", ""),
    "bot_seed_key not hex": (
        setter("league", "bot_seed_key", value="xyz"),
        "league.bot_seed_key",
        "hexadecimal",
    ),
    "deal_key not hex": (setter("league", "deal_key", value="xyz"), "league.deal_key", "hex"),
    "deal_key too short": (
        setter("league", "deal_key", value="00112233445566778899aabbccddee"),
        "league.deal_key",
        "30 hexadecimal digits; at least 32 (128 bits)",
    ),
    "deal_key a number": (setter("league", "deal_key", value=12), "league.deal_key", ""),
    # Every character hex, but 63 of them: the count is what is wrong, not the digits.
    "deal_key an odd count": (
        setter("league", "deal_key", value="a" * 63),
        "league.deal_key",
        "63 hexadecimal digits, an odd count",
    ),
    "deal_key a bad digit": (
        setter("league", "deal_key", value="0x" + "a" * 62),
        "league.deal_key",
        "expected hexadecimal digits, not 'x'",
    ),
    "tcp risk a string": (
        setter("league", "accept_tcp_duplicate_risk", value="yes"),
        "league.accept_tcp_duplicate_risk",
        "true or false",
    ),
    "time not a table": (setter("time", value=100), "time: expected a table", ""),
    "time key unknown": (setter("time", value={"move": 100}), "time.move: unknown", "move_ms"),
    "time negative": (setter("time", value={"move_ms": -1}), "time.move_ms", "-1 is too small"),
    "time a string": (setter("time", value={"bank_ms": "100"}), "time.bank_ms", ""),
    "time a float": (setter("time", value={"grace_ms": 0.5}), "time.grace_ms", ""),
    "sandbox unknown": (setter("bot", 1, "sandbox", value="box"), "bot[1].sandbox", "auto"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_configuration_names_its_key(case: str, tmp_path: Path) -> None:
    edit, key, fragment = BAD[case]
    with pytest.raises(ConfigError) as caught:
        parse(changed(edit), tmp_path)
    message = str(caught.value)
    assert message.startswith(key), message
    assert fragment in message, message


# The command line refuses `--jobs 0` (click.IntRange(min=1)); the same number in the
# file must be refused too, naming the key, not silently replaced by the default.
@pytest.mark.parametrize("value", [0, -2])
def test_jobs_below_one_are_refused(value: int, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^league\.jobs"):
        parse(changed(setter("league", "jobs", value=value)), tmp_path)


def test_a_program_that_cannot_start_is_refused_before_any_game(tmp_path: Path) -> None:
    data = changed(setter("bot", 2, "command", value=["/no/such/program", "x"]))
    with pytest.raises(ConfigError, match=r"^bot\[2\]\.command: cannot start '/no/such/program'"):
        parse(data, tmp_path, check_programs=True)
    parse(base(), tmp_path, check_programs=True)  # the good one passes the same check


def test_a_good_configuration(tmp_path: Path) -> None:
    config = parse(base(), tmp_path)
    assert [b.name for b in config.bots] == ["a", "b", "c", "d"]
    assert config.bots[0].spec.argv == (PY, RANDOM_BOT)
    assert config.bots[0].spec.cwd == str(tmp_path.resolve())
    assert all(b.restart == "never" for b in config.bots)
    assert config.table == 3
    assert config.rules == preset("standard", players=3, max_pip=6, rounds="single")
    assert config.rules_preset == "standard"
    assert (config.format, config.deals, config.seed, config.duplicate) == (
        "round-robin",
        2,
        5,
        True,
    )
    assert config.policy is Policy.FORFEIT
    assert config.max_faults == 3
    assert config.jobs is None
    assert config.challengers == ()
    assert config.bot_seed_key is None
    assert config.out == tmp_path.resolve() / "t-out"


def test_defaults_of_a_minimal_file(tmp_path: Path) -> None:
    data: Data = {"bot": [{"name": n, "command": "prog"} for n in "abcdef"]}
    config = parse_config(data, tmp_path / "cup.toml", check_programs=False)
    assert config.name == "cup"  # the file's stem
    assert config.table == 4  # min(4, bots)
    assert config.rules == preset("standard", players=4)
    assert (config.deals, config.seed, config.duplicate, config.format) == (
        1,
        1,
        True,
        "round-robin",
    )
    assert config.out == tmp_path.resolve() / "cup-out"
    two = parse_config(
        {"bot": [{"name": n, "command": "prog"} for n in "ab"]},
        tmp_path / "duel.toml",
        check_programs=False,
    )
    assert two.table == 2


def test_the_sandbox_a_bot_runs_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --sandbox on the command line > the bot's `sandbox` key > "auto", the default:
    # bwrap where bubblewrap works, none (with the reason kept) where it does not.
    data = base()
    data["bot"][1]["sandbox"] = "none"
    data["bot"][2]["sandbox"] = "bwrap"
    data["bot"][3]["sandbox"] = "auto"

    def modes(config: LeagueConfig) -> list[str]:
        return [b.spec.sandbox for b in config.bots]

    resolve = "referee.league.config.resolve"
    monkeypatch.setattr(resolve, lambda choice: ("bwrap", None))  # whatever this machine has
    works = parse(data, tmp_path)
    assert modes(works) == ["bwrap", "none", "bwrap", "bwrap"]
    assert (works.sandbox_auto, works.sandbox_note) == ("bwrap", None)
    for flag in ("none", "bwrap"):
        given = parse_config(data, tmp_path / "l.toml", check_programs=False, sandbox=flag)
        assert modes(given) == [flag] * 4
    monkeypatch.setattr(resolve, lambda choice: ("none", "bubblewrap is not installed"))
    broken = parse(data, tmp_path)
    assert modes(broken) == ["none", "none", "bwrap", "none"]
    assert (broken.sandbox_auto, broken.sandbox_note) == ("none", "bubblewrap is not installed")
    # A cluster worker follows what auto meant on the coordinator.
    follows = parse_config(data, tmp_path / "l.toml", check_programs=False, auto_sandbox="bwrap")
    assert modes(follows) == ["bwrap", "none", "bwrap", "bwrap"]


def test_commands_cwd_env_limits_and_restart(tmp_path: Path) -> None:
    (tmp_path / "bots" / "x").mkdir(parents=True)
    (tmp_path / "bots" / "x" / "my bot.py").write_text("")  # a script that is missing is refused
    data = base()
    data["bot"][0].update(
        command=f"{shlex.quote(PY)} 'my bot.py' --level 3",
        cwd="bots/x",
        env={"LEVEL": "3"},
        restart="always",
        memory_mb=512,
        cpu_s=60,
        max_files=64,
    )
    bot = parse(data, tmp_path).bots[0]
    assert bot.spec.argv == (PY, "my bot.py", "--level", "3")
    assert bot.spec.cwd == str((tmp_path / "bots" / "x").resolve())
    assert bot.spec.env == {"LEVEL": "3"}
    assert bot.restart == "always"
    assert (bot.spec.limits.memory_mb, bot.spec.limits.cpu_s, bot.spec.limits.files) == (
        512,
        60,
        64,
    )


def test_a_gauntlet(tmp_path: Path) -> None:
    config = parse(changed(gauntlet(["d"])), tmp_path)
    assert config.format == "gauntlet"
    assert config.challengers == ("d",)


def test_clocks_policy_and_out(tmp_path: Path) -> None:
    data = base()
    data["time"] = {"startup_ms": 3000, "move_ms": 100, "bank_ms": 0, "grace_ms": 20}
    data["league"].update(policy="default-move", max_faults=5, out="results/here", jobs=3)
    config = parse(data, tmp_path)
    assert (config.time.startup_ms, config.time.move_ms, config.time.bank_ms) == (3000, 100, 0)
    assert config.time.grace_ms == 20
    assert config.policy is Policy.DEFAULT_MOVE
    assert config.max_faults == 5
    assert config.jobs == 3
    assert config.out == tmp_path.resolve() / "results" / "here"
    assert parse_config(data, tmp_path / "x.toml", out=Path("elsewhere")).out == Path("elsewhere")


def test_bot_seed_key_can_be_pinned(tmp_path: Path) -> None:
    # The league table is where a pinned key belongs (LeagueConfig.bot_seed_key); the
    # key list of [league] must therefore accept it.
    data = changed(setter("league", "bot_seed_key", value="00112233445566778899aabbccddeeff"))
    config = parse(data, tmp_path)
    assert config.bot_seed_key == bytes.fromhex("00112233445566778899aabbccddeeff")


def test_fingerprint_follows_what_decides_the_games(tmp_path: Path) -> None:
    (tmp_path / "other.py").write_text("")  # the script of an edited command is there
    first = parse(base(), tmp_path).fingerprint()
    assert parse(base(), tmp_path).fingerprint() == first
    # The output folder and the number of jobs decide nothing about the games.
    same = changed(lambda d: d["league"].update(out="other", jobs=7, name="t"))
    assert parse(same, tmp_path).fingerprint() == first
    for edit in (
        setter("league", "seed", value=6),
        setter("league", "deals", value=3),
        setter("league", "duplicate", value=False),
        setter("rules", "max_pip", value=9),
        setter("bot", 1, "command", value=[PY, "other.py"]),
        setter("bot", 1, "name", value="bee"),
        setter("time", value={"move_ms": 500}),
        setter("league", "policy", value="default-move"),
    ):
        assert parse(changed(edit), tmp_path).fingerprint() != first


def test_load_config_reads_toml_relative_to_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "leagues"
    folder.mkdir()
    path = folder / "cup.toml"
    path.write_text(
        '[league]\nname = "cup"\nout = "../cup-results"\n'
        '[[bot]]\nname = "a"\ncommand = "prog a"\n'
        '[[bot]]\nname = "b"\ncommand = ["prog", "b"]\n',
        encoding="utf-8",
    )
    config = load_config(path, check_programs=False)
    assert config.out.resolve() == tmp_path.resolve() / "cup-results"
    assert config.bots[0].spec.cwd == str(folder.resolve())
    assert config.bots[1].spec.argv == ("prog", "b")


def test_load_config_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[league\nname = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.toml: not valid TOML"):
        load_config(broken)


def test_the_example_league_loads() -> None:
    config = load_config(ROOT / "examples" / "league.toml", check_programs=False)
    assert [b.name for b in config.bots] == ["plan", "greedy", "node", "minimal"]
    assert (config.table, config.deals, config.duplicate, config.seed) == (3, 1, True, 2026)
    assert config.out.resolve() == ROOT / "league-out"


def test_the_command_line_prints_the_error_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        f'[league]\ntable = 5\n[[bot]]\nname = "a"\ncommand = ["{PY}"]\n'
        f'[[bot]]\nname = "b"\ncommand = ["{PY}"]\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["league", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr.strip() == "referee: error: league.table: 5 seats but only 2 bots"
    assert not (tmp_path / "out").exists()  # nothing was started or created

    missing = CliRunner().invoke(main, ["league", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2
    assert "cannot read" in missing.stderr


def _with_tcp_bot(data: Data) -> None:
    data["bot"][3] = {
        "name": "d",
        "transport": "tcp",
        "token": "secret-token-Lq3v9XcB0mYt6RkWe1ZsNd",
    }


def test_a_duplicate_league_with_a_tcp_bot_must_accept_the_risk(tmp_path: Path) -> None:
    # A process the referee starts never plays a deal twice; a tcp bot is one program
    # that plays every rotation of a deal, and may remember the hands.
    with pytest.raises(ConfigError) as caught:
        parse(changed(_with_tcp_bot), tmp_path)
    message = str(caught.value)
    assert message.startswith("league.duplicate: tcp bot 'd' would play each deal once per")
    assert "accept_tcp_duplicate_risk = true" in message and "\n" not in message
    assert "secret-token" not in message
    accepted = changed(_with_tcp_bot)
    accepted["league"]["accept_tcp_duplicate_risk"] = True
    assert parse(accepted, tmp_path).bots[3].tcp
    single = changed(_with_tcp_bot)
    single["league"]["duplicate"] = False
    assert parse(single, tmp_path).bots[3].tcp


def test_serve_refuses_a_duplicate_league_with_a_tcp_seat_in_one_line(tmp_path: Path) -> None:
    lines = [
        "[league]",
        'name = "t"',
        "table = 2",
        "[[bot]]",
        'name = "a"',
        f"command = {[PY, RANDOM_BOT]!r}".replace("'", '"'),
        "[[bot]]",
        'name = "b"',
        'transport = "tcp"',
        'token = "t0ken-Lq3v9XcB0mYt6RkWe1ZsNd"',
    ]
    path = tmp_path / "league.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["serve", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1, result.output
    assert "accept_tcp_duplicate_risk" in result.output
    assert not (tmp_path / "out").exists()
