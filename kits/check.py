"""Build, test and check the starter kits: `python kits/check.py [--list] [KIT...]`.

Each kit is a folder of kits/ with a kit.json:

    {"name": ..., "needs": [executables that must be on PATH],
     "build": [argv, ...], "test": [argv, ...], "bot": argv, "env": {NAME: VALUE}}

For each kit (every kit, or those named), in the kit's folder and with a private
copy of this environment plus the kit's `env`, the checker runs every build
command, every test command, then `referee check-bot --rules standard -- BOT`,
and prints one line:

    kit NAME: PASS (build Xs, test Ys, check-bot Zs)
    kit NAME: FAIL at build|test|check-bot: COMMAND      (and its output's last 30 lines)
    kit NAME: NOT CHECKED: no EXE on PATH

`referee` and `python` are the ones next to this interpreter (the folder of
sys.executable goes first on PATH: run it with the referee's `.venv/bin/python`).
Go gets an absolute GOPATH under the kit's build/ and GOCACHE (Go's own build
cache: the kit's cache folder's .gocache, below, or build/go-cache when the cache
is off) when they are not set, and GOFLAGS=-count=1 (its unit test runs every
time); every kit gets a HOME (the kit's build/home) when there is none. Two checks
of one kit never run at once: each holds a lock on the kit's kit.json.

Build cache. A kit's build is kept outside the clone, in
$REFEREE_KIT_CACHE/NAME/KEY/ (by default $XDG_CACHE_HOME/mexican-train-referee/kits,
~/.cache/... when XDG_CACHE_HOME is not set; REFEREE_KIT_CACHE=off turns it off).
KEY is a sha256 of the kit's kit.json, its source files (every file of its folder
but build/, target/, node_modules/, caches and lock files), the kit folder's path
(CMake's build tree names it), the output of each needed tool's version command
(`cargo --version` and `rustc --version`, `c++ --version`, `javac -version`, `go
version`, `tsc --version`, ...), the compiler variables of the environment (CC,
CXXFLAGS, RUSTFLAGS, GOFLAGS, ...) and what lies outside the kit that its commands
name (Debian's crate registry, the JUnit jar). When the kit passes, what build/
and target/ then hold (not the caches above) is copied to a temporary folder and
renamed to KEY: a build that fails (or a kit) is never kept, and an entry is whole
or absent. When KEY is there, it is copied back into the kit's folder (build/ and
target/ emptied first, every file dated now, so that Cargo sees its test binaries
as up to date), the build commands are skipped, and so are the unit test's
commands that only compile (javac: their classes were cached with the build), and

    kit NAME: build cached (key 0123456789ab)

is printed (with "; and the unit test's javac" when one is skipped). The unit
test and check-bot run every time. A kit keeps its 3 most recently used entries;
a lock in the kit's cache folder keeps a restore from meeting a pruning. A cached
build whose test or check-bot fails is dropped (the next check builds). A cache
that cannot be read or written is said and ignored.

Exit status: 0 when every kit was checked and passed, 1 when any failed, 3 when
none failed but some were not checked (their toolchain is missing), 2 for a kit
that does not exist. `--list` prints each kit and what it needs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

KITS = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent  # the venv's: `referee`, and `python` for the Python kit
TIMEOUT_S = 900  # per command: a first Rust build on a loaded machine takes minutes
TAIL = 30

CACHE_FORMAT = "mexican-train-referee kit cache 1"
KEEP = 3  # entries per kit
STALE_S = 3600  # a temporary folder of the cache this old belongs to no live check
OUTPUTS = ("build", "target")  # the folders a kit's build writes to
OWN = {"home", "go-cache", "gopath"}  # what this checker puts in build/: never cached
NOT_SOURCES = {"build", "target", "node_modules", "__pycache__", ".pytest_cache", ".git"}
GENERATED = {"Cargo.lock", "package-lock.json"}  # written by the build: not sources
VERSION = {  # a needed tool's version commands, when not `TOOL --version`
    "cargo": [["cargo", "--version"], ["rustc", "--version"]],
    "go": [["go", "version"]],
    "javac": [["javac", "-version"]],
    "java": [["java", "-version"]],
}
COMPILERS = {"javac"}  # a unit test's command that only compiles: cached with the build
COMPILER_ENV = (
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "RUSTC", "RUSTFLAGS",
    "CARGO_BUILD_TARGET", "GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "CGO_ENABLED",
    "JAVA_HOME", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "NODE_OPTIONS",
)  # fmt: skip


def load(folder: Path) -> dict[str, Any]:
    """The kit's kit.json."""
    kit: dict[str, Any] = json.loads((folder / "kit.json").read_text(encoding="utf-8"))
    return kit


def kit_env(folder: Path, kit: dict[str, Any], cache: Path | None = None) -> dict[str, str]:
    """This process's environment, the venv first on PATH, the kit's env, Go's and HOME.

    `cache` is the kit's cache folder, None when the cache is off.
    """
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", os.defpath)])
    env.update({name: str(value) for name, value in kit.get("env", {}).items()})
    if "go" in kit["needs"]:  # Go refuses relative paths here
        env.setdefault(
            "GOCACHE", str(cache / ".gocache" if cache else folder / "build" / "go-cache")
        )
        env.setdefault("GOPATH", str(folder / "build" / "gopath"))
        env.setdefault("GOFLAGS", "-count=1")  # `go test` runs the tests, never "(cached)"
    if not env.get("HOME"):
        env["HOME"] = str(folder / "build" / "home")
        Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    return env


def run(argv: list[str], folder: Path, env: dict[str, str]) -> tuple[bool, str]:
    """Run one command in the kit's folder: (it exited 0, its output and stderr)."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,  # so that a timeout ends what it started too
        )
    except OSError as exc:
        return False, f"cannot start: {exc}"
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return False, f"{output}\ntimed out after {TIMEOUT_S} s"
    return proc.returncode == 0, output


def cache_root(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where the kits' builds are cached (a kit's in its NAME folder), None when off."""
    chosen = environ.get("REFEREE_KIT_CACHE", "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen).absolute()
    xdg = environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    except RuntimeError:  # no home to find
        return None
    return base / "mexican-train-referee" / "kits"


def sources(folder: Path) -> list[Path]:
    """The kit's source files: every file of its folder but build outputs and caches."""
    found = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = [name for name in dirs if name not in NOT_SOURCES]
        found += [Path(top) / name for name in files if name not in GENERATED]
    return sorted(found)


def outside_inputs(kit: dict[str, Any]) -> list[str]:
    """What the kit's commands name outside it: a folder's entries, a file's size and date."""
    named = []
    for argv in kit["build"] + kit["test"]:
        for arg in argv:
            for part in arg.rsplit("=", 1)[-1].strip("\"'").split(os.pathsep):
                path = Path(part)
                if not path.is_absolute():
                    continue
                if path.is_dir():
                    named.append(f"{path}: {' '.join(sorted(os.listdir(path)))}")
                elif path.is_file():
                    stat = path.stat()
                    named.append(f"{path}: {stat.st_size} {stat.st_mtime_ns}")
    return named


def toolchain(folder: Path, kit: dict[str, Any], env: dict[str, str]) -> list[str]:
    """Each needed tool's version command and what it printed."""
    said = []
    for exe in kit["needs"]:
        for argv in VERSION.get(exe, [[exe, "--version"]]):
            try:
                proc = subprocess.run(
                    argv,
                    cwd=folder,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=120,
                )
                output = f"{proc.stdout}{proc.stderr}exit {proc.returncode}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                output = f"cannot run: {exc}"
            said.append(f"{shlex.join(argv)}: {output}")
    return said


def cache_key(folder: Path, tools: list[str], env: dict[str, str]) -> str:
    """The sha256 naming the kit's build: its sources, kit.json, place, tools and flags."""
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    add("format", CACHE_FORMAT.encode())
    add("folder", str(folder).encode())
    add("kit.json", (folder / "kit.json").read_bytes())
    for path in sources(folder):
        add(f"source {path.relative_to(folder).as_posix()}", path.read_bytes())
    for said in tools + outside_inputs(load(folder)):
        add("tool", said.encode())
    for name in COMPILER_ENV:
        if name in env:
            add(f"env {name}", env[name].encode())
    return digest.hexdigest()


def outputs(folder: Path) -> list[Path]:
    """What the kit's build wrote: what build/ and target/ hold, but this checker's caches."""
    return [
        child
        for top in OUTPUTS
        if (folder / top).is_dir() and not (folder / top).is_symlink()
        for child in sorted((folder / top).iterdir())
        if child.name not in OWN
    ]


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def cache_lock(kit_dir: Path, mode: int) -> Iterator[None]:
    """The kit's cache folder locked: shared to restore, exclusive to add or prune."""
    kit_dir.mkdir(parents=True, exist_ok=True)
    with open(kit_dir / ".lock", "a") as lock:
        fcntl.flock(lock, mode)
        yield


def restore(entry: Path, folder: Path) -> bool:
    """Copy a cached build into the kit's folder; False, and the kit untouched, if not whole."""
    with cache_lock(entry.parent, fcntl.LOCK_SH):
        if not (entry / "meta.json").is_file():
            return False
        for child in outputs(folder):
            remove(child)
        try:
            now = time.time()
            for top in sorted((entry / "out").iterdir()):
                shutil.copytree(
                    top,
                    folder / top.name,
                    symlinks=True,
                    dirs_exist_ok=True,
                    copy_function=shutil.copy,
                )
                for parent, dirs, files in os.walk(top):
                    for name in dirs + files:
                        there = folder / (Path(parent) / name).relative_to(entry / "out")
                        os.utime(there, (now, now), follow_symlinks=False)
            os.utime(entry)  # most recently used
        except OSError:
            for child in outputs(folder):
                remove(child)
            raise
    return True


def store(entry: Path, folder: Path) -> None:
    """Copy the kit's build to a temporary folder of the cache, then rename it to the entry."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
    try:
        (temporary / "out").mkdir()
        for child in outputs(folder):
            there = temporary / "out" / child.relative_to(folder)
            there.parent.mkdir(parents=True, exist_ok=True)
            if child.is_dir() and not child.is_symlink():
                shutil.copytree(child, there, symlinks=True)
            else:
                shutil.copy2(child, there, follow_symlinks=False)
        meta = {"folder": str(folder), "stored": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        (temporary / "meta.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
        with cache_lock(entry.parent, fcntl.LOCK_EX):
            if not entry.exists():
                temporary.rename(entry)
            prune(entry.parent)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary)


def prune(kit_dir: Path) -> None:
    """Keep the KEEP most recently used entries, and the temporary folders of live checks.

    Called with the kit's cache locked exclusively. An entry is renamed before it is
    deleted, so that one deleted halfway is never taken for an entry.
    """
    entries = sorted(
        (path for path in kit_dir.iterdir() if path.is_dir() and not path.name.startswith(".")),
        key=lambda path: path.stat().st_mtime,
        reverse=True,
    )
    for path in entries[KEEP:]:
        path.rename(kit_dir / f".old-{path.name}-{os.getpid()}")
    for path in kit_dir.glob(".old-*"):
        shutil.rmtree(path, ignore_errors=True)
    for path in kit_dir.glob(".tmp-*"):
        with contextlib.suppress(OSError):  # or another check just removed it
            if time.time() - path.stat().st_mtime > STALE_S:
                shutil.rmtree(path)


def take(entry: Path, folder: Path, name: str) -> bool:
    """Restore the kit's cached build when there is one: whether it was."""
    if not entry.is_dir():
        return False
    try:
        restored = restore(entry, folder)
    except OSError as exc:
        print(f"kit {name}: build cache unreadable, building: {exc}", flush=True)
        return False
    return restored


def keep(entry: Path, folder: Path, tools: list[str], env: dict[str, str], name: str) -> None:
    """Cache the kit's build, unless its sources changed while it was built and tested."""
    try:
        if cache_key(folder, tools, env) == entry.name:
            store(entry, folder)
    except OSError as exc:
        print(f"kit {name}: build not cached: {exc}", flush=True)


def evict(entry: Path) -> None:
    """Drop a cached build that failed its test or check-bot: the next check builds."""
    old = entry.parent / f".old-{entry.name}-{os.getpid()}"
    with contextlib.suppress(OSError):
        with cache_lock(entry.parent, fcntl.LOCK_EX):
            entry.rename(old)
        shutil.rmtree(old)


def check(folder: Path) -> str:
    """Check one kit and print its line: "pass", "fail" or "unchecked"."""
    kit = load(folder)
    name = kit["name"]
    root = cache_root() if kit["build"] else None  # nothing built, nothing cached
    if root is not None:
        try:
            (root / name).mkdir(parents=True, exist_ok=True)
            if not os.access(root / name, os.W_OK | os.X_OK):
                raise PermissionError(f"cannot write to {root / name}")
        except OSError as exc:
            print(f"kit {name}: build not cached: {exc}", flush=True)
            root = None
    env = kit_env(folder, kit, root / name if root else None)
    for exe in kit["needs"]:
        if shutil.which(exe, path=env["PATH"]) is None:
            print(f"kit {name}: NOT CHECKED: no {exe} on PATH", flush=True)
            return "unchecked"
    bot = list(kit["bot"])
    if "/" in bot[0]:  # a program of the kit's own: build/bot
        bot[0] = str(folder / bot[0])
    check_bot = [str(BIN / "referee"), "check-bot", "--rules", "standard", "--", *bot]
    stages = [
        ("build", kit["build"]),
        ("test", kit["test"]),
        ("check-bot", [check_bot]),
    ]
    timings = []
    with open(folder / "kit.json", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another check of this kit waits here
        entry, tools, cached = None, [], False
        if root is not None:
            try:
                tools = toolchain(folder, kit, env)
                entry = root / name / cache_key(folder, tools, env)
            except OSError as exc:
                print(f"kit {name}: build not cached: {exc}", flush=True)
        for stage, commands in stages:
            start = time.monotonic()
            if stage == "build" and entry is not None and take(entry, folder, name):
                cached = True
                skipped = [argv[0] for argv in kit["test"] if Path(argv[0]).name in COMPILERS]
                also = f"; and the unit test's {', '.join(skipped)}" if skipped else ""
                print(f"kit {name}: build cached (key {entry.name[:12]}{also})", flush=True)
                timings.append(f"build cached {time.monotonic() - start:.1f}s")
                continue
            for argv in commands:
                if stage == "test" and cached and Path(argv[0]).name in COMPILERS:
                    continue  # what it writes was cached and is restored
                ok, output = run(argv, folder, env)
                if not ok:
                    print(f"kit {name}: FAIL at {stage}: {shlex.join(argv)}")
                    print("\n".join(output.rstrip().splitlines()[-TAIL:]), flush=True)
                    if cached and entry is not None:
                        evict(entry)
                    return "fail"
            timings.append(f"{stage} {time.monotonic() - start:.1f}s")
        if entry is not None and not cached:
            keep(entry, folder, tools, env, name)
    print(f"kit {name}: PASS ({', '.join(timings)})", flush=True)
    return "pass"


def main(argv: list[str]) -> int:
    folders = {load(p.parent)["name"]: p.parent for p in sorted(KITS.glob("*/kit.json"))}
    if "--list" in argv:
        for name, folder in folders.items():
            print(f"{name}: needs {', '.join(load(folder)['needs'])}")
        return 0
    names = argv or list(folders)
    unknown = [name for name in names if name not in folders]
    if unknown:
        print(f"kits/check.py: no kit {', '.join(unknown)}; kits: {', '.join(folders)}")
        return 2
    results = [check(folders[name]) for name in names]
    if "fail" in results:
        return 1
    if "unchecked" in results:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
