"""`referee serve`: a league whose TCP bots connect to the referee."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .common import LEAGUE_SANDBOX, STOPPED, fail, run_trio, sandbox_option, wide_console
from .league_options import (
    cannot_play_line,
    cluster_option,
    keep_going_option,
    live_site,
    load_league,
    match_judge,
    open_cluster,
    quiet_option,
    report_every_option,
    resume_command,
    say_nothing_to_resume,
    say_written,
    site_option,
)

if TYPE_CHECKING:
    from ..league.standings import Standings


@click.command("serve")
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
@site_option
@keep_going_option
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
    site_dir: str | None,
    keep_going: bool,
) -> None:
    """Run a league whose tcp bots connect: referee serve LEAGUE.toml [--host H] [--port P].

    With --cluster, games without a tcp seat run on the cluster's workers; games
    with one are played here, where the connections are."""
    import logging

    import trio

    from ..bots.tokens import keep_out_of_core_dumps
    from ..league.cluster import ClusterError
    from ..league.config import default_jobs
    from ..league.ledger import LedgerError
    from ..league.run import LeagueStopped, print_outcome
    from ..league.starts import CannotPlay
    from ..logs.outputs import OutputError
    from ..net.server import serve_league
    from ..site import SiteError
    from ..text import ShownFormatter

    # Warnings quote peers and bots (a refused login's name): shown escaped.
    handler = logging.StreamHandler()
    handler.setFormatter(ShownFormatter("referee: %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    keep_out_of_core_dumps()  # before a token is read
    config = load_league(config_file, out, sandbox, cluster, keep_going)
    console = wide_console()
    workers = jobs or config.jobs or default_jobs()
    judge, lines = match_judge(config, quiet)
    site = live_site(config, site_dir, report_every)
    say_nothing_to_resume(config.out, resume)

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
                        judge=judge,
                        site=site,
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
    except (LedgerError, ClusterError, OutputError, SiteError) as exc:
        fail(str(exc))
    except LeagueStopped as exc:  # its own disk is full
        fail(exc.line(f"resume with: {resume_command(config.out)}"), STOPPED)
    except CannotPlay as exc:
        fail(cannot_play_line(str(exc), f"resume with: {resume_command(config.out)}"))
    except KeyboardInterrupt:
        click.echo(
            "referee: interrupted; games in progress were abandoned (not scored). "
            f"Resume with: {resume_command(config.out)}",
            err=True,
        )
        sys.exit(130)
    status = print_outcome(console, config, standings, judge, lines)
    say_written(console, config, site)
    sys.exit(status)
