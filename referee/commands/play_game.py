"""`referee play`: one game between bot processes, shown live, logged, summed up.

The command-line half of `referee.play.runner`: it turns options into a game,
prints rounds as they end (to stderr when --json keeps stdout for the result),
and maps problems to one-line errors and exit codes.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from protocol.messages import MS_MAX, TimeControl

from ..bots.faults import FaultKind, Policy
from ..bots.process import BotSpec, Limits, parse_bot, unstartable, web_port, web_seat
from ..bots.sandbox import SandboxError, bwrap_problem, check_visible, resolve
from ..consoles import output_console
from ..game.match import new_game_seed, seed_problem
from ..logs.gamelog import GZ_SUFFIX, live_path
from ..logs.outputs import OutputError, WriteError, new_file, ready_file, ready_folder
from ..play.display import RoundPrinter, result_table, stderr_notes
from ..play.runner import GameReport, game_places, run_game
from ..rules import RulesError, preset
from ..text import shown
from .common import fail, run_trio


def play_from_cli(
    *,
    bots: tuple[str, ...],
    rules_name: str,
    sets: dict[str, str],
    seed: int | None,
    log_file: str | None,
    log_dir: str,
    stderr_dir: str | None,
    policy: str,
    max_faults: int,
    as_json: bool,
    quiet: bool,
    times: tuple[int, int, int, int, int],
    limits: Limits | None = None,
    output_cap: int | None = None,
    seat_logs: bool = False,
    bot_seed_key: str | None = None,
    sandbox: str = "none",
    env: dict[str, str] | None = None,
) -> None:
    """Run `referee play` with parsed options; exits the process."""
    given_seed = seed is not None
    if seed is not None and (problem := seed_problem(seed)) is not None:
        fail(f"--seed {problem}")
    specs = bot_specs(bots, sandbox, env, limits)
    overrides: dict[str, Any] = dict(sets)
    overrides.setdefault("players", len(specs))
    try:
        rules = preset(rules_name, **overrides)
    except RulesError as exc:
        fail(str(exc))
    if rules.players != len(specs):
        fail(f"players={rules.players} but {len(specs)} bots were given")
    time = time_control(times)
    if seed is None:
        seed = new_game_seed()
    key: bytes | None = None
    if bot_seed_key is not None:
        try:
            key = bytes.fromhex(bot_seed_key)
        except ValueError:
            fail(f"--bot-seed-key {bot_seed_key!r}: expected hexadecimal digits")
    # The id bots see must not carry the seed: with the rules it would reveal every hand.
    game_id = f"game-{secrets.token_hex(4)}"
    name = f"game-{seed}" if given_seed else game_id  # a secret seed stays out of file names
    # A log in --log-dir is compressed when the game ends; `--log FILE` is written as
    # named: compressed if FILE ends in `.jsonl.gz`, plain otherwise.
    log_path = Path(log_file) if log_file is not None else Path(log_dir) / f"{name}{GZ_SUFFIX}"
    err_dir = Path(stderr_dir) if stderr_dir else log_path.parent
    try:
        if log_file is not None:
            ready_file(log_path, "--log")
        else:
            ready_folder(log_path.parent, "--log-dir")
        if stderr_dir:
            ready_folder(err_dir, "--stderr-dir")
    except OutputError as exc:
        fail(str(exc))
    if sandbox == "bwrap":
        places = game_places(log_path, err_dir)
        for spec in specs:
            try:
                check_visible(
                    spec.argv,
                    cwd=spec.cwd,
                    path_env=spec.env.get("PATH", os.environ.get("PATH")),
                    hidden=places,
                )
            except SandboxError as exc:
                fail(f"{spec.name}: {exc}")

    if log_file is None:
        # A log named after its seed never replaces the log of an earlier game: playing
        # a seed again (a bot's fix tried on the same deal) keeps both to compare.
        # `--log FILE` names its file, which is written as asked, as any -o would be.
        try:
            claimed = new_file(log_path, "--log-dir", written_as=live_path)
        except OutputError as exc:
            fail(str(exc))
        if claimed != log_path:
            click.echo(shown(f"referee: {log_path} exists; this game's log is {claimed}"), err=True)
            log_path = claimed

    console = output_console(stderr=as_json)
    printer = RoundPrinter(output_console(stderr=as_json, quiet=quiet), rules)

    def started(names: list[str]) -> None:
        printer.names = names
        line = f"game {game_id}: {', '.join(names)} | {rules_name} | seed {seed} | log {log_path}"
        printer.console.print(shown(line), markup=False)

    try:
        report = run_trio(
            lambda: run_game(
                specs,
                rules,
                seed,
                game_id=game_id,
                time=time,
                log_path=log_path,
                policy=Policy(policy),
                max_faults=max_faults,
                stderr_dir=err_dir,
                recorder=printer,
                on_start=started,
                output_cap=output_cap,
                seat_logs=seat_logs,
                bot_seed_key=key,
            )
        )
    except KeyboardInterrupt:
        partial = live_path(log_path)  # an unfinished log is never compressed
        click.echo(f"referee: interrupted; every bot was ended; {partial} is incomplete", err=True)
        sys.exit(130)
    except OSError as exc:
        fail(f"cannot write the game log {log_path}: {exc.strerror}")
    except WriteError as exc:  # its disk filled up during the game
        fail(f"{exc}; the game's log stays {live_path(log_path)}, as far as it was written")
    if as_json:
        click.echo(json.dumps(summary(report, seed)))
    else:
        console.print(result_table(rules, report.names, report.result))
        for note in stderr_notes(report.names, report.result, report.stderr_paths):
            console.print(note, markup=False, highlight=False, soft_wrap=True)
        console.print(f"log: {shown(report.log_path)}", markup=False)
    if (line := nothing_played(report)) is not None:
        fail(line)
    sys.exit(0)


def nothing_played(report: GameReport) -> str | None:
    """The line saying that no bot of the game started, so that nothing was played
    (every seat forfeited before its first move: the ranks are the deal's luck); None
    when some bot started."""
    failed = [
        [f for f in faults if f.kind is FaultKind.STARTUP_FAILURE]
        for faults in report.result.faults
    ]
    if not all(failed):
        return None
    return (
        f"no bot could start, so the game was not played (every seat forfeited; its "
        f"log {report.log_path} says so): {report.names[0]}: {failed[0][0].detail}"
    )


def bot_specs(
    bots: tuple[str, ...],
    sandbox: str,
    env: dict[str, str] | None,
    limits: Limits | None,
    labels: Sequence[str] = (),
) -> list[BotSpec]:
    """The bots' command lines as specs in `sandbox`; one-line exits for what cannot run,
    naming the bot by its label in `labels` (`bot N` past them: the Nth argument)."""
    sandbox, why_not = resolve(sandbox)
    if why_not is not None:
        click.echo(
            f"referee: warning: --sandbox auto: bots run WITHOUT a sandbox ({why_not})", err=True
        )
    elif sandbox == "bwrap" and (problem := bwrap_problem()) is not None:
        fail(f"--sandbox bwrap: {problem}")
    named = [labels[i] if i < len(labels) else f"bot {i + 1}" for i in range(len(bots))]
    specs: list[BotSpec] = []
    for i, text in enumerate(bots):
        try:
            spec = replace(parse_bot(text, i, named[i]), sandbox=sandbox, env=dict(env or {}))
            specs.append(replace(spec, limits=limits) if limits is not None else spec)
        except ValueError as exc:
            fail(str(exc))
    for i, spec in enumerate(specs):
        # As a league refuses its file: a bot that cannot start would only forfeit every
        # round, and the game would end with status 0 and the reason in the log alone.
        if web_port(spec.argv) is not False:  # a person in the browser: the referee's own
            continue
        if (problem := unstartable(spec)) is not None:
            fail(f"{named[i]} ({spec.name}): cannot start it: {problem}")
    for spec in specs:  # each person's page in the browser, before the game starts
        if web_port(spec.argv) is not False:
            url = web_seat(spec.name, spec.argv).url
            click.echo(f"{spec.name}: play in your browser at {url}", err=True)
    return specs


def clock_problem(value: int) -> str | None:
    """Why `value` cannot be a clock in ms, or None: every clock on the wire is 0 to
    `MS_MAX` (spec/PROTOCOL.md, "Integer ranges")."""
    if value < 0:
        return "must not be negative"
    if value > MS_MAX:
        return f"must be at most {MS_MAX} ms (2**31 - 1, 24.8 days)"
    return None


def time_control(times: tuple[int, int, int, int, int]) -> TimeControl:
    """--startup-ms, --move-ms, --bank-ms, --increment-ms, --grace-ms as a clock; each
    within `clock_problem`'s range."""
    startup_ms, move_ms, bank_ms, increment_ms, grace_ms = times
    for label, value in (
        ("startup-ms", startup_ms),
        ("move-ms", move_ms),
        ("bank-ms", bank_ms),
        ("increment-ms", increment_ms),
        ("grace-ms", grace_ms),
    ):
        if (problem := clock_problem(value)) is not None:
            fail(f"--{label}={value}: {problem}")
    return TimeControl(
        startup_ms=startup_ms,
        move_ms=move_ms,
        bank_ms=bank_ms,
        increment_ms=increment_ms,
        grace_ms=grace_ms,
    )


def summary(report: GameReport, seed: int) -> dict[str, Any]:
    """The result as `--json` prints it."""
    result = report.result
    seats = []
    for s, name in enumerate(report.names):
        seats.append(
            {
                "seat": s,
                "name": name,
                "score": result.outcome.scores[s],
                "rank": result.ranks[s],
                "status": "forfeit" if result.forfeited[s] else "ok",
                "stderr": str(path) if (path := report.stderr_paths[s]) and path.exists() else None,
                "faults": [
                    {"kind": f.kind.value, "detail": f.detail, "request": f.request}
                    for f in result.faults[s]
                ],
                # Ignored (stale replies), never faults: they cost the seat nothing.
                "notices": [
                    {"kind": n.kind.value, "detail": n.detail, "request": n.request}
                    for n in result.notices[s]
                ],
            }
        )
    return {
        "seed": seed,
        "log": str(report.log_path),
        "decisions": result.decisions,
        "rounds": [list(r) for r in result.outcome.rounds],
        "seats": seats,
    }
