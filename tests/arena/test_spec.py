"""spec/ARENA.md says every key of `[arena]` with its real default, and the CLI refuses
bad arena files and names in one line."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from referee.arena.config import ArenaTable, entry_problem, parse_arena
from referee.league.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def spec_keys() -> dict[str, str]:
    text = (ROOT / "spec" / "ARENA.md").read_text(encoding="utf-8")
    return dict(
        re.findall(
            r"^\| `(\w+)` \| (`[^`]*`|the file's name|a secret made once) \|", text, re.MULTILINE
        )
    )


def test_every_arena_key_is_in_the_spec_with_its_default() -> None:
    documented = spec_keys()
    fields = {f.name: f.default for f in msgspec.structs.fields(ArenaTable)}
    assert set(documented) == set(fields)
    for name, default in fields.items():
        shown = documented[name]
        if default is msgspec.UNSET:
            continue  # said in words (the file's name, NAME-out)
        value = default.value if hasattr(default, "value") else default
        text = (
            ("true" if value else "false")
            if isinstance(value, bool)
            else f'"{value}"'
            if isinstance(value, str)
            else str(value)
        )
        assert shown == f"`{text}`", (name, shown, text)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"league": {}}, "league: not a key of an arena file (an arena's terms are in [arena])"),
        ({"arena": {"tables": 9}}, "arena.tables: 9 is too large; expected a whole number"),
        ({"arena": {"tables": 9}}, "or an array of whole numbers from 2 to 8"),
        ({"arena": {"tabels": 3}}, "arena.tabels: unknown key (did you mean tables?); expected"),
        ({"arena": {"max_fault_rate": 2.0}}, "arena.max_fault_rate"),
        ({"arena": {"colour": "red"}}, "colour"),
        ({"bot": [{"name": "a@b", "command": "x"}]}, "must be without spaces, slashes, @ or #"),
        ({"bot": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]}, "used twice"),
        ({"bot": [{"name": "a", "command": "x", "colour": 1}]}, "colour"),
        ({"arena": {"deal_key": "a" * 63}}, "arena.deal_key: 63 hexadecimal digits, an odd"),
        ({"arena": {"deal_key": "ab"}}, "arena.deal_key: 2 hexadecimal digits; at least 32"),
        ({"arena": {"bot_seed_key": "xyz"}}, "arena.bot_seed_key: expected hexadecimal digits"),
    ],
)
def test_a_bad_arena_file_is_one_line_naming_the_key(
    tmp_path: Path, data: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_arena(data, tmp_path / "arena.toml")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_entry_names_leave_room_for_their_versions() -> None:
    assert entry_problem("x" * 56) is None
    assert "at most 56" in str(entry_problem("x" * 57))
    assert entry_problem("has space") is not None
