"""`referee serve`: a league whose TCP bots connect to the referee."""

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
    tls_options,
)
from .live_options import live_listen, live_options, serve_live

if TYPE_CHECKING:
    from pathlib import Path

    from ..league.config import LeagueConfig
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
@tls_options
@cluster_option
@quiet_option
@report_every_option
@site_option
@keep_going_option
@beacon_option
@live_options("league.live")
def serve_cmd(
    sandbox: str | None,
    config_file: str,
    host: str,
    port: int,
    jobs: int | None,
    out: str | None,
    resume: bool,
    tls_mode: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    insecure_plaintext: bool,
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
    """Run a league whose tcp bots connect: referee serve LEAGUE.toml [--host H] [--port P].

    Plain TCP only on a loopback address (127.0.0.1, ::1, localhost) unless
    --insecure-plaintext; elsewhere --tls self-signed, or --tls-cert and --tls-key.
    With --cluster, games without a tcp seat run on the cluster's workers; games
    with one are played here, where the connections are."""
    import logging
    from pathlib import Path

    from ..bots.tokens import keep_out_of_core_dumps
    from ..league.cluster import ClusterError
    from ..league.config import default_jobs
    from ..league.ledger import LedgerError
    from ..league.run import LeagueStopped, print_outcome
    from ..league.starts import CannotPlay
    from ..logs.outputs import OutputError
    from ..net.server import serve_league
    from ..net.tls import TlsError, is_loopback, self_signed, server_tls
    from ..proof.commitment import CommitmentError
    from ..site import SiteError
    from ..text import ShownFormatter

    # Warnings quote peers and bots (a refused login's name): shown escaped.
    handler = logging.StreamHandler()
    handler.setFormatter(ShownFormatter("referee: %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    if (tls_cert is None) != (tls_key is None):
        fail("--tls-cert and --tls-key: give both, the certificate chain and its key")
    if tls_mode is not None and tls_cert is not None:
        fail("--tls self-signed and --tls-cert: give one")
    secure = tls_mode is not None or tls_cert is not None
    if secure and insecure_plaintext:
        fail("--insecure-plaintext: not with TLS (--tls, --tls-cert)")
    public = not is_loopback(host)
    if public and not secure and not insecure_plaintext:
        fail(
            f"--host {host}: plain TCP on an address that is not loopback would show every "
            "token and hand to the network; serve over TLS (--tls self-signed, or --tls-cert "
            "and --tls-key), or allow it with --insecure-plaintext"
        )
    listen = live_listen(live_port, live_host, live_tls, live_tls_cert, live_tls_key)
    keep_out_of_core_dumps()  # before a token is read
    tls = None
    try:
        # A certificate and key that cannot serve are refused before the output folder
        # is made, and a key in a bot's view too.
        if tls_cert is not None and tls_key is not None:
            tls = server_tls(Path(tls_cert), Path(tls_key))
    except TlsError as exc:
        fail(str(exc))
    key = tls.key if tls is not None else None
    config = load_league(
        config_file,
        out,
        sandbox,
        cluster,
        keep_going,
        check=(lambda c: check_key_hidden(c, key)) if key is not None else None,
    )
    try:
        if tls is None and tls_mode is not None:
            tls = self_signed(config.out / "tls", host)
    except TlsError as exc:
        fail(str(exc))
    if public:
        say_public(config, host, insecure_plaintext)
    console = wide_console()
    workers = jobs or config.jobs or default_jobs()
    judge, lines = match_judge(config, quiet)
    site = live_site(config, site_dir, report_every)
    say_nothing_to_resume(config.out, resume)
    feed = None
    if listen is not None:
        from ..live.feed import LiveFeed

        feed = LiveFeed(config.live, config.duplicate or config.match is not None)

    async def run() -> Standings:
        result: list[Standings] = []

        def listening(address: tuple[str, int]) -> None:
            # The first line, before the league's own (its commitment): a script reads it.
            over = f" (tls, certificate {tls.fingerprint})" if tls is not None else ""
            click.echo(f"listening on {address[0]}:{address[1]}{over}")
            tcp = [b.name for b in config.bots if b.tcp]
            if tcp:
                click.echo(
                    f"tcp bots {', '.join(tcp)}: each has {config.server.connect_ms / 1000:g} s "
                    "from now to log in (server.connect_ms); after that, one away between "
                    "games is waited for its startup_ms"
                )
            sys.stdout.flush()

        async def league() -> None:
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
                        on_listening=listening,
                        cluster=dask,
                        judge=judge,
                        site=site,
                        beacon=beacon,
                        tls=tls,
                        live=feed,
                    )
                )

        if feed is None or listen is None:
            await league()
        else:
            site_path = Path(site_dir) if site_dir else config.out / "site"
            await serve_live(feed, listen, site_path, config.out, league)
        return result[0]

    try:
        standings = run_trio(run)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    except (LedgerError, CommitmentError, ClusterError, OutputError, SiteError) as exc:
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
    if (line := nothing_played_line(config, standings)) is not None:
        fail(line)  # --keep-going recorded games nobody played: never a success
    sys.exit(status)


def check_key_hidden(config: LeagueConfig, key: Path) -> None:
    """--tls-key is out of every sandboxed bot's sight, as token files are; a one-line
    error (exit 2) if a bot's view would hold it."""
    from ..bots.sandbox import Hidden
    from ..league.config import ConfigError, check_sandboxes, hidden_places

    place = Hidden(str(key), "the TLS key (--tls-key)", "keep it outside the bots' folders")
    try:
        check_sandboxes(config, (*hidden_places(config), place))
    except ConfigError as exc:
        fail(str(exc))


def say_public(config: LeagueConfig, host: str, insecure: bool) -> None:
    """On an address that is not loopback: a warning line for plain TCP, and one naming
    the tcp bots whose tokens the league file (or what it points to) holds."""
    from ..text import shown

    if insecure:
        click.echo(
            f"referee: warning: serving plain TCP on {shown(host)} (--insecure-plaintext): "
            "tokens and hands cross the network unencrypted; the standings and the site "
            "will say so",
            err=True,
        )
    plain = [b.name for b in config.bots if b.tcp and b.token is not None]
    if plain:
        click.echo(
            shown(
                f"referee: warning: {', '.join(plain)}: the league file gives "
                f"{'its token' if len(plain) == 1 else 'their tokens'} (token, token_env "
                "or token_file), so whoever reads it can log in as "
                f"{'that bot' if len(plain) == 1 else 'them'}; each bot's author can run "
                "`referee token new NAME` and send you the token_sha256 line to use instead"
            ),
            err=True,
        )
