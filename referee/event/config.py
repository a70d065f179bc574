"""EVENT.toml: a league file whose [league] is [event], with the stages listed as
`[[stage]]` (spec/EVENTS.md). The bots, rules, clocks and sandbox are read by the
league's own parser; each table of the event is a league made from them."""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots.process import is_person_argv
from ..league.config import ConfigError, LeagueConfig, parse_config, read_toml
from .pairing import MIN_SEATS, POINTS, PointsRule

FORMATS = ("swiss", "knockout", "round-robin", "final")
EVENT_KEYS = {
    "name", "table", "seed", "out", "jobs", "points", "deal_key", "bot_seed_key", "policy",
    "max_faults", "max_output_kb", "sign", "reveal",
}  # fmt: skip
STAGE_KEYS = {
    "swiss": {"format", "swiss_rounds", "deals", "remainder", "advance"},
    "knockout": {"format", "deals", "eliminate", "strikes", "advance"},
    "round-robin": {"format", "deals", "advance"},
    "final": {"format", "deals"},
}


@dataclass(frozen=True)
class Stage:
    """One stage of an event."""

    index: int  # from 1
    format: str
    deals: int  # duplicate deals each table plays in a round
    rounds: int = 1  # swiss
    remainder: str = "smaller"  # swiss: "smaller" tables, or "bye"
    eliminate: int = 1  # knockout, per group and round
    strikes: int = 0  # knockout: out after this many last places (0: by `eliminate`)
    advance: int | None = None  # how many go on to the next stage (None: all)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "index"}


@dataclass(frozen=True)
class EventConfig:
    """An event: the league every table is made from, its points rule and stages."""

    name: str
    path: Path
    base: LeagueConfig  # bots, rules, clocks, sandbox, out, keys; table = the event's
    points: PointsRule
    stages: tuple[Stage, ...]

    @property
    def table(self) -> int:
        return self.base.table

    @property
    def out(self) -> Path:
        return self.base.out

    def fingerprint(self) -> str:
        """What decides the event's tables and games, for --resume."""
        data = {
            "league": self.base.fingerprint(),
            "points": list(self.points) if isinstance(self.points, tuple) else self.points,
            "stages": [s.to_dict() for s in self.stages],
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def load_event(
    path: Path, *, out: Path | None = None, sandbox: str | None = None, check_programs: bool = True
) -> EventConfig:
    """Read and check EVENT.toml; `ConfigError` names the first problem."""
    data = read_toml(path)
    if "league" in data:
        raise ConfigError(f"{path}: an event file has [event], not [league]")
    event = data.pop("event", None)
    if not isinstance(event, dict):
        raise ConfigError(f"{path}: [event] is missing (spec/EVENTS.md)")
    for key in event:
        if key not in EVENT_KEYS:
            raise ConfigError(
                f"event.{key}: not a key of [event] ({', '.join(sorted(EVENT_KEYS))})"
            )
    raw_stages = data.pop("stage", None)
    if not isinstance(raw_stages, list) or not raw_stages:
        raise ConfigError(f"{path}: an event needs at least one [[stage]]")
    for i, raw_bot in enumerate(data.get("bot", [])):
        command = raw_bot.get("command") if isinstance(raw_bot, dict) else None
        argv = shlex.split(command) if isinstance(command, str) else command
        if (
            isinstance(argv, list)
            and all(isinstance(a, str) for a in argv)
            and is_person_argv(argv)
        ):
            raise ConfigError(
                f"bot[{i}].command: a person cannot play an event: every table plays its "
                "board under each rotation, and a person would remember the hands"
            )
        if isinstance(raw_bot, dict) and raw_bot.get("transport") == "tcp":
            raise ConfigError(
                f"bot[{i}].transport: tcp bots are not seated in events yet: every table "
                "plays its board under each rotation, which one program the referee cannot "
                "restart would see once per seat"
            )
    points: PointsRule = event.pop("points", "beaten")
    league = dict(event)
    league.update(format="round-robin", duplicate=True, deals=1)
    data["league"] = league
    base = parse_config(data, path, out=out, sandbox=sandbox, check_programs=check_programs)
    if isinstance(points, list):
        if len(points) != base.table or not all(isinstance(p, int | float) for p in points):
            raise ConfigError(f"event.points: a list of {base.table} numbers, one per place")
        points = tuple(float(p) for p in points)
    elif points not in POINTS:
        raise ConfigError(f'event.points: "beaten", "wins" or a list of numbers, not {points!r}')
    stages = tuple(
        _stage(i + 1, s, base.table, isinstance(points, tuple)) for i, s in enumerate(raw_stages)
    )
    entrants = len(base.bots)
    for s in stages:
        if entrants < MIN_SEATS:
            raise ConfigError(f"stage[{s.index - 1}]: {entrants} entries left; a game needs 2")
        if s.format == "final" and entrants > base.table:
            raise ConfigError(
                f"stage[{s.index - 1}]: a final seats one table of {base.table}, and "
                f"{entrants} entries reach it; cut them with `advance` in the stage before"
            )
        if s.format == "knockout" and base.table < 3:
            raise ConfigError(
                f"stage[{s.index - 1}]: a knockout needs tables of 3 or more (its groups of "
                f"{base.table} would leave an entry alone at a table)"
            )
        if s.format == "round-robin" and entrants < base.table:
            raise ConfigError(
                f"stage[{s.index - 1}]: a round robin of tables of {base.table} needs as many "
                f"entries; {entrants} reach it"
            )
        if s.advance is not None:
            if s.advance > entrants:
                raise ConfigError(
                    f"stage[{s.index - 1}].advance: {s.advance}, but {entrants} entries play it"
                )
            entrants = s.advance
        elif s.format == "knockout":
            entrants = min(entrants, base.table)
    if stages[-1].advance is not None:
        raise ConfigError(f"stage[{len(stages) - 1}].advance: the last stage advances nobody")
    return EventConfig(name=base.name, path=path, base=base, points=points, stages=stages)


def _stage(index: int, raw: Any, table: int, listed_points: bool) -> Stage:
    where = f"stage[{index - 1}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a table of keys")
    fmt = raw.get("format")
    if fmt not in FORMATS:
        raise ConfigError(f"{where}.format: one of {', '.join(FORMATS)}, not {fmt!r}")
    for key in raw:
        if key not in STAGE_KEYS[fmt]:
            raise ConfigError(
                f"{where}.{key}: not a key of a {fmt} stage ({', '.join(sorted(STAGE_KEYS[fmt]))})"
            )

    def number(key: str, default: int, least: int) -> int:
        value = raw.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise ConfigError(f"{where}.{key}: a whole number of at least {least}, not {value!r}")
        return value

    remainder = raw.get("remainder", "bye" if listed_points else "smaller")
    if remainder not in ("smaller", "bye"):
        raise ConfigError(f'{where}.remainder: "smaller" or "bye", not {remainder!r}')
    if remainder == "smaller" and listed_points:
        raise ConfigError(
            f'{where}.remainder: "smaller" tables and a points list for {table} places do not '
            'go together; use remainder = "bye" or points = "beaten"'
        )
    advance = raw.get("advance")
    if advance is not None:
        advance = number("advance", 0, MIN_SEATS)
    strikes = number("strikes", 0, 0)
    if "eliminate" in raw and strikes:
        raise ConfigError(f"{where}: eliminate or strikes, not both")
    return Stage(
        index=index,
        format=fmt,
        deals=number("deals", 1, 1),
        rounds=number("swiss_rounds", 3, 1),
        remainder=remainder,
        eliminate=number("eliminate", 1, 1),
        strikes=strikes,
        advance=advance,
    )
