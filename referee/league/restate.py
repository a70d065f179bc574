"""What `referee verify` re-derives with the league's own code (`referee.proof.verify`,
whose `Restater` this is): the games of a ledger, the standings that games give, and
standings.csv and .md as the referee writes them from standings.json. Proof is below
the league and imports nothing of it: the command hands it a `Restate`.
"""

from __future__ import annotations

import sqlite3
import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..logs.gamelog import GameLog
from ..proof.folder import Game, Played, Units
from .output import csv_text, markdown
from .records import Record, SandboxRecord, read_records
from .standings import BotStanding, Clocks, FailedStart, Standings, compute
from .transport import Transport


class Restate:
    """The league's code the checks of `referee verify` re-derive with: each method is
    the one of `Restater` that says what it gives."""

    def records(self, db: sqlite3.Connection) -> list[Record]:
        return read_records(db)

    def standings(
        self, names: list[str], games: Sequence[Played], clocks: Any, commitment: str
    ) -> tuple[dict[str, Any], Units]:
        records = [_played(g, log) for g, log in games]
        warn_at = float(clocks.get("warn_at", Clocks().warn_at))
        derived = compute(names, records, lag_warning=warn_at)
        derived.commitment = commitment
        return derived.to_json(), {b.name: b.units for b in derived.bots}

    def written(self, name: str, data: dict[str, Any], units: Units, title: str) -> str:
        rebuilt = _rebuilt(data, units)
        return csv_text(rebuilt) if name == "standings.csv" else markdown(rebuilt, title)


def _played(g: Game, log: GameLog | None) -> Record:
    """A game as the standings need it: its result from the results (or the ledger),
    and with its log, the faults, notices, latencies and decision time it holds."""
    seats = len(g.seats)
    if log is None or log.footer is None:
        return _record(g)
    footer = log.footer
    timed: list[list[float]] = [[] for _ in range(seats)]
    for d in log.decisions:
        if d.latency_ms is not None and not d.auto:
            timed[d.seat].append(d.latency_ms)
    return replace(
        _record(g),
        faults=[{"seat": f.seat, "kind": f.kind, "detail": f.detail} for f in footer.faults],
        latency_mean=[round(statistics.fmean(v), 3) if v else None for v in timed],
        latency_max=[round(max(v), 3) if v else None for v in timed],
        decisions=footer.decisions,
        notices=[{"seat": n.seat, "kind": n.kind, "detail": n.detail} for n in footer.notices],
        charged_ms=footer.charged_ms or 0.0,
        excused_ms=footer.excused_ms or 0.0,
    )


def _record(g: Game) -> Record:
    """A game as the standings need it."""
    return Record(
        idx=g.index,
        game_id=g.id,
        unit=g.unit,
        deal=g.deal,
        rotation=g.rotation,
        seed=0,
        seats=g.seats,
        scores=g.scores,
        ranks=g.ranks,
        forfeited=g.forfeited,
        faults=[],
        latency_mean=[None] * len(g.seats),
        latency_max=[None] * len(g.seats),
        decisions=0,
        log_path="",
        finished="",
    )


def _rebuilt(data: dict[str, Any], units: Units) -> Standings:
    """Standings as standings.json (or results.json) holds them, with each bot's units
    (which the JSON leaves out) from the games: what the other files are written from."""
    bots = [
        BotStanding(
            name=str(row["name"]),
            games=int(row["games"]),
            wins=float(row["wins"]),
            rank_sum=int(row["rank_sum"]),
            points=int(row["points"]),
            units=dict(units.get(str(row["name"]), {})),
            mu=float(row["mu"]),
            sigma=float(row["sigma"]),
            faults={str(k): int(v) for k, v in row["faults"].items()},
            notices={str(k): int(v) for k, v in row["notices"].items()},
            forfeits=int(row["forfeits"]),
            latency_sum=float(row["latency_sum"]),
            latency_n=int(row["latency_n"]),
            latency_worst=float(row["latency_worst"]),
        )
        for row in data["bots"]
    ]
    head = {
        a: {b: (int(v[0]), int(v[1])) for b, v in row.items()}
        for a, row in data["head_to_head"].items()
    }
    said = data.get("sandbox")
    sandbox = (
        SandboxRecord(dict(said["bots"]), str(said["note"]), dict(said.get("users", {})))
        if said is not None
        else None
    )
    c = data["clocks"]
    clocks = Clocks(
        charged_us=round(float(c["charged_ms"]) * 1000),
        excused_us=round(float(c["excused_ms"]) * 1000),
        warn_at=float(c["warn_at"]),
    )
    served = data.get("transport")
    return Standings(
        bots,
        head,
        int(data["games"]),
        sandbox,
        match=data.get("match"),
        clocks=clocks,
        failed_starts=[
            FailedStart(str(f["game"]), str(f["bot"]), str(f["detail"]))
            for f in data["failed_starts"]
        ],
        commitment=data.get("commitment"),
        transport=(
            Transport(served["kind"], served.get("tls_fingerprint") or "")
            if served is not None
            else None
        ),
    )
