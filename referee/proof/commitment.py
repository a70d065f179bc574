"""Deals nobody could have chosen: the league's commitment, the deals' seeds it fixes,
the contributions mixed into its deals, and the reveal of its key.

**Commitment.** Before its first game a league writes `OUT/commitment.json`: what the
league is (rules, clocks, bots and their commands, with the SHA-256 of each file a
command names, the whole schedule, the format: its terms, which `referee.league.terms`
gathers) and the SHA-256 of its secret deal key, and with `[league] allow_updates`
that the bots' files may change after it (every game's log names the files its bots
started with). Its digest is the SHA-256 of the file's bytes (`sha256sum commitment.json`
gives it too), printed when the league starts, written in every game log's header,
on the site and in the standings. An organiser publishes it before the games: from
then on the deals are fixed, and the key that fixes them cannot be swapped unseen:
the seed of each deal at each table is an HMAC of the key (`deal_seed`).

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
check the key against the commitment and re-derive every deal (`referee.proof.verify`).

Every file here is JSON written with sorted keys and one-space indents, synced, and
renamed into place: whole or absent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..game.match import SEED_BITS
from ..logs.gamelog import now_iso, sha256_text
from ..logs.outputs import write_atomic

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


class CommitmentError(Exception):
    """A commitment, contribution, key or reveal that does not fit the league; one line:
    the output folder does not fit the league run in it."""


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
    argv: tuple[str, ...] | list[str],
    cwd: str | None,
    home: Path,
    cache: FileCache | None = None,
) -> dict[str, str]:
    """The SHA-256 of each file a bot's command names (its program, its script), by the
    word of the command that names it: the version of the bot, as far as the referee can
    see it; a word that is not an absolute path is under `cwd`, or without one under
    `home` (the league file's folder). The commitment holds them, and each game's log
    those its bots started with. `cache` keeps digests by the file's path, inode, size
    and modification time, so a file hashed once is not read again until it changes."""
    found: dict[str, str] = {}
    base = Path(cwd) if cwd else home
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
    terms: dict[str, Any],
    deal_key: bytes,
    *,
    mix: Sequence[str],
    reveal: str,
    public_key: str | None,
    recorded: int,
) -> dict[str, Any]:
    """The contents of a league's commitment to its `terms`."""
    data: dict[str, Any] = {
        "commitment": FORMAT,
        "league": terms,
        "deal_key_sha256": key_digest(deal_key),
        "deals_from": DEALS_FROM,
        "mix": list(mix),
        "reveal": reveal,
        "public_key": public_key,
        "made": now_iso(),
    }
    if recorded:  # a league older than commitments: they came after some of its games
        data["games_before"] = recorded
    return data


def read_commitment(out: Path, fmt: int | str = FORMAT) -> Commitment | None:
    """The commitment in `out`, if there is one; `CommitmentError` if it is not readable
    or not of format `fmt` (a league's, or an event's: `referee.event.terms`)."""
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
    if not isinstance(data, dict) or data.get("commitment") != fmt:
        raise CommitmentError(f"{path}: not a commitment of format {fmt}")
    return Commitment(sha256_text(raw), data, new=False)


def ensure_commitment(out: Path, wanted: dict[str, Any]) -> Commitment:
    """The league's commitment: the one in its output folder `out`, checked against the
    one the league would make now (`wanted`, its `commitment_data`: its terms, its key,
    what it mixes, reveals and signs with), or `wanted`, written there.
    `CommitmentError` when the file in the folder commits to other terms or another key."""
    old = read_commitment(out)
    path = out / COMMITMENT
    if old is None:
        raw = file_bytes(wanted)
        write_file(path, raw)
        return Commitment(sha256_text(raw), wanted, new=True)
    if old.data.get("deal_key_sha256") != wanted["deal_key_sha256"]:
        raise CommitmentError(f"{path} commits to another deal key than this league's ledger")
    now, before = _without_files(wanted["league"]), _without_files(old.data.get("league", {}))
    if before != now:
        changed = sorted(k for k in set(now) | set(before) if before.get(k) != now.get(k))
        raise CommitmentError(
            f"{path} commits to other terms ({', '.join(changed)} changed since it was made); "
            "a league may not change after its commitment: use another --out folder"
        )
    for key in ("mix", "reveal", "public_key"):
        said = wanted[key]
        if old.data.get(key) != said:
            raise CommitmentError(
                f"{path} commits to {key} = {json.dumps(old.data.get(key))}, and the league "
                f"now says {json.dumps(said)}; use another --out folder"
            )
    return old


def _without_files(terms: dict[str, Any]) -> dict[str, Any]:
    """The terms but for the digests of the bots' files: a bot fixed after a failed
    start plays on under the commitment (`changed_files` names it)."""
    bots = [{k: v for k, v in b.items() if k != "files"} for b in terms.get("bots", [])]
    return {**terms, "bots": bots}


def changed_files(commitment: Commitment, terms: dict[str, Any]) -> list[str]:
    """The bots whose files differ from the ones the commitment names, by the league's
    `terms` now."""
    now = {b["name"]: b.get("files") for b in terms["bots"]}
    return [
        str(b["name"])
        for b in commitment.data.get("league", {}).get("bots", [])
        if b.get("files") != now.get(b["name"])
    ]


def deal_seed(key: bytes, league_seed: int, deal: int, table: int) -> int:
    """The game seed of deal `deal` at table `table`: 128 bits, secret while `key` is."""
    message = f"league/{league_seed}/deal/{deal}/table/{table}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[: SEED_BITS // 8], "big")


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
