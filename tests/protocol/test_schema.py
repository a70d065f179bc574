"""The JSON Schema: `referee schema` prints it, and spec/protocol.schema.json is current."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from protocol import messages as m
from protocol.schema import json_schema, schema_text
from referee.cli import main

SPEC = Path(__file__).resolve().parents[2] / "spec" / "protocol.schema.json"
REGENERATE = "regenerate it with `referee schema -o spec/protocol.schema.json`"


def test_referee_schema_prints_the_schema() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json_schema()
    assert result.output == schema_text()


def test_referee_schema_writes_a_file(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    result = CliRunner().invoke(main, ["schema", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert out.read_text(encoding="utf-8") == schema_text()


def test_referee_schema_reports_an_unwritable_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "-o", str(tmp_path / "missing" / "s.json")])
    assert result.exit_code == 2
    assert "cannot write" in result.output


def test_spec_schema_file_is_current() -> None:
    assert SPEC.exists(), f"{SPEC} is missing: {REGENERATE}"
    assert SPEC.read_text(encoding="utf-8") == schema_text(), f"{SPEC} is stale: {REGENERATE}"


def test_schema_text_is_stable() -> None:
    assert schema_text() == schema_text()
    assert schema_text().endswith("}\n")


@pytest.mark.parametrize("kind", m.TO_BOT_TYPES + m.FROM_BOT_TYPES, ids=lambda t: t.__name__)
def test_every_message_is_described(kind: type[m.Message]) -> None:
    schema = json_schema()
    entry = schema["$defs"][kind.__name__]
    tag = kind.__struct_config__.tag
    assert entry["properties"]["type"] == {"enum": [tag]}
    assert "type" in entry["required"]
    fields = msgspec.structs.fields(kind)
    assert set(entry["properties"]) == {"type"} | {f.name for f in fields}
    required = {f.name for f in fields if f.required}
    assert set(entry["required"]) == {"type"} | required
    union = "ToBot" if kind in m.TO_BOT_TYPES else "FromBot"
    refs = [x["$ref"] for x in schema["$defs"][union]["anyOf"]]
    assert f"#/$defs/{kind.__name__}" in refs


def test_unions_hold_exactly_their_direction() -> None:
    defs = json_schema()["$defs"]
    to_bot = {x["$ref"].rsplit("/", 1)[1] for x in defs["ToBot"]["anyOf"]}
    from_bot = {x["$ref"].rsplit("/", 1)[1] for x in defs["FromBot"]["anyOf"]}
    assert to_bot == {t.__name__ for t in m.TO_BOT_TYPES}
    assert from_bot == {t.__name__ for t in m.FROM_BOT_TYPES}


def test_tiles_are_two_integer_arrays_in_the_schema() -> None:
    tile = json_schema()["$defs"]["Played"]["properties"]["tile"]
    assert tile["type"] == "array"
    assert tile["minItems"] == tile["maxItems"] == 2
    pip = {"type": "integer", "minimum": 0, "maximum": m.PIP_MAX}
    assert tile["prefixItems"] == [pip, pip]


def test_unknown_fields_are_allowed_by_the_schema() -> None:
    # Decoders ignore unknown fields, so the schema must not forbid them.
    for name, entry in json_schema()["$defs"].items():
        assert entry.get("additionalProperties", True) is not False, name
