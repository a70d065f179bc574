"""Deals nobody could have chosen: the league's commitment, the contributions mixed into
its deals, and the reveal of its key.

**Commitment.** Before its first game a league writes `OUT/commitment.json`: what the
league is (rules, clocks, bots and their commands, with the SHA-256 of each file a
command names, the whole schedule, the format) and the SHA-256 of its secret deal
key, and with `[league] allow_updates` that the bots' files may change after it
(every game's log names the files its bots started with). Its digest is the
SHA-256 of the file's bytes (`sha256sum commitment.json`
gives it too), printed when the league starts, written in every game log's header,
on the site and in the standings. An organiser publishes it before the games: from
then on the deals are fixed, and the key that fixes them cannot be swapped unseen.

**Contributions.** A league may mix public values into its deals (`[league] mix`):
a `beacon` (a value published after the commitment, such as a lottery draw, given
with `--beacon`) and the `entrants`' nonces (each tcp bot's `nonce` at its first
login). The deals are then drawn from `HMAC-SHA256(deal_key, "mix/" + the
contributions as canonical JSON)` rather than from the deal key itself, so the
organiser, who knew the key, could not have steered a deal without knowing the
contributions, and an entrant, who chose a nonce, could not have steered one
without the key. The contributions are kept in the ledger and in
`OUT/contributions.json`.

**Reveal.** Once every game is recorded, `referee reveal OUT` (or `[league] reveal =
"at-end"`) writes the key in `OUT/reveal.json`, with the bot-seed key. Anyone can then
check the key against the commitment and re-derive every deal (`referee.league.verify`).

Every file here is JSON written with sorted keys and one-space indents, synced, and
renamed into place: whole or absent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..logs.gamelog import now_iso, sha256_text
from ..logs.outputs import write_atomic
from .config import LeagueConfig
from .ledger import LedgerError
from .schedule import schedule

COMMITMENT = "commitment.json"
CONTRIBUTIONS = "contributions.json"
REVEAL = "reveal.json"
FORMAT = 1
DEALS_FROM = (
    "seed of deal D at table T = the first 16 bytes (big-endian) of "
    "HMAC-SHA256(K, 'league/SEED/deal/D/table/T'); K = the deal key, or with mix "
    "HMAC-SHA256(deal key, 'mix/' + the contributions as canonical JSON)"
)
MAX_FILE_HASHED = 64 << 20  # a command's file bigger than this is named, not hashed


class CommitmentError(LedgerError):
    """A commitment, contribution, key or reveal that does not fit the league; one line.
    A kind of `LedgerError`: the output folder does not fit the league run in it."""


def file_bytes(data: dict[str, Any]) -> bytes:
    """The bytes of a JSON file of this module (and of results): sorted keys, indented."""
    return (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def canonical(data: Any) -> bytes:
    """Compact canonical JSON: what digests and signatures are taken over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def write_file(path: Path, data: bytes) -> None:
    """`data` into `path`, whole or not at all (synced, then renamed into place);
    `WriteError` when it cannot be written (a full disk stops a league cleanly)."""
    write_atomic(path, data, sync=True)


def key_digest(key: bytes) -> str:
    """What the commitment says of a key: `sha256:` + hex of its bytes."""
    return sha256_text(key)


FileCache = dict[tuple[str, int, int, int, int], str]  # (path, device, inode, size, mtime)


def bot_files(
    config: LeagueConfig,
    argv: tuple[str, ...] | list[str],
    cwd: str | None,
    cache: FileCache | None = None,
) -> dict[str, str]:
    """The SHA-256 of each file a bot's command names (its program, its script), by the
    word of the command that names it: the version of the bot, as far as the referee can
    see it. The commitment holds them, and each game's log those its bots started with.
    `cache` keeps digests by the file's path, inode, size and modification time, so a
    file hashed once is not read again until it changes."""
    found: dict[str, str] = {}
    base = Path(cwd) if cwd else config.path.parent
    for word in argv:
        path = Path(word) if os.path.isabs(word) else base / word
        try:
            if not path.is_file():
                continue
            st = path.stat()
            if st.st_size > MAX_FILE_HASHED:
                continue
            key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            digest = cache.get(key) if cache is not None else None
            if digest is None:
                digest = sha256_text(path.read_bytes())
                if cache is not None:
                    cache[key] = digest
            found[word] = digest
        except OSError:
            continue
    return found


def league_terms(config: LeagueConfig) -> dict[str, Any]:
    """What the commitment fixes of the league: everything that decides its games, and
    the schedule (every game's seats; a match's stream of units by its rule)."""
    bots = []
    for b in config.bots:
        entry: dict[str, Any] = {"name": b.name, "transport": b.transport}
        if not b.tcp:
            entry["command"] = shlex.join(b.spec.argv)
            entry["files"] = bot_files(config, b.spec.argv, b.spec.cwd)
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


@dataclass(frozen=True)
class Commitment:
    """A league's commitment as written: its file's digest and contents."""

    digest: str
    data: dict[str, Any]
    new: bool  # written by this run

    @property
    def mix(self) -> list[str]:
        """The contributions the league mixes into its deals."""
        return list(self.data.get("mix", []))


def commitment_data(
    config: LeagueConfig, deal_key: bytes, *, public_key: str | None, recorded: int
) -> dict[str, Any]:
    """The contents of a league's commitment."""
    data: dict[str, Any] = {
        "commitment": FORMAT,
        "league": league_terms(config),
        "deal_key_sha256": key_digest(deal_key),
        "deals_from": DEALS_FROM,
        "mix": list(config.mix),
        "reveal": config.reveal,
        "public_key": public_key,
        "made": now_iso(),
    }
    if recorded:  # a league older than commitments: they came after some of its games
        data["games_before"] = recorded
    return data


def read_commitment(out: Path) -> Commitment | None:
    """The commitment in `out`, if there is one; `CommitmentError` if it is not readable."""
    path = out / COMMITMENT
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CommitmentError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CommitmentError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("commitment") != FORMAT:
        raise CommitmentError(f"{path}: not a commitment of format {FORMAT}")
    return Commitment(sha256_text(raw), data, new=False)


def ensure_commitment(
    config: LeagueConfig, deal_key: bytes, *, public_key: str | None, recorded: int
) -> Commitment:
    """The league's commitment: the one in its folder, checked against the league and
    its key, or a new one written there. `CommitmentError` when the file in the folder
    commits to other terms or another key."""
    out = config.out
    old = read_commitment(out)
    path = out / COMMITMENT
    if old is None:
        data = commitment_data(config, deal_key, public_key=public_key, recorded=recorded)
        raw = file_bytes(data)
        write_file(path, raw)
        return Commitment(sha256_text(raw), data, new=True)
    if old.data.get("deal_key_sha256") != key_digest(deal_key):
        raise CommitmentError(f"{path} commits to another deal key than this league's ledger")
    terms, before = _without_files(league_terms(config)), _without_files(old.data.get("league", {}))
    if before != terms:
        changed = sorted(k for k in set(terms) | set(before) if before.get(k) != terms.get(k))
        raise CommitmentError(
            f"{path} commits to other terms ({', '.join(changed)} changed since it was made); "
            "a league may not change after its commitment: use another --out folder"
        )
    for key, now in (
        ("mix", list(config.mix)),
        ("reveal", config.reveal),
        ("public_key", public_key),
    ):
        if old.data.get(key) != now:
            raise CommitmentError(
                f"{path} commits to {key} = {json.dumps(old.data.get(key))}, and the league "
                f"now says {json.dumps(now)}; use another --out folder"
            )
    return old


def _without_files(terms: dict[str, Any]) -> dict[str, Any]:
    """The terms but for the digests of the bots' files: a bot fixed after a failed
    start plays on under the commitment (`changed_files` names it)."""
    bots = [{k: v for k, v in b.items() if k != "files"} for b in terms.get("bots", [])]
    return {**terms, "bots": bots}


def changed_files(commitment: Commitment, config: LeagueConfig) -> list[str]:
    """The bots whose files differ from the ones the commitment names."""
    now = {b["name"]: b.get("files") for b in league_terms(config)["bots"]}
    return [
        str(b["name"])
        for b in commitment.data.get("league", {}).get("bots", [])
        if b.get("files") != now.get(b["name"])
    ]


def mixed_key(deal_key: bytes, contributions: dict[str, Any] | None) -> bytes:
    """The key the deals are drawn from: the deal key itself, or with contributions
    HMAC-SHA256(deal key, "mix/" + their canonical JSON)."""
    if not contributions:
        return deal_key
    return hmac.new(deal_key, b"mix/" + canonical(contributions), hashlib.sha256).digest()


def contributions_data(commitment: str, contributions: dict[str, Any]) -> dict[str, Any]:
    """The contents of OUT/contributions.json."""
    return {"commitment": commitment, "contributions": contributions, "made": now_iso()}


def write_contributions(out: Path, commitment: str, contributions: dict[str, Any]) -> None:
    """Log the contributions beside the commitment."""
    write_file(out / CONTRIBUTIONS, file_bytes(contributions_data(commitment, contributions)))


def reveal_data(commitment: str, deal_key: bytes, bot_seed_key: bytes) -> dict[str, Any]:
    """The contents of OUT/reveal.json."""
    return {
        "commitment": commitment,
        "deal_key": deal_key.hex(),
        "bot_seed_key": bot_seed_key.hex(),
        "revealed": now_iso(),
    }


def write_reveal(out: Path, commitment: str, deal_key: bytes, bot_seed_key: bytes) -> Path:
    """Publish the league's keys (only once every game is recorded: the caller checks)."""
    path = out / REVEAL
    write_file(path, file_bytes(reveal_data(commitment, deal_key, bot_seed_key)))
    return path


def commit_league(config: LeagueConfig, public_key: str | None) -> Commitment:
    """`referee commit`: make the league's keys and its commitment without playing a game
    (`LedgerError` for a folder of another league). Run again, it gives the same one."""
    from .ledger import Ledger

    ledger = Ledger(config.out / "league.db")
    try:
        ledger.claim(config.fingerprint(), resume=True)
        ledger.bot_seed_key(config.bot_seed_key)
        key = ledger.deal_key(config.deal_key)
        recorded = ledger.count()
        pledge = ensure_commitment(config, key, public_key=public_key, recorded=recorded)
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
    from .ledger import Ledger

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
