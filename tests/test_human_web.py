"""A person's seat in the browser (`human --web`, issue 44 part 2), on real processes:
`referee play` prints the page's address, headless Chromium plays whole games by
clicks at 1400 and 400 px and the logs replay; without the seat's key every request
is refused (403); an illegal or stale move is answered 409 and the turn goes on; the
clock runs out and the referee moves; Resign forfeits; `human --web` in a league.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.test_isolation import BOTS, Runner, needs_bwrap, reports
from tests.test_isolation import runner as runner  # the fixture: as root and as a user
from tests.test_replay_html import Browser
from tests.test_replay_html import browser as browser  # the fixture: one Chromium
from tests.test_tree_memory import write_league

PY = sys.executable
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PATH": f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
SMALL = ("--seed", "5", "--set", "max_pip=6", "--set", "rounds=single")
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"
# No horizontal scrolling: the page fits its width.
FITS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1"


class Seat:
    """`referee play "me=human --web" ...` running, and its page's address."""

    def __init__(self, folder: Path, *args: str) -> None:
        self.folder = folder
        self.proc = subprocess.Popen(
            [PY, "-m", "referee", "play", "me=human --web", *args, "--log-dir", str(folder)],
            cwd=folder,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        first = self.proc.stderr.readline()
        found = re.fullmatch(
            r"me: play in your browser at (http://127\.0\.0\.1:\d+/\?k=\S+)\n", first
        )
        if found is None:
            self.proc.kill()
            raise AssertionError(first + self.proc.stderr.read())
        self.url = found.group(1)
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.key = parts.query.removeprefix("k=")
        self.messages: list[dict[str, Any]] = []
        self.out = self.err = ""

    def request(
        self, method: str, path: str, body: Any = None, key: str | None = None
    ) -> tuple[int, bytes]:
        """`path` with the seat's key (or `key`), once the seat answers."""
        deadline = time.monotonic() + 30
        while True:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                sep = "&" if "?" in path else "?"
                data = None if body is None else json.dumps(body).encode()
                conn.request(method, f"{path}{sep}k={self.key if key is None else key}", data)
                response = conn.getresponse()
                return response.status, response.read()
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            finally:
                conn.close()

    def follow(self) -> None:
        """Read the seat's event stream in a thread, into `messages`."""

        def read() -> None:
            self.request("GET", "/")  # waits until the seat answers
            conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
            conn.request("GET", f"/events?k={self.key}")
            response = conn.getresponse()
            name = ""
            while line := response.readline():
                text = line.decode().rstrip("\n")
                if text.startswith("event: "):
                    name = text[7:]
                elif text.startswith("data: ") and name == "m":
                    self.messages.append(json.loads(text[6:]))
            conn.close()

        threading.Thread(target=read, daemon=True).start()

    def wait(self, kind: str, after: int = 0, timeout: float = 60) -> tuple[int, dict[str, Any]]:
        """The first message of `kind` from index `after` on."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, m in enumerate(self.messages[after:], after):
                if m["type"] == kind:
                    return i, m
            if self.proc.poll() is not None and kind != "over":
                break
            time.sleep(0.02)
        raise AssertionError(f"no {kind}: {[m['type'] for m in self.messages][-20:]}")

    def finish(self) -> int:
        self.out, self.err = self.proc.communicate(timeout=120)
        return self.proc.returncode

    def log(self) -> Path:
        (found,) = self.folder.glob("game-5*.jsonl.gz")
        return found


@pytest.fixture
def seat(tmp_path: Path) -> Iterator[list[Seat]]:
    started: list[Seat] = []
    yield started
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def replays(log: Path) -> None:
    done = subprocess.run(
        [PY, "-m", "referee", "replay", str(log)], env=ENV, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


# One move by clicks: a playable tile of the hand, then the first train it fits; or
# Draw, Pass, End when no tile can be played. Returns what it clicked.
PICK = """(() => {
  const tile = document.querySelector('#hand button.tile.playable');
  if (tile) return 'tile';
  for (const id of ['draw', 'pass', 'end']) if (!document.getElementById(id).disabled) return id;
  return '';
})()"""


def play_by_clicks(browser: Browser, width: int) -> int:
    """Play the open game to its end by clicks; the number of moves made."""
    moves, last = 0, ""
    while True:
        state = browser.until(
            f"document.body.dataset.over === '1' ? 'over' : "
            f"(document.body.dataset.turn !== '' && document.body.dataset.turn !== '{last}' "
            "&& document.body.dataset.turn)",
            timeout=60,
        )
        if state == "over":
            return moves
        last = state
        assert browser.js(FITS), width
        what = browser.js(PICK)
        if what == "tile":
            browser.click("#hand button.tile.playable")
            assert browser.until("!!document.querySelector('.train.target')", timeout=10)
            browser.click(".train.target")
        else:
            assert what, browser.js("document.body.innerText")
            browser.click(f"#{what}")
        moves += 1


@pytest.mark.parametrize("width", [1400, 400])
def test_a_whole_game_by_clicks_in_the_browser(
    browser: Browser, seat: list[Seat], tmp_path: Path, width: int
) -> None:
    s = Seat(tmp_path, RANDOM, *SMALL)
    seat.append(s)
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )
    s.request("GET", "/")  # the seat is up
    browser.events.clear()
    browser.navigate(s.url)
    moves = play_by_clicks(browser, width)
    assert moves >= 3
    assert browser.js(FITS)
    ranks = browser.js("document.getElementById('ranks').innerText")
    assert "me (you)" in ranks and "random" in ranks, ranks
    assert s.finish() == 0, s.err
    replays(s.log())
    with gzip.open(s.log(), "rt") as handle:
        lines = [json.loads(line) for line in handle]
    mine = [x for x in lines if x.get("type") == "decision" and x.get("seat") == 0]
    assert len(mine) == moves and not any(x.get("faults") for x in mine)
    own = f"request: http://127.0.0.1:{s.port}/"  # the page's own requests, and no other
    assert [p for p in browser.problems() if not p.startswith(own)] == []


def test_the_page_needs_the_key_and_a_bad_move_keeps_the_turn(
    seat: list[Seat], tmp_path: Path
) -> None:
    s = Seat(tmp_path, RANDOM, *SMALL, "--move-ms", "5000", "--bank-ms", "0")
    seat.append(s)
    for method, path in (("GET", "/"), ("GET", "/events"), ("POST", "/move"), ("POST", "/resign")):
        status, body = s.request(method, path, {"id": 1, "index": 0}, key="wrong")
        assert status == 403 and b"key" in body, (path, status)
    status, page = s.request("GET", "/")
    assert status == 200 and b"<title>Mexican Train" in page
    s.follow()
    i, turn = s.wait("turn")
    # Not a move of this turn, not this turn: answered, and the turn goes on.
    status, body = s.request("POST", "/move", {"id": turn["id"], "index": len(turn["legal"])})
    assert status == 409 and b"no move" in body
    status, body = s.request("POST", "/move", {"id": turn["id"] + 1, "index": 0})
    assert status == 409 and b"turn is over" in body
    status, body = s.request("POST", "/move", "nonsense")
    assert status == 400
    status, body = s.request("POST", "/move", {"id": turn["id"], "index": 0})
    assert status == 200, body
    status, body = s.request("POST", "/move", {"id": turn["id"], "index": 0})
    # Once only (the next turn may be open already: then this one is over).
    assert status == 409 and (b"not your turn" in body or b"turn is over" in body), body
    # The next turn left alone: the clock runs out (forfeit, play's default policy).
    j, _ = s.wait("turn", i + 1)
    _, error = s.wait("error", j)
    assert error["code"] == "timeout"
    assert s.finish() == 0, s.err
    with gzip.open(s.log(), "rt") as handle:
        lines = [json.loads(line) for line in handle]
    faults = [f["kind"] for x in lines if x.get("type") == "decision" for f in x.get("faults", [])]
    assert "timeout" in faults
    replays(s.log())


def test_resign_forfeits_the_game(seat: list[Seat], tmp_path: Path) -> None:
    s = Seat(tmp_path, RANDOM, *SMALL)
    seat.append(s)
    s.follow()
    s.wait("turn")
    status, _ = s.request("POST", "/resign", {})
    assert status == 200
    assert s.finish() == 0, s.err
    assert "(forfeit)" in s.out, s.out
    with gzip.open(s.log(), "rt") as handle:
        end = [json.loads(line) for line in handle][-1]
    assert end["forfeited"][0] is True, end


def test_human_web_is_never_sandboxed_and_takes_a_port(tmp_path: Path) -> None:
    for args, line in (
        (["me=human --web x", RANDOM], "`human --web` takes a port (1 to 65535) or none"),
        (
            ["me=human --web", RANDOM, "--sandbox", "bwrap"],
            "cannot run in the sandbox (bwrap)",
        ),
        (["human --web", "human --web", RANDOM], "two browser seats are both named 'human'"),
    ):
        command = [PY, "-m", "referee", "play", *args]
        done = subprocess.run(command, cwd=tmp_path, env=ENV, capture_output=True, text=True)
        assert done.returncode == 2 and line in done.stderr, (args, done.stderr)
        assert done.stderr.count("\n") == 1, done.stderr


def play_person(proc: subprocess.Popen[str], port: int, key: str, games: int) -> tuple[int, int]:
    """Play a browser seat over HTTP (the last legal move each turn) through `games`
    games of a league that starts a fresh seat for each: the seats' sessions seen and
    the moves made."""
    sessions: list[str] = []
    answered: set[tuple[str, int]] = set()  # a stream opened again replays its turns
    moves = 0
    while proc.poll() is None and len(sessions) < games:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", f"/events?k={key}")
            response = conn.getresponse()
        except ConnectionError:
            # Between games: the next seat is not up yet (refused), or the last one, which
            # is ending, took the connection and closed it unanswered (reset), as a
            # browser's event stream meets it too and opens again.
            conn.close()
            time.sleep(0.05)
            continue
        name = ""
        while line := response.readline():
            text = line.decode().rstrip("\n")
            if text.startswith("event: "):
                name = text[7:]
            elif text.startswith("data: ") and name == "seat":
                session = json.loads(text[6:])["session"]
                if session not in sessions:
                    sessions.append(session)
            elif text.startswith("data: ") and name == "m":
                m = json.loads(text[6:])
                if m["type"] == "turn" and (sessions[-1], m["id"]) not in answered:
                    answered.add((sessions[-1], m["id"]))
                    body = json.dumps({"id": m["id"], "index": len(m["legal"]) - 1})
                    move = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    move.request("POST", f"/move?k={key}", body)
                    assert move.getresponse().status == 200
                    move.close()
                    moves += 1
        conn.close()
    return len(sessions), moves


def address(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """The port and key of the browser seat `me` from the first line the run printed."""
    assert proc.stderr is not None
    first = proc.stderr.readline()
    said = r"me: play in your browser at http://127\.0\.0\.1:(\d+)/\?k=(\S+)\n"
    found = re.fullmatch(said, first)
    assert found is not None, first + proc.stderr.read()
    return int(found.group(1)), found.group(2)


def test_a_person_plays_a_league_in_the_browser(tmp_path: Path) -> None:
    """`[[bot]] command = "human --web"` in a league without duplicate deals, with no
    terminal: the address is printed once, each game starts a fresh seat on the same
    page (a new session), and the person's games count as any bot's."""
    league = tmp_path / "league.toml"
    league.write_text(
        '[league]\nname = "h"\ntable = 2\ndeals = 1\nduplicate = false\n'
        '[rules]\nmax_pip = 6\nrounds = "single"\n[time]\nmove_ms = 5000\n'
        '[[bot]]\nname = "me"\ncommand = "human --web"\n'
        + "".join(f'[[bot]]\nname = "r{i}"\ncommand = "{RANDOM}"\n' for i in (1, 2)),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [PY, "-m", "referee", "league", str(league), "--out", "out"],
        cwd=tmp_path,
        env=ENV,
        stdin=subprocess.DEVNULL,  # no terminal: a browser seat needs none
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port, key = address(proc)
        sessions, moves = play_person(proc, port, key, 2)  # me against r1, then r2
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdout, proc.stderr):  # closed, whatever happened: no leak into
            if pipe is not None:  # the next test on this worker
                pipe.close()
    assert sessions == 2 and moves >= 4
    standings = json.loads((tmp_path / "out" / "standings.json").read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in standings["bots"]}
    assert rows["me"]["games"] == 2 and not rows["me"]["faults"], rows["me"]
    assert "me:" not in err  # the address was printed once, before the first game


def thief_league(runner: Runner, sandbox: str) -> dict[str, Any]:
    """A league of a browser seat (played over HTTP) and `seat_thief.py` in `sandbox`,
    run by `runner`: what the thief found."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    bots = f"""
[[bot]]
name = "me"
command = "human --web {port}"

[[bot]]
name = "thief"
command = "{runner.python} {BOTS / "seat_thief.py"} {port}"
sandbox = "{sandbox}"
"""
    league = write_league(runner, "seat-thief", bots)
    proc = subprocess.Popen(
        [*runner.prefix, "league", str(league)],
        cwd=runner.folder,
        env=runner.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        got, key = address(proc)
        assert got == port
        play_person(proc, port, key, 1)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
    (said,) = [r["thief"] for r in reports(runner.folder / "out") if "thief" in r]
    assert isinstance(said, dict)
    assert key not in json.dumps(said) or sandbox == "none"
    return said


@needs_bwrap
def test_a_sandboxed_bot_cannot_read_or_reach_a_persons_browser_seat(runner: Runner) -> None:
    """As root and as an unprivileged user: a hostile bot in the sandbox, at the
    person's table, finds no seat key in any environment it can read, and every request
    it makes to the seat's page is refused (or cannot connect): never the hand."""
    said = thief_league(runner, "bwrap")
    assert said["keys"] == 0, said
    assert len(said["asked"]) == 2, said  # without a key, and with a guess
    for path, answer in said["asked"].items():
        assert " 200 " not in answer and (" 403 " in answer or "Error" in answer), (path, said)


def test_outside_the_sandbox_a_bot_of_the_same_user_finds_the_key(tmp_path: Path) -> None:
    """The test above has teeth, and the limit is documented (docs/human.md): a bot the
    referee runs unsandboxed, as the seat's own user, reads the key from the seat's
    environment and gets the person's messages."""
    folder = Path(tempfile.mkdtemp(prefix="seat-thief-"))
    try:
        said = thief_league(Runner("root" if os.geteuid() == 0 else "user", folder), "none")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert said["keys"] >= 1, said
    assert any(" 200 " in answer for answer in said["asked"].values()), said
