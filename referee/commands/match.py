"""`referee match NEW BASE`: its options; the match itself is `sprt_match.run_match`."""

from __future__ import annotations

from pathlib import Path

import click

from .common import AUTHOR_SANDBOX, env_option, fail, parse_env, parse_sets, sandbox_option
from .league_options import cluster_option, keep_going_option
from .play import game_options, time_options


@click.command("match")
@click.argument("new")
@click.argument("base")
@click.option(
    "--field",
    "fields",
    multiple=True,
    metavar="CMD",
    help="A bot for the untested seats (repeatable: once, or once per untested seat).",
)
@click.option(
    "--table", type=int, default=2, show_default=True, help="Seats at the table (players)."
)
@sandbox_option(AUTHOR_SANDBOX)
@env_option
@click.option(
    "--sprt",
    "sprt_text",
    default=None,
    metavar="elo0=E0,elo1=E1,alpha=A,beta=B",
    help="The sequential test: H0 Elo = E0 against H1 Elo = E1, error rates A and B. "
    "Keys left out take their defaults, elo0=0, elo1=5, alpha=0.05, beta=0.05 (the "
    "match says at its start which it took); each key at most once.",
)
@click.option(
    "--max-games",
    type=click.IntRange(min=2),
    default=None,
    help="Stop undecided after this many games (whole units of two). Default: no limit.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Games played at once.",
)
@click.option(
    "--out",
    metavar="DIRECTORY",
    default=None,
    help="Keep the match here: league.db (its ledger), every game's log in logs/, the "
    "bots' stderr in stderr/, the standings (default: not kept).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Go on with the match in --out (same bots and options): its deals, seeds "
    "and test continue exactly.",
)
@cluster_option
@click.option(
    "--luck",
    is_flag=True,
    help="Take each game's luck out (rollouts at every draw and deal, from the logs; "
    "costs CPU, saves games).",
)
@click.option(
    "--tc-new",
    metavar="KEY=MS,...",
    default=None,
    help="NEW's own clock over the shared one (time odds), e.g. move_ms=2000,bank_ms=60000.",
)
@click.option("--tc-base", metavar="KEY=MS,...", default=None, help="BASE's own clock.")
@click.option("--json", "as_json", is_flag=True, help="Print only the result, as JSON.")
@game_options
@time_options
@keep_going_option
def match_cmd(
    new: str,
    base: str,
    fields: tuple[str, ...],
    table: int,
    sandbox: str | None,
    env_pairs: tuple[str, ...],
    sprt_text: str | None,
    max_games: int | None,
    jobs: int,
    out: str | None,
    resume: bool,
    cluster: str | None,
    luck: bool,
    tc_new: str | None,
    tc_base: str | None,
    as_json: bool,
    rules_name: str,
    sets: tuple[str, ...],
    policy: str,
    max_faults: int,
    memory_mb: int | None,
    max_processes: int | None,
    scratch_mb: int | None,
    cpu_s: int | None,
    max_files: int | None,
    max_output_kb: int | None,
    startup_ms: int,
    move_ms: int,
    bank_ms: int,
    increment_ms: int,
    grace_ms: int,
    keep_going: bool,
) -> None:
    """Is NEW stronger than BASE? Paired duplicate games until a sequential test decides.

    Each unit is one secret deal played twice, NEW in the tested seat and then
    BASE, the field and every bot's own seed unchanged; the tested seat rotates.
    Exit status 0 when H1 (NEW is better by elo1) was accepted, 1 otherwise.
    The match runs as a league of format "match" (its pool, ledger and cluster).
    """
    from typing import Any

    from protocol.messages import TimeControl

    from ..bots.faults import Policy
    from ..bots.process import Limits, is_person
    from ..rules import RulesError, preset
    from ..stats import StatsError
    from .play_game import bot_specs, time_control
    from .sprt_match import MatchSetup, pairing, parse_clock, parse_sprt, run_match

    try:
        sprt, sprt_defaults = parse_sprt(sprt_text)
    except StatsError as exc:
        fail(f"--sprt {sprt_text!r}: {exc}")
    time = time_control((startup_ms, move_ms, bank_ms, increment_ms, grace_ms))
    clocks: list[TimeControl | None] = []
    for label, text in (("--tc-new", tc_new), ("--tc-base", tc_base)):
        try:
            clocks.append(None if text is None else parse_clock(text, time))
        except ValueError as exc:
            fail(f"{label} {text!r}: {exc}")
    limits = Limits.given(
        memory_mb=memory_mb,
        cpu_s=cpu_s,
        files=max_files,
        processes=max_processes,
        scratch_mb=scratch_mb,
    )
    # Named as the command's help names them: NEW, BASE, and the field by --field.
    labels = ["NEW", "BASE", *(f"--field {i + 1}" for i in range(len(fields)))]
    env = parse_env(env_pairs)
    for label, text in zip(labels, (new, base, *fields), strict=True):
        if is_person(text):
            fail(
                f"{label}: `human` seats a person in `referee play` and `referee league` "
                "only; a match plays each deal twice, seats swapped, and a person would "
                "remember the hands (docs/human.md)"
            )
    specs = bot_specs((new, base, *fields), sandbox or AUTHOR_SANDBOX, env, limits, labels)
    seating = pairing(specs[0], specs[1], specs[2:], table)
    overrides: dict[str, Any] = dict(parse_sets(sets))
    if "players" in overrides:
        fail("--set players: the table size is --table")
    try:
        rules = preset(rules_name, **overrides, players=table)
    except RulesError as exc:
        fail(str(exc))
    run_match(
        MatchSetup(
            pairing=seating,
            rules=rules,
            time=time,
            policy=Policy(policy),
            max_faults=max_faults,
            output_cap=max_output_kb * 1024 if max_output_kb else None,
            sprt=sprt,
            max_games=max_games,
            jobs=jobs,
            out=None if out is None else Path(out),
            as_json=as_json,
            luck=luck,
            resume=resume,
            time_new=clocks[0],
            time_base=clocks[1],
            cluster=cluster,
            keep_going=keep_going,
            sprt_defaults=sprt_defaults,
        )
    )
