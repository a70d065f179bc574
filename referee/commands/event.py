"""`referee event`: a staged event (Swiss rounds, group knockout, round robin, final)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import LEAGUE_SANDBOX, fail, run_trio, sandbox_option, wide_console
from .league_options import jobs_option, resume_command


@click.command("event")
@click.argument("event_file", type=click.Path(dir_okay=False))
@sandbox_option(LEAGUE_SANDBOX)
@jobs_option(
    "Games at once (default: event.jobs, else the number of cores): the tables of a "
    "round are played side by side."
)
@click.option(
    "--out", metavar="DIRECTORY", default=None, help="Output folder (default: event.out)."
)
@click.option("--resume", is_flag=True, help="Go on from where a stopped run of the event was.")
def event_cmd(
    event_file: str, sandbox: str | None, jobs: int | None, out: str | None, resume: bool
) -> None:
    """Run an event: referee event EVENT.toml [--jobs N] [--out DIR] [--resume].

    Stage after stage (spec/EVENTS.md), each round's tables made from the results so
    far and played as leagues of their own in OUT/stage-S/round-RR/table-T. The
    tables, scores, and who advanced and why are in OUT/event.json and its site
    (OUT/site, brought up to date after each round); the standings are printed at
    the end. Exit 0 when the event ended, 2 for bad input or an event that cannot be
    played."""
    from ..event.config import load_event
    from ..event.run import EventError, run_event
    from ..league.config import ConfigError, default_jobs
    from ..league.ledger import LedgerError
    from ..logs.outputs import OutputError
    from ..proof.commitment import CommitmentError
    from ..site import SiteError
    from ..site.event import build_event_site
    from ..text import shown

    try:
        cfg = load_event(Path(event_file), out=Path(out) if out else None, sandbox=sandbox)
    except ConfigError as exc:
        fail(str(exc))
    console = wide_console()
    workers = jobs or cfg.base.jobs or default_jobs()
    resume_cmd = resume_command(cfg.out)

    def say(line: str) -> None:
        console.print(shown(line), markup=False, highlight=False, soft_wrap=True)

    def site() -> None:
        build_event_site(cfg.out)

    try:
        record = run_trio(
            lambda: run_event(
                cfg, jobs=workers, resume=resume, console=console, say=say, on_round=site
            )
        )
    except (EventError, LedgerError, CommitmentError, OutputError, SiteError) as exc:
        fail(f"{exc}; resume with: {resume_cmd}" if isinstance(exc, EventError) else str(exc))
    except KeyboardInterrupt:
        click.echo(
            "referee: interrupted; the games in progress were abandoned (not scored). "
            f"Resume with: {resume_cmd}",
            err=True,
        )
        sys.exit(130)
    last = record.stages[-1]
    say(f"{cfg.name}: final standings")
    for i, name in enumerate(last.ranking):
        say(f"{i + 1:>3}. {name}  ({last.why.get(name, '')})")
    for stage in reversed(record.stages[:-1]):
        for name in stage.ranking:
            if name not in stage.advanced:
                say(f"  -  {name}  (stage {stage.index}: {stage.why.get(name, '')})")
    say(f"written: {cfg.out / 'event.json'}; the site: {cfg.out / 'site' / 'index.html'}")
