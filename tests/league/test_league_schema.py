"""The league file's types: the [rules] table follows `Rules`, the JSON Schema that
`referee schema --league` prints is spec/league.schema.json, and every key is
documented in spec/LEAGUE.md (and each rules option in spec/RULES.md)."""

from __future__ import annotations

import dataclasses
import enum
import re
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.league.config import ConfigError, load_config, parse_config
from referee.league.schema import (
    BEGIN,
    END,
    LEAGUE_SETS,
    RulesTable,
    json_schema,
    keys,
    reference_markdown,
    rules_table,
    schema_text,
    tables,
)
from referee.rules import Rules, preset
from referee.rules.options import FirstPlayer, RoundOrder

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
REGENERATE = "regenerate with `python -m referee.league.schema`"


def bare(t: mi.Type) -> mi.Type:
    while isinstance(t, mi.Metadata):
        t = t.type
    return t


def fields_of(cls: type[msgspec.Struct]) -> dict[str, mi.Type]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return {f.name: bare(f.type) for f in info.fields}


# ---------------------------------------------------------------- [rules] from Rules


def test_the_rules_table_has_every_option_of_rules_typed_as_rules_types_it() -> None:
    table = fields_of(RulesTable)
    options = [f for f in dataclasses.fields(Rules) if f.name not in LEAGUE_SETS]
    assert set(table) == {"preset"} | {f.name for f in options}
    for option in options:
        default = option.default
        t = table[option.name]
        if isinstance(default, bool):
            assert isinstance(t, mi.BoolType), option.name
        elif isinstance(default, enum.Enum):
            assert isinstance(t, mi.EnumType) and t.cls is type(default), option.name
        else:  # whole numbers, hand_size included (None is "left out": TOML has no null)
            assert isinstance(t, mi.IntType), option.name


class Finish(enum.Enum):
    """An option added to the rules after this test was written."""

    NOW = "now"
    LATER = "later-on"


@dataclasses.dataclass(frozen=True)
class NewerRules(Rules):
    follow_up: Finish = Finish.NOW
    unfinished_marks: bool = False


def test_an_option_added_to_rules_is_typed_without_a_change_here() -> None:
    # The table is built from the dataclass when the module is imported: options that
    # other work adds to `Rules` are typed (enum by value, bool strictly) at once.
    table = rules_table(NewerRules)
    given = msgspec.convert({"follow_up": "later-on", "unfinished_marks": True}, table, strict=True)
    assert given.follow_up is Finish.LATER  # type: ignore[attr-defined]
    assert given.unfinished_marks is True  # type: ignore[attr-defined]
    for bad in ({"follow_up": "LATER"}, {"unfinished_marks": "yes"}, {"unfinished_marks": 0}):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(bad, table, strict=True)


def test_rules_options_are_given_by_their_values_and_keep_the_preset(tmp_path: Path) -> None:
    data: dict[str, Any] = {
        "league": {"table": 3},
        "rules": {
            "preset": "celko",
            "max_pip": 9,
            "first_player": "highest-single",
            "rounds": "ascending",
            "must_play": False,
        },
        "bot": [{"name": n, "command": "prog"} for n in "abc"],
    }
    rules = parse_config(data, tmp_path / "l.toml", check_programs=False).rules
    assert rules.first_player is FirstPlayer.HIGHEST_SINGLE
    assert rules.rounds is RoundOrder.ASCENDING
    assert rules.must_play is False
    # What the file leaves out is the preset's (celko announces one tile).
    assert rules == preset(
        "celko",
        players=3,
        max_pip=9,
        first_player="highest-single",
        rounds="ascending",
        must_play=False,
    )


# ---------------------------------------------------------------- errors


def test_a_secret_of_the_wrong_type_is_not_shown(tmp_path: Path) -> None:
    data: dict[str, Any] = {
        "league": {"duplicate": False, "deal_key": 123456789},
        "bot": [
            {"name": "a", "command": "prog"},
            {"name": "b", "transport": "tcp", "token": 987654321},
        ],
    }
    with pytest.raises(ConfigError) as caught:
        parse_config(data, tmp_path / "l.toml", check_programs=False)
    assert str(caught.value) == "league.deal_key: expected a string, got an integer"
    del data["league"]["deal_key"]
    with pytest.raises(ConfigError) as caught:
        parse_config(data, tmp_path / "l.toml", check_programs=False)
    assert str(caught.value) == "bot[1].token: expected a string, got an integer"


def test_allow_updates_is_a_boolean_the_commitment_holds_only_when_true(tmp_path: Path) -> None:
    from referee.league.terms import league_terms

    bots = [{"name": n, "command": "prog"} for n in "ab"]
    data: dict[str, Any] = {"league": {"allow_updates": "yes"}, "bot": bots}
    with pytest.raises(ConfigError) as caught:
        parse_config(data, tmp_path / "l.toml", check_programs=False)
    assert str(caught.value) == 'league.allow_updates: expected true or false, got "yes"'
    data["league"]["allow_updates"] = True
    config = parse_config(data, tmp_path / "l.toml", check_programs=False)
    assert config.allow_updates is True
    assert league_terms(config)["allow_updates"] is True
    # Left out when false: a commitment made before the key existed still resumes.
    del data["league"]["allow_updates"]
    config = parse_config(data, tmp_path / "l.toml", check_programs=False)
    assert config.allow_updates is False
    assert "allow_updates" not in league_terms(config)


def test_a_message_stays_one_line_whatever_the_file_holds(tmp_path: Path) -> None:
    bots = [{"name": n, "command": "prog"} for n in "ab"]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"league": {"a\nb": 1}, "bot": bots}, 'league."a\\nb": unknown key'),
        ({"bot": [{**bots[0], "cwd": "x\u2028y"}, bots[1]]}, "bot[0].cwd: "),
        ({"bot": [{**bots[0], "env": {"A\nB": "1"}}, bots[1]]}, "bot[0].env.A\\nB: not a variable"),
        ({"bot": [{**bots[0], "env": {"A\nB": 1}}, bots[1]]}, 'bot[0].env."A\\nB": expected'),
        ({"league": {"name": "x\ny" * 40, "deals": "p\x85q"}, "bot": bots}, "league.deals: "),
    ]
    for data, start in cases:
        with pytest.raises(ConfigError) as caught:
            parse_config(data, tmp_path / "l.toml", check_programs=False)
        message = str(caught.value)
        assert message.startswith(start), message
        assert len(message.splitlines()) == 1, message


def test_the_schema_key_editors_read_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "l.toml"
    path.write_text(
        '"$schema" = "https://example.org/league.schema.json"\n'
        '[[bot]]\nname = "a"\ncommand = "prog"\n[[bot]]\nname = "b"\ncommand = "prog"\n',
        encoding="utf-8",
    )
    assert len(load_config(path, check_programs=False).bots) == 2


# ---------------------------------------------------------------- the schema


def test_referee_schema_league_prints_the_league_schema(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "--league"])
    assert result.exit_code == 0
    assert result.output == schema_text()
    protocol = CliRunner().invoke(main, ["schema"])
    assert protocol.output != result.output  # without --league: the protocol's, as before
    out = tmp_path / "league.schema.json"
    written = CliRunner().invoke(main, ["schema", "--league", "-o", str(out)])
    assert written.exit_code == 0 and out.read_text(encoding="utf-8") == schema_text()


def test_spec_league_schema_is_current() -> None:
    path = SPEC / "league.schema.json"
    assert path.read_text(encoding="utf-8") == schema_text(), f"{path} is stale: {REGENERATE}"


def test_the_schema_says_what_the_referee_refuses() -> None:
    schema = json_schema()
    defs = schema["$defs"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {
        "league",
        "rules",
        "time",
        "match",
        "bot",
        "server",
        "cluster",
        "$schema",
    }
    tables_ = [d for d in defs.values() if d.get("type") == "object"]
    # The six tables, [match] with its sprt table, and a bot's own time table.
    assert len(tables_) == 9 and all(d["additionalProperties"] is False for d in tables_)
    rules = defs["RulesTable"]["properties"]
    assert rules["must_play"]["type"] == "boolean"
    assert "players" not in rules
    assert (
        defs["LeagueTable"]["properties"]["table"] | {"minimum": 2, "maximum": 8}
        == defs["LeagueTable"]["properties"]["table"]
    )
    assert defs["BotTable"]["required"] == ["name"]
    assert all(d.get("required", ["x"]) for d in defs.values())  # never empty: draft 4 wants that


# ---------------------------------------------------------------- the documentation


def test_spec_league_md_is_current() -> None:
    text = (SPEC / "LEAGUE.md").read_text(encoding="utf-8")
    generated = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    assert generated == "\n" + reference_markdown(), f"spec/LEAGUE.md is stale: {REGENERATE}"


def test_every_key_is_documented() -> None:
    league_md = (SPEC / "LEAGUE.md").read_text(encoding="utf-8")
    rules_md = (SPEC / "RULES.md").read_text(encoding="utf-8")
    options_table = rules_md[rules_md.index("## Options") : rules_md.index("### Hand sizes")]
    for table in ["", *tables()]:
        for key in keys(table):
            if not table and key.name in tables():  # the tables themselves
                continue
            where = f"{table or 'top level'}.{key.name}"
            if table == "rules" and key.name != "preset":
                assert f"| `{key.name}` |" in options_table, f"{where}: not in spec/RULES.md"
                assert f"`{key.name}`" in league_md, f"{where}: not in spec/LEAGUE.md"
                continue
            assert key.description, f"{where}: no description in referee/league/schema.py"
            assert re.search(rf"\| `{re.escape(key.name)}` \|", league_md), f"{where}: undocumented"


def test_the_server_limits_of_spec_protocol_md_are_the_defaults() -> None:
    text = (SPEC / "PROTOCOL.md").read_text(encoding="utf-8")
    for key in keys("server"):
        row = re.search(rf"^\| `{key.name}` \| (\d+)", text, re.M)
        assert row is not None, f"server.{key.name}: not in the limits table of spec/PROTOCOL.md"
        assert row[1] == key.default, f"server.{key.name}: spec/PROTOCOL.md says {row[1]}"
