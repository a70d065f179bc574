"""The starter kits' build cache (kits/check.py; its docstring says how it works).

The checks run kits/check.py on a copy of the Go kit (the cheapest kit that
compiles) in tmp_path, with REFEREE_KIT_CACHE in tmp_path too, so that they use
neither the user's cache nor the kits' folders: a second check restores the
build and says so, a broken source is built (and fails) rather than served from
the cache, and REFEREE_KIT_CACHE=off writes no cache. The rest (the key, storing,
restoring, pruning) is checked on the checker's functions, with no toolchain.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_kits import run_check

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "kits" / "check.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kits_check", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


checker = _load()


def _go_kit(tmp_path: Path) -> Path:
    """A copy of kits/go (sources only) and of kits/check.py in tmp_path/kits."""
    if shutil.which("go") is None:
        if os.environ.get("CI"):
            pytest.fail("no go on PATH (under CI, where `make system-deps` installs it)")
        pytest.skip("no go on PATH")
    kits = tmp_path / "kits"
    kits.mkdir()
    shutil.copy2(CHECK, kits / "check.py")
    skip = shutil.ignore_patterns(*checker.NOT_SOURCES, *checker.GENERATED)
    shutil.copytree(ROOT / "kits" / "go", kits / "go", ignore=skip)
    return kits / "go"


def _check(folder: Path, **env: str) -> tuple[int, str]:
    """Run the copy's kits/check.py on the kit with these variables: (exit status, output)."""
    return run_check(folder.parent / "check.py", folder.name, folder.parent, {**os.environ, **env})


def _entries(kit_cache: Path) -> list[Path]:
    return sorted(path for path in kit_cache.iterdir() if not path.name.startswith("."))


def test_a_second_check_restores_the_build_instead_of_building(tmp_path: Path) -> None:
    folder = _go_kit(tmp_path)
    cache = tmp_path / "cache"
    status, output = _check(folder, REFEREE_KIT_CACHE=str(cache))
    assert status == 0, output
    assert "kit go: PASS (build " in output and "build cached" not in output, output
    [entry] = _entries(cache / "go")
    assert len(entry.name) == 64 and (entry / "out" / "build" / "bot").is_file()
    shutil.rmtree(folder / "build")  # as in a fresh clone
    status, output = _check(folder, REFEREE_KIT_CACHE=str(cache))
    assert status == 0, output
    assert f"kit go: build cached (key {entry.name[:12]})\n" in output, output
    assert "kit go: PASS (build cached " in output, output  # the build commands did not run
    assert (folder / "build" / "bot").is_file()
    assert _entries(cache / "go") == [entry]


def test_a_broken_source_is_built_not_served_from_the_cache(tmp_path: Path) -> None:
    folder = _go_kit(tmp_path)
    cache = tmp_path / "cache"
    status, output = _check(folder, REFEREE_KIT_CACHE=str(cache))
    assert status == 0, output
    entries = _entries(cache / "go")
    with open(folder / "strategy.go", "a", encoding="utf-8") as source:
        source.write("\nthis is not Go\n")
    status, output = _check(folder, REFEREE_KIT_CACHE=str(cache))
    assert status == 1, output
    assert "build cached" not in output, output
    assert "kit go: FAIL at build: go build -o build/bot ." in output, output
    assert "syntax error" in output, output
    assert _entries(cache / "go") == entries  # a failed build is not kept
    assert not list((cache / "go").glob(".tmp-*"))


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    folder = _go_kit(tmp_path)
    xdg = tmp_path / "xdg"
    status, output = _check(folder, REFEREE_KIT_CACHE="off", XDG_CACHE_HOME=str(xdg))
    assert status == 0, output
    assert "kit go: PASS (build " in output and "build cached" not in output, output
    assert not xdg.exists()
    if "GOCACHE" not in os.environ:
        assert (folder / "build" / "go-cache").is_dir()  # Go's own cache back in the kit


def test_where_the_cache_is() -> None:
    home = Path.home() / ".cache" / "mexican-train-referee" / "kits"
    assert checker.cache_root({}) == home
    assert checker.cache_root({"XDG_CACHE_HOME": "relative"}) == home
    assert checker.cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/mexican-train-referee/kits")
    assert checker.cache_root({"XDG_CACHE_HOME": "/x", "REFEREE_KIT_CACHE": "/y"}) == Path("/y")
    assert checker.cache_root({"REFEREE_KIT_CACHE": "off"}) is None


def _fake_kit(folder: Path) -> Path:
    """A kit folder with a source, a kit.json and a build: build/bot, target/, Go's cache."""
    kit = {"name": "fake", "needs": [], "build": [["true"]], "test": [["true"]], "env": {}}
    folder.mkdir()
    (folder / "kit.json").write_text(json.dumps(kit), encoding="utf-8")
    (folder / "main.c").write_text("int main(void) { return 0; }\n", encoding="utf-8")
    (folder / "build" / "sub").mkdir(parents=True)
    (folder / "build" / "bot").write_text("#!/bin/sh\n", encoding="utf-8")
    (folder / "build" / "bot").chmod(0o755)
    (folder / "build" / "sub" / "part.o").write_bytes(b"\0object")
    (folder / "build" / "go-cache").mkdir()
    (folder / "build" / "go-cache" / "entry").write_text("Go's", encoding="utf-8")
    (folder / "target" / "release").mkdir(parents=True)
    (folder / "target" / "release" / "app").write_bytes(b"\0app")
    return folder


def test_the_key_follows_the_sources_and_tools_not_the_build(tmp_path: Path) -> None:
    folder = _fake_kit(tmp_path / "fake")
    key = checker.cache_key(folder, ["cc 1"], {})
    (folder / "build" / "more").write_text("x", encoding="utf-8")
    (folder / "Cargo.lock").write_text("x", encoding="utf-8")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"x")
    assert checker.cache_key(folder, ["cc 1"], {"PATH": "/elsewhere"}) == key
    assert checker.cache_key(folder, ["cc 2"], {}) != key
    assert checker.cache_key(folder, ["cc 1"], {"CFLAGS": "-O0"}) != key
    (folder / "main.c").write_text("int main(void) { return 1; }\n", encoding="utf-8")
    assert checker.cache_key(folder, ["cc 1"], {}) != key


def test_a_stored_build_is_restored_whole_and_dated_now(tmp_path: Path) -> None:
    folder = _fake_kit(tmp_path / "fake")
    entry = tmp_path / "cache" / "fake" / ("a" * 64)
    checker.store(entry, folder)
    stored = sorted(str(p.relative_to(entry)) for p in entry.rglob("*") if p.is_file())
    assert stored == [
        "meta.json",
        "out/build/bot",
        "out/build/sub/part.o",
        "out/target/release/app",
    ]
    assert not list(entry.parent.glob(".tmp-*"))
    (folder / "build" / "bot").unlink()
    (folder / "build" / "stale").write_text("from another build", encoding="utf-8")
    before = time.time() - 1
    assert checker.restore(entry, folder)
    assert (folder / "build" / "bot").read_text(encoding="utf-8") == "#!/bin/sh\n"
    assert (folder / "build" / "bot").stat().st_mode & stat.S_IXUSR
    assert (folder / "build" / "sub" / "part.o").stat().st_mtime >= before
    assert not (folder / "build" / "stale").exists()
    assert (folder / "build" / "go-cache" / "entry").is_file()  # not the cache's to touch
    (entry / "meta.json").unlink()  # as if half-made: never served, the kit left alone
    assert not checker.restore(entry, folder)
    assert (folder / "build" / "bot").is_file()


def test_a_kit_keeps_its_most_recently_used_entries(tmp_path: Path) -> None:
    folder = _fake_kit(tmp_path / "fake")
    kit_cache = tmp_path / "cache" / "fake"
    kit_cache.mkdir(parents=True)
    (kit_cache / ".tmp-dead").mkdir()
    os.utime(kit_cache / ".tmp-dead", (1, 1))
    (kit_cache / ".tmp-live").mkdir()
    keys = [str(n) * 64 for n in range(5)]
    for age, key in enumerate(keys):
        checker.store(kit_cache / key, folder)
        os.utime(kit_cache / key, (1000 + age, 1000 + age))
    assert [path.name for path in _entries(kit_cache)] == keys[-checker.KEEP :]
    assert sorted(path.name for path in kit_cache.glob(".*-*")) == [".tmp-live"]
    checker.evict(kit_cache / keys[-1])  # as after a cached build that failed its test
    assert [path.name for path in _entries(kit_cache)] == keys[-checker.KEEP : -1]
    assert not list(kit_cache.glob(".old-*"))
