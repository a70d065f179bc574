"""Results that cannot be edited unseen: the bots' receipts, `results.json`, and
signed checkpoints.

Every game log ends with a footer holding the SHA-256 of the bytes before it, and
the ledger keeps the SHA-256 of the whole log (`log_sha256` of its record: `Recorded`
here, `referee.league.records.Record` there) and the order games were recorded in
(`seq`). From them:

- **The chain.** `c0 = SHA-256("chain/" + commitment)`, and for each game in record
  order `c = SHA-256(c_before + ":" + game id + ":" + log digest)` (hex digests as
  text). A checkpoint holding `c` after n games fixes those n games, their logs and
  their order: a league quietly played again, or a game swapped, gives another chain.
- **Checkpoints.** With `--report-every N`, every N games `OUT/checkpoints/NNNNNN.json`
  holds the count and the chain so far (and `.minisig`, signed, when the league signs).
- **results.json.** At the end of a run: every game (id, seats, result, log digest,
  record order), the chain, the standings, the commitment, whether the bots' files
  could change after it (`allow_updates`); `results.json.minisig`
  beside it when the league signs (`[league] sign`), which `minisign -Vm` checks too.
- **Receipts.** Each bot is sent its game's record in `game_end` (`protocol.Receipt`),
  signed when the league signs; an entrant keeps them, and `referee verify --receipt`
  shows whether the published results still hold that game as it was.

Signatures come from `keys`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from protocol import messages as m

from ..logs.gamelog import now_iso
from .commitment import file_bytes, write_file

if TYPE_CHECKING:
    from .keys import SigningKey

RESULTS = "results.json"
CHECKPOINTS = "checkpoints"
SIGNATURE_SUFFIX = ".minisig"
FORMAT = 1


class Recorded(Protocol):
    """A game as the league's ledger records it (`referee.league.records.Record`): what
    the results list of it, and its seed."""

    @property
    def idx(self) -> int: ...
    @property
    def game_id(self) -> str: ...
    @property
    def unit(self) -> int: ...
    @property
    def deal(self) -> int: ...
    @property
    def rotation(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def seats(self) -> list[str]: ...
    @property
    def scores(self) -> list[int]: ...
    @property
    def ranks(self) -> list[int]: ...
    @property
    def forfeited(self) -> list[bool]: ...
    @property
    def log_sha256(self) -> str: ...
    @property
    def seq(self) -> int: ...


def chain_start(commitment: str) -> str:
    """The chain before any game."""
    return hashlib.sha256(f"chain/{commitment}".encode()).hexdigest()


def chain_next(before: str, game_id: str, log_sha256: str) -> str:
    """The chain after one more game."""
    return hashlib.sha256(f"{before}:{game_id}:{log_sha256}".encode()).hexdigest()


def chain(commitment: str, games: Iterable[tuple[str, str]]) -> list[str]:
    """The chain after each game of `games` (id, log digest), in record order; the first
    element is the chain before any game."""
    links = [chain_start(commitment)]
    for game_id, digest in games:
        links.append(chain_next(links[-1], game_id, digest))
    return links


def in_record_order(records: Iterable[Recorded]) -> list[Recorded]:
    """Games in the order they were recorded."""
    return sorted(records, key=lambda r: (r.seq, r.idx))


@dataclass(frozen=True)
class Signer:
    """What a league's results are tied to: its commitment, and its signing key if it
    signs."""

    commitment: str
    key: SigningKey | None = None

    @property
    def key_id(self) -> str | None:
        """The signing key's id as receipts and results name it (hex), if any."""
        return self.key.public.id_hex if self.key is not None else None

    def receipt(
        self, game_id: str, seat: int, name: str, scores: list[int], ranks: list[int], log: str
    ) -> m.Receipt:
        """One seat's receipt of a game whose log has digest `log`."""
        receipt = m.Receipt(
            league=self.commitment,
            game=game_id,
            seat=seat,
            name=name,
            scores=scores,
            ranks=ranks,
            log_sha256=log,
            key_id=self.key_id,
        )
        if self.key is None:
            return receipt
        signature = self.key.sign(m.receipt_bytes(receipt))
        return msgspec.structs.replace(receipt, signature=base64.b64encode(signature).decode())

    def sign_file(self, path: Path, trusted: str) -> Path | None:
        """Write `path`'s detached signature beside it (`.minisig`), if the league signs."""
        if self.key is None:
            return None
        from .keys import write_minisig

        return write_minisig(path, self.key, trusted)


def game_entry(rec: Recorded) -> dict[str, Any]:
    """A game as results.json lists it."""
    return {
        "id": rec.game_id,
        "index": rec.idx,
        "unit": rec.unit,
        "deal": rec.deal,
        "rotation": rec.rotation,
        "seats": list(rec.seats),
        "scores": list(rec.scores),
        "ranks": list(rec.ranks),
        "forfeited": list(rec.forfeited),
        "log_sha256": rec.log_sha256,
        "seq": rec.seq,
    }


def results_data(
    name: str,
    signer: Signer,
    records: Iterable[Recorded],
    standings: dict[str, Any],
    *,
    scheduled: int | None,
    ended: bool,
    allow_updates: bool = False,
) -> dict[str, Any]:
    """The contents of results.json; `allow_updates`: the league let its bots' files
    change after the commitment (`[league] allow_updates`, which the commitment says)."""
    ordered = in_record_order(records)
    links = chain(signer.commitment, ((r.game_id, r.log_sha256) for r in ordered))
    return {
        "results": FORMAT,
        "league": name,
        "commitment": signer.commitment,
        "key_id": signer.key_id,
        "scheduled": scheduled,
        "ended": ended,
        "allow_updates": allow_updates,
        "recorded": len(ordered),
        "chain": links[-1],
        "games": [game_entry(r) for r in ordered],
        "standings": standings,
        "written": now_iso(),
    }


def write_results(out: Path, signer: Signer, data: dict[str, Any]) -> Path:
    """results.json (and its signature, if the league signs) in `out`. The old signature
    goes first, then the file is replaced, then the new signature is written: a reader
    may find the new file not yet signed for a moment, never one beside another's
    signature."""
    path = out / RESULTS
    raw = file_bytes(data)
    trusted = f"results of {data['league']}: {data['recorded']} games, chain {data['chain']}"
    path.with_name(path.name + SIGNATURE_SUFFIX).unlink(missing_ok=True)
    write_file(path, raw)
    signer.sign_file(path, trusted)
    return path


def checkpoint_data(signer: Signer, games: int, link: str) -> dict[str, Any]:
    """The contents of a checkpoint after `games` games."""
    return {
        "checkpoint": FORMAT,
        "commitment": signer.commitment,
        "key_id": signer.key_id,
        "games": games,
        "chain": link,
        "written": now_iso(),
    }


def write_checkpoint(out: Path, signer: Signer, games: int, link: str) -> Path:
    """A checkpoint after `games` games whose chain is `link`, signed if the league signs."""
    folder = out / CHECKPOINTS
    folder.mkdir(exist_ok=True)
    path = folder / f"{games:06d}.json"
    write_file(path, file_bytes(checkpoint_data(signer, games, link)))
    signer.sign_file(path, f"checkpoint of {signer.commitment}: {games} games, chain {link}")
    return path


@dataclass
class ChainState:
    """The chain of a running league: the games recorded so far and the last link."""

    games: int
    last: str

    @classmethod
    def of(cls, commitment: str, records: Iterable[Recorded]) -> ChainState:
        """The chain of the games already recorded (a resumed league)."""
        ordered = in_record_order(records)
        links = chain(commitment, ((r.game_id, r.log_sha256) for r in ordered))
        return cls(len(ordered), links[-1])

    def add(self, game_id: str, log_sha256: str) -> None:
        """One more game recorded."""
        self.games += 1
        self.last = chain_next(self.last, game_id, log_sha256)
