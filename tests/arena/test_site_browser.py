"""The arena's results site in a real headless Chromium, opened from disk: a small
arena (three bots, one rejected newcomer) run with `--site`. At 1400, 800 and 400 px
no page is wider than the window and no block overlaps another; the leaderboard leads
to an entry's page and the list of games to a replay, which steps, names its seats
with links to their entries' pages and requests nothing but the site's own files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_replay_html import WIDTHS, Browser, browser
from tests.test_site_browser import (
    brief_rows,
    laid_out_well,
    loaded_by_click,
    no_overflow,
    resize,
)

from ._arena import Running, arena_file, bot, referee, status

__all__ = ["browser"]


@pytest.fixture(scope="module")
def arena_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("arena-site")
    path = arena_file(
        folder,
        {
            "greedy": bot("sample_bots/greedy_bot.py"),
            "random": bot("sample_bots/random_bot.py"),
            "lowest": bot("lowest.py"),
        },
        rules="max_pip = 6",
    )
    out = folder / "out"
    site = folder / "site"
    run = Running(path, out, "--jobs", "1", "--site", str(site))
    try:
        run.started()
        referee("arena", "add", str(out), "broken", "--command", bot("crash_before_ready.py"))
        run.wait(
            "games and the rejection",
            lambda led: led.count() >= 10 and status(led, "broken@1") == "rejected",
        )
        assert run.stop() == 0
    finally:
        run.close()
    yield site


def test_the_arena_pages_at_every_width(browser: Browser, arena_site: Path) -> None:
    browser.open(arena_site / "index.html", 1400, 900)
    names = browser.js(
        "[...document.querySelectorAll('#leaderboard tbody a')].map(a => a.textContent)"
    )
    assert sorted(names) == ["greedy@1", "lowest@1", "random@1"]
    for width, height in WIDTHS:
        resize(browser, width, height)
        no_overflow(browser)
        laid_out_well(browser, f"arena index at {width} px")
        if width <= 640:
            brief_rows(browser, "leaderboard", ["#", "version", "μ − 3σ", "status", "games"])
    resize(browser, 1400, 900)
    loaded_by_click(browser, "#leaderboard tbody a")
    assert browser.js("document.querySelector('h1').textContent").startswith("t: ")
    assert browser.js("document.querySelectorAll('svg.chart polyline').length") == 1
    for width, height in WIDTHS:
        resize(browser, width, height)
        no_overflow(browser)
        laid_out_well(browser, f"entry page at {width} px")  # the chart's words too
    resize(browser, 1400, 900)
    browser.open(arena_site / "bot-broken.html", 1400, 900)
    assert "rejected" in browser.js("document.querySelector('main').textContent")
    assert browser.problems() == []


def test_a_published_game_replays_from_the_list(browser: Browser, arena_site: Path) -> None:
    browser.open(arena_site / "games-1.html", 1400, 900)
    for width, height in WIDTHS:
        resize(browser, width, height)
        no_overflow(browser)
        laid_out_well(browser, f"games at {width} px")
        if width <= 640:
            brief_rows(browser, "games", ["game", "seats, points (⚠ a fault)"])
    resize(browser, 1400, 900)
    loaded_by_click(browser, "#games tbody a[href^='replay.html']")
    assert browser.until("window.replay && replay.frames() > 1")
    browser.key("ArrowRight", "ArrowRight", 39)
    links = browser.js(
        "[...document.querySelectorAll('.seat .name a')].map(a => a.getAttribute('href'))"
    )
    assert links and all(h.startswith("bot-") and (arena_site / h).is_file() for h in links)
    assert browser.problems() == []
