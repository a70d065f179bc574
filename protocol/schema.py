"""JSON Schema of every message, generated from the Structs.

`referee schema` prints it; `spec/protocol.schema.json` is this output, and a
test fails when the file is stale.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .messages import PROTOCOL_VERSION, FromBot, ToBot


def json_schema() -> dict[str, Any]:
    """One schema document: `ToBot` and `FromBot` as unions, every message in `$defs`."""
    (to_bot, from_bot), components = msgspec.json.schema_components(
        (ToBot, FromBot), ref_template="#/$defs/{name}"
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Mexican Train referee protocol v{PROTOCOL_VERSION}",
        "description": "One JSON object per line. ToBot: referee to bot; FromBot: bot to referee.",
        "$defs": {**components, "ToBot": to_bot, "FromBot": from_bot},
        "oneOf": [{"$ref": "#/$defs/ToBot"}, {"$ref": "#/$defs/FromBot"}],
    }


def schema_text() -> str:
    """The schema as stable, indented JSON text ending in a newline."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
