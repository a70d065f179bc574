"""`referee site`: a league's results as a static site."""

from __future__ import annotations

import click

from .common import fail


@click.command("site")
@click.argument("out_dir")  # checked by `read_league`: a file or no folder is one line
@click.option(
    "--to",
    "to_dir",
    metavar="DIRECTORY",
    default=None,
    help="Where to write the site (default: OUT/site).",
)
@click.option("--title", default=None, help='The site\'s title (default: "LEAGUE: results").')
@click.option(
    "--with-stderr",
    is_flag=True,
    help="Also publish the bots' stderr (the organiser's, left out by default) once the "
    "league is over.",
)
def site_cmd(out_dir: str, to_dir: str | None, title: str | None, with_stderr: bool) -> None:
    """Build the results site of the league in OUT_DIR: standings, a page per bot and
    every game's replay; it opens from disk (index.html) or any static host."""
    from pathlib import Path

    from ..logs.outputs import OutputError, WriteError, ready_folder
    from ..site import SiteError, build_site

    to = Path(to_dir) if to_dir is not None else None
    try:
        if to is not None:
            ready_folder(to, "--to")
        report = build_site(Path(out_dir), to, title=title, with_stderr=with_stderr)
    except (SiteError, OutputError, WriteError) as exc:
        fail(str(exc))
    click.echo(
        f"site written to {report.folder}/index.html: {report.games} games, "
        f"{report.published} replays ({report.new_games} new) in {report.seconds:.1f} s"
    )
