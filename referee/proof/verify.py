"""`referee verify`: check a league's results against its commitment, from its output
folder or from its published site, as any entrant can.

Each check gives one line, `ok` or `FAIL`, and a failing check names the first game
where something differs and what:

- **commitment**: `commitment.json` is there (and is the one published, with
  `--commitment`);
- **key**: the revealed deal key (`reveal.json`) is the one committed to (in an output
  folder before the reveal, the ledger's key, and the line says so);
- **contributions**: what `mix` names was mixed in, as logged;
- **schedule**: every game sits the seats the commitment scheduled, with the deal seed
  derived from the key and the contributions, and none is missing from a league that
  ended;
- **logs**: every game's log is there, is the log recorded (its digest), has not been
  edited since it was written (the footer's digest of the lines before it: a latency,
  a fault), names the commitment and its seed, re-derives with the engine, and ends
  with the result recorded;
- **results**: results.json names this commitment, league, signing key and
  `allow_updates`, and as many games as it lists;
- **bots**: each game's log says which files each bot the referee started played
  with; they are the ones the commitment names, unless it allows updates
  (`[league] allow_updates`), and then the games played with others are listed;
- **ledger** (an output folder): the ledger and results.json hold the same games;
- **standings**: the standings are the ones the games give, their faults, latencies,
  failed starts and decision time the ones the logs give;
- **published**: standings.json (in an output folder and on a site) is those
  standings too, and standings.csv and standings.md are what the referee writes
  from it, byte for byte;
- **signatures**: results.json and every checkpoint are signed by the key the
  commitment names, and every checkpoint's chain is the chain of the results' first
  games (a league played again shows here);
- **receipts** (`--receipt`): each receipt is signed by that key, and the results still
  hold its game as it was.

Then a `not covered:` line names every file of the folder no check read (the site's
pages and replay data, the chart, the bots' stderr, a file added by hand) and what
the standings say on the organiser's word alone (the sandbox, the transport, the
clocks' threshold, a match's test), so that nothing passes unsaid. What it cannot
check is said in docs/proof.md: the organiser saw the deals while the league ran,
and latencies and faults are measured by the organiser's machine.

The checks are in `verify_deals` (commitment, key, contributions, schedule),
`verify_logs` (logs, bots), `verify_results` (results, ledger, signatures, receipts)
and `verify_standings` (standings, published), each a part of the folder as read
(`folder.Folder`); `Verifier` puts them together and runs them in the order above.
The standings are re-derived with the league's own code, which the caller hands in
(`referee.league.restate`): proof imports nothing of the league.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from .folder import Game, Report, Restater
from .verify_deals import DealChecks
from .verify_logs import LogChecks
from .verify_results import ResultChecks
from .verify_standings import StandingChecks

_WHY = {
    "standings.svg": " (a chart of the standings)",
    "games/": ": the replays' data",
    "assets/": ": the pages' scripts and styles",
    "stderr/": ": the bots' stderr",
    "logs/": ": logs of no game of the results",
    "site/": ": the site, checked on its own",
    ".site-cache/": ": the site builder's cache",
}


class Verifier(DealChecks, LogChecks, ResultChecks, StandingChecks):
    """The checks of one folder: a league's output folder (with its ledger) or its site."""

    def run(self, receipts: list[Path]) -> Report:
        """Every check, in order. A file whose shape is not the one the referee writes
        (a key missing, a number that is text: edited by hand, or by someone hiding an
        edit) fails the check that reads it, with the file named, and the others go on."""
        self._guarded("commitment", self.check_commitment)
        self._guarded("key", self.check_key)
        self._guarded("contributions", self.check_contributions)
        games: list[Game] = []
        if not self._guarded("results", lambda: games.extend(self.games())):
            return self.report
        self._guarded("schedule", lambda: self.check_schedule(games))
        self._guarded("logs", lambda: self.check_logs(games))
        self._guarded("results", lambda: self.check_results(games))
        self._guarded("bots", lambda: self.check_bots(games))
        self._guarded("ledger", self.check_ledger)
        self._guarded("standings", lambda: self.check_standings(games))
        self._guarded("published", lambda: self.check_published(games))
        self._guarded("signatures", lambda: self.check_signatures(games))
        for path in receipts:
            self._guarded(f"receipt {path.name}", partial(self.check_receipt, path, games))
        self.report.uncovered = self.not_covered()
        return self.report

    def _guarded(self, name: str, check: Callable[[], object]) -> bool:
        """Run one check; False, and a failed line, when a file it read is malformed."""
        try:
            check()
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            self.report.add(
                name,
                f"a file of the league is not as the referee writes it ({type(exc).__name__}: "
                f"{what}); the results cannot be checked against it",
                "",
            )
            return False
        return True

    def not_covered(self) -> list[str]:
        """What the folder publishes that no check re-derived: files (grouped by folder,
        pages together) and what the results say on the organiser's word alone."""
        loose: list[str] = []
        folders: dict[str, int] = {}
        pages = 0
        db = "league.db" in self.covered
        for path in sorted(p for p in self.folder.rglob("*") if p.is_file()):
            rel = path.relative_to(self.folder).as_posix()
            if rel in self.covered or (db and rel.startswith("league.db-")):
                continue
            top, _, rest = rel.partition("/")
            if rest:
                folders[top] = folders.get(top, 0) + 1
            elif rel.endswith(".html"):
                pages += 1
            else:
                loose.append(rel + _WHY.get(rel, ""))
        items = [f"{pages} page{'s' if pages > 1 else ''} (*.html)"] if pages else []
        items += loose
        items += [
            f"{top}/ ({n} file{'s' if n > 1 else ''}{_WHY.get(top + '/', '')})"
            for top, n in sorted(folders.items())
        ]
        if self.unrecorded:
            items.append(
                f"the files of {self.unrecorded} seats whose logs do not name them (written "
                "by an older referee)"
            )
        tcp = [str(b["name"]) for b in self.terms.get("bots", []) if b.get("files") is None]
        if tcp:
            items.append(f"the files of the tcp bots ({', '.join(tcp)}): their own")
        stated = (self.results or {}).get("standings")
        if isinstance(stated, dict):
            said = [k for k in ("sandbox", "transport") if stated.get(k) is not None]
            said.append("the clocks' warn_at")
            if stated.get("match") is not None:
                said.append("the match's test")
            items.append(f"the standings' {', '.join(said)} (the organiser's word)")
        return items


def verify_folder(
    folder: Path,
    restate: Restater,
    *,
    expected: str | None = None,
    receipts: list[Path] | None = None,
) -> Report:
    """Every check of `folder`, re-deriving with the league's code `restate`
    (`VerifyError` when it holds no league to check)."""
    return Verifier(folder, restate, expected=expected).run(list(receipts or []))


def digest_of(path: Path) -> str:
    """`sha256:` + hex of a file, as commitments are named."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def lines(report: Report) -> Iterator[str]:
    """The report's lines: one a check, then what it does not cover, if anything."""
    for check in report.checks:
        yield check.line()
    if report.uncovered:
        yield "not covered: " + "; ".join(report.uncovered)
