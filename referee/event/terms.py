"""An event's terms and commitment, made before its first game (the entries and their
programs, rules, clocks, points and stages, and its deal key's digest), and its reveal
once it has ended: the event's keys, and every table's (spec/EVENTS.md, "Proof")."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import msgspec

from ..league.ledger import Ledger
from ..league.terms import reveal_league
from ..logs.gamelog import now_iso, sha256_text
from ..proof.commitment import (
    COMMITMENT,
    REVEAL,
    Commitment,
    CommitmentError,
    bot_files,
    file_bytes,
    key_digest,
    read_commitment,
    reveal_data,
    write_file,
)
from .config import EventConfig

STATE = "event.json"

FORMAT = "event/1"
ROUND_KEYS = (
    "the deals of every table of round R of stage S come from HMAC-SHA256(K, "
    "'event/stage/S/round/R') as a league's from its deal key; K = the event's deal key"
)


def event_terms(cfg: EventConfig) -> dict[str, Any]:
    """What the commitment fixes: the entries and their programs, the rules, clocks and
    fault policy every table plays with, the points and the stages."""
    base = cfg.base
    bots = []
    for b in base.bots:
        entry: dict[str, Any] = {
            "name": b.name,
            "command": shlex.join(b.spec.argv),
            "files": bot_files(b.spec.argv, b.spec.cwd, cfg.path.parent),
            "restart": b.restart,
        }
        if b.time is not None:
            entry["time"] = msgspec.structs.asdict(base.bot_time(b.name))
        bots.append(entry)
    return {
        "name": cfg.name,
        "entries": [b.name for b in base.bots],
        "table": cfg.table,
        "seed": base.seed,
        "points": list(cfg.points) if isinstance(cfg.points, tuple) else cfg.points,
        "stages": [s.to_dict() for s in cfg.stages],
        "rules_preset": base.rules_preset,
        "rules": base.rules.to_dict(),
        "time": msgspec.structs.asdict(base.time),
        "policy": base.policy.value,
        "max_faults": base.max_faults,
        "output_cap": base.output_cap,
        "bots": bots,
        "fingerprint": cfg.fingerprint(),
    }


def read_event_commitment(out: Path) -> Commitment | None:
    """The event's commitment in `out`, if there is one (`CommitmentError` for a file
    that is not an event's)."""
    return read_commitment(out, FORMAT)


def _without_files(terms: dict[str, Any]) -> dict[str, Any]:
    bots = [{k: v for k, v in b.items() if k != "files"} for b in terms.get("bots", [])]
    return {**terms, "bots": bots}


def event_commitment(cfg: EventConfig, deal_key: bytes) -> Commitment:
    """The event's commitment: the one in its folder, checked against the event and its
    key, or a new one written there (`CommitmentError` for one of other terms)."""
    wanted: dict[str, Any] = {
        "commitment": FORMAT,
        "event": event_terms(cfg),
        "deal_key_sha256": key_digest(deal_key),
        "round_keys": ROUND_KEYS,
        "reveal": cfg.base.reveal,
        "made": now_iso(),
    }
    old = read_event_commitment(cfg.out)
    path = cfg.out / COMMITMENT
    if old is None:
        raw = file_bytes(wanted)
        write_file(path, raw)
        return Commitment(sha256_text(raw), wanted, new=True)
    if old.data.get("deal_key_sha256") != wanted["deal_key_sha256"]:
        raise CommitmentError(f"{path} commits to another deal key than this event's")
    before, now = _without_files(old.data.get("event", {})), _without_files(wanted["event"])
    if before != now or old.data.get("reveal") != wanted["reveal"]:
        changed = sorted(k for k in set(now) | set(before) if before.get(k) != now.get(k))
        raise CommitmentError(
            f"{path} commits to other terms ({', '.join(changed) or 'reveal'} changed since "
            "it was made); an event may not change after its commitment"
        )
    return old


def is_event_folder(out: Path) -> bool:
    """Whether `out` is an event's output folder (its keys, or its rounds, are there)."""
    return (out / "event.db").is_file() or (out / STATE).is_file()


def event_json(out: Path) -> dict[str, Any]:
    """The event's rounds as written (`CommitmentError`, one line, when there are none)."""
    path = out / STATE
    if not path.is_file():
        raise CommitmentError(f"{out}: the event has recorded no round yet (no {STATE})")
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CommitmentError(f"{path}: not readable ({exc})") from None
    return data


def table_folders(event: dict[str, Any]) -> list[tuple[int, int, str]]:
    return [
        (stage["index"], rnd["index"], folder)
        for stage in event["stages"]
        for rnd in stage["rounds"]
        for folder in rnd["folders"]
    ]


def reveal_event(out: Path, deal_key: bytes, bot_key: bytes) -> tuple[Path, str]:
    """Write the event's reveal.json and every table's, once the event has ended; the
    event's reveal and its commitment's digest (`CommitmentError` before the end)."""
    event = event_json(out)
    pledge = read_event_commitment(out)
    if pledge is None:
        raise CommitmentError(f"{out}: no {COMMITMENT} here: the event made no commitment")
    if not event.get("ended"):
        raise CommitmentError(
            f"{out}: the event is not over: its deal key stays secret until its last game"
        )
    for _, _, folder in table_folders(event):
        reveal_league(out / folder)
    path = out / REVEAL
    write_file(path, file_bytes(reveal_data(pledge.digest, deal_key, bot_key)))
    return path, pledge.digest


def reveal_folder(out: Path) -> tuple[Path, str]:
    """`referee reveal OUT` of an event: its keys from `event.db`, then `reveal_event`."""
    db = out / "event.db"
    if not db.is_file():
        raise CommitmentError(f"{out}: no event.db here; is this an event's output folder?")
    ledger = Ledger(db)
    try:
        meta = dict(ledger.db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        ledger.close()
    return reveal_event(out, bytes.fromhex(meta["deal_key"]), bytes.fromhex(meta["bot_seed_key"]))
