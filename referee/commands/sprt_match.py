"""`referee match NEW BASE`: paired duplicate games until a sequential test decides.

The command builds a league file in memory, of format "match" (spec/LEAGUE.md):
NEW, BASE and the field as its bots, the test in its [match] table, NEW's and
BASE's own clocks (time odds) in their `time` tables, and runs it as a league.
So a match has the league's pool (reused processes, none given a deal twice),
its ledger (league.db in --out: --resume goes on from it), its cluster and its
logs; the league's `Judge` counts units in schedule order and stops at the first
that crosses a bound. spec/STATS.md, "The command".
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from protocol.messages import TimeControl

from ..bots.faults import Policy
from ..bots.process import BotSpec
from ..league.judge import Judge, final_lines, json_result, test_line
from ..play.runner import unique_names
from ..rules import Rules
from ..stats import Sprt, StatsError, Verdict
from ..text import NAME_MAX, shown
from .common import fail, run_trio
from .match_lines import Lines
from .play_game import clock_problem

if TYPE_CHECKING:
    from ..league.standings import Standings

SPRT_DEFAULTS = {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05}
TIME_KEYS = ("startup_ms", "move_ms", "bank_ms", "increment_ms", "grace_ms")


def key_values(text: str, keys: tuple[str, ...]) -> dict[str, str]:
    """`key=value,key=value`, each key among `keys` and given once, at least one of them,
    no part empty (a stray comma is a typo, not nothing); ValueError naming what is
    wrong."""
    out: dict[str, str] = {}
    parts = text.split(",")
    for n, part in enumerate(parts):
        if not part.strip():
            if not text.replace(",", "").strip():
                break  # nothing at all: said below
            where = "a trailing" if n == len(parts) - 1 else "a leading" if n == 0 else "a double"
            raise ValueError(f"{where} comma; give key=value pairs, one between commas")
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in keys:
            raise ValueError(f"{part.strip()!r}: expected one of {', '.join(keys)} =")
        if key in out:
            raise ValueError(f"{key} is given twice")
        out[key] = value.strip()
    if not out:
        raise ValueError(f"empty: give key=value with keys among {', '.join(keys)}")
    return out


def parse_sprt(text: str | None) -> tuple[dict[str, float], tuple[str, ...]]:
    """`elo0=E0,elo1=E1,alpha=A,beta=B`, any of the keys (None: none of them): the test's
    values, the keys left out taking their defaults, checked as a test; and the keys that
    took their defaults. StatsError says what is wrong."""
    values = dict(SPRT_DEFAULTS)
    try:
        given = {} if text is None else key_values(text, tuple(SPRT_DEFAULTS))
    except ValueError as exc:
        raise StatsError(str(exc)) from None
    for key, value in given.items():
        try:
            values[key] = float(value)
        except ValueError:
            raise StatsError(f"{key}={value!r}: not a number") from None
    Sprt(values["elo0"], values["elo1"], values["alpha"], values["beta"])
    return values, tuple(k for k in SPRT_DEFAULTS if k not in given)


def parse_clock(text: str, base: TimeControl) -> TimeControl:
    """`move_ms=2000,bank_ms=60000` (any of TIME_KEYS) over `base`: a bot's own clock."""
    values = {key: getattr(base, key) for key in TIME_KEYS}
    for key, value in key_values(text, TIME_KEYS).items():
        try:
            values[key] = int(value)
        except ValueError:
            raise ValueError(f"{key}={value!r}: not a whole number of ms") from None
        if (problem := clock_problem(values[key])) is not None:
            raise ValueError(f"{key}={values[key]}: {problem}")
    return TimeControl(**values)


@dataclass(frozen=True)
class Pairing:
    """Who plays: NEW and BASE take turns in the tested seat, the field fills the rest."""

    new: BotSpec
    base: BotSpec
    field: tuple[BotSpec, ...]  # by the untested seats in seat order; empty for the chess pair
    table: int


def pairing(new: BotSpec, base: BotSpec, field: list[BotSpec], table: int) -> Pairing:
    """The seating, or a one-line exit when the field does not fit the table."""
    if table < 2:
        fail(f"--table {table}: a match needs at least 2 seats")
    if not field:
        if table != 2:
            fail(f"--table {table}: give the field (--field, once or {table - 1} times)")
        return Pairing(new, base, (), table)
    if len(field) == 1:
        field = field * (table - 1)  # one command fills every other seat, each its own process
    if len(field) != table - 1:
        fail(f"--field given {len(field)} times: a table of {table} needs 1 or {table - 1}")
    return Pairing(new, base, tuple(field), table)


@dataclass
class MatchSetup:
    """Everything a match needs once the options are checked."""

    pairing: Pairing
    rules: Rules
    time: TimeControl
    policy: Policy
    max_faults: int
    output_cap: int | None
    sprt: dict[str, float]
    max_games: int | None  # None: until the test decides
    jobs: int
    out: Path | None  # None: the logs go to a temporary folder, removed at the end
    as_json: bool
    luck: bool = False  # take each game's rollout luck out (spec/STATS.md)
    resume: bool = False  # go on with the match in `out`
    time_new: TimeControl | None = None  # NEW's own clock (time odds); None: `time`
    time_base: TimeControl | None = None
    cluster: str | None = None  # --cluster: local:N or a scheduler's address
    keep_going: bool = False  # --keep-going: no failed start stops the match
    sprt_defaults: tuple[str, ...] = ()  # the --sprt keys left to their defaults


def _clock(t: TimeControl) -> dict[str, int]:
    return {k: getattr(t, k) for k in TIME_KEYS}


def league_data(setup: MatchSetup) -> dict[str, Any]:
    """The match as a parsed league file: NEW, BASE and the field (one [[bot]] per seat,
    each with a name of its own), their commands run in this folder."""
    p = setup.pairing
    specs = [p.new, p.base, *p.field]
    # A league's names have no spaces or slashes (a program's file name may), and leave
    # room for the `#2` that tells two of one name apart.
    plain = [re.sub(r"[\s/\\]+", "_", s.name)[: NAME_MAX - 3] for s in specs]
    names = unique_names([replace(s, name=n) for s, n in zip(specs, plain, strict=True)])
    own = [setup.time_new, setup.time_base]
    bots: list[dict[str, Any]] = []
    for i, (spec, name) in enumerate(zip(specs, names, strict=True)):
        bot: dict[str, Any] = {
            "name": name,
            "command": list(spec.argv),
            "cwd": spec.cwd or os.getcwd(),
            "env": dict(spec.env),
            "sandbox": spec.sandbox,
        }
        limits = spec.limits
        for key, value in (
            ("memory_mb", limits.memory_mb),
            ("cpu_s", limits.cpu_s),
            ("max_files", limits.files),
            ("max_processes", limits.processes),
            ("scratch_mb", limits.scratch_mb),
        ):
            bot[key] = 0 if value is None else value  # 0: no limit
        clock = own[i] if i < 2 else None
        if clock is not None and clock != setup.time:
            bot["time"] = _clock(clock)
        bots.append(bot)
    rules = {k: v for k, v in setup.rules.to_dict().items() if k != "players" and v is not None}
    league: dict[str, Any] = {
        "name": "match",
        "format": "match",
        "table": p.table,
        "seed": 0,
        "policy": setup.policy.value,
        "max_faults": setup.max_faults,
    }
    if setup.output_cap is not None:
        league["max_output_kb"] = setup.output_cap // 1024
    if setup.keep_going:
        league["start_failures"] = 0
    match: dict[str, Any] = {
        "new": names[0],
        "base": names[1],
        "sprt": dict(setup.sprt),
        "luck": setup.luck,
    }
    if setup.max_games is not None:
        match["max_games"] = setup.max_games
    return {
        "league": league,
        "match": match,
        "rules": {"preset": "standard", **rules},
        "time": _clock(setup.time),
        "bot": bots,
    }


def run_match(setup: MatchSetup) -> None:
    """Plays the match (or goes on with it), prints it, exits 0 when H1 was accepted, else 1."""
    if setup.out is None:
        if setup.resume:
            fail("--resume needs the --out of the match to continue")
        with tempfile.TemporaryDirectory(prefix="referee-match-") as tmp:
            verdict = _run(setup, Path(tmp))
    else:
        verdict = _run(setup, setup.out)
    sys.exit(0 if verdict is Verdict.H1 else 1)


def _run(setup: MatchSetup, out: Path) -> Verdict | None:
    from ..league.cluster import ClusterError, check_target
    from ..league.config import ConfigError, parse_config
    from ..league.ledger import LedgerError
    from ..league.run import LeagueStopped, run_league
    from ..league.starts import CannotPlay
    from ..logs.outputs import OutputError, ready_folder
    from ..proof.commitment import CommitmentError
    from .common import STOPPED, wide_console
    from .league_options import (
        cannot_play_line,
        nothing_played_line,
        open_cluster,
        resume_command,
        say_nothing_to_resume,
    )

    data = league_data(setup)
    # The league "file" names this folder, from which relative paths would be taken.
    here = Path.cwd() / "referee-match.toml"
    try:
        if setup.cluster is not None:
            check_target(setup.cluster)
        ready_folder(out, "--out")
        config = parse_config(data, here, out=out)
    except (ConfigError, ClusterError, OutputError) as exc:
        fail(str(exc))
    say_nothing_to_resume(out, setup.resume, "match")
    lines = Lines(to_err=setup.as_json)
    judge = Judge(config, lines)
    # What the test is, with the defaults it took, before the first unit's line.
    click.echo(shown(test_line(judge.sprt, setup.sprt_defaults)), err=setup.as_json)

    played: list[Standings] = []

    async def play() -> None:
        async with open_cluster(setup.cluster, setup.jobs) as dask:
            standings = await run_league(
                config,
                jobs=setup.jobs,
                resume=setup.resume,
                console=wide_console(),
                quiet=True,
                cluster=dask,
                judge=judge,
                files=setup.out is not None,  # not in a temporary folder
            )
            played.append(standings)

    try:
        run_trio(play)
    except (LedgerError, CommitmentError, ClusterError, OutputError) as exc:
        fail(str(exc))
    except CannotPlay as exc:
        resume = (
            "run it again" if setup.out is None else f"resume with: {resume_command(setup.out)}"
        )
        fail(cannot_play_line(str(exc), resume))
    except LeagueStopped as exc:  # its own disk is full
        if setup.out is None:
            fail(f"{exc.cause}; the match stopped (its games were in a temporary folder)", STOPPED)
        fail(exc.line(f"resume with: {resume_command(setup.out)}"), STOPPED)
    except KeyboardInterrupt:
        click.echo("\nreferee: interrupted; every bot was ended", err=True)
        sys.exit(130)
    lines.end()
    summary = judge.summary()
    if setup.as_json:
        click.echo(json.dumps(json_result(summary)))
    else:
        for line in final_lines(summary, (data["match"]["new"], data["match"]["base"])):
            click.echo(shown(line))
    if played and (nothing := nothing_played_line(config, played[0])) is not None:
        fail(nothing)  # --keep-going recorded games nobody played: never a verdict
    return summary.verdict
