"""`referee league`: a league of bot processes, here or on a Dask cluster."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import LEAGUE_SANDBOX, STOPPED, fail, run_trio, sandbox_option, wide_console
from .league_options import (
    beacon_option,
    cannot_play_line,
    cluster_option,
    jobs_option,
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
from .live_options import live_listen, live_options, serve_live

if TYPE_CHECKING:
    from ..league.cluster import Cluster
    from ..league.config import LeagueConfig
    from ..league.standings import Standings


def person_check(cluster: str | None) -> Callable[[LeagueConfig], None]:
    """What a league with a person (a bot whose command is `human`) needs, checked before
    anything starts: the referee's standard input is a terminal, and no cluster."""

    def check(config: LeagueConfig) -> None:
        from ..bots.process import web_port

        person = next((b.name for b in config.bots if b.person), None)
        if person is None:
            return
        at_terminal = [b for b in config.bots if b.person and web_port(b.spec.argv) is False]
        if cluster is not None:
            where = "at this terminal" if at_terminal else "in a browser on this machine"
            fail(f"--cluster: {person!r} is a person (`human`), who plays {where}")
        if at_terminal and not sys.stdin.isatty():
            fail(
                f"{at_terminal[0].name}: `human` seats a person at this terminal, but the "
                "referee's "
                "standard input is not a terminal"
            )

    return check


@click.command("league")
@click.argument("config_file", type=click.Path(dir_okay=False))
@sandbox_option(LEAGUE_SANDBOX)
@jobs_option(
    "Games at once (default: league.jobs, else the number of cores). With "
    "--cluster local:N they are shared among the N workers; with a scheduler address "
    "they count only the games with a tcp seat, which are played here."
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
@live_options("league.live")
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
    live_port: int | None,
    live_host: str,
    live_tls: str | None,
    live_tls_cert: str | None,
    live_tls_key: str | None,
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

    listen = live_listen(live_port, live_host, live_tls, live_tls_cert, live_tls_key)
    config = load_league(
        config_file, out, sandbox, cluster, keep_going, person_check(cluster), True
    )
    console = wide_console()
    workers = jobs or config.jobs or default_jobs()
    if any(b.person for b in config.bots):
        # A person plays one game at a time, at this terminal, which the referee's live
        # lines would share: a fault's evidence can name a tile another seat drew. The
        # standings come at the end (docs/human.md).
        if workers > 1 and jobs is not None:
            click.echo(
                f"referee: a person is seated: one game at a time (not --jobs {jobs})", err=True
            )
        workers, quiet = 1, True
        from ..bots.process import web_port, web_seat

        for b in config.bots:  # each browser seat's page, before the first game
            if b.person and web_port(b.spec.argv) is not False:
                url = web_seat(b.name, b.spec.argv).url
                click.echo(f"{b.name}: play in your browser at {url}", err=True)
    site = live_site(config, site_dir, report_every)
    resume_cmd = resume_command(config.out)
    say_nothing_to_resume(config.out, resume)

    used: list[Cluster] = []
    judge, lines = match_judge(config, quiet)
    feed = None
    if listen is not None:
        from ..live.feed import LiveFeed

        feed = LiveFeed(config.live, config.duplicate or config.match is not None)

    async def league() -> Standings:
        async with open_cluster(cluster, workers) as dask:
            if dask is not None:
                used.append(dask)
            play = partial(
                run_league,
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
                live=feed,
            )
            if feed is None or listen is None:
                return await play()
            site_path = Path(site_dir) if site_dir else config.out / "site"
            return await serve_live(feed, listen, site_path, config.out, play)

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
