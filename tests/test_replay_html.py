"""`referee replay LOG --html`: the page in a real headless Chromium.

Chromium is driven over `--remote-debugging-pipe` (the DevTools protocol as
NUL-separated JSON on file descriptors 3 and 4), so no driver package is
needed. The page must load with no console error and no request but its own
file, draw as many trains and tiles as the engine has at a given step, follow
the keyboard and the buttons, match the engine's positions (and a seat's view)
at every step, and stay under 1 MB for 13 rounds of 8 players. At 1400 and 800
px wide the board and the side column stand side by side, at 400 px the page is
one column with the board first and as wide as the page; at each, the board and
the caption of the step are whole in the window (under neither bar, overlapping
nothing), tiles are legible (12 px on the board, late in every round too; 20 x
40 in the hands) and names whole. Screenshots of the 8-player game at each width
are saved (set REPLAY_SCREENSHOT_DIR to keep them). A step's caption says the
legal moves of the decision (to the views that see the mover's hand) and the time
it took; the header counts moves once; the marker flags and the board's marks are
explained; the scores' columns are named after the bots; the full view's page
offers its log for download (a seat's page holds none). The view and the step live in
the address, so a reload or a link opens the same view.
"""

from __future__ import annotations

import base64
import fcntl
import gzip
import itertools
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.logs.gamelog import GameLog, log_bytes, read_log
from referee.logs.replay_text import steps
from referee.rules import State, Tile, legal_moves, preset, view
from tests.test_replay import seat_log_of, write_game

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class DevToolsError(RuntimeError):
    """An error reply from the browser, or a browser that went away."""


class Browser:
    """A headless Chromium and one page, spoken to over the DevTools pipe."""

    def __init__(self, executable: str) -> None:
        self.home = tempfile.mkdtemp(prefix="replay-chromium-")
        commands_r, self._commands = os.pipe()  # the browser reads fd 3
        self._replies, replies_w = os.pipe()  # and writes fd 4

        def plumb() -> None:  # in the child, before exec: the pipes become fds 3 and 4
            a = fcntl.fcntl(commands_r, fcntl.F_DUPFD_CLOEXEC, 10)
            b = fcntl.fcntl(replies_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            executable,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.home}",
            "about:blank",
        ]
        self.stderr_path = Path(self.home) / "stderr.txt"
        with self.stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                preexec_fn=plumb,  # runs in the child before exec; no threads here
                close_fds=False,  # our pipe ends are non-inheritable (PEP 446)
            )
        os.close(commands_r)
        os.close(replies_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self.session: str = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = False
    ) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        ident = self._id
        reply = self.wait(lambda m: m.get("id") == ident)
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def wait(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message: dict[str, Any] = json.loads(raw)
                if "id" not in message:
                    self.events.append(message)
                if wanted(message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self._replies], [], [], left)
            if ready:
                chunk = os.read(self._replies, 1 << 20)
                if not chunk:
                    raise DevToolsError(
                        f"chromium went away: {self.stderr_path.read_text()[-2000:]}"
                    )
                self._buffer += chunk

    def open(self, path: Path, width: int = 1500, height: int = 920, fragment: str = "") -> None:
        """Load a page (with `#fragment`, if given) and wait for its load event; forget
        earlier events."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )
        if fragment:  # the same page with another fragment would not load again
            self.navigate("about:blank")
        self.events.clear()
        self.navigate(path.resolve().as_uri() + fragment)

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait(lambda m: m.get("method") == "Page.loadEventFired")

    def reload(self) -> None:
        self.events.clear()
        self.call("Page.reload", {}, session=True)
        self.wait(lambda m: m.get("method") == "Page.loadEventFired")

    def until(self, expression: str, timeout: float = 20) -> Any:
        """Wait until `expression` is truthy in the page (a loaded machine slows its timers).
        A page that is being left or loaded meanwhile (after a click on a link) answers
        "navigated or closed" or has no context yet: that is "not yet", asked again."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except DevToolsError as exc:
                if "navigated or closed" not in str(exc) and "context" not in str(exc):
                    raise
                value = None
            if value or time.monotonic() >= deadline:
                return value
            time.sleep(0.02)

    def js(self, expression: str) -> Any:
        """Evaluate in the page; its value, or `DevToolsError` with the exception."""
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in reply:
            raise DevToolsError(json.dumps(reply["exceptionDetails"])[:2000])
        return reply["result"].get("value")

    def key(self, key: str, code: str, keycode: int, text: str = "") -> None:
        for kind in ("keyDown", "keyUp"):
            params: dict[str, Any] = {
                "type": kind,
                "key": key,
                "code": code,
                "windowsVirtualKeyCode": keycode,
            }
            if text and kind == "keyDown":
                params["text"] = text
            self.call("Input.dispatchKeyEvent", params, session=True)

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element."""
        box = self.js(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                session=True,
            )

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, and requests for anything but file: pages."""
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(f"exception: {json.dumps(params)[:500]}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(f"console.{params['type']}: {json.dumps(params.get('args'))[:500]}")
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                out.append(f"log: {params['entry'].get('text')}")
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if not url.startswith("file:"):
                    out.append(f"request: {url[:200]}")
        return out

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.call("Browser.close")
                self.proc.wait(10)
        except (DevToolsError, TimeoutError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(10)
        finally:
            os.close(self._commands)
            os.close(self._replies)
            shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is required in CI for the replay page tests (apt-get install chromium)"
            )
        pytest.skip("chromium not found: `apt-get install chromium` to run the replay page tests")
    b = Browser(executable)
    try:
        yield b
    finally:
        b.close()


def html_of(log_path: Path, out: Path, *extra: str) -> Path:
    result = CliRunner().invoke(main, ["replay", str(log_path), "--html", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


# Names as a league gives them, some long: the page must show each whole.
LONG_NAMES = [
    "random",
    "greedy-highest-pips-first",
    "lookahead-two-plies-with-mexican-train-priority",
    "n",
    "rust-mcts-2000-playouts-per-move",
    "cautious_keeps_doubles_v3",
    "node-heuristic",
    "python-sandboxed-reference-bot-with-a-long-name",
]


@pytest.fixture(scope="module")
def eight(tmp_path_factory: pytest.TempPathFactory) -> tuple[GameLog, Path]:
    """A complete 13-round game of 8 players with long names, and its page."""
    folder = tmp_path_factory.mktemp("eight")
    log_path = write_game(folder / "g8.jsonl", preset("standard", players=8), 21, names=LONG_NAMES)
    return read_log(log_path), html_of(log_path, folder / "g8.html")


def faces_by_seat(browser: Browser) -> list[int]:
    """How many tiles each seat's hand shows face up."""
    counts: list[int] = browser.js(
        "[...document.querySelectorAll('.hand')]"
        ".map(h => h.querySelectorAll('.dom:not(.back)').length)"
    )
    return counts


def table_counts(state: State) -> tuple[int, int]:
    return len(state.trains), sum(len(t.tiles) for t in state.trains)


def oriented(tiles: tuple[Tile, ...], end: int) -> list[list[int]]:
    out: list[list[int]] = []
    for t in reversed(tiles):
        near = t.other(end)
        out.append([near, end])
        end = near
    return out[::-1]


def codes(tiles: tuple[Tile, ...], max_pip: int) -> list[int]:
    return [t.hi * (max_pip + 1) + t.lo for t in tiles]


# ---------------------------------------------------------------- size and load


def test_eight_players_thirteen_rounds_is_under_a_megabyte(eight: tuple[GameLog, Path]) -> None:
    log, page = eight
    assert len(log.rounds) == 13 and log.complete
    size = page.stat().st_size
    assert size < 1_000_000, f"{size} bytes for {len(log.decisions)} decisions"
    print(f"8 players, 13 rounds, {len(log.decisions)} decisions: {size} bytes")


def test_page_loads_without_errors_or_requests(
    browser: Browser, eight: tuple[GameLog, Path]
) -> None:
    log, page = eight
    browser.open(page)
    frames = browser.js("replay.frames()")
    assert frames == len(log.decisions) + 13  # a deal per round, then one per decision
    assert browser.js("replay.frame()") == 0
    assert browser.js("document.querySelectorAll('#board .train').length") == 9
    # The seed is a string in the page: a 128-bit one would not survive as a number.
    sub = browser.js("document.getElementById('sub').textContent")
    assert f" · seed {log.header.seed}" in sub
    assert browser.problems() == []


def test_trains_and_tiles_match_the_engine(browser: Browser, eight: tuple[GameLog, Path]) -> None:
    log, page = eight
    browser.open(page)
    chosen = [s for s in steps(log) if s.result is None][::150]
    for step in chosen:
        frame = browser.js(f"replay.frameOfMove({step.n})")
        browser.js(f"replay.go({frame})")
        trains, tiles = table_counts(step.after)
        counted = browser.js(
            "[document.querySelectorAll('#board .train').length,"
            " document.querySelectorAll('#board .train .dom').length,"
            " Number(document.getElementById('board').dataset.trains),"
            " Number(document.getElementById('board').dataset.tiles)]"
        )
        assert counted == [trains, tiles, trains, tiles], f"move {step.n}"
        ends = browser.js(
            "[...document.querySelectorAll('#board .train')]"
            ".map(g => [Number(g.dataset.train), Number(g.dataset.end)])"
            ".sort((a, b) => a[0] - b[0]).map(p => p[1])"
        )
        assert ends == [t.end for t in step.after.trains]
        # Spectator mode: every hand face down; everything shown: every tile face up.
        browser.js("replay.setMode(0)")
        backs = browser.js("document.querySelectorAll('.hand .back').length")
        assert backs == sum(len(h) for h in step.after.hands)
        browser.js("replay.setMode(1)")
        faces = browser.js("document.querySelectorAll('.hand .dom:not(.back)').length")
        assert faces == sum(len(h) for h in step.after.hands)
    assert browser.problems() == []


def test_every_position_matches_the_engine(browser: Browser, eight: tuple[GameLog, Path]) -> None:
    log, page = eight
    browser.open(page)
    views = browser.js(
        "Array.from({length: replay.frames()}, (_, f) => replay.view(f, 'shown'))"
        ".filter(v => v.n > 0 && !v.ended)"
    )
    max_pip = log.header.rules.max_pip
    by_n = {v["n"]: v for v in views}
    checked = 0
    for step in steps(log):
        if step.result is not None:
            continue
        v, st = by_n[step.n], step.after
        assert v["hands"] == [codes(h, max_pip) for h in st.hands], f"move {step.n}"
        assert [t["t"] for t in v["trains"]] == [oriented(t.tiles, t.end) for t in st.trains]
        assert [t["e"] for t in v["trains"]] == [t.end for t in st.trains]
        assert v["m"] == sum(1 << s for s, up in enumerate(st.markers) if up)
        full = max_pip + 1
        live = [i for i in st.open_doubles if st.table_count[st.trains[i].end] < full]
        assert v["od"] == live
        assert v["by"] == len(st.boneyard)
        assert v["toMove"] == st.to_move
        checked += 1
    assert checked == len(log.decisions) - 13
    ends = browser.js(
        "Array.from({length: replay.frames()}, (_, f) => replay.view(f, 'shown'))"
        ".filter(v => v.ended).map(v => v.hands)"
    )
    assert ends == [[codes(h, max_pip) for h in r.hands] for r in read_results(log)]


def read_results(log: GameLog) -> list[Any]:
    return [s.result for s in steps(log) if s.result is not None]


@pytest.mark.parametrize("name", ["standard+fast-first-turn", "celko+teams"])
def test_a_seat_sees_its_view_at_every_step(browser: Browser, tmp_path: Path, name: str) -> None:
    rules = preset(name)
    log_path = write_game(tmp_path / "g.jsonl", rules, 3)
    log = read_log(log_path)
    page = html_of(log_path, tmp_path / "g.html")
    browser.open(page)
    for seat in (0, 1):
        views = browser.js(
            f"Array.from({{length: replay.frames()}}, (_, f) => replay.view(f, 'seat', {seat}))"
            ".filter(v => v.n > 0 && !v.ended)"
        )
        by_n = {v["n"]: v for v in views}
        for step in steps(log):
            if step.result is not None:
                continue
            seen, real = by_n[step.n], view(step.after, seat)
            hands = [codes(real.hand, rules.max_pip) if s == seat else None for s in range(4)]
            assert seen["hands"] == hands, f"{name} seat {seat} move {step.n}"
            assert seen["counts"] == list(real.hand_counts)
            assert [t["t"] for t in seen["trains"]] == [
                oriented(t.tiles, t.end) for t in real.trains
            ]
            assert seen["od"] == list(real.open_doubles)
    assert browser.problems() == []


def test_a_page_for_one_seat_holds_no_other_hand(browser: Browser, tmp_path: Path) -> None:
    rules = preset("standard")
    log_path = write_game(tmp_path / "g.jsonl", rules, 12)
    log = read_log(log_path)
    page = html_of(log_path, tmp_path / "seat2.html", "--seat", "2")
    text = page.read_text()
    raw = text.split('<script id="replay-data" type="application/json">', 1)[1].split("</script>")[
        0
    ]
    data = json.loads(raw)
    assert data["viewer"] == 2
    for deal in data["R"]:
        assert [isinstance(h, int) for h in deal["hands"]] == [True, True, False, True]
    for record, d in zip(data["S"], log.decisions, strict=True):
        seat, action, tile, _, latency = record[:5]
        extra = record[5] if len(record) > 5 else {}
        if seat != 2:
            assert latency == -1 and "f" not in extra and "a" not in extra
            if action == 1:  # a draw
                assert tile == -1
            assert all(p == -1 for p in extra.get("p", []))
        assert seat == d.seat
    browser.open(page)
    assert browser.js("replay.modes().length") == 1
    # Made from seat 2's log, the page has no seed to show.
    sub = browser.js("document.getElementById('sub').textContent")
    assert data["seed"] is None and "seed" not in sub and sub.endswith("made for seat 2")
    hands = browser.js(
        "Array.from({length: replay.frames()}, (_, f) => replay.view(f))"
        ".filter(v => !v.ended).map(v => v.hands)"
    )
    assert all(h[0] is None and h[1] is None and h[3] is None and h[2] is not None for h in hands)
    assert browser.problems() == []
    # An address naming another view cannot show more: the page has seat 2's view only.
    for fragment in ("#view=shown&move=20", "#view=seat0&move=20", "#view=hidden&move=20"):
        browser.open(page, fragment=fragment)
        assert browser.js("replay.mode()") == {"kind": "seat", "seat": 2}
        assert browser.js("location.hash") == "#move=20&view=seat2"
        faces = faces_by_seat(browser)
        assert faces[2] > 0 and faces[:2] + faces[3:] == [0, 0, 0]
        assert browser.problems() == []


# ---------------------------------------------------------------- controls


def test_keyboard_and_buttons_move_the_step(browser: Browser, eight: tuple[GameLog, Path]) -> None:
    _, page = eight
    browser.open(page)
    frame = lambda: browser.js("replay.frame()")  # noqa: E731
    browser.key("ArrowRight", "ArrowRight", 39)
    browser.key("ArrowRight", "ArrowRight", 39)
    assert frame() == 2
    browser.key("ArrowLeft", "ArrowLeft", 37)
    assert frame() == 1
    browser.click("#b-fwd")
    assert frame() == 2
    browser.click("#b-back")
    assert frame() == 1
    browser.key("ArrowDown", "ArrowDown", 40)
    second = browser.js("replay.roundStart(1)")
    assert frame() == second
    browser.click("#b-next-round")
    assert frame() == browser.js("replay.roundStart(2)")
    browser.key("ArrowUp", "ArrowUp", 38)
    assert frame() == second
    assert browser.js("document.body.dataset.frame") == str(second)
    # Speed up, play, pause: the position moves on by itself.
    for _ in range(3):
        browser.key("+", "Equal", 187, "+")
    assert browser.js("replay.speed()") == 32
    browser.key(" ", "Space", 32, " ")
    assert browser.js("replay.playing()") is True
    # A loaded machine slows the page's timers: wait for the moves, generously.
    deadline = time.monotonic() + 20
    while frame() <= second + 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    browser.key(" ", "Space", 32, " ")
    assert browser.js("replay.playing()") is False
    moved = frame()
    assert moved > second + 5
    time.sleep(0.2)
    assert frame() == moved  # paused stays paused
    browser.key("-", "Minus", 189, "-")
    assert browser.js("replay.speed()") == 16
    browser.click("#b-play")
    assert browser.js("replay.playing()") is True
    browser.click("#b-play")
    assert browser.js("replay.playing()") is False
    # Jump to a round with the selector, to the end with End, and change the view with H.
    browser.js(
        "(() => { const s = document.getElementById('round'); s.value = '7';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    assert frame() == browser.js("replay.roundStart(7)")
    browser.key("End", "End", 35)
    assert frame() == browser.js("replay.frames()") - 1
    browser.key("Home", "Home", 36)
    assert frame() == 0
    assert browser.js("replay.mode().kind") == "hidden"
    browser.key("h", "KeyH", 72, "h")
    assert browser.js("replay.mode().kind") == "shown"
    browser.key("v", "KeyV", 86, "v")
    assert browser.js("replay.mode()") == {"kind": "seat", "seat": 0}
    assert browser.problems() == []


def test_stepping_through_every_frame_draws_each_in_turn(
    browser: Browser, eight: tuple[GameLog, Path]
) -> None:
    # How fast a step draws is a figure of bench/bench_replay_html.py, not a test: here,
    # each step of a fast walk draws its own frame (the positions themselves are checked
    # against the engine above), and nothing goes wrong on the way.
    # The walk goes in calls of 50 steps: one call of 400 could outlast the browser
    # helper's 30 s guard against a hung chromium on a machine loaded several times over.
    _, page = eight
    browser.open(page)
    browser.js("replay.setMode(1)")
    n = min(400, browser.js("replay.frames()"))
    walked: list[str] = []
    for start in range(0, n, 50):
        walked += browser.js(
            f"(() => {{ const seen = []; for (let f = {start}; f < {min(start + 50, n)}; f++)"
            " { replay.go(f); seen.push(document.getElementById('move').textContent); }"
            " return seen; })()"
        )
    assert len(walked) == n
    assert all(a != b for a, b in itertools.pairwise(walked)), "a step drew nothing"
    assert browser.problems() == []


def test_untrusted_names_are_text(browser: Browser, tmp_path: Path) -> None:
    evil = ["</script><script>window.pwned=1</script>", "<img src=x onerror=pwned=2>", "a&b", "d"]
    seed = 2**127 + 2  # a 128-bit seed, shown whole: as a JSON number it would be rounded
    log_path = write_game(tmp_path / "g.jsonl", preset("standard"), seed, names=evil, cut=60)
    page = html_of(log_path, tmp_path / "evil.html")
    browser.open(page)
    assert browser.js("window.pwned === undefined")
    assert f" · seed {seed} · " in browser.js("document.getElementById('sub').textContent")
    shown = browser.js("[...document.querySelectorAll('.seat .name')].map(e => e.textContent)")
    assert [s.split(" · ", 1)[1] for s in shown] == evil
    heads = browser.js("[...document.querySelectorAll('#scores th.n')].map(t => t.textContent)")
    assert heads == evil
    # The log stops after 60 decisions: the last position says so.
    browser.key("End", "End", 35)
    assert "the log stops here" in browser.js("document.getElementById('move').textContent")
    assert browser.problems() == []


# ---------------------------------------------------------------- any size

# Rectangles of the page's parts, and for each seat its name's and its hand tiles'; the
# short side on the screen of the board's smallest tile.
LAYOUT = """(() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height, right: r.right, bottom: r.bottom}; };
  const q = (s) => box(document.querySelector(s));
  const tiles = [...document.querySelectorAll("#board .dom rect.body")].map((r) => {
    const m = r.getScreenCTM();
    return Math.min(r.width.baseVal.value, r.height.baseVal.value) * Math.hypot(m.a, m.b);
  });
  return {
    page: document.documentElement.clientWidth, wide: document.documentElement.scrollWidth,
    window: innerHeight,
    board: q("#board"), move: q("#move"), aside: q("aside"), header: q("header"),
    footer: q("footer"), seatsBox: q("#seats"), scores: q("#scores"),
    scoresBox: box(document.querySelector("#scores").parentElement),
    smallest: Math.min(...tiles), layout: document.getElementById("board").dataset.layout,
    seats: [...document.querySelectorAll(".seat")].map((seat) => {
      const name = seat.querySelector(".name");
      return {
        box: box(seat), name: box(name), text: name.textContent, title: name.title,
        cut: name.scrollWidth > name.clientWidth || getComputedStyle(name).textOverflow !== "clip",
        faces: [...seat.querySelectorAll(".hand .dom:not(.back)")].map(box),
      };
    }),
  };
})()"""

WIDTHS = [(1400, 900), (800, 1000), (400, 800)]


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Two rectangles share some area (touching edges do not)."""
    return (
        min(a["right"], b["right"]) - max(a["x"], b["x"]) > 0.5
        and min(a["bottom"], b["bottom"]) - max(a["y"], b["y"]) > 0.5
    )


def in_view(r: dict[str, float], top: float, bottom: float) -> bool:
    """Whole between `top` and `bottom` (the bars' edges): not under either."""
    return r["y"] >= top - 0.5 and r["bottom"] <= bottom + 0.5


def late_steps(log: GameLog) -> list[int]:
    """Each round's last decision before its end: the table at its fullest."""
    return [s.n - 1 for s in steps(log) if s.result is not None]


@pytest.mark.parametrize("width, height", WIDTHS)
def test_any_width_keeps_board_caption_tiles_and_names_in_view(
    browser: Browser, eight: tuple[GameLog, Path], tmp_path: Path, width: int, height: int
) -> None:
    log, page = eight
    browser.open(page, width, height)
    step = next(
        s for s in steps(log) if s.before.round_index == 3 and len(s.after.trains[8].tiles) > 8
    )
    browser.js(f"replay.go(replay.frameOfMove({step.n} - 1))")
    browser.js("replay.setMode(1)")
    browser.key("ArrowRight", "ArrowRight", 39)  # a step, as someone reading the game takes it
    at = browser.js(LAYOUT)
    board, move, aside, header, footer = (
        at[k] for k in ("board", "move", "aside", "header", "footer")
    )
    assert at["wide"] <= at["page"]  # nothing sticks out sideways
    # The board and what the step did (the caption) in the window, under no bar and under
    # nothing else; the scores' table no wider than its box.
    assert in_view(board, header["bottom"], footer["y"]), at
    assert in_view(move, header["bottom"], footer["y"]), at
    for a, b in itertools.combinations((board, move, header, footer), 2):
        assert not overlap(a, b), (a, b)
    assert not overlap(board, aside) and not overlap(move, aside)
    assert at["scores"]["right"] <= at["scoresBox"]["right"] + 0.5
    if width >= 700:  # two columns: the seats and scores beside the board, in the window
        # (their column scrolls when they are longer)
        assert aside["x"] >= board["right"] and abs(aside["y"] - board["y"]) < 20
        assert in_view(aside, header["bottom"], footer["y"])
        assert header["bottom"] <= at["seatsBox"]["y"] < footer["y"] - 200
        if width >= 1100:
            assert min(board["w"], board["h"]) >= height - 250
        else:
            assert min(board["w"], board["h"]) >= 0.5 * width
    else:  # one column: the board, square and as wide as the page, then the caption,
        # whole (it grows past its least height with these long names rather than cut
        # them: issue 40), then the seats right after it; at the game's start, with a
        # caption of a few lines, the seats begin above the controls
        assert board["w"] >= 0.9 * (at["page"] - 2 * 10) and board["h"] == board["w"]
        assert board["bottom"] <= move["y"] and move["bottom"] <= aside["y"]
        assert aside["y"] - move["bottom"] < 20, at
        browser.js("replay.go(0)")
        browser.js("window.scrollTo(0, 0)")
        start = browser.js(LAYOUT)
        assert start["seatsBox"]["y"] < start["footer"]["y"], start
    # Tiles legible at 1x: on the board 12 px on their short side at least, in the hands
    # 20 x 40 px at least, inside their seat's box.
    assert at["smallest"] >= 12, at["layout"]
    shown = step.after.hands
    assert [len(seat["faces"]) for seat in at["seats"]] == [len(h) for h in shown]
    for s, seat in enumerate(at["seats"]):
        for tile in seat["faces"]:
            assert tile["w"] >= 20 and tile["h"] >= 40, f"seat {s}: {tile}"
            assert seat["box"]["x"] <= tile["x"] and tile["right"] <= seat["box"]["right"]
        # Whole names: in the text, in the title (on hover), and nothing of them cut off.
        assert seat["text"] == f"{s} · {LONG_NAMES[s]}" and seat["title"] == LONG_NAMES[s]
        assert not seat["cut"] and seat["name"]["right"] <= seat["box"]["right"], seat
    keep = os.environ.get("REPLAY_SCREENSHOT_DIR")
    folder = Path(keep) if keep else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    shot = browser.screenshot(folder / f"replay-8-players-{width}.png")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (
        width,
        height,
    )
    print(f"{width} px: board {board['w']:.0f} x {board['h']:.0f}, {at['layout']}")
    assert browser.problems() == []


@pytest.mark.parametrize("width, height", WIDTHS)
def test_tiles_stay_legible_late_in_every_round(
    browser: Browser, eight: tuple[GameLog, Path], width: int, height: int
) -> None:
    # At each round's fullest table the trains fold, or go to rows, or the board grows
    # taller (and scrolls): never a tile under 12 px, and every tile of the table drawn.
    log, page = eight
    browser.open(page, width, height)
    layouts = set()
    for n in late_steps(log):
        browser.js(f"replay.go(replay.frameOfMove({n}))")
        at = browser.js(LAYOUT)
        assert at["smallest"] >= 12, (n, at["layout"], at["smallest"])
        assert browser.js("replay.tiles().px") >= 12
        tiles = browser.js("document.querySelectorAll('#board .train .dom').length")
        assert tiles == browser.js("Number(document.getElementById('board').dataset.tiles)")
        layouts.add(at["layout"])
    print(f"{width} px: {sorted(layouts)}")
    assert browser.problems() == []


# ---------------------------------------------------------------- what a step says


def test_a_decision_shows_its_legal_moves_and_its_time(
    browser: Browser, eight: tuple[GameLog, Path]
) -> None:
    log, page = eight
    browser.open(page)
    chosen = [s for s in steps(log) if len(legal_moves(s.before)) >= 3 and s.result is None][:3]
    forced = next(s for s in steps(log) if len(legal_moves(s.before)) == 1 and not s.line.auto)
    assert chosen
    caption = "document.getElementById('move')"
    for step in [*chosen, forced]:
        browser.js(f"replay.go(replay.frameOfMove({step.n}))")
        browser.js("replay.setMode(1)")  # every hand shown
        legal = browser.js(f"{caption}.querySelector('.legal').textContent")
        options = browser.js(
            f"[...{caption}.querySelectorAll('.legal .opt')].map(e => e.textContent)"
        )
        made = browser.js(f"[...{caption}.querySelectorAll('.legal .opt.chosen')].length")
        moves = legal_moves(step.before)
        if len(moves) == 1:
            assert legal == "its only legal move" and options == []
        else:
            assert legal.startswith(f"{len(moves)} legal moves: ") and len(options) == len(moves)
            assert made == 1
            # The same tiles as the engine's plays, each laid as it would lie.
            laid = [re.fullmatch(r"(?:✓\u2009)?\[(\d+)\|(\d+)\]", o) for o in options]
            tiles = sorted(sorted((int(m[1]), int(m[2]))) for m in laid if m is not None)
            plays = [m.tile for m in moves if m.tile is not None]
            assert tiles == sorted(sorted((t.lo, t.hi)) for t in plays)
        # The time it took, as the log has it.
        assert step.line.latency_ms is not None
        us = round(step.line.latency_ms * 1000)  # to the µs, 3 decimals under 10 ms
        said = f"decided in {us / 1000:.{3 if us < 10_000 else 1}f} ms (1000 ms a move)"
        assert said in browser.js(f"{caption}.textContent")
        # The spectator and the other seats do not see its hand, and so not its choices.
        browser.js("replay.setMode(0)")
        assert browser.js(f"{caption}.querySelector('.legal')") is None
        other = (step.line.seat + 1) % 8
        browser.js(f"replay.setMode(2 + {other})")
        assert browser.js(f"{caption}.querySelector('.legal')") is None
        browser.js(f"replay.setMode(2 + {step.line.seat})")
        assert browser.js(f"{caption}.querySelector('.legal')") is not None
    assert browser.problems() == []


def test_at_400_px_a_caption_is_whole_and_its_ticked_move_in_view(
    browser: Browser, eight: tuple[GameLog, Path]
) -> None:
    # The decisions with the most legal moves, at phone width: the caption holds all of
    # itself (it was cut at a fixed height, the ticked move with it); the list of legal
    # moves is one line naming the move made, the others a tap away; the board keeps
    # its size from step to step.
    log, page = eight
    browser.open(page, 400, 800)
    browser.js("replay.setMode(1)")  # every hand shown: every decision's list
    busiest = sorted(steps(log), key=lambda s: -len(legal_moves(s.before)))[:4]
    assert len(legal_moves(busiest[0].before)) >= 8
    sides = set()
    for step in busiest:
        browser.js(f"replay.go(replay.frameOfMove({step.n}))")
        at = browser.js(
            "(() => { const m = document.getElementById('move');"
            " const r = (e) => { const b = e.getBoundingClientRect();"
            " return {y: b.top, bottom: b.bottom, x: b.left, right: b.right}; };"
            " window.scrollTo(0, m.getBoundingClientRect().top + scrollY - 60);"
            " const tick = m.querySelector('.legal summary .opt.chosen');"
            " const foot = document.querySelector('footer');"
            " return {move: r(m), tick: tick && r(tick), footer: r(foot),"
            " text: tick && tick.textContent, scroll: m.scrollHeight, client: m.clientHeight,"
            " board: document.getElementById('board').getBoundingClientRect().width}; })()"
        )
        assert at["tick"] is not None, step.n
        assert at["scroll"] <= at["client"] + 1, at  # nothing of it hidden in the box
        tick, move = at["tick"], at["move"]
        assert move["y"] <= tick["y"] and tick["bottom"] <= move["bottom"], at
        assert tick["bottom"] <= at["footer"]["y"] and tick["right"] <= 400, at
        assert at["text"].startswith("✓"), at
        # The others, on a tap: one fewer than the legal moves, the move made not again.
        browser.js("document.querySelector('#move details.legal').open = true")
        others = browser.js("document.querySelectorAll('#move .legal .opt:not(.chosen)').length")
        assert others == len(legal_moves(step.before)) - 1 - sum(
            1 for m in legal_moves(step.before) if m.announce
        )
        sides.add(round(at["board"]))
    assert len(sides) == 1, sides  # the board did not change size with the caption
    assert browser.problems() == []


def test_one_counter_a_key_to_the_board_and_scores_by_name(
    browser: Browser, eight: tuple[GameLog, Path]
) -> None:
    log, page = eight
    browser.open(page)
    marked = next(s for s in steps(log) if s.result is None and any(s.after.markers))
    browser.js(f"replay.go(replay.frameOfMove({marked.n}))")
    status = browser.js("document.getElementById('status').textContent")
    assert f"move {marked.n}/{len(log.decisions)}" in status and "frame" not in status
    assert status.count("/") == 2  # rounds and moves, nothing else counted
    # Each marker flag says what it means, on the board and by the seat's name; the key
    # says it too.
    up = [s for s, m in enumerate(marked.after.markers) if m]
    flags = browser.js("[...document.querySelectorAll('.seat .flag')].map(f => f.title)")
    assert len(flags) == len(up) and all(f.startswith("Marker up: ") for f in flags)
    titles = browser.js(
        "[...document.querySelectorAll('#board .marker title')].map(t => t.textContent)"
    )
    assert titles == [
        f"{LONG_NAMES[s]}'s marker up: " + titles[0].split("marker up: ", 1)[1] for s in up
    ]
    key = browser.js("document.getElementById('legend').textContent")
    assert "Marker up" in key and "Mexican train" in key and "open double" in key
    # The scores' columns are named after the bots; a page of its own links no bot page.
    heads = browser.js("[...document.querySelectorAll('#scores th.n')].map(t => t.textContent)")
    assert heads == LONG_NAMES
    assert browser.js("document.querySelectorAll('.seat .name a, #scores a').length") == 0
    assert browser.problems() == []


def test_the_page_offers_its_log(browser: Browser, tmp_path: Path) -> None:
    log_path = write_game(tmp_path / "g.jsonl", preset("standard"), 9, seat_logs=True)
    page = html_of(log_path, tmp_path / "full.html")
    browser.open(page)
    link = browser.js(
        "(() => { const a = document.getElementById('download');"
        " return [a.hidden, a.getAttribute('href'), a.download]; })()"
    )
    assert link[0] is False and link[2] == "game-9.jsonl.gz"
    prefix = "data:application/gzip;base64,"
    assert link[1].startswith(prefix)
    assert gzip.decompress(base64.b64decode(link[1][len(prefix) :])) == log_bytes(log_path)
    assert browser.problems() == []
    # A page made for one seat holds no log (the game's log holds every hand), and so is
    # the same from the full log and from the seat's own.
    for source, extra in ((log_path, ("--seat", "1")), (seat_log_of(log_path, 1), ())):
        page = html_of(source, tmp_path / "seat.html", *extra)
        assert '<script id="replay-log" type="text/plain"></script>' in page.read_text()
        browser.open(page)
        assert browser.js("document.getElementById('download').hidden") is True
        assert browser.problems() == []


# ---------------------------------------------------------------- the address


def test_the_address_keeps_the_view(browser: Browser, eight: tuple[GameLog, Path]) -> None:
    _, page = eight
    hash_ = lambda: browser.js("location.hash")  # noqa: E731
    # A link with a view in it opens that view at that step, and the address keeps it.
    browser.open(page, fragment="#move=100&view=seat3")
    assert browser.js("replay.frame()") == browser.js("replay.frameOfMove(100)")
    assert browser.js("replay.mode()") == {"kind": "seat", "seat": 3}
    faces = faces_by_seat(browser)
    assert faces[3] > 0 and faces[:3] + faces[4:] == [0] * 7
    assert browser.js("document.getElementById('view').selectedOptions[0].textContent").startswith(
        "As seat 3 saw it"
    )
    assert hash_() == "#move=100&view=seat3"
    browser.open(page, fragment="#round=4&view=shown")
    assert browser.js("replay.frame()") == browser.js("replay.roundStart(3)")
    assert browser.js("replay.mode().kind") == "shown"
    # The older one-part fragments still open their step; the address then says it all.
    browser.open(page, fragment="#frame=5")
    assert browser.js("replay.frame()") == 5 and browser.js("replay.mode().kind") == "hidden"
    assert hash_() == "#move=5&view=hidden"
    # What the page does not know is left out: the default view at the default step.
    browser.open(page, fragment="#move=x&view=everything&seat=2")
    assert browser.js("replay.frame()") == 0 and browser.js("replay.mode().kind") == "hidden"
    # Changing the view or the step rewrites the address, a moment later...
    browser.key("h", "KeyH", 72, "h")
    assert browser.until("location.hash === '#round=1&view=shown'")
    browser.key("ArrowRight", "ArrowRight", 39)
    browser.key("v", "KeyV", 86, "v")
    assert browser.until("location.hash === '#move=1&view=seat0'")
    browser.js(
        "(() => { const s = document.getElementById('view'); s.value = '5';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    browser.key("ArrowDown", "ArrowDown", 40)
    second = browser.js("replay.roundStart(1)")
    assert browser.until("location.hash === '#round=2&view=seat3'")
    # ...so that a reload opens the same view at the same step.
    browser.reload()
    assert browser.js("replay.frame()") == second
    assert browser.js("replay.mode()") == {"kind": "seat", "seat": 3}
    # Editing the fragment in the address bar follows it.
    browser.js("location.hash = '#move=30&view=hidden'")
    assert browser.until("replay.frame() === replay.frameOfMove(30)")
    assert browser.js("replay.mode().kind") == "hidden"
    assert browser.problems() == []


def test_round_and_move_choose_where_the_page_opens(browser: Browser, tmp_path: Path) -> None:
    log_path = write_game(tmp_path / "g.jsonl", preset("standard"), 14)
    browser.open(html_of(log_path, tmp_path / "m.html", "--move", "100"))
    assert browser.js("replay.frame()") == browser.js("replay.frameOfMove(100)")
    assert browser.js("document.getElementById('move').textContent").startswith("Move 100: ")
    browser.open(html_of(log_path, tmp_path / "r.html", "--round", "3"))
    assert browser.js("replay.frame()") == browser.js("replay.roundStart(2)")
    assert "Round 3 of 13" in browser.js("document.getElementById('move').textContent")
    assert browser.problems() == []
