"""`referee league`: a league of bot processes, here or on a Dask cluster."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .common import LEAGUE_SANDBOX, STOPPED, fail, run_trio, sandbox_option, wide_console
from .league_options import (
    beacon_option,
    cannot_play_line,
    cluster_option,
    keep_going_option,
    live_site,
    load_league,
    match_judge,
    nothing_played_line,
    open_cluster,
    quiet_option,
    report_every_option,
    resume_command,
    say_nothing_to_resume,
    say_written,
    site_option,
)

if TYPE_CHECKING:
    from ..league.cluster import Cluster
    from ..league.standings import Standings


@click.command("league")
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
@site_option
@keep_going_option
@beacon_option
def league_cmd(
    sandbox: str | None,
    config_file: str,
    jobs: int | None,
    out: str | None,
    resume: bool,
    cluster: str | None,
    quiet: bool,
    report_every: int,
    site_dir: str | None,
    keep_going: bool,
    beacon: str | None,
) -> None:
    """Run a league: referee league LEAGUE.toml [--jobs N] [--out DIR] [--resume]
    [--cluster local:N | tcp://HOST:PORT].

    A league of format "match" prints its test as `referee match` does and exits 0
    only when H1 was accepted (1 otherwise, 2 for bad input). A league that cannot
    write its own files (a full disk) stops cleanly and exits 3; one whose standard
    output cannot be written plays on, and exits 4."""

    from ..league.cluster import ClusterError
    from ..league.config import default_jobs
    from ..league.ledger import LedgerError
    from ..league.run import LeagueStopped, print_outcome, run_league
    from ..league.starts import CannotPlay
    from ..logs.outputs import OutputError
    from ..proof.commitment import CommitmentError
    from ..site import SiteError

    config = load_league(config_file, out, sandbox, cluster, keep_going)
    console = wide_console()
    workers = jobs or config.jobs or default_jobs()
    site = live_site(config, site_dir, report_every)
    resume_cmd = resume_command(config.out)
    say_nothing_to_resume(config.out, resume)

    used: list[Cluster] = []
    judge, lines = match_judge(config, quiet)

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
                judge=judge,
                site=site,
                beacon=beacon,
            )

    try:
        standings = run_trio(league)
    except (LedgerError, CommitmentError, ClusterError, OutputError, SiteError) as exc:
        fail(str(exc))
    except LeagueStopped as exc:  # its own disk is full
        fail(exc.line(f"resume with: {resume_cmd}"), STOPPED)
    except CannotPlay as exc:
        fail(cannot_play_line(str(exc), f"resume with: {resume_cmd}"))
    except KeyboardInterrupt:
        click.echo(
            "referee: interrupted; games in progress were abandoned (not scored) and every "
            f"bot was ended. Resume with: {resume_cmd}",
            err=True,
        )
        sys.exit(130)
    status = print_outcome(console, config, standings, judge, lines)
    if used:
        stats = used[0].stats
        lost = f", {stats.lost} lost on the way" if stats.lost else ""
        console.print(
            f"cluster {cluster}: {stats.games} games in {stats.tasks} tasks on "
            f"{len(stats.workers)} workers{lost}"
        )
    say_written(console, config, site)
    if (line := nothing_played_line(config, standings)) is not None:
        fail(line)  # --keep-going recorded games nobody played: never a success
    sys.exit(status)
