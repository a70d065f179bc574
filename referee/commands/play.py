"""`referee play`: its options; the game itself is `referee.commands.play_game.play_from_cli`."""

from __future__ import annotations

from collections.abc import Callable

import click
from click.core import ParameterSource

from .common import AUTHOR_SANDBOX, env_option, fail, parse_env, parse_sets, sandbox_option

# A person's clocks (docs/human.md): what `play` uses when a seat is `human` and
# --move-ms or --bank-ms is not given (every seat gets the same clock).
PERSON_MOVE_MS = 60_000
PERSON_BANK_MS = 600_000


def time_options(func: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        [
            click.option(
                "--startup-ms",
                type=int,
                default=10_000,
                show_default=True,
                help="Time from hello to ready.",
            ),
            click.option(
                "--move-ms",
                type=int,
                default=1_000,
                show_default=True,
                help="Time per decision before the bank is used.",
            ),
            click.option(
                "--bank-ms",
                type=int,
                default=30_000,
                show_default=True,
                help="Time bank per game, for overruns.",
            ),
            click.option(
                "--increment-ms",
                type=int,
                default=0,
                show_default=True,
                help="Added to the bank after each decision.",
            ),
            click.option(
                "--grace-ms",
                type=int,
                default=50,
                show_default=True,
                help="Harness latency allowance.",
            ),
        ]
    ):
        func = option(func)
    return func


def game_options(func: Callable[..., None]) -> Callable[..., None]:
    """--rules, --set, --policy, --max-faults and the per-bot limits: play's and match's."""
    for option in reversed(
        [
            click.option(
                "--rules",
                "rules_name",
                default="standard",
                show_default=True,
                help="Preset, with +variants.",
            ),
            click.option(
                "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one option."
            ),
            click.option(
                "--policy",
                type=click.Choice(["forfeit", "default-move"]),
                default="forfeit",
                show_default=True,
                help="What a fault costs.",
            ),
            click.option(
                "--max-faults",
                type=click.IntRange(min=1),
                default=3,
                show_default=True,
                help="With default-move: faults before a forfeit.",
            ),
            click.option(
                "--memory-mb",
                type=click.IntRange(min=0),
                default=None,
                help=(
                    "Memory limit per bot, all its processes together, and each "
                    "process's address space (RLIMIT_AS); default 4096, 0: none."
                ),
            ),
            click.option(
                "--max-processes",
                type=click.IntRange(min=0),
                default=None,
                help="Processes and threads per bot; default 256, 0: none.",
            ),
            click.option(
                "--scratch-mb",
                type=click.IntRange(min=0),
                default=None,
                help="Scratch space per bot (tmpfs; RLIMIT_FSIZE unsandboxed); default 128.",
            ),
            click.option(
                "--cpu-s",
                type=click.IntRange(min=1),
                default=None,
                help="CPU seconds per bot process (RLIMIT_CPU).",
            ),
            click.option(
                "--max-files",
                type=click.IntRange(min=0),
                default=None,
                help="Open files per bot (RLIMIT_NOFILE); default 1024, 0: none.",
            ),
            click.option(
                "--max-output-kb",
                type=click.IntRange(min=1),
                default=None,
                help="Bytes (in KiB) a bot may write during one decision.",
            ),
        ]
    ):
        func = option(func)
    return func


@click.command("play")
@click.argument("bots", nargs=-1, required=True)
@sandbox_option(AUTHOR_SANDBOX)
@env_option
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Game seed, for debugging and tests: a small seed is not secret (a bot could find "
    "it from its hand and know every other hand). Default: a fresh 128-bit secret.",
)
@click.option(
    "--log",
    "log_file",
    metavar="FILE",
    default=None,
    help="Write the game log to this file: gzip-compressed if it ends in .gz, else plain.",
)
@click.option(
    "--log-dir",
    metavar="DIRECTORY",
    default=".",
    show_default=True,
    help="Folder for the game log (named after the game: GAME.jsonl.gz, compressed when "
    "the game ends).",
)
@click.option(
    "--stderr-dir",
    metavar="DIRECTORY",
    default=None,
    help="Keep each bot's stderr here (default: the log folder).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the result, as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No round-by-round output.")
@click.option(
    "--bot-seed-key",
    default=None,
    metavar="HEX",
    help="Key for the bots' own seeds (default: fresh each game; the log records it). "
    "The same seed and key replay deterministic bots exactly.",
)
@click.option(
    "--seat-logs",
    is_flag=True,
    help="Also write one log per seat, redacted like that seat's messages.",
)
@time_options
@game_options
def play_cmd(
    sandbox: str | None,
    env_pairs: tuple[str, ...],
    bots: tuple[str, ...],
    rules_name: str,
    sets: tuple[str, ...],
    seed: int | None,
    log_file: str | None,
    log_dir: str,
    stderr_dir: str | None,
    policy: str,
    max_faults: int,
    as_json: bool,
    quiet: bool,
    bot_seed_key: str | None,
    seat_logs: bool,
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
) -> None:
    """Play one game between bot processes: referee play "NAME=cmd args" "cmd args" ...

    Each BOT is a command line (split like a shell would, no shell is run),
    optionally prefixed NAME=. The table has as many seats as bots. The command
    `human` seats you, at this terminal; --move-ms and --bank-ms then default to
    60000 and 600000 (docs/human.md).
    """
    from ..bots.process import Limits, is_person, parse_bot, web_port
    from .play_game import play_from_cli

    persons = [text for text in bots if is_person(text)]
    webs = []
    for i, text in enumerate(bots):
        if text in persons:
            try:
                spec = parse_bot(text, i) if "--web" in text else None
            except ValueError as exc:
                fail(str(exc))
            if spec is not None and web_port(spec.argv) is not False:
                webs.append(spec)
    at_terminal = len(persons) - len(webs)
    if at_terminal > 1:
        fail(f"{at_terminal} seats are `human`: one terminal seats one person (docs/human.md)")
    names = [spec.name for spec in webs]
    if len(set(names)) < len(names):
        fail("two browser seats are both named " + repr(names[0]) + ": give each NAME=")
    if persons:
        context = click.get_current_context()
        if context.get_parameter_source("move_ms") is ParameterSource.DEFAULT:
            move_ms = PERSON_MOVE_MS
        if context.get_parameter_source("bank_ms") is ParameterSource.DEFAULT:
            bank_ms = PERSON_BANK_MS
        # The referee's live lines go to the person's terminal: a fault's evidence can
        # name a tile another seat drew ("already drew 6-4 this turn"), so none is shown
        # while the game runs; the seat's own screen shows the rounds, the result table
        # comes at the end.
        quiet = True

    play_from_cli(
        bots=bots,
        rules_name=rules_name,
        sets=parse_sets(sets),
        seed=seed,
        log_file=log_file,
        log_dir=log_dir,
        stderr_dir=stderr_dir,
        policy=policy,
        max_faults=max_faults,
        as_json=as_json,
        quiet=quiet,
        times=(startup_ms, move_ms, bank_ms, increment_ms, grace_ms),
        limits=Limits.given(
            memory_mb=memory_mb,
            cpu_s=cpu_s,
            files=max_files,
            processes=max_processes,
            scratch_mb=scratch_mb,
        ),
        output_cap=max_output_kb * 1024 if max_output_kb else None,
        seat_logs=seat_logs,
        bot_seed_key=bot_seed_key,
        sandbox=sandbox or AUTHOR_SANDBOX,
        env=parse_env(env_pairs),
    )
