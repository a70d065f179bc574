"""`referee event`: a Swiss stage and a group knockout played by real bot processes, an
entry that crashes in every game, the same board at every table of a round, the
event's site in Chromium, and a run killed with SIGKILL mid-round then resumed giving
the same event as a straight run.

The event is the worked example of spec/EVENTS.md (`spec/event_example.py`): one
straight run of it is shared by the tests that only read it (a module fixture), and
the document is compared with it."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from referee.league.ledger import Ledger
from tests.test_replay_html import WIDTHS, Browser, browser

__all__ = ["browser"]  # the fixture, shared with the replay page's tests

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "event_example", ROOT / "spec" / "event_example.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load()


def referee(folder: Path, *extra: str) -> subprocess.Popen[str]:
    """The example's event started in `folder` (made ready by the example)."""
    example.folder_for(folder)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.Popen(
        [sys.executable, "-m", "referee", *example.COMMAND.split()[1:], *extra],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(folder: Path, *extra: str) -> tuple[int, str, str]:
    done = example.run(example.folder_for(folder), *extra)
    return done.returncode, done.stdout, done.stderr


def outcomes(out: Path) -> list[tuple[str, list[str], list[int], int]]:
    """Every table's games: folder, seats, scores, seed."""
    rows = []
    for db in sorted(out.glob("stage-*/round-*/table-*/league.db")):
        ledger = Ledger(db)
        try:
            for r in ledger.records():
                rows.append((str(db.parent.relative_to(out)), r.seats, r.scores, r.seed))
        finally:
            ledger.close()
    return rows


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    folder = tmp_path_factory.mktemp("straight")
    code, out, err = run(folder)
    assert code == 0, err
    return folder / "out", json.loads((folder / "out" / "event.json").read_text()), out


def test_the_documents_worked_example_is_this_run(
    straight: tuple[Path, dict[str, Any], str],
) -> None:
    out, _, printed = straight
    drifted = example.drift(example.parts(out.parent, printed))
    assert not drifted, f"spec/EVENTS.md: {', '.join(drifted)} differ; run {example.REFRESH}"


def test_swiss_rounds_seat_everyone_once_and_withdraw_the_crasher(
    straight: tuple[Path, dict[str, Any], str],
) -> None:
    _, event, printed = straight
    swiss = event["stages"][0]
    assert swiss["format"] == "swiss" and len(swiss["rounds"]) == 2
    first, second = swiss["rounds"]
    # 7 entries at tables of 3: one table of 3 and two of 2 (tables one seat smaller).
    assert sorted(len(t) for t in first["tables"]) == [2, 2, 3]
    assert sorted(n for t in first["tables"] for n in t) == sorted(swiss["entries"])
    # The crasher forfeits every game, is withdrawn, and is not seated again.
    assert first["withdrawn"] == ["crash"]
    assert all("crash" not in t for t in second["tables"])
    assert swiss["ranking"][-1] == "crash" and "crash" not in swiss["advanced"]
    assert len(swiss["advanced"]) == 5
    assert "crash forfeited every game of the round and is withdrawn" in printed


def test_every_table_of_a_round_plays_the_same_board(
    straight: tuple[Path, dict[str, Any], str],
) -> None:
    out, _, _ = straight
    seeds: dict[str, set[int]] = {}
    for folder, _seats, _scores, seed in outcomes(out):
        seeds.setdefault(folder.rsplit("/", 1)[0], set()).add(seed)
    assert seeds and all(len(s) == 1 for s in seeds.values()), seeds
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds)  # rounds differ


def test_a_knockout_eliminates_down_to_its_final_table(
    straight: tuple[Path, dict[str, Any], str],
) -> None:
    _, event, printed = straight
    ko = event["stages"][1]
    assert ko["entries"] == event["stages"][0]["advanced"]
    *groups, final = ko["rounds"]
    assert [len(t) for t in groups[0]["tables"]] == [3, 2]
    out = [n for r in groups for n in r["out"]]
    assert len(out) == 2 and len(final["tables"]) == 1 and len(final["tables"][0]) == 3
    assert ko["ranking"][:3] == [n for n in ko["ranking"] if n in final["tables"][0]]
    assert set(ko["ranking"][3:]) == set(out)
    assert "final standings" in printed and ko["ranking"][0] in printed


def test_the_event_site_shows_every_stage_round_and_cut_in_chromium(
    straight: tuple[Path, dict[str, Any], str], browser: Browser
) -> None:
    out, event, _ = straight
    index = out / "site" / "index.html"
    for width, height in WIDTHS:
        browser.open(index, width, height)
        assert browser.js("document.documentElement.scrollWidth <= window.innerWidth + 1")
        text = browser.js("document.body.textContent")  # as written, not as styled
        for line in ("Final standings", "Stage 1: swiss", "Stage 2: knockout", "Round 2"):
            assert line in text, (width, line)
        assert "withdrawn (forfeited every game): crash" in text
        assert "left after this round" in text and "below the cut of 5" in text
        assert browser.problems() == []
    # Every table links to its own league site, which replays its games.
    links = browser.js(
        "[...document.querySelectorAll('a[href$=\"/index.html\"]')]"
        ".map(a => a.getAttribute('href'))"
    )
    folders = [f for s in event["stages"] for r in s["rounds"] for f in r["folders"]]
    assert sorted(links) == sorted(f"{f}/index.html" for f in folders)
    target = 'a[href="stage-1/round-02/table-1/index.html"]'
    browser.js(f"document.querySelector({json.dumps(target)}).scrollIntoView()")
    assert browser.problems() == []
    browser.events.clear()
    browser.click(target)
    browser.wait(lambda m: m.get("method") == "Page.loadEventFired")  # the table's page
    assert browser.until("location.pathname.endsWith('/stage-1/round-02/table-1/index.html')")
    assert "round 2 table 1" in browser.js("document.title")
    assert browser.problems() == []


def verify(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", "verify", str(folder), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_event_verifies_and_a_changed_seating_or_commitment_fails(
    straight: tuple[Path, dict[str, Any], str], tmp_path: Path
) -> None:
    out, event, printed = straight
    done = verify(out)
    assert done.returncode == 0, done.stdout + done.stderr
    for check in ("commitment", "tables", "keys", "seating"):
        assert f"ok    {check}:" in done.stdout
    digest = printed.split("commitment ", 1)[1].split()[0]
    assert verify(out, "--commitment", digest).returncode == 0
    wrong = verify(out, "--commitment", "sha256:" + "0" * 64)
    assert wrong.returncode == 1 and "FAIL  commitment" in wrong.stdout
    # A seating the tables' results do not give: two entries of round 2 swapped.
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, symlinks=True)
    changed = json.loads(json.dumps(event))
    tables = changed["stages"][0]["rounds"][1]["tables"]
    tables[0][0], tables[1][0] = tables[1][0], tables[0][0]
    (copy / "event.json").write_text(json.dumps(changed), encoding="utf-8")
    done = verify(copy)
    assert done.returncode == 1
    assert "FAIL  seating: event.json.stages.0.rounds.1.tables" in done.stdout.replace(
        "[", "."
    ).replace("]", "")


def recorded(out: Path) -> int:
    """Games recorded so far over every table (read while the event writes)."""
    total = 0
    for db in out.glob("stage-*/round-*/table-*/league.db"):
        with contextlib.suppress(sqlite3.Error):
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                total += con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            finally:
                con.close()
    return total


def test_a_run_killed_anywhere_resumes_to_the_same_event(
    tmp_path: Path, straight: tuple[Path, dict[str, Any], str]
) -> None:
    reference, event, _ = straight
    out = tmp_path / "out"
    total = len(outcomes(reference))
    seed = random.randrange(2**32)
    # Killed twice: once the second Swiss round's tables have started (mid-round, its
    # tables' ledgers half written), then after a random number of recorded games.
    point = random.Random(seed).randrange(total // 2, total - 2)
    note = f"second kill after {point} of {total} games (random seed {seed})"
    reached: list[Callable[[], bool]] = [
        lambda: bool(list(out.glob("stage-1/round-02/table-*/league.db"))),
        lambda: recorded(out) >= point,
    ]
    for n, when in enumerate(reached):
        proc = referee(tmp_path, *(["--resume"] if n else []))
        deadline = time.monotonic() + 120
        while not when():
            assert proc.poll() is None and time.monotonic() < deadline, (note, proc.communicate())
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        if n == 0:  # never over a run's results silently
            again = referee(tmp_path)
            _, err = again.communicate(timeout=300)
            assert again.returncode == 2 and "--resume" in err
    code, _, err = run(tmp_path, "--resume")
    assert code == 0, err + note
    assert json.loads((out / "event.json").read_text()) == event, note
    assert outcomes(out) == outcomes(reference), note
    done = verify(out)
    assert done.returncode == 0, done.stdout + note
