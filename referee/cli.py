"""The `referee` command line: a thin click layer over library calls.

Errors a user can fix (a bad option, a bad file) print one line naming what was
wrong and exit with status 2; nothing here holds game logic.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, NoReturn, TypeVar

import click
from rich.console import Console

from . import selfplay as selfplay_mod
from .rules import PRESET_SOURCES, PRESETS, VARIANTS, RulesError, preset, to_toml

if TYPE_CHECKING:
    from pathlib import Path

    from .league.cluster import Cluster
    from .league.config import LeagueConfig
    from .league.standings import Standings


def fail(message: str, status: int = 2) -> NoReturn:
    """Print one error line to stderr and exit with `status`."""
    click.echo(f"referee: error: {message}", err=True)
    sys.exit(status)


T = TypeVar("T")


def run_trio(main_fn: Callable[[], Awaitable[T]]) -> T:
    """`trio.run`, with a lone exception (Ctrl-C above all) taken out of its group.

    trio reports what escapes a nursery as an exception group; the command line
    wants to handle KeyboardInterrupt and one-line errors as themselves.
    """
    import trio

    try:
        return trio.run(main_fn)
    except BaseExceptionGroup as group:
        if group.subgroup(KeyboardInterrupt) is not None:
            raise KeyboardInterrupt from None
        leaves = list(_leaves(group))
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


def sandbox_option(default: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--sandbox, shared by play, check-bot, league and serve; `default` is said in the help."""
    return click.option(
        "--sandbox",
        type=click.Choice(["auto", "none", "bwrap"]),
        default=None,
        help="Run every bot the referee starts in this sandbox: bwrap (bubblewrap, see "
        f"README), none, or auto (bwrap where bubblewrap works). Default: {default}.",
    )


AUTHOR_SANDBOX = "none"  # play and check-bot: the bot author's own tools
LEAGUE_SANDBOX = "each bot's `sandbox` key, else auto (bots of a league are sandboxed by default)"


cluster_option = click.option(
    "--cluster",
    metavar="local:N|ADDRESS",
    default=None,
    help="Run games on a Dask cluster: local:N starts N worker processes here, "
    "tcp://HOST:8786 uses a running scheduler.",
)

quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress bar (in a terminal) or line per game (elsewhere); standings only.",
)
report_every_option = click.option(
    "--report-every",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Print the standings so far after every N games (default 0: only at the end).",
)


@contextlib.asynccontextmanager
async def open_cluster(target: str | None, jobs: int) -> AsyncIterator[Cluster | None]:
    """The cluster of --cluster, closed on the way out; None without the option.

    A local:N cluster gives each worker its share of --jobs as task threads.
    (`referee.league.cluster` imports Dask only inside `Cluster.open`.)"""
    if target is None:
        yield None
        return
    import trio

    from .league.cluster import LOCAL, Cluster

    local = LOCAL.fullmatch(target)
    threads = max(1, -(-jobs // int(local[1]))) if local and int(local[1]) else 1
    opened = await trio.to_thread.run_sync(Cluster.open, target, threads)
    try:
        yield opened
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(opened.close)


def load_league(
    config_file: str, out: str | None, sandbox: str | None, cluster: str | None
) -> LeagueConfig:
    """The league file with --out and --sandbox applied, and --cluster checked; a bad
    file or cluster address is a one-line error (exit 2) before anything starts. Bots
    that "auto" leaves without a sandbox (bubblewrap does not work) are named in one
    line on stderr."""
    from pathlib import Path

    from .league.cluster import ClusterError, check_target
    from .league.config import ConfigError, load_config
    from .outputs import OutputError, ready_folder

    try:
        config = load_config(Path(config_file), out=Path(out) if out else None, sandbox=sandbox)
        if cluster is not None:
            check_target(cluster)
        ready_folder(config.out, "--out" if out else "league.out")
    except (ConfigError, ClusterError, OutputError) as exc:
        fail(str(exc))
    if config.sandbox_note is not None:
        bare = [b.name for b in config.bots if not b.tcp and b.spec.sandbox == "none"]
        click.echo(
            f"referee: warning: bubblewrap does not work here ({config.sandbox_note}): "
            f"{', '.join(bare)} run WITHOUT a sandbox and can read the logs of their games; "
            "the standings will say so",
            err=True,
        )
    return config


env_option = click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set NAME in every bot's environment (repeatable). Bots get nothing else of the "
    "referee's environment but PATH (see README).",
)


def parse_env(pairs: tuple[str, ...]) -> dict[str, str]:
    """`NAME=VALUE` strings from `--env` into a dict; a malformed one is a usage error."""
    from .process import env_name

    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not env_name(name):
            fail(f"--env {pair!r}: expected NAME=VALUE, NAME made of letters, digits and _")
        out[name] = value
    return out


def wide_console() -> Console:
    """stdout: the terminal's width; in a file or pipe, no hard wrap (see `consoles`)."""
    from .consoles import output_console

    return output_console()


def parse_sets(pairs: tuple[str, ...]) -> dict[str, str]:
    """`key=value` strings from `--set` into a dict; a malformed one is a usage error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            fail(f"--set {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def resume_command(out: Path) -> str:
    """The command line that resumes this league: the command's arguments and every
    option that was given, as click parsed them, with `--out` set to the folder used
    and `--resume` added; quoted for a POSIX shell."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    words = ["referee", ctx.command.name or ""]
    options: list[str] = []
    for param in ctx.command.params:
        if param.name not in ctx.params:
            continue  # not a value of the command (--help)
        value = ctx.params[param.name]
        if isinstance(param, click.Argument):
            words += [str(v) for v in value] if param.multiple else [str(value)]
            continue
        given = ctx.get_parameter_source(param.name)
        if param.name in ("out", "resume") or given not in (
            ParameterSource.COMMANDLINE,
            ParameterSource.ENVIRONMENT,
        ):
            continue
        flag = max(param.opts, key=len)  # the long name: --jobs, not -j
        if isinstance(param, click.Option) and param.is_flag:
            if value:
                options.append(flag)
            elif param.secondary_opts:
                options.append(max(param.secondary_opts, key=len))
            continue
        for one in value if param.multiple else [value]:
            options += [flag, str(one)]
    return shlex.join([*words, "--out", str(out), "--resume", *options])


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mexican-train-referee")
def main() -> None:
    """Referee for Mexican Train bot competitions."""


@main.command("rules")
@click.argument("name", required=False)
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one option (repeatable)."
)
def rules_cmd(name: str | None, sets: tuple[str, ...]) -> None:
    """List the presets, or print preset NAME[+variant...] resolved as TOML."""
    if name is None:
        if sets:
            fail("--set needs a preset name: referee rules NAME --set key=value")
        click.echo("Presets (referee rules NAME prints one resolved):")
        for key in PRESETS:
            click.echo(f"  {key:16s} {PRESET_SOURCES[key]}")
        click.echo("Variants (add to any preset with +, e.g. standard+teams):")
        for key in VARIANTS:
            click.echo(f"  {key}")
        return
    try:
        rules = preset(name, **parse_sets(sets))
    except RulesError as exc:
        fail(str(exc))
    click.echo(f"# referee rules {name}" + "".join(f" --set {s}" for s in sets))
    click.echo(to_toml(rules), nl=False)


@main.command("selfplay")
@click.option("--rules", "rules_name", default="standard", show_default=True, help="Preset.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one option.")
@click.option("--players", type=int, default=None, help="Number of seats (overrides the preset).")
@click.option("--seed", type=int, default=1, show_default=True, help="Game seed.")
def selfplay_cmd(rules_name: str, sets: tuple[str, ...], players: int | None, seed: int) -> None:
    """Play one game between in-process random players and print the scores by round."""
    from .match import seed_problem

    if (problem := seed_problem(seed)) is not None:
        fail(f"--seed {problem}")
    overrides: dict[str, object] = dict(parse_sets(sets))
    if players is not None:
        overrides["players"] = players
    try:
        rules = preset(rules_name, **overrides)
    except RulesError as exc:
        fail(str(exc))
    selfplay_mod.run(rules, seed)


@main.command("schema")
@click.option("--output", "-o", metavar="FILE", default=None, help="Write to a file.")
@click.option(
    "--league",
    is_flag=True,
    help="The schema of league files instead, for editors that check TOML (see README).",
)
def schema_cmd(output: str | None, league: bool) -> None:
    """Print the JSON Schema of every protocol message, or with --league of a league file."""
    if league:
        from .league.schema import schema_text
    else:
        from protocol.schema import schema_text

    text = schema_text()
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")


@main.command(
    "check-bot", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--rules",
    "rules_names",
    multiple=True,
    help="Check only these presets (repeatable); default: every preset and the variants.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Play every game whole (every round: 13 on double-12). Default: one round of each "
    "seat count and variant, and one whole game of each preset at 4 players.",
)
@click.option("--move-ms", type=int, default=1000, show_default=True, help="Time per move.")
@click.option("--bank-ms", type=int, default=30000, show_default=True, help="Time bank a game.")
@click.option("--startup-ms", type=int, default=10000, show_default=True, help="Time to ready.")
@click.option("--name", default=None, help="Name for the bot in the report.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@sandbox_option(AUTHOR_SANDBOX)
@env_option
def check_bot_cmd(
    sandbox: str | None,
    env_pairs: tuple[str, ...],
    rules_names: tuple[str, ...],
    full: bool,
    move_ms: int,
    bank_ms: int,
    startup_ms: int,
    name: str | None,
    command: tuple[str, ...],
) -> None:
    """Check a bot against the protocol: referee check-bot [OPTIONS] -- CMD [ARGS...]."""

    from protocol.messages import TimeControl

    from .checkbot import battery, check_bot, stderr_file
    from .process import BotSpec

    for rules_name in rules_names:
        try:
            preset(rules_name)
        except RulesError as exc:
            fail(str(exc))
    argv = tuple(command)
    if len(argv) == 1 and " " in argv[0]:
        argv = tuple(shlex.split(argv[0]))
    env = parse_env(env_pairs)
    spec = BotSpec(name=name or argv[0], argv=argv, env=env, sandbox=sandbox or AUTHOR_SANDBOX)
    if spec.sandbox != "none":
        import os

        from .sandbox import SandboxError, check_bwrap, check_visible

        problem = check_bwrap()
        if spec.sandbox == "auto":
            mode = "none" if problem else "bwrap"
            click.echo(f"sandbox auto: {mode}" + (f" ({problem})" if problem else ""))
            spec = BotSpec(name=spec.name, argv=argv, env=env, sandbox=mode)
        else:
            click.echo(f"sandbox bwrap: {'works on this machine' if problem is None else problem}")
            if problem is not None:
                sys.exit(1)
        if spec.sandbox == "bwrap":
            try:
                check_visible(argv, cwd=None, path_env=env.get("PATH", os.environ.get("PATH")))
            except SandboxError as exc:
                click.echo(f"sandbox bwrap: {exc}")
                sys.exit(1)
    plan = battery(rules_names or None, full_games=full)
    time = TimeControl(startup_ms=startup_ms, move_ms=move_ms, bank_ms=bank_ms)
    stderr_path = stderr_file()
    click.echo(f"checking {spec.command}")
    checks = run_trio(
        lambda: check_bot(
            spec,
            plan=plan,
            time=time,
            stderr_path=stderr_path,
            report=lambda check: click.echo(check.line()),
        )
    )
    passed = sum(1 for c in checks if c.ok)
    failed = len(checks) - passed
    if failed == 0 or stderr_path.stat().st_size == 0:
        stderr_path.unlink(missing_ok=True)  # kept only when it may explain a failure
    else:
        click.echo(f"the bot's stderr is kept in {stderr_path}")
    verdict = "conforms" if failed == 0 else "does not conform"
    click.echo(f"check-bot: {passed} checks passed, {failed} failed: the bot {verdict}")
    sys.exit(0 if failed == 0 else 1)


def _time_options(func: Callable[..., None]) -> Callable[..., None]:
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


@main.command("play")
@click.argument("bots", nargs=-1, required=True)
@sandbox_option(AUTHOR_SANDBOX)
@env_option
@click.option(
    "--rules", "rules_name", default="standard", show_default=True, help="Preset, with +variants."
)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one option.")
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
    help="Write the game log to this file.",
)
@click.option(
    "--log-dir",
    metavar="DIRECTORY",
    default=".",
    show_default=True,
    help="Folder for the game log (named after the game).",
)
@click.option(
    "--stderr-dir",
    metavar="DIRECTORY",
    default=None,
    help="Keep each bot's stderr here (default: the log folder).",
)
@click.option(
    "--policy",
    type=click.Choice(["forfeit", "default-move"]),
    default="forfeit",
    show_default=True,
    help="What a fault costs.",
)
@click.option(
    "--max-faults",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="With default-move: faults before a forfeit.",
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
@click.option(
    "--memory-mb",
    type=click.IntRange(min=1),
    default=None,
    help="Address-space limit per bot (Linux RLIMIT_AS).",
)
@click.option(
    "--cpu-s",
    type=click.IntRange(min=1),
    default=None,
    help="CPU seconds per bot process (RLIMIT_CPU).",
)
@click.option(
    "--max-files",
    type=click.IntRange(min=3),
    default=None,
    help="Open files per bot (RLIMIT_NOFILE).",
)
@click.option(
    "--max-output-kb",
    type=click.IntRange(min=1),
    default=None,
    help="Bytes (in KiB) a bot may write during one decision.",
)
@_time_options
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
    optionally prefixed NAME=. The table has as many seats as bots.
    """
    from .play import play_from_cli
    from .process import Limits

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
        limits=Limits(memory_mb=memory_mb, cpu_s=cpu_s, files=max_files),
        output_cap=max_output_kb * 1024 if max_output_kb else None,
        seat_logs=seat_logs,
        bot_seed_key=bot_seed_key,
        sandbox=sandbox or AUTHOR_SANDBOX,
        env=parse_env(env_pairs),
    )


@main.command("league")
@click.argument("config_file", type=click.Path(dir_okay=False))
@sandbox_option(LEAGUE_SANDBOX)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Games at once (default: league.jobs, else the number of cores). With "
    "--cluster local:N they are shared among the N workers; with a scheduler address "
    "they count only the games with a tcp seat, which are played here.",
)
@click.option(
    "--out",
    metavar="DIRECTORY",
    default=None,
    help="Output folder (default: league.out of the file).",
)
@click.option("--resume", is_flag=True, help="Go on with the games not yet recorded.")
@cluster_option
@quiet_option
@report_every_option
def league_cmd(
    sandbox: str | None,
    config_file: str,
    jobs: int | None,
    out: str | None,
    resume: bool,
    cluster: str | None,
    quiet: bool,
    report_every: int,
) -> None:
    """Run a league: referee league LEAGUE.toml [--jobs N] [--out DIR] [--resume]
    [--cluster local:N | tcp://HOST:PORT]."""

    from .league.cluster import ClusterError
    from .league.config import default_jobs
    from .league.ledger import LedgerError
    from .league.run import print_standings, run_league
    from .outputs import OutputError

    config = load_league(config_file, out, sandbox, cluster)
    console = wide_console()
    workers = jobs or config.jobs or default_jobs()
    resume_cmd = resume_command(config.out)

    used: list[Cluster] = []

    async def league() -> Standings:
        async with open_cluster(cluster, workers) as dask:
            if dask is not None:
                used.append(dask)
            return await run_league(
                config,
                jobs=workers,
                resume=resume,
                console=console,
                quiet=quiet,
                report_every=report_every,
                cluster=dask,
            )

    try:
        standings = run_trio(league)
    except (LedgerError, ClusterError, OutputError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        click.echo(
            "referee: interrupted; games in progress were abandoned (not scored) and every "
            f"bot was ended. Resume with: {resume_cmd}",
            err=True,
        )
        sys.exit(130)
    print_standings(console, standings, f"{config.name}: {standings.games} games")
    if used:
        stats = used[0].stats
        lost = f", {stats.lost} lost on the way" if stats.lost else ""
        console.print(
            f"cluster {cluster}: {stats.games} games in {stats.tasks} tasks on "
            f"{len(stats.workers)} workers{lost}"
        )
    console.print(f"standings written to {config.out.resolve()}/standings.{{json,csv,md,png}}")
    sys.exit(0)


@main.command("serve")
@sandbox_option(LEAGUE_SANDBOX)
@click.argument("config_file", type=click.Path(dir_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port (default 0: a free one)."
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Games at once.")
@click.option("--out", metavar="DIRECTORY", default=None, help="Output folder.")
@click.option("--resume", is_flag=True, help="Go on with the games not yet recorded.")
@cluster_option
@quiet_option
@report_every_option
def serve_cmd(
    sandbox: str | None,
    config_file: str,
    host: str,
    port: int,
    jobs: int | None,
    out: str | None,
    resume: bool,
    cluster: str | None,
    quiet: bool,
    report_every: int,
) -> None:
    """Run a league whose tcp bots connect: referee serve LEAGUE.toml [--host H] [--port P].

    With --cluster, games without a tcp seat run on the cluster's workers; games
    with one are played here, where the connections are."""
    import logging

    import trio

    from .league.cluster import ClusterError
    from .league.config import default_jobs
    from .league.ledger import LedgerError
    from .league.run import print_standings
    from .outputs import OutputError
    from .server import serve_league

    logging.basicConfig(level=logging.WARNING, format="referee: %(name)s: %(message)s")
    config = load_league(config_file, out, sandbox, cluster)
    console = wide_console()
    workers = jobs or config.jobs or default_jobs()

    async def run() -> Standings:
        result: list[Standings] = []

        async def league(task_status: trio.TaskStatus[tuple[str, int]]) -> None:
            async with open_cluster(cluster, workers) as dask:
                result.append(
                    await serve_league(
                        config,
                        host=host,
                        port=port,
                        jobs=workers,
                        resume=resume,
                        console=console,
                        quiet=quiet,
                        report_every=report_every,
                        task_status=task_status,
                        cluster=dask,
                    )
                )

        async with trio.open_nursery() as nursery:
            address = await nursery.start(league)
            click.echo(f"listening on {address[0]}:{address[1]}")
            sys.stdout.flush()
        return result[0]

    try:
        standings = run_trio(run)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    except (LedgerError, ClusterError, OutputError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        click.echo(
            "referee: interrupted; games in progress were abandoned (not scored). "
            f"Resume with: {resume_command(config.out)}",
            err=True,
        )
        sys.exit(130)
    print_standings(console, standings, f"{config.name}: {standings.games} games")
    console.print(f"standings written to {config.out.resolve()}/standings.{{json,csv,md,png}}")
    sys.exit(0)


@main.command("connect", context_settings={"ignore_unknown_options": True})
@click.argument("address", metavar="HOST:PORT")
@click.option("--name", required=True, help="The bot's name in the league.")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False),
    required=True,
    help="File holding the bot's token.",
)
@click.option("--no-reconnect", is_flag=True, help="Stop when the first connection ends.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def connect_cmd(
    address: str, name: str, token_file: str, no_reconnect: bool, command: tuple[str, ...]
) -> None:
    """Relay a stdio bot to a server: referee connect HOST:PORT --name N --token-file F -- CMD."""
    import logging
    from pathlib import Path

    from .bridge import run_bridge
    from .process import BotSpec, findable

    logging.basicConfig(level=logging.WARNING, format="referee connect: %(message)s")
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        fail(f"{address}: expected HOST:PORT")
    try:
        token = Path(token_file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        fail(f"{token_file}: cannot read the token file")
    if not token:
        fail(f"{token_file}: the token file is empty")
    if not findable(BotSpec(name=name, argv=command)):
        fail(f"{command[0]}: no such program, or not executable (the bot's command, after --)")
    try:
        outcome = run_trio(
            lambda: run_bridge(
                host.strip("[]"), int(port_text), name, token, command, reconnect=not no_reconnect
            )
        )
    except KeyboardInterrupt:
        sys.exit(130)
    if outcome.kind == "done":
        click.echo(f"{name}: the league is over")
        sys.exit(0)
    click.echo(f"referee connect: {name}: {outcome.kind}: {outcome.detail}", err=True)
    sys.exit(1)


@main.command("standings")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print standings.json to stdout.")
def standings_cmd(out_dir: str, as_json: bool) -> None:
    """Print a league's standings again from its database."""
    import json as jsonlib
    from pathlib import Path

    from .league.ledger import Ledger, LedgerError
    from .league.run import print_standings
    from .league.standings import compute

    db = Path(out_dir) / "league.db"
    if not db.is_file():
        fail(f"{out_dir}: no league.db here; is this a league's output folder?")
    try:
        ledger = Ledger(db)
    except LedgerError as exc:
        fail(str(exc))
    try:
        meta = dict(ledger.db.execute("SELECT key, value FROM meta").fetchall())
        names = jsonlib.loads(meta.get("bots", "[]"))
        standings = compute(names, ledger.records(), ledger.sandbox())
    finally:
        ledger.close()
    if as_json:
        click.echo(jsonlib.dumps(standings.to_json(), indent=2))
        return
    name = meta.get("name", "league")
    print_standings(wide_console(), standings, f"{name}: {standings.games} games")


@main.command("replay")
@click.argument("log_file", type=click.Path(dir_okay=False))
@click.option("--show", is_flag=True, help="Print the game as text, move by move.")
@click.option("--json", "as_json", is_flag=True, help="Print the re-derived states as JSON lines.")
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    default=None,
    help="Write a self-contained HTML replay to this file.",
)
@click.option("--round", "round_text", metavar="R", help="Only round R (from 1, as printed).")
@click.option("--move", "move_text", metavar="N", help="Only decision N (the log's n, from 1).")
@click.option(
    "--seat", "seat_text", metavar="S", help="Exactly what seat S saw (default: everything)."
)
def replay_cmd(
    log_file: str,
    show: bool,
    as_json: bool,
    html_file: str | None,
    round_text: str | None,
    move_text: str | None,
    seat_text: str | None,
) -> None:
    """Verify a game log: re-derive the game and check every recorded fact.

    With --show, --json or --html the verified game is also shown; --round,
    --move and --seat pick what (and imply --show on their own). A log written
    for one seat (--seat-logs) is replayed as that seat saw it; it holds no seed,
    so only its coherence is checked.
    """
    import json
    from pathlib import Path

    from .gamelog import LogError, read_log
    from .replay import verify
    from .replay_seat import check, redact

    def number(option: str, text: str | None) -> int | None:
        if text is None:
            return None
        try:
            return int(text)
        except ValueError:
            fail(f"{option} {text!r}: expected a whole number")

    seat = number("--seat", seat_text)
    round_number = number("--round", round_text)
    move = number("--move", move_text)
    outputs = [name for name, on in (("--show", show), ("--json", as_json)) if on]
    if html_file is not None:
        outputs.append("--html")
    if len(outputs) > 1:
        fail(f"{' and '.join(outputs)}: choose one")
    picked = seat is not None or round_number is not None or move is not None
    if picked and not outputs:
        show = True
    if html_file is not None:
        from .outputs import OutputError, ready_file

        try:
            ready_file(Path(html_file), "--html")  # before the work of verifying and rendering
        except OutputError as exc:
            fail(str(exc))
    try:
        log = read_log(Path(log_file), allow_redacted=True)
    except LogError as exc:
        fail(str(exc))
    own = log.header.seat  # set in a log written for one seat
    if own is not None:
        if seat is not None and seat != own:
            fail(f"--seat {seat}: {log_file} was written for seat {own} and holds only what it saw")
        seat = own
    from .replay_text import SelectionError, records, select
    from .replay_text import show as show_text

    try:
        selection = select(log, seat, round_number, move)
    except SelectionError as exc:
        fail(str(exc))
    verdict = verify(log) if own is None else check(log)
    if verdict.divergence is not None:
        click.echo(f"{log_file}: diverges at {verdict.divergence}")
        sys.exit(1)
    state = "complete" if verdict.complete else "INCOMPLETE (no footer: the game was cut short)"
    if own is None:
        summary = (
            f"{log_file}: verified {verdict.decisions} decisions and {verdict.rounds} rounds; "
            f"the log is {state}"
        )
    else:
        summary = (
            f"{log_file}: followed {verdict.decisions} decisions and {verdict.rounds} rounds "
            f"as seat {own} saw them; the log is {state} (it holds no seed: only the full "
            "log proves the deal)"
        )
    if own is None and seat is not None:
        log = redact(log, seat)  # a seat's output is made from what its own log holds
    if show:
        for line in show_text(log, selection):
            click.echo(line)
    elif as_json:
        for record in records(log, selection):
            click.echo(json.dumps(record, separators=(",", ":")))
    elif html_file is not None:
        from .replay_html import render

        page = render(log, selection)
        try:
            Path(html_file).write_text(page, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {html_file}: {exc.strerror}")
        size = len(page.encode("utf-8"))
        click.echo(summary)
        click.echo(f"wrote {html_file} ({size / 1024:.0f} KiB)")
    else:
        click.echo(summary)
    sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
