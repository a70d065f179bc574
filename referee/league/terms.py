"""A league's side of its commitment (`referee.proof.commitment`): the terms it commits
to, read from its configuration (`league_terms`), its commitment made or checked when
it starts (`league_commitment`), and the commands that commit to a league and reveal
its keys from its ledger (`referee commit`, `referee reveal`).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ..proof.commitment import (
    COMMITMENT,
    Commitment,
    CommitmentError,
    bot_files,
    commitment_data,
    ensure_commitment,
    read_commitment,
    write_reveal,
)
from .config import LeagueConfig
from .ledger import Ledger
from .schedule import schedule


def league_terms(config: LeagueConfig) -> dict[str, Any]:
    """What the commitment fixes of the league: everything that decides its games, and
    the schedule (every game's seats; a match's stream of units by its rule)."""
    bots = []
    for b in config.bots:
        entry: dict[str, Any] = {"name": b.name, "transport": b.transport}
        if not b.tcp:
            entry["command"] = shlex.join(b.spec.argv)
            entry["files"] = bot_files(b.spec.argv, b.spec.cwd, config.path.parent)
            entry["restart"] = b.restart
        if b.time is not None:
            entry["time"] = _clock(b.time)
        bots.append(entry)
    terms: dict[str, Any] = {
        "name": config.name,
        "format": config.format,
        "rules_preset": config.rules_preset,
        "rules": config.rules.to_dict(),
        "table": config.table,
        "deals": config.deals,
        "duplicate": config.duplicate,
        "seed": config.seed,
        "challengers": list(config.challengers),
        "time": _clock(config.time),
        "policy": config.policy.value,
        "max_faults": config.max_faults,
        "output_cap": config.output_cap,
        "bots": bots,
        "fingerprint": config.fingerprint(),
    }
    if config.allow_updates:  # left out when false, so older commitments still resume
        terms["allow_updates"] = True
    if config.match is not None:
        m = config.match
        terms["match"] = {
            "new": m.new,
            "base": m.base,
            "field": list(m.field),
            # Not max_games, which a resumed match may raise (as its fingerprint allows).
            "units": "unit U: deal U, NEW then BASE in seat U mod table, the field in the "
            "other seats in file order",
        }
    else:
        # The seats of every game; their seeds are what the key keeps secret.
        terms["schedule"] = [
            [g.game_id, g.unit, g.table, g.deal, g.rotation, list(g.seats)]
            for g in schedule(config, bytes(32))
        ]
    return terms


def _clock(t: Any) -> dict[str, int]:
    return {
        "startup_ms": t.startup_ms,
        "move_ms": t.move_ms,
        "bank_ms": t.bank_ms,
        "increment_ms": t.increment_ms,
        "grace_ms": t.grace_ms,
    }


def league_commitment(
    config: LeagueConfig, deal_key: bytes, *, public_key: str | None, recorded: int
) -> Commitment:
    """The league's commitment: the one in its folder, checked against the league and
    its key, or a new one written there. `CommitmentError` when the file in the folder
    commits to other terms or another key."""
    wanted = commitment_data(
        league_terms(config),
        deal_key,
        mix=config.mix,
        reveal=config.reveal,
        public_key=public_key,
        recorded=recorded,
    )
    return ensure_commitment(config.out, wanted)


def commit_league(config: LeagueConfig, public_key: str | None) -> Commitment:
    """`referee commit`: make the league's keys and its commitment without playing a game
    (`LedgerError` for a folder of another league, `CommitmentError` for one committed
    to other terms). Run again, it gives the same one."""
    ledger = Ledger(config.out / "league.db")
    try:
        ledger.claim(config.fingerprint(), resume=True)
        ledger.bot_seed_key(config.bot_seed_key)
        key = ledger.deal_key(config.deal_key)
        recorded = ledger.count()
        pledge = league_commitment(config, key, public_key=public_key, recorded=recorded)
        ledger.db.execute("INSERT OR REPLACE INTO meta VALUES ('commitment', ?)", (pledge.digest,))
        if config.match is None:
            planned = str(len(schedule(config, bytes(32))))
            ledger.db.execute("INSERT OR REPLACE INTO meta VALUES ('scheduled', ?)", (planned,))
        return pledge
    finally:
        ledger.close()


def reveal_league(out: Path) -> tuple[Path, str]:
    """`referee reveal`: write OUT/reveal.json once the league is over; its path and the
    commitment. `CommitmentError` while games remain, or with no commitment."""
    db = out / "league.db"
    if not db.is_file():
        raise CommitmentError(f"{out}: no league.db here; is this a league's output folder?")
    pledge = read_commitment(out)
    if pledge is None:
        raise CommitmentError(f"{out}: no {COMMITMENT} here: the league made no commitment")
    ledger = Ledger(db)
    try:
        meta = dict(ledger.db.execute("SELECT key, value FROM meta").fetchall())
        recorded = ledger.count()
    finally:
        ledger.close()
    if meta.get("ended") != "1":
        scheduled = meta.get("scheduled")
        of = f" of {scheduled}" if scheduled else ""
        raise CommitmentError(
            f"{out}: {recorded}{of} games recorded and the league is not over: the deal key "
            "stays secret until every game is recorded"
        )
    deal_key, bot_seed_key = bytes.fromhex(meta["deal_key"]), bytes.fromhex(meta["bot_seed_key"])
    return write_reveal(out, pledge.digest, deal_key, bot_seed_key), pledge.digest
