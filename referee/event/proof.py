"""`referee verify OUT` of an event's folder (spec/EVENTS.md, "Proof"): its commitment,
each table's own checks, each table's keys derived from the event's (once revealed), and
every round seated again from the tables' recorded results by the event's own code
(`Event` with no player), which must give `event.json` as written."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from ..league.restate import Restate
from ..proof.commitment import COMMITMENT, REVEAL, CommitmentError, key_digest
from ..proof.folder import Report, VerifyError
from ..proof.verify import verify_folder
from .config import Stage
from .run import Event, EventError, MissingTable, Plan, round_key
from .terms import FORMAT, event_json, read_event_commitment, table_folders


def plan_of(out: Path, data: dict[str, Any]) -> Plan:
    """The seating plan a commitment's terms state."""
    terms = data["event"]
    points = terms["points"]
    stages = tuple(Stage(index=i + 1, **s) for i, s in enumerate(terms["stages"]))
    return Plan(
        name=terms["name"],
        entries=tuple(terms["entries"]),
        table=int(terms["table"]),
        points=tuple(float(p) for p in points) if isinstance(points, list) else points,
        stages=stages,
        out=out,
    )


def _first_difference(made: Any, written: Any, where: str = "event.json") -> str | None:
    if isinstance(made, dict) and isinstance(written, dict):
        for key in list(made) + [k for k in written if k not in made]:
            found = _first_difference(made.get(key), written.get(key), f"{where}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(made, list) and isinstance(written, list) and len(made) == len(written):
        for i, (a, b) in enumerate(zip(made, written, strict=True)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    return (
        None
        if made == written
        else f"{where}: {json.dumps(written)}, re-derived {json.dumps(made)}"
    )


async def verify_event(out: Path, expected: str | None) -> Report:
    """Every check of the event in `out` (`VerifyError` when it holds no event)."""
    report = Report()
    try:
        event = event_json(out)
        pledge = read_event_commitment(out)
    except CommitmentError as exc:
        raise VerifyError(str(exc)) from None
    if pledge is None:
        raise VerifyError(f"{out}: no {COMMITMENT}: nothing to check the event against")
    problem = None
    if expected is not None and pledge.digest != expected:
        problem = f"{COMMITMENT} is {pledge.digest}, not the published {expected}"
    report.add("commitment", problem, f"{pledge.digest}, an event of {FORMAT}")
    # Every table: a league of its own, with all of a league's checks.
    failed: list[str] = []
    each: list[str] = []  # what a table's checks leave uncovered, said once for all
    folders = table_folders(event)
    for _, _, folder in folders:
        try:
            table = verify_folder(out / folder, Restate())
        except VerifyError as exc:
            failed.append(f"{folder}: {exc}")
            continue
        failed += [f"{folder}: {c.name}: {c.text}" for c in table.checks if not c.ok]
        for item in table.uncovered:
            if item not in each:
                each.append(item)
    report.add(
        "tables",
        f"{len(failed)} failing: {failed[0]}" if failed else None,
        f"every check of each of the {len(folders)} tables holds",
    )
    report.uncovered += [f"in each table, {item}" for item in each]
    report.uncovered.append("site/ (the event's pages, made from event.json and the tables)")
    # The keys: the event's against its commitment, each table's derived from it.
    revealed = out / REVEAL
    if revealed.is_file():
        problem = None
        try:
            shown = json.loads(revealed.read_text(encoding="utf-8"))
            key = bytes.fromhex(shown["deal_key"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problem = f"{REVEAL}: not readable ({exc})"
            key = b""
        if problem is None and key_digest(key) != pledge.data.get("deal_key_sha256"):
            problem = f"{REVEAL}: its deal key is not the one the commitment names"
        for stage, rnd, folder in folders if problem is None else []:
            table = json.loads((out / folder / COMMITMENT).read_text(encoding="utf-8"))
            if table.get("deal_key_sha256") != key_digest(round_key(key, stage, rnd)):
                problem = f"{folder}: its deal key is not the event's round key"
                break
        report.add("keys", problem, f"every table's deal key is its round's, from {REVEAL}")
    else:
        report.uncovered.append("the tables' keys (the event's key is not revealed yet)")
    # The seating: every round again, from the tables' results, by the event's code.
    known = {folder for _, _, folder in folders}
    try:
        again = Event(plan_of(out, pledge.data), play=None, say=lambda _: None, known=known)
        with contextlib.suppress(MissingTable):  # an event in play: what it played so far
            await again.run()
        problem = _first_difference(again.record.to_json(), event)
    except (EventError, KeyError, TypeError, ValueError) as exc:
        problem = f"cannot re-derive the event: {exc}"
    report.add(
        "seating",
        problem,
        "every round's tables, byes, scores and cuts re-derived from the tables' results",
    )
    return report
