"""The checks that the deals are the ones nobody could have chosen (`referee verify`):
the commitment is the one published, and made before the games; the revealed deal key
is the one it commits to; the contributions it names were mixed in, as logged; and
every game sits the seats the commitment scheduled, with the seed the key derives, none
missing from a league that ended.
"""

from __future__ import annotations

import json

from .commitment import COMMITMENT, CONTRIBUTIONS, REVEAL, key_digest, mixed_key
from .folder import Folder, Game, VerifyError, read_json
from .results import RESULTS


class DealChecks(Folder):
    """The checks of the commitment, the key, the contributions and the schedule."""

    def check_commitment(self) -> None:
        digest = self.commitment.digest
        if self.expected is not None and self.expected != digest:
            self.report.add(
                "commitment",
                f"{COMMITMENT} is {digest}, not the published {self.expected}",
                "",
            )
            return
        before = self.commitment.data.get("games_before")
        if before:
            self.report.add(
                "commitment",
                f"{digest} was made after {before} games had been played, so it fixed "
                "nothing of them",
                "",
            )
            return
        said = "the published one" if self.expected else "not compared: give --commitment"
        self.report.add("commitment", None, f"{digest} ({said})")

    def check_key(self) -> None:
        reveal = read_json(self.folder / REVEAL)
        committed = self.commitment.data.get("deal_key_sha256")
        if reveal is None:
            stored = self.meta.get("deal_key")
            if stored is None:
                self.report.add(
                    "key",
                    f"the deal key is not revealed ({REVEAL} is missing: `referee reveal`); "
                    "the deals cannot be re-derived",
                    "",
                )
                return
            key = _hex_key(stored, "league.db: deal_key")
            where = "taken from the ledger: not revealed yet"
            seeds = self.meta.get("bot_seed_key")
            self.bot_seed_key = _hex_key(seeds, "league.db: bot_seed_key") if seeds else None
        else:
            self.covered.add(REVEAL)
            key = _hex_key(reveal.get("deal_key"), f"{REVEAL}: deal_key")
            where = f"revealed in {REVEAL}"
            if reveal.get("bot_seed_key"):
                self.bot_seed_key = _hex_key(reveal["bot_seed_key"], f"{REVEAL}: bot_seed_key")
            if reveal.get("commitment") != self.commitment.digest:
                self.report.add("key", f"{REVEAL} names another commitment", "")
                return
        if key_digest(key) != committed:
            self.report.add(
                "key",
                f"the deal key {where} hashes to {key_digest(key)}; the commitment says "
                f"{committed}",
                "",
            )
            return
        self.deal_key = key
        self.report.add("key", None, f"the deal key ({where}) is the one committed to")

    def check_contributions(self) -> None:
        mix = self.commitment.mix
        if self.deal_key is None:
            return
        if not mix:
            self.key = self.deal_key
            return
        logged = read_json(self.folder / CONTRIBUTIONS)
        self.covered.add(CONTRIBUTIONS)
        if logged is None:
            self.report.add(
                "contributions", f"the league mixes {mix}; {CONTRIBUTIONS} is missing", ""
            )
            return
        given = logged.get("contributions", {})
        if logged.get("commitment") != self.commitment.digest:
            self.report.add("contributions", f"{CONTRIBUTIONS} names another commitment", "")
            return
        wanted = {"beacon": "beacon", "entrants": "nonces"}
        lacking = [k for k in mix if wanted[k] not in given]
        if lacking:
            self.report.add("contributions", f"{CONTRIBUTIONS} lacks {', '.join(lacking)}", "")
            return
        if "contributions" in self.meta and json.loads(self.meta["contributions"]) != given:
            self.report.add(
                "contributions", f"{CONTRIBUTIONS} differs from the ledger's contributions", ""
            )
            return
        self.key = mixed_key(self.deal_key, given)
        parts = []
        if "beacon" in given:
            parts.append(f"beacon {json.dumps(given['beacon'])}")
        if "nonces" in given:
            absent = [n for n, v in given["nonces"].items() if v is None]
            parts.append(
                f"{len(given['nonces'])} entrants' nonces"
                + (f" ({', '.join(absent)} sent none)" if absent else "")
            )
        self.report.add("contributions", None, "mixed into the deals: " + "; ".join(parts))

    def check_schedule(self, games: list[Game]) -> None:
        scheduled = self._scheduled()
        seen: set[int] = set()
        for g in games:
            want = scheduled(g.index)
            if want is None:
                self.report.add("schedule", f"{g.id}: no game {g.index + 1} was scheduled", "")
                return
            if f"g{g.index + 1:05d}" != g.id:
                self.report.add("schedule", f"{g.id}: recorded as game {g.index + 1}", "")
                return
            if g.index in seen:
                self.report.add("schedule", f"{g.id}: recorded twice", "")
                return
            seen.add(g.index)
            unit, table, deal, rotation, seats = want
            got = (g.unit, g.deal, g.rotation, g.seats)
            if got != (unit, deal, rotation, seats):
                self.report.add(
                    "schedule",
                    f"{g.id}: seats {g.seats} (unit {g.unit}, deal {g.deal}, rotation "
                    f"{g.rotation}); the commitment scheduled {seats} (unit {unit}, deal "
                    f"{deal}, rotation {rotation})",
                    "",
                )
                return
            seed = self._seed(deal, table)
            if g.seed is not None and seed is not None and g.seed != seed:
                self.report.add(
                    "schedule", f"{g.id}: the ledger's seed is not the one the key derives", ""
                )
                return
        missing = self._missing(seen)
        if missing:
            self.report.add("schedule", missing, "")
            return
        keyed = "their seeds derived from the key" if self.key is not None else "seeds unchecked"
        self.report.add("schedule", None, f"{len(games)} games as scheduled, {keyed}")

    def _missing(self, seen: set[int]) -> str | None:
        """A game the results should hold but do not."""
        listed = {int(e["index"]): str(e["id"]) for e in (self.results or {}).get("games", [])}
        for index, game_id in sorted(listed.items()):
            if index not in seen:
                return f"{game_id}: in {RESULTS} but not in the ledger"
        if self.results is not None and self.results.get("ended"):
            if self.terms.get("match") is None:
                total = len(self.terms.get("schedule", []))
                for index in range(total):
                    if index not in seen:
                        return (
                            f"g{index + 1:05d}: scheduled, and not among the results of a "
                            "league that ended"
                        )
            elif seen and sorted(seen) != list(range(max(seen) + 1)):
                first = next(i for i in range(max(seen) + 1) if i not in seen)
                return f"g{first + 1:05d}: missing from the results of a match that ended"
        return None


def _hex_key(value: object, what: str) -> bytes:
    try:
        return bytes.fromhex(str(value))
    except ValueError:
        raise VerifyError(f"{what}: not hexadecimal") from None
