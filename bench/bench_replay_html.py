"""How long the HTML replay takes to draw a step, in a real headless Chromium: the
13-round game of 8 players with long names that the replay tests use, beside a
reference measured in the same run, a one-round game of 2 players. Each figure is
the mean time of `replay.go(frame)` over the first 400 frames (or all of them),
repeated; min, median and max of the repeats; and the same with the page's layout
forced after each step (what the browser does before painting it, which a step that
does not measure the page leaves for later). Target: under 5 ms a step for the
8-player game. Run: python bench/bench_replay_html.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _machine import cpu_model

HERE = Path(__file__).resolve().parent
STEP = (
    "(() => { const t = performance.now(); const n = Math.min(400, replay.frames());"
    " for (let f = 0; f < n; f++) replay.go(f); return (performance.now() - t) / n; })()"
)
# The same, with the layout the browser would do before painting each step forced at
# its end: a step that left its layout for later is not counted as free.
LAID_OUT = STEP.replace("replay.go(f);", "{ replay.go(f); void document.body.offsetHeight; }")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from referee.rules import preset
    from tests.test_replay import write_game
    from tests.test_replay_html import LONG_NAMES, Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        sys.exit("bench_replay_html: chromium not found (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        games = {
            "8 players, 13 rounds": write_game(
                folder / "g8.jsonl", preset("standard", players=8), 21, names=LONG_NAMES
            ),
            "2 players, 1 round": write_game(
                folder / "g2.jsonl", preset("standard", players=2, rounds="single"), 21
            ),
        }
        pages = {}
        for label, log in games.items():
            page = log.with_suffix(".html")
            subprocess.run(
                [sys.executable, "-m", "referee", "replay", str(log), "--html", str(page)],
                check=True,
                capture_output=True,
            )
            pages[label] = page
        browser = Browser(executable)
        try:
            figures: dict[str, list[float]] = {}
            for _ in range(args.repeats):  # the two pages in turn: the load falls on both
                for label, page in pages.items():
                    for kind, script in (("", STEP), (" + layout", LAID_OUT)):
                        browser.open(page)
                        browser.js("replay.setMode(1)")
                        figures.setdefault(label + kind, []).append(float(browser.js(script)))
        finally:
            browser.close()
    print(f"machine: {cpu_model()}; Python {sys.version.split()[0]}; {args.repeats} repeats")
    print(f"{'ms a step':33s} {'min':>8s} {'median':>8s} {'max':>8s}")
    for label, values in figures.items():
        print(f"{label:33s} {min(values):8.2f} {statistics.median(values):8.2f} {max(values):8.2f}")
    print("target: under 5 ms a step for the 8-player game (issue 40); '+ layout' forces the")
    print("layout the browser does before it paints each step")


if __name__ == "__main__":
    main()
