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
Go gets absolute GOCACHE and GOPATH under the kit's build/ when they are not set,
and every kit a HOME (the kit's build/home) when there is none. Two checks of one
kit never run at once: each holds a lock on the kit's kit.json.

Exit status: 0 when every kit was checked and passed, 1 when any failed, 3 when
none failed but some were not checked (their toolchain is missing), 2 for a kit
that does not exist. `--list` prints each kit and what it needs.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

KITS = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent  # the venv's: `referee`, and `python` for the Python kit
TIMEOUT_S = 900  # per command: a first Rust build on a loaded machine takes minutes
TAIL = 30


def load(folder: Path) -> dict:
    """The kit's kit.json."""
    return json.loads((folder / "kit.json").read_text(encoding="utf-8"))


def kit_env(folder: Path, kit: dict) -> dict[str, str]:
    """This process's environment, the venv first on PATH, the kit's env, Go's and HOME."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", os.defpath)])
    env.update({name: str(value) for name, value in kit.get("env", {}).items()})
    if "go" in kit["needs"]:  # Go refuses relative paths here
        env.setdefault("GOCACHE", str(folder / "build" / "go-cache"))
        env.setdefault("GOPATH", str(folder / "build" / "gopath"))
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


def check(folder: Path) -> str:
    """Check one kit and print its line: "pass", "fail" or "unchecked"."""
    kit = load(folder)
    name = kit["name"]
    env = kit_env(folder, kit)
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
        for stage, commands in stages:
            start = time.monotonic()
            for argv in commands:
                ok, output = run(argv, folder, env)
                if not ok:
                    print(f"kit {name}: FAIL at {stage}: {shlex.join(argv)}")
                    print("\n".join(output.rstrip().splitlines()[-TAIL:]), flush=True)
                    return "fail"
            timings.append(f"{stage} {time.monotonic() - start:.1f}s")
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
