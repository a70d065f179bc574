"""What the ledger keeps of a finished game (`Record`, read back by
`read_records`) and of how the bots ran (`SandboxRecord`): plain values, in a
module of their own so that the standings and their running totals can name
them without importing the ledger that stores them."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Record:
    """One finished game as the ledger keeps it."""

    idx: int
    game_id: str
    unit: int
    deal: int
    rotation: int
    seed: int
    seats: list[str]
    scores: list[int]
    ranks: list[int]
    forfeited: list[bool]
    faults: list[dict[str, Any]]  # {"seat", "kind", "detail"}
    latency_mean: list[float | None]
    latency_max: list[float | None]
    decisions: int
    log_path: str
    finished: str
    notices: list[dict[str, Any]] = field(default_factory=list)  # as faults; never faults
    # The bots' decision time, summed: charged to their clocks, and excused for the
    # referee's own lag (0 and 0 in a ledger from before they were kept).
    charged_ms: float = 0.0
    excused_ms: float = 0.0
    # `sha256:` + hex of the whole log as written (uncompressed); "" in a ledger from before.
    log_sha256: str = ""
    # The order games were recorded in, from 1 (the ledger sets it; 0 before it is
    # recorded, and in a ledger from before): results and checkpoints chain them so.
    seq: int = 0


@dataclass(frozen=True)
class SandboxRecord:
    """How the league's bots ran, by name: "bwrap", "none", or "tcp" (a bot that connects,
    started by nobody here); and why bubblewrap was not used where "auto" found it not
    working on the referee's machine."""

    bots: dict[str, str] = field(default_factory=dict)
    note: str = ""
    # Who the started bots ran as, by mode ("bwrap", "none"): see referee.bots.sandbox.user_line.
    users: dict[str, str] = field(default_factory=dict)

    @property
    def unsandboxed(self) -> list[str]:
        """Bots the referee started without the sandbox, in at least one run."""
        return [name for name, mode in self.bots.items() if mode == "none"]

    def line(self) -> str:
        """One line for the standings."""
        bare = self.unsandboxed
        if not bare:
            user = self.users.get("bwrap")
            return "sandbox: every bot the referee started ran in the bubblewrap sandbox" + (
                f", as {user}" if user else ""
            )
        started = [name for name, mode in self.bots.items() if mode != "tcp"]
        who = "every bot" if len(bare) == len(started) else ", ".join(bare)
        why = f" ({self.note})" if self.note else ""
        user = self.users.get("none")
        return (
            f"NO SANDBOX: {who} ran without the sandbox{why}"
            + (f", as {user}" if user else "")
            + "; they could read the logs of the games they played, and league.db, which "
            "holds the deal key (every hand of every game, those still to come included)"
        )

    def to_json(self) -> dict[str, Any]:
        """A plain, JSON-ready form."""
        return {
            "bots": dict(self.bots),
            "note": self.note,
            "unsandboxed": self.unsandboxed,
            "users": dict(self.users),
        }


# The columns of `games` that hold JSON.
JSON_FIELDS = (
    "seats",
    "scores",
    "ranks",
    "forfeited",
    "faults",
    "latency_mean",
    "latency_max",
    "notices",
)


def read_records(db: sqlite3.Connection) -> list[Record]:
    """Every game recorded in `db`, in schedule order."""
    names = list(Record.__dataclass_fields__)
    out = []
    for row in db.execute(f"SELECT {','.join(names)} FROM games ORDER BY idx"):
        data = dict(zip(names, row, strict=True))
        for name in JSON_FIELDS:
            data[name] = json.loads(data[name])
        data["seed"] = int(data["seed"])
        out.append(Record(**data))
    return out
