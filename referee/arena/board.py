"""The leaderboard: versions by μ − 3σ, read from the ledger's running totals (one row
per version, whatever the number of games), with the order-free refit beside it.

A version is "provisional" until its σ falls under `provisional_sigma`. The refit
(`refit`: maximum-likelihood Plackett-Luce over every arena game, as Kaggle's final
Bradley-Terry) depends on no game order; it costs a pass over all games, so it is
kept in the ledger with the number of games it saw, and made again in the background
when the arena has grown by a tenth (`refit_due`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from .ledger import ArenaLedger, Version
from .refit import refit

SHOWN = ("active", "suspended", "retired", "removed")  # versions on the leaderboard
REFIT_GROWTH = 0.1  # the refit is made again when the games grew by this share


@dataclass(frozen=True)
class Row:
    """One line of the leaderboard."""

    place: int
    version: Version
    provisional: bool
    refit: float | None  # the refit's log-strength, when one was made with this version


def leaderboard(ledger: ArenaLedger, provisional_sigma: float) -> list[Row]:
    """Every ranked version, best first: active and suspended ones, and retired and
    removed ones that played (which keep their place and history, marked); ties by
    name."""
    fit = kept_refit(ledger)
    versions = [v for v in ledger.versions(SHOWN) if v.games > 0 or v.status == "active"]
    versions.sort(key=lambda v: (-v.conservative, v.name))
    return [
        Row(place, v, v.sigma >= provisional_sigma, fit.get(v.name))
        for place, v in enumerate(versions, start=1)
    ]


def kept_refit(ledger: ArenaLedger) -> dict[str, float]:
    """The last refit's strengths, by version (empty before the first)."""
    text = ledger.meta("refit")
    if text is None:
        return {}
    data = json.loads(text)
    return {str(k): float(v) for k, v in data["strength"].items()}


def refit_due(ledger: ArenaLedger) -> bool:
    """Whether the games grew by `REFIT_GROWTH` since the last refit."""
    games = ledger.count()
    text = ledger.meta("refit")
    if text is None:
        return games > 0
    seen = int(json.loads(text)["games"])
    return games >= max(seen + 1, int(seen * (1 + REFIT_GROWTH)))


def make_refit(ledger: ArenaLedger) -> int:
    """Fit every arena game again and keep the result; the games it used."""
    rows = ledger.db.execute("SELECT seats, ranks FROM games WHERE stage = 'arena'")
    games = [list(zip(json.loads(s), json.loads(r), strict=True)) for s, r in rows]
    fit = refit(games)
    data = {"games": fit.games, "strength": fit.strength, "made": time.time()}
    ledger.set_meta("refit", json.dumps(data))
    return fit.games


def status_of(v: Version, provisional: bool) -> str:
    """A version's state in a word or two, as the leaderboard shows it."""
    if v.status != "active":
        return v.status
    return "provisional" if provisional else "ranked"
