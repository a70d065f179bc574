"""The checks of the standings (`referee verify`): results.json's standings are the ones
the games give, and their faults, latencies, failed starts and decision time the ones
the logs give; standings.json (in an output folder and on a site) is those standings
too, and standings.csv and standings.md are what the referee writes from it, byte for
byte. The standings are re-derived with the league's own code, which the folder is
handed (`Restater`).
"""

from __future__ import annotations

import json
from typing import Any

from .folder import Folder, Game, Units, VerifyError, read_json
from .results import RESULTS

STANDINGS_FILES = ("standings.json", "standings.csv", "standings.md")
# Keys of a bot's line of the standings read from the games' logs, not their results.
_FROM_LOGS = ("faults", "notices", "latency_sum", "latency_n", "latency_worst", "latency_mean")
# A log keeps each latency to the microsecond, the ledger a game's mean before rounding:
# a game's mean from the log may differ from the ledger's by half a microsecond (each
# latency's rounding), and each of the two is rounded again (half a microsecond each),
# so by 0.0015 ms; the standings' sum of game means by that much a game, and their mean
# of game means, rounded once more on each side, by 0.0025 ms.
_LATENCY_SLACK = {"latency_sum": 0.0015, "latency_mean": 0.0025}


class StandingChecks(Folder):
    """The checks of the standings and of the files published from them."""

    def _derived(
        self, stated: dict[str, Any], games: list[Game]
    ) -> tuple[dict[str, Any], Units, bool]:
        """The standings `stated` should be, from the games (a match's: those of the units
        its test counted) and, when every one of them has a log that holds, from their
        logs too, as standings.json holds them; each bot's units; and whether the logs
        were read."""
        counted = games
        if stated.get("match") is not None:
            units = int(stated["match"]["units"])
            counted = [g for g in games if g.unit < units]
        full = all(g.id in self.logs for g in counted)
        played = [(g, self.logs.get(g.id) if full else None) for g in counted]
        names = [str(b["name"]) for b in self.terms.get("bots", [])]
        clocks = stated.get("clocks", {})
        derived, by_bot = self.restate.standings(names, played, clocks, self.commitment.digest)
        return derived, by_bot, full

    def _standings_problem(
        self, stated: dict[str, Any], games: list[Game], what: str
    ) -> tuple[str | None, bool]:
        """What differs between the standings `stated` (in `what`) and the ones the games
        give, first; and whether the logs were read."""
        derived, _units, full = self._derived(stated, games)
        problem = _compare(stated, derived, full)
        return (f"{what}: {problem}" if problem else None), full

    def check_standings(self, games: list[Game]) -> None:
        if self.results is None:
            return
        stated = self.results.get("standings")
        if not isinstance(stated, dict):
            self.report.add("standings", f"{RESULTS} holds no standings", "")
            return
        problem, full = self._standings_problem(stated, games, f"{RESULTS}'s standings")
        also = ", and their faults, latencies and decision time the ones their logs hold"
        self.report.add(
            "standings",
            problem,
            f"the standings are the ones the games give{also if full else ''}",
        )

    def check_published(self, games: list[Game]) -> None:
        """The standings' files (standings.json, .csv, and in an output folder .md): each
        the standings the games give, written as the referee writes them."""
        present = [n for n in STANDINGS_FILES if (self.folder / n).is_file()]
        if not present:
            return
        base = self.results.get("standings") if self.results is not None else None
        source = base if isinstance(base, dict) else None
        first: str | None = None
        for name in present:  # every one, after a failure too: each is covered
            self.covered.add(name)
            problem: str | None = None
            if name == "standings.json":
                problem, data = self._standings_file(games, base)
                if data is not None:
                    source = data
            elif source is None:
                problem = f"{name}: no standings to compare it with ({RESULTS} is missing)"
            else:
                _derived, units, _full = self._derived(source, games)
                title = f"{self.terms.get('name')}: standings"
                text = self.restate.written(name, source, units, title)
                problem = _first_line_apart(name, (self.folder / name).read_bytes(), text)
            first = first or problem
        said = ", ".join(present)
        self.report.add("published", first, f"{said}: the standings the games give")

    def _standings_file(
        self, games: list[Game], base: dict[str, Any] | None
    ) -> tuple[str | None, dict[str, Any] | None]:
        """standings.json checked against the games and against results.json's standings
        (the same in an output folder; on a site, what the organiser says of the sandbox,
        the transport and the clocks' threshold); what is wrong, and its contents."""
        name = "standings.json"
        try:
            data = read_json(self.folder / name)
        except VerifyError as exc:
            return str(exc), None
        assert data is not None
        problem, _full = self._standings_problem(data, games, name)
        if problem is not None:
            return problem, None
        if base is not None and self.ledger is not None and data != base:
            apart = sorted(k for k in set(data) | set(base) if data.get(k) != base.get(k))
            return f"{name} differs from {RESULTS}'s standings in {', '.join(apart)}", None
        if base is not None:
            for key in ("sandbox", "transport"):
                if data.get(key) != base.get(key):
                    return f"{name}: its {key} is not the one {RESULTS} states", None
            if data["clocks"].get("warn_at") != base.get("clocks", {}).get("warn_at"):
                return f"{name}: its clocks' warn_at is not the one {RESULTS} states", None
            if "match" in data and data["match"] != base.get("match"):
                return f"{name}: its match is not the one {RESULTS} states", None
        return None, data


def _compare(stated: dict[str, Any], derived: dict[str, Any], full: bool) -> str | None:
    """The first difference between standings as stated and as the games give them; with
    `full`, also their faults, notices, latencies, failed starts and decision time (as
    their logs give them). The sandbox, the transport, the clocks' warn_at and a match's
    test are the organiser's word, compared with nothing here."""
    extra = sorted(set(stated) - set(derived) - {"sandbox", "transport", "match"})
    if extra:
        return f"{', '.join(extra)}: not in the standings the referee writes"
    for key in ("games", "bots", "head_to_head", "clocks", "failed_starts"):
        if key not in stated:
            raise KeyError(key)
    if stated.get("commitment", derived["commitment"]) != derived["commitment"]:
        return f"they name commitment {stated['commitment']}, not {derived['commitment']}"
    if stated["games"] != derived["games"]:
        return f"games {stated['games']}; the games give {derived['games']}"
    want = {b["name"]: b for b in derived["bots"]}
    for row in stated["bots"]:
        mine = want.get(row.get("name"))
        if mine is None:
            return f"{json.dumps(row.get('name'))} is no bot of the league"
        odd = sorted(set(row) ^ set(mine))
        if odd:
            return f"{row['name']}: {', '.join(odd)}: not the keys the referee writes"
        for key, value in mine.items():
            if key in _FROM_LOGS and not full:
                continue
            said = row[key]
            if key in _LATENCY_SLACK:
                games = int(mine["latency_n"]) if key == "latency_sum" else 1
                rounded = 0.0005 if key == "latency_sum" else 0.0  # the sum's own rounding
                slack = _LATENCY_SLACK[key] * max(games, 1) + rounded + 1e-9
                if abs(float(said) - value) <= slack:
                    continue
            elif said == value:
                continue
            source = "logs" if key in _FROM_LOGS else "games"
            return f"{row['name']}: {key} {json.dumps(said)}; the {source} give {json.dumps(value)}"
    if [b.get("name") for b in stated["bots"]] != [b["name"] for b in derived["bots"]]:
        return "the bots' order is not the one the games give"
    if stated["head_to_head"] != derived["head_to_head"]:
        return "the head to head is not the one the games give"
    if full:
        if stated["failed_starts"] != derived["failed_starts"]:
            return "the failed starts are not the ones the logs give"
        clocks = derived["clocks"]
        if set(stated["clocks"]) != set(clocks):
            return "the clocks are not written as the referee writes them"
        for key in ("charged_ms", "excused_ms", "excused_share", "overloaded"):
            if stated["clocks"][key] != clocks[key]:
                said = json.dumps(stated["clocks"][key])
                return f"clocks: {key} {said}; the logs give {json.dumps(clocks[key])}"
    return None


def _first_line_apart(name: str, raw: bytes, text: str) -> str | None:
    """None when the file `name` holds `text`; else which of its lines differs first."""
    if raw == text.encode("utf-8"):
        return None
    have = raw.decode("utf-8", errors="replace").splitlines()
    want = text.splitlines()
    for k, (a, b) in enumerate(zip(have, want, strict=False), start=1):
        if a != b:
            return f"{name}: line {k} is not the one the standings give"
    return f"{name}: {len(have)} lines; the standings give {len(want)}"
