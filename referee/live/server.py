"""The live pages over HTTP: Starlette on hypercorn's trio worker, in the referee's own
trio process (no thread, no other event loop).

- `/`: the games of the run (`assets/live.html`), kept current by `/events`;
- `/games`: the same list as JSON, once;
- `/events`: Server-Sent Events, the list each time it changes;
- `/game/ID`: one game in the replay viewer (`assets/replay.html`, fetched as
  `/viewer`), redrawn from `/game/ID/events` as it changes: the public view while it is
  played (where the league allows it), the whole game once its deal is over;
- `/site/...`: the results site, when the league builds one (`--site`).

Every body is the feed's (`LiveFeed`): this module adds no fact of a game. An event's
data is one line of JSON (a bot's text in it is escaped JSON text; the pages show it as
text). A stream sends a comment every `KEEPALIVE_S` seconds to keep proxies open, and
ends once its game is shown, or when the run is over.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import cast

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from hypercorn.typing import Framework
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .feed import LiveFeed, LiveGame

KEEPALIVE_S = 15.0
KEEPALIVE = b": keep-alive\n\n"
RETRY = b"retry: 1000\n\n"  # a page whose stream drops connects again after a second
FINAL = ("shown", "withheld", "abandoned", "recorded")  # nothing more will come
_NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def _asset(name: str) -> str:
    return resources.files("referee").joinpath(f"assets/{name}").read_text(encoding="utf-8")


def app(feed: LiveFeed, site: Path | None = None) -> Starlette:
    """The ASGI application serving `feed` (and the results site in `site`)."""
    page = _asset("live.html")
    viewer = _asset("replay.html")

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=_NO_STORE)

    async def viewer_page(request: Request) -> Response:
        return HTMLResponse(viewer, headers=_NO_STORE)

    async def listing(request: Request) -> Response:
        return Response(feed.listing(), media_type="application/json", headers=_NO_STORE)

    async def list_events(request: Request) -> Response:
        return _stream(feed, _list_stream(feed), request)

    async def game_page(request: Request) -> Response:
        if request.path_params["game"] not in feed.games:
            return Response("no such game\n", status_code=404, media_type="text/plain")
        return HTMLResponse(page, headers=_NO_STORE)

    async def game_events(request: Request) -> Response:
        game = feed.games.get(request.path_params["game"])
        if game is None:
            return Response("no such game\n", status_code=404, media_type="text/plain")
        return _stream(feed, _game_stream(feed, game), request)

    routes: list[BaseRoute] = [
        Route("/", index),
        Route("/viewer", viewer_page),
        Route("/games", listing),
        Route("/events", list_events),
        Route("/game/{game}", game_page),
        Route("/game/{game}/events", game_events),
    ]
    if site is not None:
        routes.append(Mount("/site", StaticFiles(directory=site, html=True, check_dir=False)))
    return Starlette(routes=routes)


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding header takes gzip (RFC 9110: `gzip` or `x-gzip`, with
    no weight or a weight above 0)."""
    for part in header.split(","):
        name, _, params = part.partition(";")
        if name.strip().lower() not in ("gzip", "x-gzip"):
            continue
        weight = params.strip().lower().replace(" ", "")
        if not weight.startswith("q="):
            return True
        try:
            return float(weight[2:]) > 0
        except ValueError:
            return False
    return False


GZIP_HEAD = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate; no name, time or OS
_LAST_BLOCK = b"\x03\x00"  # an empty final deflate block
_DEFLATED: dict[bytes, bytes] = {}  # the latest events' deflate blocks, by their bytes
_DEFLATED_KEEP = 8 << 20  # bytes of events whose blocks are kept (the oldest go first)
_deflated_size = 0


def deflated(event: bytes) -> bytes:
    """`event` as deflate blocks of its own: compressed with nothing before it and flushed
    to a byte, so that any stream can send them after any others. Made once for every
    stream that sends the same bytes (a game's snapshot is one bytes object for all of
    them); the latest are kept. Every event a spectator may see is public, and each is
    compressed alone: no secret shares a compression with a bot's text."""
    global _deflated_size
    blocks = _DEFLATED.get(event)
    if blocks is None:
        squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
        blocks = squeeze.compress(event) + squeeze.flush(zlib.Z_SYNC_FLUSH)
        _DEFLATED[event] = blocks
        _deflated_size += len(event) + len(blocks)
        while _deflated_size > _DEFLATED_KEEP and len(_DEFLATED) > 1:
            oldest = next(iter(_DEFLATED))
            _deflated_size -= len(oldest) + len(_DEFLATED.pop(oldest))
    return blocks


class GzipStream:
    """One response's gzip framing around shared deflate blocks: its head, each event's
    blocks (`deflated`), and at its end a last block, the CRC-32 and the length of all
    it carried (RFC 1952)."""

    def __init__(self) -> None:
        self.crc = 0
        self.size = 0
        self.head = GZIP_HEAD

    def part(self, *events: bytes) -> bytes:
        out, self.head = self.head, b""
        for event in events:
            self.crc = zlib.crc32(event, self.crc)
            self.size += len(event)
            out += deflated(event)
        return out

    def end(self) -> bytes:
        return self.part() + _LAST_BLOCK + struct.pack("<II", self.crc, self.size & 0xFFFFFFFF)


def _stream(feed: LiveFeed, events: AsyncIterator[tuple[bytes, ...]], request: Request) -> Response:
    """A Server-Sent Events response of `events`, gzip-encoded when the client takes it
    (every browser does): a game's view is JSON that gzip makes a third to a fifth as
    long, for spectators on slow links and servers that pay by the byte."""
    gzip = GzipStream() if accepts_gzip(request.headers.get("accept-encoding", "")) else None

    async def counted() -> AsyncIterator[bytes]:
        feed.streams += 1
        try:
            first = RETRY  # sent with the first event: one write fewer per stream
            async for parts in events:  # what goes in one write, in parts shared by streams
                if gzip is None:
                    yield b"".join((first, *parts))
                else:
                    yield gzip.part(first, *parts) if first else gzip.part(*parts)
                first = b""
            if gzip is not None:
                yield gzip.part(first) + gzip.end() if first else gzip.end()
            elif first:
                yield first
        finally:
            feed.streams -= 1

    headers = _NO_STORE | {"X-Accel-Buffering": "no", "Vary": "Accept-Encoding"}
    if gzip is not None:
        headers["Content-Encoding"] = "gzip"
    return StreamingResponse(counted(), media_type="text/event-stream", headers=headers)


def _event(name: str, data: bytes) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


async def _list_stream(feed: LiveFeed) -> AsyncIterator[tuple[bytes, ...]]:
    """The list each time what a spectator may see of it changes (at most one an
    interval). A keep-alive comes `KEEPALIVE_S` after the last thing sent, whatever
    happened meanwhile: its time says nothing of a game the list does not show."""
    sent, said, last = -1, b"", trio.current_time()
    while True:
        if feed.version != sent:
            sent = feed.version
            listing = feed.listing()
            if listing != said:
                said = listing
                yield b"event: games\ndata: ", listing, b"\n\n"  # the list's bytes: shared
                last = trio.current_time()
                if feed.over and feed.version == sent:
                    return  # the last list sent is the run's last
                await feed.pause()  # at most one list an interval
            continue
        with trio.move_on_at(last + KEEPALIVE_S):
            while feed.version == sent:
                await feed.changed.wait()
            continue
        yield (KEEPALIVE,)
        last = trio.current_time()


async def _game_stream(feed: LiveFeed, game: LiveGame) -> AsyncIterator[tuple[bytes, ...]]:
    """The game's status, and its snapshots (at most one an interval: every stream
    waits for the same moment, so one encoding serves them all), each as the part
    since the one before (`more`) or whole (`game`), until it is shown whole or the run
    is over. A game not shown yet changes nothing a spectator receives, not even the
    time of a keep-alive (sent `KEEPALIVE_S` after the last thing sent). While a stream
    is open its game's whole view is made as soon as the game is shown; a game shown
    while nobody watched is made when a stream first asks (`LiveFeed.ready`)."""
    sent_status, have, last = "", 0, trio.current_time()
    game.watchers += 1
    try:
        while True:
            await feed.ready(game)
            seen = game.version
            snap = feed.snapshot(game)
            status = game.shown_status(feed.public)
            out: tuple[bytes, ...] = ()  # in one write: a new status and its data
            if status != sent_status:
                sent_status = status
                out = (_event("status", b'"' + status.encode() + b'"'),)
            if snap and game.seq != have:
                out += (feed.framed(game, have),)  # the game's event, made once for all
                have = game.seq
            if out:
                yield out
                last = trio.current_time()
                if game.version != seen:
                    continue  # it changed while this was sent (shown, say): that goes next
            if game.status in FINAL or feed.over:
                return
            if game.status == "playing" and game.snapped != game.version and snap:
                # Moves not yet in the snapshot: the next one is due an interval after it.
                with trio.move_on_at(game.snapped_at + feed.interval):
                    await feed.ended.wait()
                continue
            with trio.move_on_at(last + KEEPALIVE_S):
                while game.version == seen and not feed.over:
                    await game.changed.wait()
                continue
            yield (KEEPALIVE,)
            last = trio.current_time()
    finally:
        game.watchers -= 1


async def serve(
    feed: LiveFeed,
    host: str,
    port: int,
    site: Path | None = None,
    tls: tuple[Path, Path] | None = None,
    stop: trio.Event | None = None,
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the feed on `host:port` until cancelled, over HTTPS with `tls` (a PEM
    certificate chain and its key; TLS 1.2 at least, as hypercorn sets); `task_status`
    gets the address. Once `stop` is set the server stops gracefully: it takes no new
    connection and closes the open ones once their responses are sent (within
    `graceful_timeout`), so a spectator's last event is never cut off by a reset."""
    config = Config()
    if tls is not None:
        config.certfile, config.keyfile = str(tls[0]), str(tls[1])
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.graceful_timeout = 1.0
    config.accesslog = None
    config.errorlog = None
    config.keep_alive_timeout = 30.0
    config.h2_max_concurrent_streams = 100
    config.backlog = 128
    shutdown = trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                lambda task_status: hypercorn_serve(
                    cast(Framework, app(feed, site)),  # an ASGI app: Starlette's types differ
                    config,
                    shutdown_trigger=shutdown.wait,
                    task_status=task_status,
                )
            )
            task_status.started(binds[0])
            await (trio.Event() if stop is None else stop).wait()  # None: until cancelled
            shutdown.set()
    finally:
        shutdown.set()
