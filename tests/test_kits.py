"""The starter kits (kits/*/): each is built, tested and checked with `referee check-bot`.

Each kit's test runs `kits/check.py NAME`, which builds the kit in its own folder,
runs the kit's own unit test and then check-bot on its bot. A kit whose toolchain
is missing here is skipped with its reason (`pytest -rs` shows it), except under
CI (the variable CI set), where `make system-deps` installs every toolchain and
a kit that cannot be checked fails. Two tests never build the same kit at once:
each kit is one test, and kits/check.py holds a lock on the kit while it works.
The builds are cached outside the clone (~/.cache/mexican-train-referee/kits, or
$REFEREE_KIT_CACHE; REFEREE_KIT_CACHE=off to build every time), keyed by the kit's
sources, kit.json, folder and toolchain versions: a kit whose sources did not change
is not rebuilt (`kit NAME: build cached (key ...)`), but its unit test and check-bot
run every time (tests/test_kit_cache.py checks the cache). Also: the kits' fixtures
are what spec/kit_fixtures.py records now, and every kit has the files a kit must have.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "kits" / "check.py"
KITS = sorted(path.parent for path in (ROOT / "kits").glob("*/kit.json"))
FIXTURES = [
    "first_turn.jsonl",
    "follow_double.jsonl",
    "drawn_tile.jsonl",
    "pass.jsonl",
    "last_round.jsonl",
    "game_end.jsonl",
]
KIT_KEYS = {"name", "needs", "build", "test", "bot", "env"}
TIMEOUT_S = 1800  # a whole kit: a first Rust build under the suite's load is slow


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "spec_kit_fixtures", ROOT / "spec" / "kit_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


kit_fixtures = _load()


def test_there_are_kits() -> None:
    assert len(KITS) >= 7, [kit.name for kit in KITS]


def run_check(
    check: Path, name: str, cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """`check NAME` (a kits/check.py), killed with the build it started if it runs past
    TIMEOUT_S: (exit status, output and stderr)."""
    proc = subprocess.Popen(
        [sys.executable, str(check), name],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the checker and the build it started
        output, _ = proc.communicate()
        pytest.fail(f"{check} {name} still running after {TIMEOUT_S} s:\n{output}")
    return proc.returncode, output


@pytest.mark.parametrize("folder", KITS, ids=[kit.name for kit in KITS])
def test_kit_builds_tests_and_passes_check_bot(folder: Path) -> None:
    name = json.loads((folder / "kit.json").read_text(encoding="utf-8"))["name"]
    returncode, output = run_check(CHECK, name, ROOT)
    if returncode == 3:
        line = next((x for x in output.splitlines() if "NOT CHECKED" in x), output.strip())
        reason = line.split("NOT CHECKED: ", 1)[-1]
        if os.environ.get("CI"):
            pytest.fail(f"{line} (under CI, where `make system-deps` installs every toolchain)")
        pytest.skip(f"kit {name}: not checked: {reason}")
    assert returncode == 0, f"kits/check.py {name} exited {returncode}:\n{output}"
    assert f"kit {name}: PASS" in output, output


def test_kit_fixtures_are_what_the_referee_sends_now() -> None:
    drifted = kit_fixtures.drift(kit_fixtures.fixtures(kit_fixtures.record()))
    assert drifted == [], (
        f"kit fixtures no longer what the referee sends: {', '.join(drifted)}; "
        f"refresh them with `{kit_fixtures.REFRESH}` (python spec/kit_fixtures.py) "
        "and read the diff"
    )


def _strategy_files(folder: Path) -> list[Path]:
    """The kit's strategy source files (strategy.py, src/Strategy.java, ...), not built ones."""
    built = {"build", "target", "node_modules", "__pycache__"}
    return [
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.stem.lower() == "strategy"
        and not built & set(path.relative_to(folder).parts)
    ]


@pytest.mark.parametrize("folder", KITS, ids=[kit.name for kit in KITS])
def test_kit_has_what_a_kit_needs(folder: Path) -> None:
    assert (folder / "README.md").is_file()
    kit = json.loads((folder / "kit.json").read_text(encoding="utf-8"))
    assert set(kit) == KIT_KEYS, f"kit.json keys: {sorted(kit)}"
    assert kit["name"] == folder.name
    assert kit["needs"] and all(isinstance(exe, str) for exe in kit["needs"])
    for commands in (kit["build"], kit["test"]):
        assert all(argv and all(isinstance(arg, str) for arg in argv) for argv in commands)
    assert kit["test"], "a kit has a unit test"
    assert kit["bot"] and all(isinstance(arg, str) for arg in kit["bot"])
    assert all(isinstance(v, str) for v in kit["env"].values())
    fixtures = sorted(path.name for path in (folder / "fixtures").glob("*.jsonl"))
    assert fixtures == sorted(FIXTURES)
    strategies = _strategy_files(folder)
    assert any("START HERE" in path.read_text(encoding="utf-8") for path in strategies), (
        f"no strategy file saying START HERE in {folder.name}: {strategies}"
    )


def _on_the_copy(argv: list[str]) -> str:
    """kit.json's bot command as the README gives it from the repository's root, for
    the kit copied to `my-bot`: each path (an argument with a slash or a dot that is
    not an option) inside the copy."""
    return " ".join(
        f"my-bot/{arg}" if ("/" in arg or "." in arg) and not arg.startswith("-") else arg
        for arg in argv
    )


@pytest.mark.parametrize("folder", KITS, ids=[kit.name for kit in KITS])
def test_kit_readme_commands_work_on_a_copy(folder: Path) -> None:
    """The kit's README starts from `cp -r kits/NAME my-bot` and then names only the
    copy: its play and check-bot lines run the bot kit.json runs (which
    test_kit_builds_tests_and_passes_check_bot checks), inside `my-bot`, and its
    build commands are kit.json's, run in `my-bot`."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    blocks = [body for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)]
    copy = f"cp -r kits/{folder.name} my-bot"
    assert blocks and blocks[0].strip() == copy, f"{folder.name}: the first command is {copy}"
    rest = "\n".join(blocks[1:])
    assert f"kits/{folder.name}" not in rest, f"{folder.name}: a command names the original"
    kit = json.loads((folder / "kit.json").read_text(encoding="utf-8"))
    bot = _on_the_copy(kit["bot"])
    assert f'referee play "mine={bot}" ' in rest
    assert f"referee check-bot -- {bot}\n" in rest
    for argv in kit["build"]:
        assert shlex.join(argv) in text, f"{folder.name}: the README builds otherwise"
    assert "in `my-bot`" in text or "In `my-bot`" in text
