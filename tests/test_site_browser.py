"""The results site in a real headless Chromium, opened from disk.

One small league (3 bots, double-6) is run once for the module with `--site
--report-every 2`. The index must list every bot, sort by a column, and lead to a
bot's page and to the list of every game; the bot's page filters its games and leads
to a game's replay, which steps (the board and the move's caption change), names its
seats with links to their bots' pages and offers the game's log. Switching to one
seat's view loads that seat's data only, and the other hands are then hidden. At
1400, 800 and 400 px wide no page is wider than the window, no table is wider than
the page (a phone gets each row as a card), the parts of a page overlap nothing
they should not, and the replay keeps its board and the step's caption in the
window, under neither bar. No page requests anything but its own files.
Screenshots at each width are saved where tests/test_replay_html.py saves its own
(REPLAY_SCREENSHOT_DIR, else a temporary folder).
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.league.standings import BotStanding
from referee.site import pages
from tests.test_replay_html import (
    LAYOUT,
    WIDTHS,
    Browser,
    browser,
    faces_by_seat,
    in_view,
    overlap,
)

__all__ = ["browser"]  # the fixture, shared with the replay page's tests

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The output folder of a finished league with its site in OUT/site."""
    folder = tmp_path_factory.mktemp("site-league")
    bots = [
        ("random", "random_bot.py"),
        ("greedy", "greedy_bot.py"),
        ("greedy<2>", "greedy_bot.py"),
    ]
    lines = [
        "[league]",
        'name = "tiny"',
        "table = 3",
        "deals = 2",
        "seed = 5",
        "",
        "[rules]",
        "max_pip = 6",
        "",
        "[time]",
        "startup_ms = 20000",
        "move_ms = 5000",
        "bank_ms = 30000",
    ]
    for name, script in bots:
        command = json.dumps([sys.executable, str(SAMPLES / script)])
        lines += ["", "[[bot]]", f"name = {json.dumps(name)}", f"command = {command}"]
        # The sample bots import `protocol` of this tree (an installed copy may be one
        # the sandbox does not show, that of another checkout).
        lines.append(f"env = {{ PYTHONPATH = {json.dumps(str(ROOT))} }}")
    toml = folder / "league.toml"
    toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = folder / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee",
            "league",
            str(toml),
            "--out",
            str(out),
            "-q",
            "--site",
            "--report-every",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "results site written to" in done.stdout
    yield out


def shots() -> Path:
    keep = os.environ.get("REPLAY_SCREENSHOT_DIR")
    folder = Path(keep) if keep else Path(os.environ.get("TMPDIR", "/tmp")) / "site-shots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def loaded_by_click(b: Browser, selector: str) -> None:
    b.js(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
    b.events.clear()
    b.click(selector)
    b.wait(lambda m: m.get("method") == "Page.loadEventFired")


def requested(b: Browser) -> list[str]:
    return [
        e["params"]["request"]["url"]
        for e in b.events
        if e.get("method") == "Network.requestWillBeSent"
    ]


def no_overflow(b: Browser) -> None:
    assert b.js("document.documentElement.scrollWidth <= window.innerWidth + 1")


# A page's blocks (the children of <main>, and of its sections), its tables, its
# scrolling boxes and its charts, as rectangles.
BLOCKS = """(() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height, right: r.right, bottom: r.bottom}; };
  const shown = (e) => e.getClientRects().length > 0;
  const named = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.split(" ")[0] : "");
  const blocks = (parent) => [...parent.children].filter((e) => shown(e) && e.tagName !== "STYLE")
    .map((e) => ({name: named(e), box: box(e)}));
  return {
    page: document.documentElement.clientWidth, wide: document.documentElement.scrollWidth,
    main: blocks(document.querySelector("main")),
    inner: [...document.querySelectorAll("main > section")].map(blocks),
    tables: [...document.querySelectorAll("table")].filter(shown).map((t) => ({
      name: named(t), box: box(t),
      heads: [...t.querySelectorAll("thead th")].filter(shown).map(box),
    })),
    scrolls: [...document.querySelectorAll(".scroll")].map((e) => ({
      over: e.scrollWidth > e.clientWidth, hint: !e.previousElementSibling.hidden })),
    charts: [...document.querySelectorAll("svg.chart")].map(box),
  };
})()"""


# Each shown chart's words: whether each is whole inside its chart, and the size it is
# drawn at on the screen (its font size in the drawing's units times the drawing's scale).
CHART_WORDS = """(() => [...document.querySelectorAll("svg.chart")]
  .filter((svg) => svg.getClientRects().length > 0).flatMap((svg) => {
    const c = svg.getBoundingClientRect(); const scale = svg.getScreenCTM().a;
    return [...svg.querySelectorAll("text")].map((t) => { const r = t.getBoundingClientRect();
      return {chart: svg.id, text: t.textContent,
        box: {x: r.x, y: r.y, right: r.right, bottom: r.bottom},
        px: parseFloat(getComputedStyle(t).fontSize) * scale,
        inside: r.left >= c.left - 0.5 && r.right <= c.right + 0.5 && r.top >= c.top - 0.5
          && r.bottom <= c.bottom + 0.5}; }); }))()"""

SMALLEST_WORDS = 10  # px on the screen: a chart's word drawn smaller is not read on a phone


def charts_legible(b: Browser, what: str) -> None:
    """Every word of every shown chart whole inside it, over no other word, and drawn
    at a size read."""
    words = b.js(CHART_WORDS)
    cut = [(w["chart"], w["text"]) for w in words if not w["inside"]]
    small = [(w["chart"], w["text"], round(w["px"], 1)) for w in words if w["px"] < SMALLEST_WORDS]
    crowded = [
        (v["chart"], v["text"], w["text"])
        for v, w in itertools.combinations(words, 2)
        if v["chart"] == w["chart"] and overlap(v["box"], w["box"])
    ]
    assert cut == [], f"{what}: chart words cut off: {cut}"
    assert small == [], f"{what}: chart words too small to read: {small}"
    assert crowded == [], f"{what}: chart words over each other: {crowded}"


def laid_out_well(b: Browser, what: str) -> None:
    """Nothing wider than the page, no table cut at its edge, no block over another,
    every chart's words whole and read."""
    charts_legible(b, what)
    at = b.js(BLOCKS)
    assert at["wide"] <= at["page"], what
    for t in at["tables"]:
        assert t["box"]["x"] >= 0 and t["box"]["right"] <= at["page"] + 0.5, (what, t["name"])
        for h1, h2 in itertools.combinations(t["heads"], 2):
            assert not overlap(h1, h2), (what, t["name"])
    for s in at["scrolls"]:
        assert not s["over"], what  # fits: no box scrolls sideways at all here
    for chart in at["charts"]:
        assert chart["right"] <= at["page"] + 0.5, what
    for blocks in [at["main"], *at["inner"]]:
        for x, y in itertools.combinations(blocks, 2):
            assert not overlap(x["box"], y["box"]), (what, x["name"], y["name"])


def resize(b: Browser, width: int, height: int) -> None:
    b.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=True,
    )


def test_the_index_lists_every_bot_and_sorts(browser: Browser, league: Path) -> None:
    names = [b["name"] for b in json.loads((league / "standings.json").read_text())["bots"]]
    assert len(names) == 3
    for width, height in WIDTHS:
        browser.open(league / "site" / "index.html", width, height)
        shown = browser.js(
            "[...document.querySelectorAll('#standings tbody tr')].map(r => r.dataset.bot)"
        )
        assert shown == names
        links = browser.js(
            "[...document.querySelectorAll('#standings tbody a')].map(a => a.textContent)"
        )
        assert links == names
        assert (
            browser.js("document.querySelector('#rating-chart').querySelectorAll('g.bot').length")
            == 3
        )
        assert "6 of 6 games played" in browser.js(
            "document.getElementById('progress').textContent"
        )
        no_overflow(browser)
        laid_out_well(browser, f"index at {width} px")
        # The rating of each bot after each game, a line a bot, and the files.
        assert browser.js("document.querySelectorAll('#rating-history polyline').length") == 3
        files = browser.js("[...document.querySelectorAll('#files a')].map(a => a.href)")
        assert [f.rsplit("/", 1)[1] for f in files] == [
            "standings.csv",
            "standings.json",
            "games-1.html",
        ]
        browser.screenshot(shots() / f"site-index-{width}.png")
        if width <= 640:
            phone_standings(browser)
        assert browser.problems() == []
    resize(browser, 1400, 900)  # its headers in the window, to click
    heads = "[...document.querySelectorAll('#standings th')]"
    column = browser.js(f"{heads}.findIndex(th => th.textContent === 'points/game')")
    cells = f"r => Number(r.cells[{column}].dataset.v ?? r.cells[{column}].textContent)"
    values = f"[...document.querySelectorAll('#standings tbody tr')].map({cells})"
    header = f"document.querySelector('#standings th:nth-child({column + 1})')"
    browser.click(f"#standings th:nth-child({column + 1})")
    up = browser.js(values)
    assert up == sorted(up) and browser.js(f"{header}.getAttribute('aria-sort')") == "ascending"
    browser.click(f"#standings th:nth-child({column + 1})")
    assert browser.js(values) == sorted(up, reverse=True)


SHOWN_HEADS = (
    "[...document.querySelectorAll('#{0} thead th')].filter(e => e.getClientRects().length)"
    ".map(e => e.textContent)"
)
ROW_HEIGHTS = (
    "[...document.querySelectorAll('#{0} tbody tr')].filter(r => !r.hidden)"
    ".map(r => r.getBoundingClientRect().height)"
)
TWO_LINES = 48  # px: a row of a table at most two lines of text high, with its padding


def brief_rows(b: Browser, ident: str, heads: list[str]) -> None:
    """On a phone the table shows only its brief columns, a row a line or two."""
    assert b.js(SHOWN_HEADS.format(ident)) == heads
    assert max(b.js(ROW_HEIGHTS.format(ident))) <= TWO_LINES


def phone_standings(b: Browser) -> None:
    """The standings at phone width: a row a line; the button shows every column, as
    cards labelled by their headers, and the brief again."""
    every = b.js("[...document.querySelectorAll('#standings thead th')].map(e => e.textContent)")
    brief_rows(b, "standings", ["#", "bot", "games", "avg rank", "rating"])
    button = "button.columns[data-table='standings']"
    b.click(button)
    assert b.js(SHOWN_HEADS.format("standings")) == every
    labels = b.js(
        "[...document.querySelector('#standings tbody tr').cells]"
        ".filter(c => c.getClientRects().length)"
        ".map(c => getComputedStyle(c, '::before').content.slice(1, -1))"
    )
    assert labels == every
    assert min(b.js(ROW_HEIGHTS.format("standings"))) > 4 * TWO_LINES  # cards, a line a column
    assert b.js(f"document.querySelector({json.dumps(button)}).textContent") == "fewer columns"
    b.click(button)
    brief_rows(b, "standings", ["#", "bot", "games", "avg rank", "rating"])


def test_a_bot_page_a_game_and_a_seat_view(browser: Browser, league: Path) -> None:
    browser.open(league / "site" / "index.html", 1400, 900)
    loaded_by_click(browser, "#standings a[href^='bot-greedy-2~']")
    assert browser.js("document.querySelector('h1').textContent") == "greedy<2>"
    rows = "[...document.querySelectorAll('#games tbody tr')].filter(r => !r.hidden)"
    assert browser.js(f"{rows}.length") == 6
    # Filter by result, then by opponent and result together.
    browser.js(
        "(() => { const s = document.getElementById('f-result'); s.value = s.options[1].value;"
        " s.dispatchEvent(new Event('change')); })()"
    )
    place = browser.js("document.getElementById('f-result').value")
    assert browser.js(f"{rows}.every(r => r.dataset.result === {json.dumps(place)})")
    some = browser.js(f"{rows}.length")
    assert 0 < some < 6
    browser.js(
        "(() => { const s = document.getElementById('f-result'); s.value = '';"
        " s.dispatchEvent(new Event('change')); const o = document.getElementById('f-opponent');"
        " o.value = 'random'; o.dispatchEvent(new Event('change')); })()"
    )
    assert browser.js(f"{rows}.length") == 6  # each game of three has both others
    assert browser.js("document.querySelector('#latency').textContent").startswith(
        tuple("0123456789")
    )
    assert browser.js("document.querySelectorAll('#latency-chart rect.bar').length") > 0
    assert browser.js("document.querySelectorAll('#rounds tbody tr').length") == 7
    # Its rating after each of its games, a point each.
    assert browser.js("document.querySelectorAll('#bot-rating circle.pt').length") == 6
    for width, height in WIDTHS:
        resize(browser, width, height)
        no_overflow(browser)
        laid_out_well(browser, f"bot page at {width} px")
        if width <= 640:
            brief_rows(browser, "games", ["game", "place", "points", "change"])
        browser.screenshot(shots() / f"site-bot-{width}.png")
    resize(browser, 1400, 900)
    assert browser.problems() == []

    # A game of its list, replayed.
    game = browser.js("document.querySelector('#games tbody a').textContent")
    loaded_by_click(browser, "#games tbody a")
    assert browser.until("window.replay && replay.frames() > 1")
    assert any(u.endswith(f"/games/{game}.js") for u in requested(browser))
    board = "document.getElementById('board').innerHTML"
    caption = "document.getElementById('move').textContent"
    before = browser.js(board), browser.js(caption)
    for _ in range(3):
        browser.key("ArrowRight", "ArrowRight", 39)
    assert browser.js("replay.frame()") == 3
    after = browser.js(board), browser.js(caption)
    assert after[0] != before[0] and after[1] != before[1] and "Move 3" in after[1]
    assert browser.problems() == []

    # As one seat saw it: that seat's data only, other hands face down.
    seat = browser.js("REPLAY_DATA.names.indexOf('greedy<2>')")
    choice = browser.js(
        f"replay.modes().indexOf(replay.modes().find(m => m.startsWith('As seat {seat} ')))"
    )
    browser.events.clear()
    browser.js(
        f"(() => {{ const v = document.getElementById('view'); v.value = '{choice}';"
        " v.dispatchEvent(new Event('change')); })()"
    )
    browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
    assert browser.until("window.replay && replay.frames() > 1")
    files = sorted(u.rsplit("/", 1)[1] for u in requested(browser) if "/games/" in u)
    assert files == [f"{game}.js", f"{game}.s{seat}.js"]
    data: Any = browser.js("REPLAY_DATA")
    assert data["viewer"] == seat and browser.js("replay.mode()") == {"kind": "seat", "seat": seat}
    assert browser.js("replay.frame()") == 3  # the same step
    for deal in data["R"]:
        assert [isinstance(h, int) for h in deal["hands"]] == [s != seat for s in range(3)]
    faces = faces_by_seat(browser)
    assert faces[seat] > 0 and [f for s, f in enumerate(faces) if s != seat] == [0, 0]
    for width, height in WIDTHS:
        resize(browser, width, height)
        browser.screenshot(shots() / f"site-replay-seat-{width}.png")
    assert [p for p in browser.problems() if "request" in p] == []
    assert browser.problems() == []


def test_every_game_listed_and_each_replay_at_any_width(browser: Browser, league: Path) -> None:
    site = league / "site"
    browser.open(site / "index.html", 1400, 900)
    loaded_by_click(browser, "#all-games")
    assert browser.js("location.pathname").endswith("/games-1.html")
    games = browser.js("[...document.querySelectorAll('#games-list tbody tr')].length")
    assert games == 6
    for width, height in WIDTHS:
        resize(browser, width, height)
        laid_out_well(browser, f"games at {width} px")
        if width <= 640:
            brief_rows(browser, "games-list", ["game", "seats"])
        browser.screenshot(shots() / f"site-games-{width}.png")
    # A game of the list, replayed at each width: the board and the caption of each step
    # whole in the window, under neither bar and over nothing.
    resize(browser, 1400, 900)
    game = browser.js("document.querySelector('#games-list tbody a').textContent")
    loaded_by_click(browser, "#games-list tbody a")
    assert browser.until("window.replay && replay.frames() > 1")
    for width, height in WIDTHS:
        resize(browser, width, height)
        browser.js("replay.setMode(1)")
        for _ in range(2):
            browser.key("ArrowRight", "ArrowRight", 39)
        at = browser.js(LAYOUT)
        header, footer = at["header"], at["footer"]
        assert at["wide"] <= at["page"]
        for part in ("board", "move"):
            assert in_view(at[part], header["bottom"], footer["y"]), (width, part, at)
        for a, b in itertools.combinations(
            [at[k] for k in ("board", "move", "header", "footer")], 2
        ):
            assert not overlap(a, b), (width, a, b)
        assert at["smallest"] >= 12
        browser.screenshot(shots() / f"site-replay-{width}.png")
    resize(browser, 1400, 900)
    # Seats named with links to their bots' pages; the log offered, without its secrets.
    links = browser.js(
        "[...document.querySelectorAll('.seat .name a')].map(a => a.getAttribute('href'))"
    )
    names = browser.js("REPLAY_DATA.names")
    assert links == [f"bot-{n}.html" if n.isalnum() else links[k] for k, n in enumerate(names)]
    assert all((site / href).is_file() for href in links)
    download = browser.js("document.getElementById('download').getAttribute('href')")
    assert download == f"logs/{game}.jsonl.gz"
    header = json.loads(gzip.decompress((site / download).read_bytes()).split(b"\n", 1)[0])
    assert header["game"] == game and header["seed"] is None and header["bot_seed_key"] is None
    assert browser.problems() == []
    loaded_by_click(browser, ".seat .name a")
    assert browser.js("document.querySelector('h1').textContent") == names[0]
    assert browser.problems() == []


def test_charts_keep_their_words_whole_and_read(browser: Browser, tmp_path: Path) -> None:
    """The site's charts drawn for a long league of bots with long names (1,000 games,
    eight bots, latencies over six decades), at every width: each word inside its
    chart, none drawn under SMALLEST_WORDS px. No league is run: the charts are what
    `referee site` puts on its pages, on a page of their own with the site's style."""
    rng = random.Random(7)
    bots = []
    for k in range(8):
        b = BotStanding(name=f"a-bot-whose-name-is-long-{k}", mu=20 + 3 * k, sigma=1 + k / 4)
        rating = 0.0
        for game in range(k, 1000, 2):
            rating += rng.uniform(-2, 2.2)
            b.history.append((game, rating, 0.0))
        bots.append(b)
    latencies = [10 ** rng.uniform(-2, 4) for _ in range(500)]
    body = (
        pages.rating_chart(bots)
        + pages.history_chart(
            [(b, pages.line_color(k)) for k, b in enumerate(bots)], 1000, "rating-history", False
        )
        + pages.history_chart([(bots[0], pages.line_color(0))], 1000, "bot-rating", True)
        + pages.histogram(latencies)
    )
    shutil.copytree(ROOT / "referee" / "assets", tmp_path / "assets")
    (tmp_path / "index.html").write_text(pages.page("charts", body), encoding="utf-8")
    for width, height in WIDTHS:
        browser.open(tmp_path / "index.html", width, height)
        laid_out_well(browser, f"charts at {width} px")
        shown = browser.js(
            "[...document.querySelectorAll('svg.chart')].filter(s => s.getClientRects().length)"
            ".map(s => s.id)"
        )
        ratings = "rating-chart-narrow" if width <= 640 else "rating-chart"
        assert shown == [ratings, "rating-history", "bot-rating", "latency-chart"]
        browser.screenshot(shots() / f"site-charts-{width}.png")
    assert browser.problems() == []
