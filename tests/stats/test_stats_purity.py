"""`referee.stats` is pure: importing it pulls in only the standard library and the engine."""

from __future__ import annotations

import json
import subprocess
import sys

_SCRIPT = """
import json, sys
before = set(sys.modules)
import referee.stats, referee.stats.luck, referee.stats.players
added = sorted({name.split(".")[0] for name in set(sys.modules) - before})
print(json.dumps({"added": added, "stdlib": sorted(sys.stdlib_module_names)}))
"""


def test_stats_import_adds_only_standard_library_modules() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True
    )
    found = json.loads(out.stdout)
    foreign = [n for n in found["added"] if n not in set(found["stdlib"]) and n != "referee"]
    assert foreign == [], f"referee.stats imported non-stdlib modules: {foreign}"
