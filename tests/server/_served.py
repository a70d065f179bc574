"""`referee serve` and `referee connect` as real processes, for the TLS and credential
tests: a league of two stdio bots (a, b) and two tcp bots (c with a `token_sha256`,
d with a `token_file`), or the same four bots all on stdio; its games, and every
output a served league leaves, searched for the tokens.

The stdio bots run without the sandbox, so that these tests hold wherever the
suite runs; the deal key and the bot seed key are pinned in the league file, so the
same league played over TCP and over stdio deals and plays the same games.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.league.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
RANDOM = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
GREEDY = [sys.executable, str(ROOT / "sample_bots" / "greedy_bot.py")]
TOKEN_C = "mxt_Yb3PGAtEzWdB3hr6Qd4kz7SdTkPh1tbBqWTbY7fYmPg"
TOKEN_D = "mxt_l2Vb0hXoBW1w0cpmwqwYdIt8ocMPhTv_6FsKFL8rIYQ"
WRONG = "mxt_Ck2uMiHqO2uHCaEQwlHg2h5mT8OLLeFyC0e2bgwz3SU"  # nobody's
KEY = "00112233445566778899aabbccddeeff"
REFEREE = [sys.executable, "-m", "referee.cli"]
# Without COLUMNS (pytest-xdist's workers have one): serve's output to a pipe is not
# wrapped, so that a line the tests look for is whole.
ENV = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, "PYTHONPATH": str(ROOT)}


def league_file(folder: Path, *, tcp: bool, extra: str = "") -> Path:
    """league.toml in `folder` (made), with c.token, d.token and wrong.token beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, token in (("c", TOKEN_C), ("d", TOKEN_D), ("wrong", WRONG)):
        (folder / f"{name}.token").write_text(token + "\n")

    def stdio(name: str, argv: list[str]) -> str:
        return f'[[bot]]\nname = "{name}"\ncommand = {json.dumps(argv)}\nsandbox = "none"\n'

    if tcp:
        digest = hashlib.sha256(TOKEN_C.encode()).hexdigest()
        c = f'[[bot]]\nname = "c"\ntransport = "tcp"\ntoken_sha256 = "{digest}"\n'
        d = '[[bot]]\nname = "d"\ntransport = "tcp"\ntoken_file = "d.token"\n'
    else:
        c, d = stdio("c", RANDOM), stdio("d", GREEDY)
    path = folder / "league.toml"
    path.write_text(
        f"""
[league]
name = "tls-test"
table = 4
deals = 2
duplicate = false
seed = 7
out = "out"
deal_key = "{KEY}"
bot_seed_key = "{KEY}"
[rules]
max_pip = 6
rounds = "single"
[time]
startup_ms = 20000
{extra}
{stdio("a", RANDOM)}
{stdio("b", GREEDY)}
{c}
{d}
"""
    )
    return path


def games(out: Path) -> list[tuple[str, list[int], list[str]]]:
    """Each recorded game: its id, its scores by seat, its faults' kinds."""
    ledger = Ledger(out / "league.db")
    try:
        return sorted(
            (r.game_id, list(r.scores), sorted(f["kind"] for f in r.faults))
            for r in ledger.records()
        )
    finally:
        ledger.close()


@dataclass
class Served:
    """A `referee serve` process: where it listens, and its certificate's fingerprint."""

    process: subprocess.Popen[str]
    host: str
    port: int
    fingerprint: str | None  # None: plain TCP
    out: str = ""
    err: str = ""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def wait(self, timeout: float = 120) -> None:
        """Until the league is over: its stdout and stderr."""
        self.out, self.err = self.process.communicate(timeout=timeout)


@contextlib.contextmanager
def serving(path: Path, *options: str) -> Iterator[Served]:
    """`referee serve path --port 0 options...`, killed if still running at the end."""
    process = subprocess.Popen(
        [*REFEREE, "serve", str(path), "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        if not first.startswith("listening on "):
            _, err = process.communicate(timeout=30)
            raise AssertionError(f"serve did not listen: {first!r} {err!r}")
        words = first.split()
        host, port = words[2].rsplit(":", 1)
        fingerprint = words[-1].rstrip(")") if "(tls," in first else None
        served = Served(process, host, int(port), fingerprint, out=first)
        yield served
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def connect(address: str, name: str, token_file: Path, *options: str) -> subprocess.Popen[str]:
    """`referee connect` of bot `name` (c: random, d: greedy), started."""
    argv = RANDOM if name == "c" else GREEDY
    login = ["--name", name, "--token-file", str(token_file)]
    return subprocess.Popen(
        [*REFEREE, "connect", address, *login, *options, "--", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        text=True,
    )


def finished(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    """A process's status, stdout and stderr once it ends."""
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def core_limit(pid: int) -> str:
    """The "Max core file size" line of a process's limits."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max core file size"):
            return " ".join(line.split()[4:6])
    raise AssertionError(f"no core limit for {pid}")


def every_output(folder: Path) -> Iterator[tuple[Path, bytes]]:
    """Every file under `folder` as its bytes, a gzip file's decompressed too."""
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            data = file.read_bytes()
            yield file, data
            if file.suffix == ".gz":
                yield file, gzip.decompress(data)


def assert_no_token(out: Path, texts: list[str], tokens: tuple[str, ...]) -> None:
    """None of `tokens` is in any file under `out` (the ledger, the logs, the stderr
    files, the standings, the site, the TLS files) or in `texts` (what the processes
    printed)."""
    for token in tokens:
        for file, data in every_output(out):
            assert token.encode() not in data, file
        for text in texts:
            assert token not in text


def standings_json(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "standings.json").read_text())
    return data
