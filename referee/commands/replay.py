"""`referee replay`: a game log verified, and shown as text, JSON or a web page."""

from __future__ import annotations

import sys

import click

from .common import fail


@click.command("replay")
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

    from ..logs.gamelog import LogError, log_bytes, read_log
    from ..logs.replay import verify
    from ..logs.replay_seat import check, redact
    from ..text import shown

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
        from ..logs.outputs import OutputError, ready_file

        try:
            ready_file(Path(html_file), "--html")  # before the work of verifying and rendering
        except OutputError as exc:
            fail(str(exc))
    try:
        log = read_log(Path(log_file), allow_redacted=True)
    except LogError as exc:
        fail(str(exc))
    own = log.header.seat  # set in a log written for one seat
    if own is None and log.header.seed is None:
        fail(
            f"{log_file}: a log published without its seed (a results site's copy): the game "
            "cannot be re-derived from it; replay the league's own log (OUT/logs)"
        )
    if own is not None:
        if seat is not None and seat != own:
            fail(f"--seat {seat}: {log_file} was written for seat {own} and holds only what it saw")
        seat = own
    from ..logs.replay_text import SelectionError, records, select
    from ..logs.replay_text import show as show_text

    try:
        selection = select(log, seat, round_number, move)
    except SelectionError as exc:
        fail(str(exc))
    verdict = verify(log) if own is None else check(log)
    if verdict.divergence is not None:
        click.echo(shown(f"{log_file}: diverges at {verdict.divergence}"))
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
    source: bytes | None = None  # the full log's text, for its page's download link
    if own is None and seat is not None:
        log = redact(log, seat)  # a seat's output is made from what its own log holds
    elif own is None and html_file is not None:
        source = log_bytes(Path(log_file))
    if show:
        for line in show_text(log, selection):
            click.echo(shown(line))  # names and fault evidence come from bots
    elif as_json:
        for record in records(log, selection):
            click.echo(json.dumps(record, separators=(",", ":")))
    elif html_file is not None:
        from ..logs.replay_html import render

        page = render(log, selection, source)
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
