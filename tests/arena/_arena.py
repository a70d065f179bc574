"""Running a real arena for the tests: its file, the `referee arena` process, and
waiting on its ledger (polled: the arena's own pace, with a generous limit that only a
hung arena reaches)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from referee.arena.ledger import ArenaLedger, Version

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
T = TypeVar("T")
LIMIT_S = 240.0  # only a hung arena gets there


def bot(script: str, *args: str) -> str:
    """A command line (TOML string) for a bot script of the repository."""
    path = ROOT / script if "/" in script else BOTS / script
    return " ".join([sys.executable, str(path), *args])


def arena_file(
    tmp: Path, bots: dict[str, str], *, rules: str = 'rounds = "single"', **arena: Any
) -> Path:
    """ARENA.toml with `bots` (name -> command), single-round games (or `rules`), no
    sandbox (the sandbox's own tests run the arena's bots in it)."""
    terms = {"name": "t", "tables": 2, "sandbox": "none", "newcomer_games": 4, **arena}
    lines = ["[arena]"]
    for key, value in terms.items():
        lines.append(f"{key} = {_toml(value)}")
    lines += ["", "[rules]", 'preset = "standard"', rules, ""]
    for name, command in bots.items():
        lines += ["[[bot]]", f"name = {_toml(name)}", f"command = {_toml(command)}"]
        lines += [f"cwd = {_toml(str(ROOT))}", ""]
    path = tmp / "arena.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def referee(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=LIMIT_S,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"referee {' '.join(args)}: {done.returncode}\n{done.stderr}")
    return done


class Running:
    """A `referee arena` process (in its own process group) and its folder."""

    def __init__(self, path: Path, out: Path, *extra: str) -> None:
        self.out = out
        self.log = out.parent / f"{out.name}-run-{time.monotonic_ns()}.log"
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        self.handle = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "arena", str(path), "--out", str(out), *extra],
            stdout=self.handle,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def ledger(self) -> ArenaLedger:
        return ArenaLedger(self.out / "arena.db")

    def wait(self, what: str, check: Callable[[ArenaLedger], T | None]) -> T:
        """Poll the ledger until `check` gives a value (not None or False)."""
        deadline = time.monotonic() + LIMIT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the arena ended ({self.proc.returncode}):\n{self.output()}")
            if (self.out / "arena.db").is_file():
                led = self.ledger()
                try:
                    got = check(led)
                finally:
                    led.close()
                if got:
                    return got
            time.sleep(0.2)
        raise AssertionError(f"waited in vain for {what}:\n{self.output()}")

    def wait_output(self, pattern: str) -> tuple[str, ...]:
        """Wait until its output has a line matching `pattern`: its groups."""
        deadline = time.monotonic() + LIMIT_S
        while time.monotonic() < deadline:
            found = re.search(pattern, self.output())
            if found is not None:
                return found.groups()
            if self.proc.poll() is not None:
                raise AssertionError(f"the arena ended ({self.proc.returncode}):\n{self.output()}")
            time.sleep(0.05)
        raise AssertionError(f"waited in vain for {pattern!r}:\n{self.output()}")

    def started(self) -> None:
        """Wait until its ledger holds its terms: the commands may act on it."""
        self.wait("the arena to start", lambda led: led.meta("arena_file") is not None)

    def version(self, name: str) -> Version | None:
        led = self.ledger()
        try:
            return led.version(name)
        finally:
            led.close()

    def stop(self) -> int:
        referee("arena", "stop", str(self.out))
        code = self.proc.wait(timeout=LIMIT_S)
        self.handle.close()
        if code != 0:  # pytest shows it with the failure: what the arena said, to the end
            print(f"the arena exited {code}; its output:\n{self.output()}")
        return code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=LIMIT_S)
        self.handle.close()

    def close(self) -> None:
        """Kill it if it still runs; its log file is closed whatever happened."""
        if self.proc.poll() is None:
            self.kill()
        self.handle.close()


def status(led: ArenaLedger, name: str) -> str | None:
    v = led.version(name)
    return None if v is None else v.status


def games_of(led: ArenaLedger, name: str) -> int:
    v = led.version(name)
    return 0 if v is None else v.games
