"""The checks of the results as published (`referee verify`): results.json names this
league, its commitment and signing key and lists its games; the ledger holds the same
games; results.json and every checkpoint are signed by the key the commitment names,
and every checkpoint's chain is the chain of the results' first games; and each
receipt a bot kept is signed by that key, and its game still as the results hold it.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path

import msgspec

from protocol import messages as m

from .folder import Folder, Game, VerifyError, read_json
from .keys import ProofError
from .results import CHECKPOINTS, RESULTS, SIGNATURE_SUFFIX, chain


class ResultChecks(Folder):
    """The checks of results.json, the ledger, the signatures and the receipts."""

    def check_results(self, games: list[Game]) -> None:
        """results.json's own lines: its commitment, league, count, plan and signer."""
        if self.results is None:
            return
        self.covered.add(RESULTS)
        results, terms = self.results, self.terms
        allowed = bool(terms.get("allow_updates"))
        listed = len(results.get("games", []))
        key_id = self.public.id_hex if self.public is not None else None
        problems = [
            (
                results.get("commitment") != self.commitment.digest,
                f"{RESULTS} names commitment {results.get('commitment')}, not this one",
            ),
            (
                results.get("league") != terms.get("name"),
                f"{RESULTS} is the results of league {json.dumps(results.get('league'))}; "
                f"the commitment's is {json.dumps(terms.get('name'))}",
            ),
            (
                results.get("recorded") != listed,
                f"{RESULTS} says {results.get('recorded')} games were recorded and lists {listed}",
            ),
            (
                terms.get("match") is None
                and results.get("scheduled") != len(terms.get("schedule", [])),
                f"{RESULTS} says {results.get('scheduled')} games were scheduled; the "
                f"commitment schedules {len(terms.get('schedule', []))}",
            ),
            (
                results.get("key_id") != key_id,
                f"{RESULTS} names signing key {results.get('key_id')}; the commitment's is "
                f"{key_id}",
            ),
            (
                bool(results.get("allow_updates", False)) != allowed,
                f"{RESULTS} says allow_updates = {json.dumps(results.get('allow_updates'))}; "
                f"the commitment says {json.dumps(allowed)}",
            ),
        ]
        problem = next((said for wrong, said in problems if wrong), None)
        allows = "; the commitment allows updates" if allowed else ""
        self.report.add(
            "results", problem, f"{RESULTS} is this league's, with the {listed} games{allows}"
        )

    def check_ledger(self) -> None:
        if self.ledger is not None:
            self.covered.add("league.db")
        if self.ledger is None or self.results is None:
            if self.ledger is not None:
                self.report.add("ledger", f"{RESULTS} is missing", "")
            return
        listed = {str(e["id"]): Game.of_entry(e) for e in self.results.get("games", [])}
        rows = {r.game_id: Game.of_record(r) for r in self.ledger}
        for game_id, row in sorted(rows.items()):
            entry = listed.get(game_id)
            if entry is None:
                self.report.add("ledger", f"{game_id}: in the ledger, not in {RESULTS}", "")
                return
            if entry.same() != row.same():
                diff = [
                    name
                    for name, a, b in zip(_SAME, entry.same(), row.same(), strict=True)
                    if a != b
                ]
                self.report.add(
                    "ledger", f"{game_id}: the ledger and {RESULTS} differ in {', '.join(diff)}", ""
                )
                return
        for game_id in sorted(listed):
            if game_id not in rows:
                self.report.add("ledger", f"{game_id}: in {RESULTS}, not in the ledger", "")
                return
        self.report.add("ledger", None, f"the ledger and {RESULTS} hold the same {len(rows)} games")

    def check_signatures(self, games: list[Game]) -> None:
        links = chain(self.commitment.digest, ((g.id, g.log_sha256) for g in games))
        checkpoints = sorted((self.folder / CHECKPOINTS).glob("*.json"))
        for path in checkpoints:
            problem = self._checkpoint(path, links)
            if problem is not None:
                self.report.add("checkpoints", problem, "")
                break
        else:
            if checkpoints:
                self.report.add(
                    "checkpoints",
                    None,
                    f"{len(checkpoints)} checkpoints, each a prefix of the results' chain",
                )
        if self.results is not None and self.results.get("chain") != links[-1]:
            self.report.add("signatures", f"{RESULTS}'s chain is not the chain of its games", "")
            return
        if self.public is None:
            self.report.add("signatures", None, "the league signs nothing (no [league] sign)")
            return
        if self.results is None:
            self.report.add("signatures", f"{RESULTS} is missing", "")
            return
        problem = self._signed(self.folder / RESULTS)
        if problem is not None:
            self.report.add("signatures", problem, "")
            return
        self.report.add("signatures", None, f"{RESULTS} is signed by key {self.public.id_hex}")

    def _signed(self, path: Path) -> str | None:
        assert self.public is not None
        signature = path.with_name(path.name + SIGNATURE_SUFFIX)
        self.covered.add(signature.relative_to(self.folder).as_posix())
        try:
            text = signature.read_text(encoding="utf-8")
        except OSError:
            return f"{signature.name} is missing"
        try:
            self.public.verify_minisig(path.read_bytes(), text)
        except ProofError as exc:
            return f"{path.name}: {exc}"
        return None

    def _checkpoint(self, path: Path, links: list[str]) -> str | None:
        self.covered.add(path.relative_to(self.folder).as_posix())
        data = read_json(path)
        assert data is not None
        if data.get("commitment") != self.commitment.digest:
            return f"{path.name} names another commitment"
        n = int(data.get("games", -1))
        if not 0 <= n < len(links):
            return f"{path.name} is after {n} games; the results hold {len(links) - 1}"
        if data.get("chain") != links[n]:
            return (
                f"{path.name}: its first {n} games differ from the results' first {n} "
                "(a game changed, or the league was played again)"
            )
        if self.public is not None:
            return self._signed(path)
        return None

    def check_receipt(self, path: Path, games: list[Game]) -> None:
        name = f"receipt {path.name}"
        try:
            receipt = load_receipt(path)
        except VerifyError as exc:
            self.report.add(name, str(exc), "")
            return
        if receipt.league != self.commitment.digest:
            self.report.add(name, f"{receipt.game}: from another league ({receipt.league})", "")
            return
        if self.public is not None:
            if receipt.signature is None:
                self.report.add(name, f"{receipt.game}: not signed", "")
                return
            try:
                signature = base64.b64decode(receipt.signature, validate=True)
            except (binascii.Error, ValueError):
                self.report.add(name, f"{receipt.game}: its signature is not base64", "")
                return
            if not self.public.verify(m.receipt_bytes(receipt), signature):
                self.report.add(name, f"{receipt.game}: not signed by the organiser's key", "")
                return
        game = next((g for g in games if g.id == receipt.game), None)
        if game is None:
            self.report.add(name, f"{receipt.game}: no longer among the results", "")
            return
        for what, said, now in (
            ("log digest", receipt.log_sha256, game.log_sha256),
            ("scores", receipt.scores, game.scores),
            ("ranks", receipt.ranks, game.ranks),
            (
                "seat",
                receipt.name,
                game.seats[receipt.seat] if receipt.seat < len(game.seats) else None,
            ),
        ):
            if said != now:
                self.report.add(
                    name,
                    f"{receipt.game}: the receipt's {what} is {said}; the results now say {now}",
                    "",
                )
                return
        signed = "signed, " if self.public is not None else ""
        self.report.add(
            name, None, f"{receipt.game} ({receipt.name}, seat {receipt.seat}): {signed}as recorded"
        )


_SAME = (
    "id",
    "index",
    "unit",
    "deal",
    "rotation",
    "seats",
    "scores",
    "ranks",
    "forfeited",
    "log digest",
    "record order",
)


def load_receipt(path: Path) -> m.Receipt:
    """A receipt kept by a bot: the receipt object, or the whole `game_end` line."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise VerifyError(f"{path}: cannot be read as JSON: {exc}") from None
    if isinstance(data, dict) and data.get("type") == "game_end":
        data = data.get("receipt")
    try:
        return msgspec.convert(data, m.Receipt)
    except msgspec.ValidationError as exc:
        raise VerifyError(f"{path}: not a receipt: {exc}") from None
