"""The sequential test of a match league (format = "match"), and how it is shown.

`Judge` is fed the league's ledger records: each game's tested seat gets its
game score (and, with `luck`, its rollout luck from the log), and a unit whose
two games are both recorded goes to `InOrder`, which counts units in schedule
order whatever order they finish in. The run stops at the first unit that
crosses a bound (`Judge.add` says so); games still running then are abandoned,
and games recorded after it are never counted. A resumed league replays its
ledger through a fresh `Judge` and so reaches the same verdict at the same unit.
The model is in spec/STATS.md; `referee match` and `referee league` print the
same lines (`progress_line`, `final_lines`, `json_result`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import trio

from ..logs.gamelog import read_log
from ..logs.replay import states
from ..stats import InOrder, Sprt, Summary, Unit, Verdict, game_score
from ..stats.luck import RolloutValue, luck
from .config import LeagueConfig
from .ledger import Record


class LiveSprt(Sprt):
    """A test that calls `on_unit` with its summary after each unit it counts.

    `InOrder` may count several units in one `put` (a late unit releases the
    ones held behind it); this way each still gets its own progress line."""

    on_unit: Callable[[Summary], None] | None = None

    def add(self, unit: Unit) -> Verdict | None:
        verdict = super().add(unit)
        if self.on_unit is not None:
            self.on_unit(self.summary())
        return verdict


def game_luck(log_path: Path, seat: int, key: int) -> float:
    """The rollout luck of `seat` in the logged game (CPU-bound: run it in a thread).

    Both games of a unit get the same `key` (their deal seed), so that what they
    share is valued alike and the first deal's value cancels."""
    steps = [(step.before, step.after) for step in states(read_log(log_path))]
    return luck(steps, seat, RolloutValue(), key).total


class Judge:
    """The match's test, fed recorded games; `on_unit` sees each counted unit."""

    def __init__(
        self, config: LeagueConfig, on_unit: Callable[[Summary], None] | None = None
    ) -> None:
        match = config.match
        assert match is not None, "a Judge is for format = 'match'"
        self.config = config
        self.luck = match.luck
        self.sprt = LiveSprt(match.elo0, match.elo1, match.alpha, match.beta, fit_luck=match.luck)
        self.on_unit = on_unit
        self.counter = InOrder(self.sprt, 0)
        self.halves: dict[int, dict[int, tuple[float, float]]] = {}

    @property
    def verdict(self) -> Verdict | None:
        """H0 or H1 once decided."""
        return self.sprt.verdict

    @property
    def counted(self) -> int:
        """Units counted so far: the first units of the schedule, in order."""
        return self.counter.next

    def summary(self) -> Summary:
        """The test's state now."""
        return self.sprt.summary()

    def _seat(self, record: Record) -> int:
        return record.unit % self.config.table

    def _score(self, record: Record) -> float:
        rules = self.config.rules
        sides = [rules.team_of(s) for s in range(rules.players)]
        return game_score(record.ranks, self._seat(record), sides)

    def _luck(self, record: Record) -> float:
        return game_luck(Path(record.log_path), self._seat(record), record.seed)

    def _put(self, record: Record, luck_value: float) -> bool:
        got = self.halves.setdefault(record.unit, {})
        got[record.rotation] = (self._score(record), luck_value)
        if len(got) == 2:
            del self.halves[record.unit]
            (new, luck_new), (base, luck_base) = got[0], got[1]
            unit = Unit(new=new, base=base, luck_new=luck_new, luck_base=luck_base)
            self.counter.put(record.unit, unit)
        return self.verdict is not None

    def replay(self, records: Iterable[Record]) -> None:
        """Count the games a resumed league had recorded, silently (blocking: with
        `luck`, each game's log is replayed; call it in a thread)."""
        self.sprt.on_unit = None
        for record in sorted(records, key=lambda r: r.idx):
            if self.verdict is not None:
                break
            self._put(record, self._luck(record) if self.luck else 0.0)

    async def add(self, record: Record) -> bool:
        """Count a newly recorded game; True once the test has decided."""
        self.sprt.on_unit = self.on_unit
        if self.verdict is not None:
            return True
        value = await trio.to_thread.run_sync(self._luck, record) if self.luck else 0.0
        return self._put(record, value)


def test_line(sprt: Sprt, defaulted: Iterable[str] = ()) -> str:
    """What the test is, said before its first unit: the hypotheses and error rates
    (naming those left to their defaults) and the bounds of both of its tests."""
    st = sprt.state
    given = ", ".join(f"{k}={getattr(st, k):g}" for k in ("elo0", "elo1", "alpha", "beta"))
    left = list(defaulted)
    said = ""
    if len(left) == 4:
        said = " (all the defaults)"
    elif left:
        said = f" ({', '.join(left)}: the default{'s' if len(left) > 1 else ''})"
    line = f"SPRT {given}{said}: stops when the LLR leaves ({sprt.lower:.2f}, {sprt.upper:.2f})"
    if st.mixture:
        line += f" or the mixture leaves ({sprt.mix_lower:.2f}, {sprt.mix_upper:.2f})"
    return line


def _elo_words(s: Summary) -> str:
    """The Elo estimate: ± the 95% interval, or a bound when every unit went one way
    (the interval of results with no spread would say ± 0)."""
    if s.unanimous == "won":
        return f"every unit won: Elo > {s.elo_low:+.1f} (95%)"
    if s.unanimous == "lost":
        return f"every unit lost: Elo < {s.elo_high:+.1f} (95%)"
    if s.unanimous == "drawn":
        return f"every unit drawn: Elo {s.elo_low:+.1f} to {s.elo_high:+.1f} (95%)"
    return f"Elo {s.elo:+.1f} +/- {s.elo_ci95:.1f} LOS {100 * s.los:.1f} %"


def _statistics(s: Summary) -> str:
    """Each test's statistic and its bounds."""
    text = f"LLR {s.llr:.2f} ({s.lower:.2f}, {s.upper:.2f})"
    if s.mixture:
        text += f", mixture {s.mixture_llr:.2f} ({s.mixture_lower:.2f}, {s.mixture_upper:.2f})"
    return text


BY = {"llr": "LLR", "mixture": "mixture"}


def progress_line(s: Summary) -> str:
    """One finished unit's state of the test, in the chess testers' words, and how far
    it is from a bound: the units still needed at the current rate, and by which test."""
    if s.verdict is not None:
        ahead = f" - {s.verdict.value} accepted ({BY[s.decided_by or 'llr']})"
    elif s.to_go is None:
        ahead = " - no trend yet"
    else:
        units = "unit" if s.to_go == 1 else "units"
        ahead = f" - ~{s.to_go} more {units} at this rate ({BY[s.to_go_by or 'llr']})"
    return (
        f"units {s.units} games {s.games} pairs W/D/L {s.wins}/{s.draws}/{s.losses} "
        f"score {s.score:.3f} {_elo_words(s)} {_statistics(s)}{ahead}"
    )


def final_lines(s: Summary, names: tuple[str, str]) -> list[str]:
    """The end report, as fastchess and cutechess-cli print it (with the mixture's
    statistic, and a bound instead of the interval when every unit went one way)."""
    verdict = {
        Verdict.H1: "H1 was accepted",
        Verdict.H0: "H0 was accepted",
        None: "no decision (--max-games ran out)",
    }[s.verdict]
    if s.decided_by is not None and s.mixture:
        verdict += " by the mixture test" if s.decided_by == "mixture" else " by the LLR"
    if s.unanimous == "won":
        elo = f"more than {s.elo_low:+.1f} (95%, one-sided: every unit won)"
    elif s.unanimous == "lost":
        elo = f"less than {s.elo_high:+.1f} (95%, one-sided: every unit lost)"
    elif s.unanimous == "drawn":
        elo = f"{s.elo_low:+.1f} to {s.elo_high:+.1f} (95%: every unit drawn)"
    else:
        elo = f"{s.elo:.1f} +/- {s.elo_ci95:.1f}, LOS: {100 * s.los:.1f} %"
    return [
        f"Results of {names[0]} vs {names[1]}: {s.units} units, {s.games} games, "
        f"pairs W/D/L {s.wins}/{s.draws}/{s.losses}, score {s.score:.3f}",
        f"Elo difference: {elo}",
        f"SPRT ([{s.elo0:.2f}, {s.elo1:.2f}]): {_statistics(s)} - {verdict}",
    ]


def match_lines(match: dict[str, Any]) -> list[str]:
    """`final_lines` of a match as the standings keep it (`Standings.match`)."""
    names = {f.name for f in dataclasses.fields(Summary)}
    values = {k: v for k, v in match.items() if k in names}
    verdict = values.pop("verdict")
    summary = Summary(**values, verdict=None if verdict is None else Verdict(verdict))
    return final_lines(summary, (match["new"], match["base"]))


def json_result(s: Summary) -> dict[str, object]:
    """What `--json` prints: the issue's fields first, then the rest of the summary."""
    full = s.to_dict()
    keys = ("verdict", "llr", "lower", "upper", "units", "games", "score", "elo", "elo_ci95")
    out: dict[str, object] = {k: full[k] for k in keys}
    out["los"] = full["los"]
    out.update({k: v for k, v in full.items() if k not in out})
    return out
