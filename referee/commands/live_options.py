"""What `league`, `serve` and `arena run` share for `--live`: the options (the port,
the address, and TLS as `serve` offers it to bots), their check, and the run of a
command's work while the live view is served (`referee.live`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from .common import fail

if TYPE_CHECKING:
    from ..live.feed import LiveFeed

T = TypeVar("T")


@dataclass(frozen=True)
class LiveListen:
    """Where and how `--live` serves: HTTP, or HTTPS with `cert` and `key`."""

    port: int
    host: str
    cert: Path | None = None
    key: Path | None = None
    self_signed: bool = False  # the certificate is made in OUT/live-tls on the first start


def live_options(what: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--live PORT, --live-host, and --live-tls self-signed or --live-tls-cert and
    --live-tls-key (HTTPS; the same kinds of certificate as `serve --tls`)."""

    def apply(fn: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(
            [
                click.option(
                    "--live",
                    "live_port",
                    type=click.IntRange(min=0, max=65535),
                    default=None,
                    metavar="PORT",
                    help=f"Serve the live view of the games on this port (0: any free one; "
                    f"the address is printed): the list of games, and each game in the "
                    f"replay viewer as {what} allows (docs/live.md).",
                ),
                click.option(
                    "--live-host",
                    default="127.0.0.1",
                    show_default=True,
                    help="The address --live listens on (0.0.0.0: every interface).",
                ),
                click.option(
                    "--live-tls",
                    "live_tls",
                    type=click.Choice(["self-signed"]),
                    default=None,
                    help="Serve --live over HTTPS with a key and certificate made on the "
                    "first start and kept in OUT/live-tls (its fingerprint is printed).",
                ),
                click.option(
                    "--live-tls-cert",
                    type=click.Path(dir_okay=False),
                    default=None,
                    help="Serve --live over HTTPS with this PEM certificate chain.",
                ),
                click.option(
                    "--live-tls-key",
                    type=click.Path(dir_okay=False),
                    default=None,
                    help="The key of --live-tls-cert.",
                ),
            ]
        ):
            fn = option(fn)
        return fn

    return apply


def live_listen(
    port: int | None,
    host: str,
    tls: str | None,
    cert: str | None,
    key: str | None,
) -> LiveListen | None:
    """The checked --live options (None without --live); a one-line error (exit 2)
    for TLS options without --live, half a certificate, or one that cannot serve."""
    from ..net.tls import TlsError, server_tls

    if port is None:
        if tls is not None or cert is not None or key is not None:
            fail("--live-tls, --live-tls-cert and --live-tls-key are for --live: give --live PORT")
        return None
    if (cert is None) != (key is None):
        fail("--live-tls-cert and --live-tls-key: give both, the certificate chain and its key")
    if tls is not None and cert is not None:
        fail("--live-tls self-signed and --live-tls-cert: give one")
    if cert is not None and key is not None:
        try:  # refused before anything starts
            server_tls(Path(cert), Path(key), options=("--live-tls-cert", "--live-tls-key"))
        except TlsError as exc:
            fail(str(exc))
        return LiveListen(port, host, Path(cert), Path(key))
    return LiveListen(port, host, self_signed=tls is not None)


def _first(group: BaseException, kind: type[OSError]) -> OSError | None:
    """The first `kind` in `group`, however deep its exception groups nest."""
    if isinstance(group, kind):
        return group
    if isinstance(group, BaseExceptionGroup):
        for inner in group.exceptions:
            if (found := _first(inner, kind)) is not None:
                return found
    return None


async def serve_live(
    feed: LiveFeed,
    listen: LiveListen,
    site: Path | None,
    out: Path,
    work: Callable[[], Awaitable[T]],
) -> T:
    """Do `work` (play the league, run the arena) while the live view is served; the
    view's address is printed on stderr before the first game (`live:
    http://HOST:PORT/`, with the certificate's fingerprint over HTTPS)."""
    import trio

    from ..live.server import serve
    from ..net.tls import TlsError, self_signed

    cert, key, said = listen.cert, listen.key, ""
    try:
        if listen.self_signed:
            made = await trio.to_thread.run_sync(self_signed, out / "live-tls", listen.host)
            cert, key = made.cert, made.key
        if cert is not None and key is not None:
            from ..net.tls import server_tls

            said = f" (certificate {server_tls(cert, key).fingerprint})"
    except TlsError as exc:
        fail(str(exc))
    tls = (cert, key) if cert is not None and key is not None else None
    host, port = listen.host, listen.port
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        try:
            address = await nursery.start(serve, feed, host, port, site, tls, stop)
        except (OSError, BaseExceptionGroup) as exc:
            # hypercorn binds in a task of its own: its OSError comes in a group
            found = exc if isinstance(exc, OSError) else _first(exc, OSError)
            if found is None:
                raise
            fail(f"--live {port}: cannot listen on {host}:{port}: {found.strerror or found}")
        click.echo(f"live: {address}/{said}", err=True)
        try:
            return await work()
        finally:
            feed.finish()
            # The open streams send their last and end; a page whose stream dropped
            # meanwhile reconnects within the second (`retry`) and gets the end too.
            with trio.move_on_after(10):  # a slow reader on a busy machine
                await trio.sleep(1)
                while feed.streams:
                    await trio.sleep(0.02)
            stop.set()  # hypercorn ends each connection cleanly, then returns
            nursery.cancel_scope.deadline = trio.current_time() + 3
