"""`referee arena`: an open, continuous competition that bots join, update and leave
while it runs (`referee arena ARENA.toml`), and the commands that act on it through
its ledger: add, update, remove, list, status, stop, freeze, final, site."""

from __future__ import annotations

import json
import logging
import shlex
import sys
import tomllib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import fail, run_trio, wide_console
from .league_options import tls_options
from .live_options import live_listen, live_options, serve_live

LIVE_KEEP = 200  # games in an arena's live list: the latest (the results site has all)

if TYPE_CHECKING:
    from ..arena.config import ArenaConfig
    from ..arena.ledger import ArenaLedger
    from ..league.cluster import Cluster


class ArenaGroup(click.Group):
    """`referee arena FILE ...` runs the arena; `referee arena WORD ...` is a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("arena", cls=ArenaGroup)
def arena_cmd() -> None:
    """An open, continuous competition: `referee arena ARENA.toml` runs it until
    `referee arena stop DIR` (or Ctrl-C), and resumes from its ledger when started
    again. While it runs, `add`, `update` and `remove` change its entries, `list` and
    `status` show them; `freeze` closes entries and `final` plays the final stage.
    spec/ARENA.md has the file format and the matchmaking rule."""


def _open(folder: str) -> tuple[ArenaConfig, ArenaLedger]:
    """The arena in `folder`: its terms (as its last run read them) and its ledger."""
    from ..arena.config import parse_arena
    from ..arena.ledger import DB_NAME, ArenaError, ArenaLedger
    from ..league.config import ConfigError

    out = Path(folder).resolve()
    try:
        ledger = ArenaLedger(out / DB_NAME)
    except ArenaError as exc:
        fail(str(exc))
    kept = ledger.meta("arena_file")
    if kept is None:
        fail(
            f"{out}: the arena's ledger holds no arena file; start it with "
            "`referee arena ARENA.toml`"
        )
    saved = json.loads(kept)
    try:
        return parse_arena(saved["data"], Path(saved["path"]), out=out), ledger
    except ConfigError as exc:
        fail(str(exc))


Command = Callable[..., None]


def listener_options(who: str, without: str) -> Callable[[Command], Command]:
    """--host, --port and the TLS options of a listener for `who` (`arena`, `arena
    final`); `without` says what happens with no --port."""

    def apply(fn: Command) -> Command:
        fn = tls_options(fn)
        fn = click.option(
            "--port",
            type=click.IntRange(0, 65535),
            default=None,
            help=f"Listen for {who} on this port (0: a free one); {without}.",
        )(fn)
        return click.option(
            "--host", default="127.0.0.1", show_default=True, help=f"Where {who} connect."
        )(fn)

    return apply


@arena_cmd.command("run")
@click.argument("arena_file", type=click.Path(dir_okay=False))
@click.option("--out", metavar="DIRECTORY", default=None, help="The arena's folder.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Tables at once.")
@click.option(
    "--site",
    "site_dir",
    metavar="DIRECTORY",
    default=None,
    help="Keep the results site in this folder, refreshed as games finish.",
)
@listener_options("tcp bots", "without it, tcp entries cannot play")
@click.option(
    "--cluster",
    metavar="local:N|ADDRESS",
    default=None,
    help="Play the units without a tcp seat on a Dask cluster: local:N starts N worker "
    "processes here, tcp://HOST:8786 uses a running scheduler (bots' folders at the "
    "same paths on every worker).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@live_options("arena.live")
def arena_run_cmd(
    arena_file: str,
    out: str | None,
    jobs: int | None,
    site_dir: str | None,
    host: str,
    port: int | None,
    tls_mode: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    insecure_plaintext: bool,
    cluster: str | None,
    quiet: bool,
    live_port: int | None,
    live_host: str,
    live_tls: str | None,
    live_tls_cert: str | None,
    live_tls_key: str | None,
) -> None:
    """Run the arena of ARENA_FILE until it is stopped (it resumes its ledger)."""
    import trio

    from ..arena.config import parse_arena
    from ..arena.ledger import ArenaError
    from ..arena.run import ArenaRun, prepare, run_arena
    from ..arena.site import ArenaSite
    from ..league.cluster import ClusterError
    from ..league.config import ConfigError, default_jobs
    from ..logs.outputs import OutputError
    from ..text import ShownFormatter
    from .league_options import open_cluster

    handler = logging.StreamHandler()
    handler.setFormatter(ShownFormatter("referee: %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    path = Path(arena_file)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"{path}: cannot read: {exc.strerror}")
    except tomllib.TOMLDecodeError as exc:
        fail(f"{path}: not valid TOML: {exc}")
    try:
        arena = parse_arena(raw, path, out=Path(out) if out else None)
    except ConfigError as exc:
        fail(str(exc))
    _check_listener(host, port, tls_mode, tls_cert, tls_key, insecure_plaintext)
    listen = live_listen(live_port, live_host, live_tls, live_tls_cert, live_tls_key)
    console = wide_console()
    site = None
    if site_dir is not None:
        site = ArenaSite(arena, Path(site_dir))
    workers = jobs or default_jobs()
    feed = None
    if listen is not None:
        from ..live.feed import LiveFeed

        # An arena runs for days: its list keeps the latest games (the site has all).
        feed = LiveFeed(arena.arena.live, arena.arena.duplicate, keep=LIVE_KEEP)

    async def main() -> ArenaRun:
        async with open_cluster(cluster, workers) as opened:
            if feed is None or listen is None:
                return await serve(opened)
            folder = Path(site_dir) if site_dir else None
            return await serve_live(feed, listen, folder, arena.out, partial(serve, opened))

    async def serve(opened: Cluster | None) -> ArenaRun:
        if port is None:
            return await run_arena(
                arena,
                jobs=workers,
                console=console,
                quiet=quiet,
                site=site,
                raw=raw,
                cluster=opened,
                live=feed,
            )
        server, tls = _server(arena, host, tls_mode, tls_cert, tls_key)
        prepare(arena, raw).close()  # `arena add` works once it says it listens
        async with trio.open_nursery() as nursery:
            where = await _listen(nursery, server, host, port, tls)

            def started(run: ArenaRun) -> None:
                (arena.out / "address").write_text(where + "\n", encoding="utf-8")

            run = await run_arena(
                arena,
                jobs=workers,
                console=console,
                quiet=quiet,
                server=server,
                site=site,
                raw=raw,
                on_start=started,
                cluster=opened,
                live=feed,
            )
            await server.close()
            nursery.cancel_scope.cancel()
        return run

    try:
        ended = run_trio(main)
    except KeyboardInterrupt:
        print(
            f"stopped; start it again to resume: referee arena {shlex.quote(arena_file)}",
            file=sys.stderr,
        )
        sys.exit(130)
    except (ArenaError, OutputError, ClusterError) as exc:
        fail(str(exc))
    need = min(arena.sizes)
    if ended.recorded == 0 and ended.authors_at_end < need:
        fail(
            f"nothing was played: {ended.authors_at_end} authors had an active version when "
            f"it stopped, a table needs {need}; `referee arena list {arena.out}` says why "
            "each version is out",
            status=1,
        )
    print(
        f"stopped after {ended.recorded} games this run; start it again to resume: "
        f"referee arena {shlex.quote(arena_file)}",
        file=sys.stderr,
    )


def _check_listener(
    host: str,
    port: int | None,
    tls_mode: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    insecure_plaintext: bool,
) -> None:
    """The listener's options hold together (`arena` and `arena final` alike), before
    anything starts."""
    from ..net.tls import is_loopback

    secure = tls_mode is not None or tls_cert is not None
    if (tls_cert is None) != (tls_key is None):
        fail("--tls-cert and --tls-key: give both, the certificate chain and its key")
    if port is None and (secure or insecure_plaintext):
        fail("--tls, --tls-cert and --insecure-plaintext are for tcp bots: give --port too")
    if port is not None and not is_loopback(host) and not secure and not insecure_plaintext:
        fail(
            f"--host {host}: plain TCP on an address that is not loopback would show every "
            "token and hand to the network; serve over TLS (--tls self-signed, or --tls-cert "
            "and --tls-key), or allow it with --insecure-plaintext"
        )


def _server(
    arena: ArenaConfig, host: str, tls_mode: str | None, tls_cert: str | None, tls_key: str | None
) -> tuple[Any, Any]:
    """The arena's server of tcp bots and its TLS (None: plain TCP); a bad certificate
    or key is one line, exit 2, before anything is written."""
    from ..net.server import BotServer
    from ..net.tls import ServerTls, TlsError, self_signed, server_tls

    tls: ServerTls | None = None
    try:
        if tls_cert is not None and tls_key is not None:
            tls = server_tls(Path(tls_cert), Path(tls_key))
        elif tls_mode is not None:
            tls = self_signed(arena.out / "tls", host)
    except TlsError as exc:
        fail(str(exc))
    server = BotServer(arena.probe_config(arena.sizes[0]), tls=tls.context if tls else None)
    return server, tls


async def _listen(nursery: Any, server: Any, host: str, port: int, tls: Any) -> str:
    """Start listening; say where (and the certificate's fingerprint, for `connect
    --pin`) in the line tcp bots' authors wait for. Its address."""
    try:
        listeners = await nursery.start(server.serve, host, port)
    except* OSError as group:  # the server's own nursery hands it on in a group
        exc: BaseException = group
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"--port {port}: cannot listen on {host}:{port}: {why}")
    name = listeners[0].socket.getsockname()
    where = f"{name[0]}:{name[1]}"
    extra = f" (TLS, certificate {tls.fingerprint})" if tls is not None else ""
    print(f"listening on {where}{extra}", flush=True)
    return where


def _bot_table(
    command: str | None, cwd: str | None, tcp: bool, sandbox: str | None, env: Sequence[str]
) -> tuple[dict[str, Any], str | None]:
    """The [[bot]] table of a new version, and its token (tcp only)."""
    from ..bots.tokens import new_token, token_sha256
    from .common import parse_env

    if tcp == (command is not None):
        fail("give --command CMD (a bot the arena starts) or --tcp (a bot that connects)")
    if tcp:
        if cwd is not None or sandbox is not None or env:
            fail("--cwd, --sandbox and --env are for a bot the arena starts, not --tcp")
        token = new_token()
        return {"transport": "tcp", "token_sha256": token_sha256(token)}, token
    assert command is not None
    if not shlex.split(command):
        fail("--command: empty")
    folder = Path(cwd or ".").resolve()
    if not folder.is_dir():
        fail(f"--cwd: {folder} is not a folder")
    table: dict[str, Any] = {"command": shlex.split(command), "cwd": str(folder)}
    if sandbox is not None:
        table["sandbox"] = sandbox
    if env:
        table["env"] = parse_env(tuple(env))
    return table, None


def _add(
    folder: str,
    name: str,
    author: str | None,
    update: bool,
    table: dict[str, Any],
    token: str | None,
) -> None:
    from ..arena.config import entry_problem
    from ..arena.ledger import ArenaError
    from ..league.config import ConfigError
    from ..text import quoted

    if (problem := entry_problem(name)) is not None:
        fail(f"NAME {quoted(name)} {problem}")
    arena, ledger = _open(folder)
    try:
        try:  # checked as the arena will read it: a bad table never reaches the ledger
            arena.check_bot({**table, "name": f"{name}@1"})
        except ConfigError as exc:
            fail(str(exc).replace("bot[0]", name))
        version = ledger.add(
            name,
            author or name,
            table,
            update=update,
            max_active=arena.arena.max_active_per_author,
            per_day=arena.arena.uploads_per_day,
            status="pending",
        )
    except ArenaError as exc:
        fail(str(exc))
    finally:
        ledger.close()
    click.echo(
        f"{version.name}: added, waiting for validation"
        if not version.tcp
        else f"{version.name}: added (tcp)"
    )
    if token is not None:
        click.echo(token)
        click.echo(
            f"referee arena: give the token above to the author of {quoted(name)}; the bot "
            f"connects with: referee connect HOST:PORT --name {version.name} --token-file FILE "
            "-- COMMAND (the arena's --host and --port; it is shown once, and the arena keeps "
            "only its SHA-256)",
            err=True,
        )


_entry_options = [
    click.option("--command", default=None, help="The bot's command line (run in --cwd)."),
    click.option("--cwd", default=None, help="Its folder (default: the current one)."),
    click.option("--tcp", is_flag=True, help="A bot that connects over TCP; prints its token."),
    click.option(
        "--sandbox",
        type=click.Choice(["auto", "bwrap", "none"]),
        default=None,
        help="Where it runs (default: the arena's sandbox).",
    ),
    click.option(
        "--env", multiple=True, metavar="KEY=VALUE", help="An environment variable for it."
    ),
]


def _with_entry_options(fn: Any) -> Any:
    for option in reversed(_entry_options):
        fn = option(fn)
    return fn


@arena_cmd.command("add")
@click.argument("folder", metavar="DIR")
@click.argument("name")
@_with_entry_options
@click.option(
    "--author",
    default=None,
    help="Its author (default: NAME); one author's versions never share a table.",
)
def arena_add_cmd(
    folder: str,
    name: str,
    command: str | None,
    cwd: str | None,
    tcp: bool,
    sandbox: str | None,
    env: tuple[str, ...],
    author: str | None,
) -> None:
    """Add entry NAME to the arena in DIR (running or not): it plays once validated."""
    table, token = _bot_table(command, cwd, tcp, sandbox, env)
    _add(folder, name, author, False, table, token)


@arena_cmd.command("update")
@click.argument("folder", metavar="DIR")
@click.argument("name")
@_with_entry_options
def arena_update_cmd(
    folder: str,
    name: str,
    command: str | None,
    cwd: str | None,
    tcp: bool,
    sandbox: str | None,
    env: tuple[str, ...],
) -> None:
    """A new version of entry NAME: once validated it plays instead of the old one,
    which keeps its history."""
    table, token = _bot_table(command, cwd, tcp, sandbox, env)
    _add(folder, name, None, True, table, token)


@arena_cmd.command("remove")
@click.argument("folder", metavar="DIR")
@click.argument("name")
def arena_remove_cmd(folder: str, name: str) -> None:
    """Take entry NAME out: it plays no new game; its games and history stay."""
    from ..arena.ledger import ArenaError

    _, ledger = _open(folder)
    try:
        names = ledger.remove(name)
    except ArenaError as exc:
        fail(str(exc))
    finally:
        ledger.close()
    click.echo(f"{name}: removed ({', '.join(names) or 'no version was playing'})")


@arena_cmd.command("list")
@click.argument("folder", metavar="DIR")
def arena_list_cmd(folder: str) -> None:
    """Every entry and version: status, why, games, and a rejected version's stderr."""
    from ..arena.validate import stderr_tail
    from ..text import shown

    arena, ledger = _open(folder)
    try:
        versions = ledger.versions()
    finally:
        ledger.close()
    if not versions:
        click.echo("no entry yet")
    for v in versions:
        kind = "tcp" if v.tcp else shlex.join(v.bot.get("command", []))
        line = f"{v.name}  {v.status}  author {v.author}  {v.games} games  {kind}"
        click.echo(shown(line))
        if v.reason:
            click.echo(shown(f"    {v.reason}"))
        if v.evidence:
            for item in json.loads(v.evidence):
                click.echo(shown(f"    {item['game']}: {item['fault']}"))
        if v.status == "rejected" and v.stderr:
            click.echo(shown(f"    stderr ({v.stderr}):"))
            for text in stderr_tail(arena.out, v.stderr).splitlines()[-10:]:
                click.echo(shown(f"    | {text}"))


@arena_cmd.command("status")
@click.argument("folder", metavar="DIR")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
def arena_status_cmd(folder: str, as_json: bool) -> None:
    """The leaderboard and what is in play."""
    from rich.table import Table

    from ..arena.board import leaderboard, status_of
    from ..arena.run import running
    from ..text import shown

    arena, ledger = _open(folder)
    try:
        board = leaderboard(ledger, arena.arena.provisional_sigma)
        units = ledger.units("open")
        pending = ledger.versions(("pending",))
        games = ledger.count()
        frozen = ledger.meta("frozen") is not None
        final = ledger.meta("final")
    finally:
        ledger.close()
    live = running(arena.out)
    if as_json:
        data = {
            "running": live,
            "frozen": frozen,
            "games": games,
            "leaderboard": [
                {
                    "place": r.place,
                    "version": r.version.name,
                    "author": r.version.author,
                    "rating": r.version.conservative,
                    "mu": r.version.mu,
                    "sigma": r.version.sigma,
                    "status": status_of(r.version, r.provisional),
                    "games": r.version.games,
                    "fault_rate": r.version.fault_rate,
                    "refit": r.refit,
                }
                for r in board
            ],
            "in_play": [{"unit": u.id, "stage": u.stage, "seats": list(u.seats)} for u in units],
            "pending": [v.name for v in pending],
            "final": json.loads(final) if final else None,
        }
        click.echo(json.dumps(data, indent=2))
        return
    console = wide_console()
    state = "running" if live else "stopped"
    console.print(
        shown(f"{arena.name}: {state}{', frozen' if frozen else ''}; {games} rated games"),
        markup=False,
        highlight=False,
    )
    grid = Table(title=None)
    for head in ("#", "version", "author", "μ − 3σ", "μ ± σ", "status", "games", "faults", "refit"):
        grid.add_column(
            head, justify="right" if head in ("#", "games", "μ − 3σ", "faults", "refit") else "left"
        )
    for r in board:
        v = r.version
        grid.add_row(
            str(r.place),
            shown(v.name),
            shown(v.author),
            f"{v.conservative:.2f}",
            f"{v.mu:.2f} ± {v.sigma:.2f}",
            status_of(v, r.provisional),
            str(v.games),
            f"{v.fault_rate:.0%}",
            "–" if r.refit is None else f"{r.refit:+.2f}",
        )
    console.print(grid)
    word = "in play" if live else "to resume"
    for u in units:
        console.print(
            shown(f"{word}: unit {u.id} ({u.stage}): {', '.join(u.seats)}"),
            markup=False,
            highlight=False,
        )
    for v in pending:
        console.print(shown(f"waiting for validation: {v.name}"), markup=False, highlight=False)
    if final:
        console.print(
            shown(f"final: {json.loads(final)['summary']}"), markup=False, highlight=False
        )


@arena_cmd.command("stop")
@click.argument("folder", metavar="DIR")
@click.option(
    "--after-games",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Wait until the arena has recorded N rated games, then stop it.",
)
def arena_stop_cmd(folder: str, after_games: int | None) -> None:
    """Stop the arena running in DIR (it ends within a second; this waits for it). The
    games in play are abandoned, never counted, and played again when it resumes."""
    import time

    from ..arena.run import POLL_S, running

    arena, ledger = _open(folder)
    try:
        if not running(arena.out):
            fail(f"{arena.out}: no arena is running there")
        if after_games is not None:
            while ledger.count() < after_games:
                if not running(arena.out):
                    fail(f"{arena.out}: the arena stopped after {ledger.count()} games")
                time.sleep(POLL_S)
        ledger.set_meta("stop", "1")
        while running(arena.out):
            time.sleep(POLL_S / 5)
        games = ledger.count()
    finally:
        ledger.close()
    click.echo(f"stopped after {games} rated games")


@arena_cmd.command("freeze")
@click.argument("folder", metavar="DIR")
def arena_freeze_cmd(folder: str) -> None:
    """Close entries: no add or update from now on; the arena plays on."""
    import time

    _, ledger = _open(folder)
    try:
        if ledger.meta("frozen") is None:
            ledger.set_meta("frozen", str(time.time()))
    finally:
        ledger.close()
    click.echo("frozen: entries are closed")


@arena_cmd.command("final")
@click.argument("folder", metavar="DIR")
@click.option(
    "--top",
    type=click.IntRange(min=2),
    required=True,
    help="Finalists: the top N of the leaderboard.",
)
@click.option(
    "--budget", type=click.IntRange(min=1), default=2000, show_default=True, help="Games at most."
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Tables at once.")
@click.option(
    "--site",
    "site_dir",
    metavar="DIRECTORY",
    default=None,
    help="Bring this site up to date after it.",
)
@listener_options("tcp finalists", "needed when one is a finalist")
@click.option(
    "--wait-s",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="How long to wait for the tcp finalists' first login before the first round.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the result.")
def arena_final_cmd(
    folder: str,
    top: int,
    budget: int,
    jobs: int | None,
    site_dir: str | None,
    host: str,
    port: int | None,
    tls_mode: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    insecure_plaintext: bool,
    wait_s: float,
    quiet: bool,
) -> None:
    """Play the final among the top N versions (the arena stopped and frozen): a
    duplicate round-robin on fresh deals until every adjacent pair is separated at 95%
    or the budget runs out. A tcp finalist connects to --port. Exit 0 when every pair
    was separated, 1 when the budget ran out first, 3 when a finalist forfeited games
    (a separation that rests on forfeits is no result)."""
    from ..arena.final import FinalResult, run_final
    from ..arena.ledger import ArenaError
    from ..arena.run import arena_lock
    from ..arena.site import build_arena_site
    from ..bots.sandbox import resolve
    from ..league.config import default_jobs
    from ..text import shown

    _check_listener(host, port, tls_mode, tls_cert, tls_key, insecure_plaintext)
    arena, ledger = _open(folder)
    console = wide_console()

    async def final(server: Any) -> FinalResult:
        return await run_final(
            arena,
            ledger,
            top=top,
            budget=budget,
            jobs=jobs or default_jobs(),
            console=console,
            quiet=quiet,
            auto=auto,
            server=server,
            wait_s=wait_s,
        )

    async def serve() -> FinalResult:
        import trio

        if port is None:
            return await final(None)
        server, tls = _server(arena, host, tls_mode, tls_cert, tls_key)
        async with trio.open_nursery() as nursery:
            where = await _listen(nursery, server, host, port, tls)
            (arena.out / "address").write_text(where + "\n", encoding="utf-8")
            try:
                return await final(server)
            finally:
                with trio.CancelScope(shield=True):
                    await server.close()
                nursery.cancel_scope.cancel()

    try:
        with arena_lock(arena.out):
            auto, _ = resolve("auto")
            result = run_trio(serve)
            if site_dir is not None:
                build_arena_site(arena, ledger, Path(site_dir))
    except ArenaError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        print("final stopped; run it again to resume", file=sys.stderr)
        sys.exit(130)
    finally:
        ledger.close()
    for k, row in enumerate(result.standings, start=1):
        lost = f"  {row['forfeits']} forfeited" if row["forfeits"] else ""
        click.echo(
            shown(f"{k}. {row['name']}  score {row['score']:.3f}  {row['games']} games{lost}")
        )
    click.echo(shown(result.summary))
    sys.exit(3 if result.forfeits else 0 if result.complete else 1)


@arena_cmd.command("site")
@click.argument("folder", metavar="DIR")
@click.option("--to", metavar="DIRECTORY", default=None, help="Where (default DIR/site).")
def arena_site_cmd(folder: str, to: str | None) -> None:
    """Build (or bring up to date) the arena's results site."""
    from ..arena.run import running
    from ..arena.site import build_arena_site

    arena, ledger = _open(folder)
    try:
        live = running(arena.out)  # an arena playing now: its open units are in play
        built = build_arena_site(arena, ledger, Path(to) if to else None, live=live)
    finally:
        ledger.close()
    click.echo(
        f"site: {Path(to) if to else arena.out / 'site'}: {built.published} replays "
        f"published, {built.entries} entry pages written"
    )
