"""An event's site (`referee event`, spec/EVENTS.md): `index.html` shows the event's
final standings, each stage with each round's tables (a knockout's groups, round by
round, are its bracket), who sat out, who was withdrawn, who left and who advanced and
why; each table's own league site is in `stage-S/round-RR/table-T/`, linked from it.

Only finished rounds are shown (`event.json` lists a round once all its tables are
played): every table of a round plays the same board, so a table's games, hands and
all, are published only when no table of its round still plays it. Every name comes
from the event file, and is escaped like any bot's text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .build import SiteError, build_site, write_assets
from .model import write_atomic
from .pages import esc, page, scroll, table

Row = tuple[dict[str, str], list[tuple[str, object]]]


def build_event_site(out: Path, to: Path | None = None) -> Path:
    """Build (or bring up to date) the site of the event in `out`; its folder."""
    try:
        event: dict[str, Any] = json.loads((out / "event.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SiteError(f"{out / 'event.json'}: not an event's folder ({exc})") from None
    site = to if to is not None else out / "site"
    try:
        (site / "assets").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SiteError(f"{exc.filename}: cannot write there: {exc.strerror}") from None
    write_assets(site / "assets")
    for stage in event["stages"]:
        for rnd in stage["rounds"]:
            for folder in rnd["folders"]:
                target = site / folder
                if not (target / "index.html").is_file():  # a finished table's site
                    build_site(out / folder, target)
    write_atomic(site / "index.html", event_page(event))
    return site


def _seat(name: str, score: float | None, out: set[str], withdrawn: set[str]) -> str:
    mark = ""
    if name in withdrawn:
        mark = " (withdrawn)"
    elif name in out:
        mark = " (out)"
    points = f" {round(score, 2):g}" if score is not None else ""
    cls = ' class="out"' if name in out or name in withdrawn else ""
    return f"<span{cls}>{esc(name)}<small>{esc(points)}{esc(mark)}</small></span>"


def _round(stage: dict[str, Any], rnd: dict[str, Any]) -> str:
    out, gone = set(rnd["out"]), set(rnd["withdrawn"])
    what = "group" if stage["format"] == "knockout" else "table"
    rows: list[Row] = []
    for t, (seats, folder) in enumerate(zip(rnd["tables"], rnd["folders"], strict=True), 1):
        link = f'<a href="{esc(folder)}/index.html">{what} {t}</a>'
        cells = ", ".join(_seat(n, rnd["scores"].get(n), out, gone) for n in seats)
        rows.append(({}, [(link, t), (cells, ", ".join(seats)), (str(len(seats)), len(seats))]))
    ident = f"s{stage['index']}r{rnd['index']}"
    headers = [(what, "num"), ("seats and round scores", "text"), ("seats", "num")]
    body = table(ident, headers, rows, brief=(what, "seats and round scores"))
    notes = []
    if rnd["byes"]:
        notes.append("bye: " + ", ".join(esc(n) for n in rnd["byes"]))
    if rnd["withdrawn"]:
        notes.append(
            "withdrawn (forfeited every game): " + ", ".join(esc(n) for n in rnd["withdrawn"])
        )
    if rnd["out"]:
        notes.append("left after this round: " + ", ".join(esc(n) for n in rnd["out"]))
    extra = "".join(f"<p>{n}</p>" for n in notes)
    return f"<h3>Round {rnd['index']}</h3>\n{scroll(body)}{extra}\n"


def _stage(stage: dict[str, Any]) -> str:
    totals = stage["totals"]
    advanced = set(stage["advanced"])
    rows: list[Row] = []
    for place, name in enumerate(stage["ranking"], 1):
        t = totals.get(name, {})
        status = "advanced" if name in advanced and len(advanced) < len(stage["ranking"]) else ""
        rows.append(
            (
                {},
                [
                    (str(place), place),
                    (esc(name), name),
                    (f"{round(t.get('score', 0), 2):g}", t.get("score", 0)),
                    (f"{round(t.get('opposition', 0), 2):g}", t.get("opposition", 0)),
                    (str(t.get("games", 0)), t.get("games", 0)),
                    (str(t.get("lasts", 0)), t.get("lasts", 0)),
                    (str(t.get("pips", 0)), t.get("pips", 0)),
                    (esc(status), status),
                    (esc(stage["why"].get(name, "")), stage["why"].get(name, "")),
                ],
            )
        )
    headers = [
        ("place", "num"),
        ("entry", "text"),
        ("score", "num"),
        ("opposition", "num"),
        ("games", "num"),
        ("last places", "num"),
        ("pips", "num"),
        ("status", "text"),
        ("why", "text"),
    ]
    ranking = table(f"s{stage['index']}", headers, rows, brief=("place", "entry", "score", "why"))
    rounds = "".join(_round(stage, r) for r in stage["rounds"])
    head = (
        f"<h2>Stage {stage['index']}: {esc(stage['format'])}</h2>\n"
        f"<p>{len(stage['entries'])} entries; "
        f"{len(stage['advanced'])} go on.</p>\n"
        if stage["advanced"] != stage["ranking"]
        else f"<h2>Stage {stage['index']}: {esc(stage['format'])}</h2>\n"
        f"<p>{len(stage['entries'])} entries.</p>\n"
    )
    return f'<section class="stage">{head}{scroll(ranking)}{rounds}</section>\n'


def final_standings(event: dict[str, Any]) -> list[tuple[str, str]]:
    """Every entry, best first, with how it placed: the last stage's ranking, then those
    who left at each earlier stage's cut, the later stages first."""
    stages = event["stages"]
    if not stages:
        return []
    rows = [(n, stages[-1]["why"].get(n, "")) for n in stages[-1]["ranking"]]
    for stage in reversed(stages[:-1]):
        for n in stage["ranking"]:
            if n not in stage["advanced"]:
                rows.append((n, f"stage {stage['index']}: {stage['why'].get(n, '')}"))
    return rows


def event_page(event: dict[str, Any]) -> str:
    points = event["points"]
    rule = ", ".join(f"{p:g}" for p in points) if isinstance(points, list) else points
    state = "ended" if event["ended"] else "in play (finished rounds only)"
    intro = (
        f"<p>Tables of {event['table']}; placement points: {esc(rule)}; the event is "
        f"{state}. Every table of a round plays the same duplicate board; the rules: "
        "spec/EVENTS.md.</p>\n"
    )
    standings = ""
    if event["ended"]:
        rows: list[Row] = [
            ({}, [(str(i), i), (esc(n), n), (esc(why), why)])
            for i, (n, why) in enumerate(final_standings(event), 1)
        ]
        standings = "<h2>Final standings</h2>\n" + scroll(
            table(
                "final",
                [("place", "num"), ("entry", "text"), ("how", "text")],
                rows,
                brief=("place", "entry"),
            )
        )
    stages = "".join(_stage(s) for s in event["stages"] if s["rounds"])
    return page(event["name"], intro + standings + stages)
