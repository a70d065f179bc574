"""What `league` and `serve` share: the --cluster, --quiet, --report-every and --site
options, the league file read with the command's options applied, the cluster,
and the command line that resumes an interrupted league (or the line saying there
is nothing to resume)."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import click

from .common import fail

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from ..league.cluster import Cluster
    from ..league.config import LeagueConfig
    from ..league.judge import Judge
    from ..league.standings import Standings
    from ..site.live import LiveSite
    from .match_lines import Lines


cluster_option = click.option(
    "--cluster",
    metavar="local:N|ADDRESS",
    default=None,
    help="Run games on a Dask cluster: local:N starts N worker processes here, "
    "tcp://HOST:8786 uses a running scheduler.",
)


def tls_options(fn: Callable[..., None]) -> Callable[..., None]:
    """--tls self-signed, --tls-cert, --tls-key and --insecure-plaintext: how a server of
    tcp bots (`serve`, `arena`) offers itself (docs/tcp.md)."""
    for option in reversed(
        [
            click.option(
                "--tls",
                "tls_mode",
                type=click.Choice(["self-signed"]),
                default=None,
                help="Serve over TLS with a key and certificate made on the first start and "
                "kept in OUT/tls; its fingerprint is printed with the address, for connect "
                "--pin.",
            ),
            click.option(
                "--tls-cert",
                type=click.Path(dir_okay=False),
                default=None,
                help="Serve over TLS with this PEM certificate chain (the server's first).",
            ),
            click.option(
                "--tls-key",
                type=click.Path(dir_okay=False),
                default=None,
                help="The key of --tls-cert.",
            ),
            click.option(
                "--insecure-plaintext",
                is_flag=True,
                help="Allow plain TCP on an address that is not loopback: tokens and hands "
                "cross the network unencrypted (the standings and the site say so).",
            ),
        ]
    ):
        fn = option(fn)
    return fn


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

keep_going_option = click.option(
    "--keep-going",
    is_flag=True,
    help="Play on even when a bot fails to start in each of its first games "
    "(league.start_failures) or no bot can start: every game is recorded. The failed "
    "starts are still named as they happen, and listed in the standings; if no bot "
    "ever started, the run still ends with exit 2.",
)

beacon_option = click.option(
    "--beacon",
    metavar="TEXT",
    default=None,
    help='With [league] mix = ["beacon"]: the public value announced for it (a lottery '
    "draw, a block hash), published after the commitment of `referee commit`; mixed into "
    "every deal seed.",
)
site_option = click.option(
    "--site",
    "site_dir",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[DIR]",
    help="Build the results site in DIR (default: OUT/site) at the end, and refresh it "
    "every --report-every games while the league runs.",
)


def live_site(config: LeagueConfig, site_dir: str | None, report_every: int) -> LiveSite | None:
    """The results site --site asks for, its folder checked now; None without it."""
    if site_dir is None:
        return None
    from pathlib import Path

    from ..logs.outputs import OutputError, ready_folder
    from ..site.live import LiveSite

    to = Path(site_dir) if site_dir else config.out / "site"
    try:
        ready_folder(to, "--site")
    except OutputError as exc:
        fail(str(exc))
    return LiveSite(config.out, to, every=report_every)


@contextlib.asynccontextmanager
async def open_cluster(target: str | None, jobs: int) -> AsyncIterator[Cluster | None]:
    """The cluster of --cluster, closed on the way out; None without the option.

    A local:N cluster gives each worker its share of --jobs as task threads.
    (`referee.league.cluster` imports Dask only inside `Cluster.open`.)"""
    if target is None:
        yield None
        return
    import trio

    from ..league.cluster import LOCAL, Cluster

    local = LOCAL.fullmatch(target)
    threads = max(1, -(-jobs // int(local[1]))) if local and int(local[1]) else 1
    opened = await trio.to_thread.run_sync(Cluster.open, target, threads)
    try:
        yield opened
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(opened.close)


def load_league(
    config_file: str,
    out: str | None,
    sandbox: str | None,
    cluster: str | None,
    keep_going: bool = False,
    check: Callable[[LeagueConfig], None] | None = None,
    persons: bool = False,
) -> LeagueConfig:
    """The league file with --out and --sandbox applied, and --cluster checked; a bad
    file or cluster address is a one-line error (exit 2) before anything starts, and
    so is what `check` refuses (it calls `fail`), before the output folder is made.
    Bots that "auto" leaves without a sandbox (bubblewrap does not work) are named in
    one line on stderr. With `keep_going`, no failed start stops the league. With
    `persons` (`referee league`), a bot whose command is `human` seats a person."""
    from pathlib import Path

    from ..league.cluster import ClusterError, check_target
    from ..league.config import ConfigError, load_config
    from ..logs.outputs import OutputError, ready_folder
    from ..text import shown

    try:
        config = load_config(
            Path(config_file), out=Path(out) if out else None, sandbox=sandbox, persons=persons
        )
        if cluster is not None:
            check_target(cluster)
        if check is not None:
            check(config)
        ready_folder(config.out, "--out" if out else "league.out")
    except (ConfigError, ClusterError, OutputError) as exc:
        fail(str(exc))
    if keep_going:
        import dataclasses

        config = dataclasses.replace(config, start_failures=0)
    if config.sandbox_note is not None:
        bare = [b.name for b in config.bots if not b.tcp and b.spec.sandbox == "none"]
        click.echo(
            shown(
                f"referee: warning: bubblewrap does not work here ({config.sandbox_note}): "
                f"{', '.join(bare)} run WITHOUT a sandbox and can read the logs of their "
                "games, and league.db, which holds the deal key (every hand of every game); "
                "the standings will say so"
            ),
            err=True,
        )
    return config


def say_nothing_to_resume(out: Path, resume: bool, what: str = "league") -> None:
    """With --resume but no ledger in `out` (a mistyped --out, a first run), say on
    stderr that a new `what` starts there, rather than start it silently."""
    if resume and not (out / "league.db").exists():
        from ..text import shown

        click.echo(f"referee: nothing to resume in {shown(out)}: starting a new {what}", err=True)


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


def match_judge(config: LeagueConfig, quiet: bool) -> tuple[Judge | None, Lines]:
    """The judge of a match league (None for other formats) and its live lines, which
    `-q` keeps quiet: `league` and `serve` report a match alike."""
    from ..league.judge import Judge
    from .match_lines import Lines

    lines = Lines()
    if config.match is None:
        return None, lines
    return Judge(config, None if quiet else lines), lines


def say_written(console: Console, config: LeagueConfig, site: LiveSite | None) -> None:
    """Where the standings (and the results site, if built) were written."""
    from ..text import shown

    out = shown(config.out.resolve())  # a folder's name is not markup
    console.print(f"standings written to {out}/standings.{{json,csv,md,svg}}", markup=False)
    if site is not None and site.report is not None:
        folder = shown(site.report.folder.resolve())
        console.print(f"results site written to {folder}/index.html", markup=False)


def nothing_played_line(config: LeagueConfig, standings: Standings) -> str | None:
    """The one line of a league (or match, or served league) none of whose bots started
    in any recorded game: every seat of every game failed to start, so nothing was
    played, and the standings rank the deals' luck. --keep-going records such games
    rather than stop; the command still fails with this line. None when some bot
    started, or no game is recorded."""
    failed = standings.failed_starts
    if not failed or len(failed) < standings.games * config.table:
        return None
    first = failed[0]
    games = f"{standings.games} recorded game{'s' * (standings.games != 1)}"
    return (
        f"no bot could start in any of the {games}, so nothing was played: "
        f"{first.bot} in {first.game_id}: {first.detail}"
    )


def cannot_play_line(reason: str, resume: str) -> str:
    """The one line of a league stopped because a bot does not start (`CannotPlay`)."""
    return (
        f"{reason}; the league stopped, and no game with those failed starts was recorded. "
        f"Fix the bot, then {resume}; or play on regardless with --keep-going"
    )


def jobs_option(text: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--jobs/-j, games at once: `text` is the help, which says the default."""
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help=text)
