"""`referee.rules` is standard library only: importing it pulls in no third-party package."""

from __future__ import annotations

import json
import subprocess
import sys

# Prints the top-level modules that importing referee.rules added to sys.modules,
# and the names of the standard library, so that the test can tell them apart.
_SCRIPT = """
import json, sys
before = set(sys.modules)
import referee.rules
added = sorted({name.split(".")[0] for name in set(sys.modules) - before})
stdlib = sorted(sys.stdlib_module_names)
print(json.dumps({"added": added, "all": sorted(sys.modules), "stdlib": stdlib}))
"""


def _fresh_import() -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True
    )
    result: dict[str, list[str]] = json.loads(out.stdout)
    return result


def test_rules_import_pulls_in_no_service_dependencies() -> None:
    loaded = {name.split(".")[0] for name in _fresh_import()["all"]}
    assert "referee" in loaded
    for package in ("trio", "msgspec", "click", "rich"):
        assert package not in loaded, f"importing referee.rules imported {package}"


def test_rules_import_adds_only_standard_library_modules() -> None:
    found = _fresh_import()
    stdlib = set(found["stdlib"])
    foreign = [name for name in found["added"] if name not in stdlib and name != "referee"]
    assert foreign == [], f"referee.rules imported non-stdlib modules: {foreign}"
