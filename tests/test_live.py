"""The live feed (`referee league --live PORT`, issue 43): spectators connected to a
real league throughout, on real processes, byte by byte.

- Duplicate deals (`live = "after-deal"`, the default): nothing a spectator receives
  about a game, before every game of its deal is over, holds a fact of the game: the
  list gives its seats and "pending" only (not when it started or ended, no move
  count), and its stream sends no game data until the last log of its deal is
  complete (each log file's time against the time each event came). Every game is
  received once its deal is over, whole, as the replay page's full view of its log
  (without the seed).
- Non-duplicate deals with `live = "public"`: a game is sent move by move as it is
  played (whole, then each time the decisions since the last), and each snapshot is
  the spectator's view: its decisions are a prefix of
  the public part the results site makes of the finished game (`mask` of a seat's
  view, another code path), every hand a count; then the whole game once it is over.
- `live = "public"` with duplicate deals is refused in one line before anything starts.
- Fails closed: a snapshot that would hold a hand is never sent, and the game is
  withheld for the rest of the run.

Switching the embargo off in `LiveFeed.end` (showing a game as soon as it ends) fails
the first test: the first rotation of each deal is then received before the second's
log is written (games of one deal never overlap: `league.apart`).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.game.match import Decision
from referee.live.feed import LiveFeed
from referee.logs.gamelog import read_log
from referee.logs.replay_html import SpectatorData, page_data
from referee.logs.replay_text import select
from referee.rules import apply, legal_moves, new_game, preset
from referee.site.gamedata import mask, seat_view
from tests.test_replay_html import Browser
from tests.test_replay_html import browser as browser  # the fixture: one Chromium

PY = sys.executable
BIN = Path(PY).parent
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}


def league_file(folder: Path, *, duplicate: bool, live: str | None, bots: dict[str, str]) -> Path:
    lines = [
        "[league]",
        'name = "live"',
        'format = "round-robin"',
        "table = 2",
        "deals = 2",
        f"duplicate = {'true' if duplicate else 'false'}",
        'out = "out"',
        'deal_key = "' + "d00d" * 16 + '"',
        'bot_seed_key = "' + "b07" * 8 + '"',
    ]
    if live is not None:
        lines.append(f'live = "{live}"')
    lines += ["", "[rules]", 'preset = "standard"', "max_pip = 6", "", "[time]", "move_ms = 2000"]
    for name, command in bots.items():
        lines += ["", "[[bot]]", f'name = "{name}"', f'command = "{command}"']
    path = folder / "league.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Stream:
    """One Server-Sent Events stream, read in a thread: each event with the time it came."""

    host: str
    port: int
    path: str
    events: list[tuple[float, str, str]] = field(default_factory=list)  # (time, name, data)
    raw: bytearray = field(default_factory=bytearray)
    thread: threading.Thread | None = None
    tls: ssl.SSLContext | None = None  # HTTPS, trusting what this context trusts
    gzip: bool = False  # asks for gzip, as a browser does: `raw` is then what it decoded
    wire: int = 0  # the bytes of the body as they came

    def connect(self, timeout: float = 120) -> http.client.HTTPConnection:
        if self.tls is not None:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=self.tls
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def start(self) -> Stream:
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        return self

    def _lines(self, response: http.client.HTTPResponse) -> Iterator[bytes]:
        if not self.gzip:
            assert response.getheader("Content-Encoding") is None
            while line := response.readline():
                self.wire += len(line)
                yield line
            return
        assert response.getheader("Content-Encoding") == "gzip", response.getheaders()
        inflate, rest = zlib.decompressobj(31), b""  # gzip; its CRC and length checked
        while chunk := response.read1(65536):
            self.wire += len(chunk)
            # Each write decodes whole as it comes: no event waits for the next.
            *lines, rest = (rest + inflate.decompress(chunk)).split(b"\n")
            yield from (line + b"\n" for line in lines)
        assert inflate.eof and not inflate.unused_data and not rest, self.path

    def _read(self) -> None:
        conn = self.connect()
        conn.request("GET", self.path, headers={"Accept-Encoding": "gzip"} if self.gzip else {})
        response = conn.getresponse()
        assert response.status == 200, response.status
        name, data = "message", ""
        for line in self._lines(response):
            self.raw += line
            text = line.decode("utf-8").rstrip("\n")
            if text.startswith("event: "):
                name = text[7:]
            elif text.startswith("data: "):
                data = text[6:]
            elif text == "" and data:
                self.events.append((time.time(), name, data))
                name, data = "message", ""
        conn.close()

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(60)
        assert not self.thread.is_alive(), f"{self.path}: the stream did not end"


@dataclass
class Watched:
    out: Path
    games: list[Stream]
    listing: Stream
    zipped: list[Stream]  # the same streams again, asking for gzip
    zipped_listing: Stream
    err: str = ""  # the run's stderr after its first line

    @property
    def streams(self) -> list[Stream]:
        return self.games + self.zipped


def started(
    folder: Path, league: Path, *extra: str, command: str = "league"
) -> tuple[subprocess.Popen[str], str]:
    """`referee league LEAGUE --live 0` (or `command`) started, and the address it
    serves on (the rest of its first line: a certificate's fingerprint, over HTTPS)."""
    proc = subprocess.Popen(
        [PY, "-m", "referee", command, str(league), "--live", "0", "-q", *extra],
        cwd=folder,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    if not first.startswith(("live: http://", "live: https://")):
        proc.kill()
        raise AssertionError(first + proc.stderr.read())
    return proc, first[len("live: ") :].strip()


def watch(
    folder: Path,
    league: Path,
    *extra: str,
    command: str = "league",
    tls: Callable[[str], ssl.SSLContext] | None = None,
) -> Watched:
    """Run the league with --live 0, a spectator on the list and on every game's stream
    from the start; return once the league is over and every stream has ended. With
    `tls`, over HTTPS, trusting the context `tls` makes of the first line's rest."""
    proc, said = started(folder, league, *extra, command=command)
    try:
        address, _, rest = said.partition(" ")
        context = tls(rest) if tls is not None else None
        host, port = address.split("://", 1)[1].rstrip("/").rsplit(":", 1)
        listing = Stream(host, int(port), "/events", tls=context).start()
        zipped_listing = Stream(host, int(port), "/events", tls=context, gzip=True).start()
        games: list[str] = []
        while not games:  # the run lists its games once its ledger is ready
            conn = listing.connect(30)
            conn.request("GET", "/games")
            games = [g["game"] for g in json.loads(conn.getresponse().read())["games"]]
            conn.close()
            assert proc.poll() is None or games, "the run ended with no game listed"
            time.sleep(0 if games else 0.05)
        streams = [Stream(host, int(port), f"/game/{g}/events", tls=context).start() for g in games]
        zipped = [
            Stream(host, int(port), f"/game/{g}/events", tls=context, gzip=True).start()
            for g in games
        ]
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
    for s in [listing, zipped_listing, *streams, *zipped]:
        s.join()
    return Watched(folder / "out", streams, listing, zipped, zipped_listing, err)


def pages(stream: Stream) -> list[dict[str, Any]]:
    """The page's data after each event of a game's stream: whole (`game`), or the
    decisions and deals since the last (`more`), or what the last lacks of the whole
    game (`reveal`), applied as the live page does."""
    out: list[dict[str, Any]] = []
    for _, name, data in stream.events:
        if name == "game":
            out.append(json.loads(data))
        elif name == "more":
            more, last = json.loads(data), out[-1]
            assert len(last["S"]) == more["from"], (stream.path, more["from"])
            out.append(
                last
                | {
                    "S": last["S"] + more["S"],
                    "R": last["R"][: more["rfrom"]] + more["R"],
                    "next": more["next"],
                    "start": more["start"],
                }
            )
        elif name == "reveal":  # the whole game, as what the last snapshot lacks
            r, last = json.loads(data), json.loads(json.dumps(out[-1]))
            assert len(last["S"]) == r["from"], (stream.path, r["from"])
            for i, ms in enumerate(r["ms"]):
                last["S"][i][4] = ms
            for i, tile in r["tiles"]:
                last["S"][i][2] = tile
            for i, extra in r["x"]:
                if len(last["S"][i]) > 5:
                    last["S"][i][5].update(extra)
                else:
                    last["S"][i].append(extra)
            for i, step in r["fix"]:
                last["S"][i] = step
            last["S"] += r["S"]
            last["R"] = r["R"]
            for key in r["drop"]:
                del last[key]
            out.append(last | r["top"])
    return out


def whole(log_path: Path) -> dict[str, Any]:
    """The replay page's full view of a log, without its seed and legal moves."""
    log = read_log(log_path)
    data = page_data(log, select(log, None, None, None))
    steps = [
        step[:5] + ([extra] if (extra := {k: v for k, v in step[5].items() if k != "g"}) else [])
        if len(step) > 5
        else step
        for step in data["S"]
    ]
    return data | {"seed": None, "start": 0, "legal": 0, "S": steps}


@pytest.fixture(scope="module")
def duplicate(tmp_path_factory: pytest.TempPathFactory) -> Watched:
    folder = tmp_path_factory.mktemp("live-duplicate")
    bots = {
        "greedy": f"{PY} {ROOT / 'sample_bots' / 'greedy_bot.py'}",
        "search": f"{PY} {ROOT / 'sample_bots' / 'search_bot.py'} --worlds 2",
    }
    return watch(folder, league_file(folder, duplicate=True, live=None, bots=bots), "-j", "2")


def test_under_duplicate_deals_nothing_of_a_game_comes_before_its_deal_is_over(
    duplicate: Watched,
) -> None:
    logs = sorted((duplicate.out / "logs").glob("g*.jsonl.gz"))
    assert len(logs) == 4  # two deals, each in both seatings
    deal_of = {p.name.split(".")[0]: read_log(p).header.seed for p in logs}
    deal_over = {
        seed: max(p.stat().st_mtime for p in logs if deal_of[p.name.split(".")[0]] == seed)
        for seed in set(deal_of.values())
    }
    for stream in duplicate.streams:  # plain and gzip-encoded alike
        game = stream.path.split("/")[2]
        sent = [(t, name, data) for t, name, data in stream.events if name == "game"]
        assert len(sent) == 1, (game, [n for _, n, _ in stream.events])
        came, _, data = sent[0]
        assert came >= deal_over[deal_of[game]], f"{game} was shown before its deal was over"
        # What came is the whole game, as the replay page shows its log (no seed).
        assert json.loads(data) == whole(duplicate.out / "logs" / f"{game}.jsonl.gz")
        # Its statuses, in order, and its data only after the last ("shown").
        order = [json.loads(d) if n == "status" else n for _, n, d in stream.events]
        assert order[-2:] == ["shown", "game"], (game, order)
        # Before: only "pending", once: not when it started or ended (how long the deal
        # took to play would be a fact of the deal).
        assert order[:-2] == ["pending"], (game, order)
    # The list names each game's seats and status, and no count of its moves; a game is
    # "pending" until its deal is over, and the list changes only when a deal is shown.
    for stream in (duplicate.listing, duplicate.zipped_listing):
        lists = [json.loads(data) for _, _, data in stream.events]
        for listing in lists:
            for entry in listing["games"]:
                assert set(entry) == {"game", "names", "status"}, entry
                assert entry["status"] in ("pending", "shown"), entry
        assert len(lists) <= 1 + 2 + 1  # the start, each deal shown, the end
        assert json.loads(stream.events[-1][2])["over"] is True


def test_the_search_bots_notes_are_in_the_game_once_its_deal_is_over(duplicate: Watched) -> None:
    said = 0
    for stream in duplicate.games:
        data = json.loads(next(d for _, n, d in stream.events if n == "game"))
        said += sum(1 for step in data["S"] if len(step) > 5 and "t" in step[5])
    assert said > 10


def test_public_mode_sends_each_game_move_by_move_as_a_spectator_sees_it(
    tmp_path: Path,
) -> None:
    bots = {
        "greedy": f"{PY} {ROOT / 'sample_bots' / 'greedy_bot.py'}",
        "slow": f"{PY} {ROOT / 'tests' / 'bots' / 'slow.py'} 0.02",
    }
    league = league_file(tmp_path, duplicate=False, live="public", bots=bots)
    watched = watch(tmp_path, league, "-j", "1")
    moving = 0
    for stream in watched.streams:  # plain and gzip-encoded alike
        game = stream.path.split("/")[2]
        log = read_log(watched.out / "logs" / f"{game}.jsonl.gz")
        public = mask(seat_view(log, 0), 0)  # the results site's public part's source
        snaps = pages(stream)
        assert snaps[-1] == whole(watched.out / "logs" / f"{game}.jsonl.gz")
        live = snaps[:-1]
        moving += len(live) > 1
        for snap in live:
            assert snap["viewer"] == -1 and snap["seed"] is None and snap["live"] is True
            k = len(snap["S"])
            assert snap["S"] == public["S"][:k]
            assert all(isinstance(h, int) for deal in snap["R"] for h in deal["hands"])
            *done, going = snap["R"]
            assert done == public["R"][: len(done)]  # the rounds over: as the site has them
            theirs = public["R"][len(done)]
            assert {k: v for k, v in going.items() if k not in "kx"} == {
                k: v for k, v in theirs.items() if k not in "kx"
            }
        assert [len(s["S"]) for s in live] == sorted(len(s["S"]) for s in live)
    assert moving == len(watched.streams) == 4  # every game was seen as it was played
    assert any(name == "more" for s in watched.streams for _, name, _ in s.events)
    # Each game's end came as what the last snapshot lacked (about a third of the bytes).
    assert all(s.events[-1][1] == "reveal" for s in watched.streams)
    # What gzip sent was a fraction of the plain bytes (each event's parts are compressed
    # once for every stream: tests/test_live_gzip.py).
    plain = sum(s.wire for s in watched.games)
    zipped = sum(s.wire for s in watched.zipped)
    assert sum(len(s.raw) for s in watched.zipped) > plain / 2 and zipped < plain / 2


def test_public_live_with_duplicate_deals_is_refused_in_one_line(tmp_path: Path) -> None:
    bots = {"a": f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"}
    bots["b"] = bots["a"]
    league = league_file(tmp_path, duplicate=True, live="public", bots=bots)
    done = subprocess.run(
        [PY, "-m", "referee", "league", str(league), "--live", "0"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "league.live" in done.stderr, done.stderr
    assert not (tmp_path / "out" / "logs").exists()


def test_a_live_port_in_use_is_a_one_line_error_before_any_game(tmp_path: Path) -> None:
    bots = {"a": f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"}
    bots["b"] = bots["a"]
    league = league_file(tmp_path, duplicate=False, live=None, bots=bots)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [PY, "-m", "referee", "league", str(league), "--live", str(port)],
            cwd=tmp_path,
            env=ENV,
            capture_output=True,
            text=True,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"--live {port}: cannot listen on 127.0.0.1:{port}: " in done.stderr
    logs = tmp_path / "out" / "logs"
    assert not logs.exists() or not any(logs.iterdir())  # no game was played


async def test_a_snapshot_that_would_show_a_hand_is_never_sent() -> None:
    rules = preset("standard", max_pip=6, players=2)
    feed = LiveFeed("public", duplicate=False)
    feed.schedule([("g1", ["a", "b"], 7)], ())
    state = new_game(rules, 7)
    follow = feed.begin("g1", ["a", "b"], 7, rules, state, [1000, 1000])
    game = feed.games["g1"]
    assert game.snapshot and json.loads(game.snapshot)["S"] == []
    assert json.loads(feed.listing())["games"][0]["status"] == "playing"
    view = game.view
    assert isinstance(view, SpectatorData)
    view.rounds[0]["hands"][1] = [1, 2, 3]  # a bug that would show seat 1's tiles
    move = legal_moves(state)[0]
    seat = state.to_move
    after = apply(state, move)
    follow.decision(Decision(seat, 1, move, 1.0, False, (), 0), after)
    assert feed.snapshot(game) == b"" and game.status == "withheld"
    assert b"[1,2,3]" not in feed.listing()
    # The list (encoded once per change) says so at once.
    assert json.loads(feed.listing())["games"][0]["status"] == "withheld"


# In the live page, the viewer's frame once it is drawn (null while it is redrawn): its
# header, the decision number of the first move that carries a note (0: none), whether
# its numbers are plotted, and, for move N, the caption.
def viewer(move: int = 0) -> str:
    return (
        "(() => { const w = document.getElementById('view').contentWindow;"
        " const d = w && w.document; const data = d && d.getElementById('replay-data');"
        " if (!w.replay || !data || !d.getElementById('sub')) return null;"
        " const S = JSON.parse(data.textContent).S;"
        f" if ({move}) w.replay.go(w.replay.frameOfMove({move}));"
        " return { sub: d.getElementById('sub').textContent,"
        " noted: S.findIndex((s) => s.length > 5 && s[5].t !== undefined) + 1,"
        " plotted: !d.getElementById('info').hidden,"
        " caption: d.getElementById('move').textContent }; })()"
    )


FITS = "document.documentElement.scrollWidth <= innerWidth"


def test_the_live_page_follows_a_league_and_shows_notes_once_a_game_is_over(
    browser: Browser, tmp_path: Path
) -> None:
    """A public league of two games, followed in Chromium from its start: game 1 at
    1400 px, the list at 800 px, game 2 at 400 px; each game is redrawn as it is played
    (live, no note), then shown whole with the search bot's notes."""
    bots = {
        "search": f"{PY} {ROOT / 'sample_bots' / 'search_bot.py'} --worlds 2",
        "slow": f"{PY} {ROOT / 'tests' / 'bots' / 'slow.py'} 0.03",
    }
    league = league_file(tmp_path, duplicate=False, live="public", bots=bots)
    proc, address = started(tmp_path, league, "-j", "1")
    said: list[str] = []  # the league's stderr, read as it comes (a full pipe would stop it)
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True)
    reader.start()
    try:
        for game, width in (("g00001", 1400), ("g00002", 400)):
            browser.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                session=True,
            )
            browser.navigate(f"{address}game/{game}")
            # In play: redrawn as moves come, the public view only (no note).
            assert browser.until(
                "document.body.dataset.status === 'playing' && document.body.dataset.drawn >= 2",
                timeout=60,
            ), (game, browser.js("document.body.dataset.status"))
            live = browser.until(viewer(), timeout=20)
            assert live and "LIVE" in live["sub"] and live["noted"] == 0, live
            assert browser.js(FITS)
            # Over: the whole game, and the search bot's note beside its move.
            assert browser.until("document.body.dataset.status === 'shown'", timeout=120), (
                game,
                browser.js("document.getElementById('sub').textContent"),
                proc.poll(),
                "".join(said)[-2000:],
            )
            whole_game = browser.until(
                f"(() => {{ const v = {viewer()}; return v && v.noted && v; }})()"
            )
            assert whole_game and "LIVE" not in whole_game["sub"], whole_game
            noted = browser.js(viewer(whole_game["noted"]))
            assert " over 2 worlds" in noted["caption"] and noted["plotted"], noted
            assert browser.js(FITS), (game, width)
            if game == "g00001":  # the list, while game 2 is played
                browser.call(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": 800, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                    session=True,
                )
                browser.navigate(address)
                assert browser.until(
                    "!!(document.querySelector('tr[data-game=g00001][data-status=shown]') && "
                    "document.querySelector('tr[data-game=g00002]'))",
                    timeout=30,
                )
                assert browser.js(FITS)
        assert proc.wait(timeout=120) == 0, "".join(said)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    # No error; no request but the live server's own (the viewer is drawn from its data).
    served = ("request: " + address, "request: about:srcdoc")
    assert [p for p in browser.problems() if not p.startswith(served)] == []


async def test_what_changes_while_an_event_is_sent_is_sent_next() -> None:
    """A stream is suspended while its event is written to a slow reader; a game shown
    meanwhile (or the run's end) is the next thing it sends, never lost. (A fresh-clone
    run under load once ended a stream with "held": the game was shown while "held" was
    being sent, and the stream took the new status for one it had sent.)"""
    from referee.live.server import _game_stream, _list_stream

    rules = preset("standard", max_pip=6, players=2)
    feed = LiveFeed("public", duplicate=False)
    feed.schedule([("g1", ["a", "b"], 7)], ())
    feed.begin("g1", ["a", "b"], 7, rules, new_game(rules, 7), [1000, 1000])
    game = feed.games["g1"]
    game.status = "held"  # over; being made into the whole game
    feed.moved(game)
    games, listing = _game_stream(feed, game), _list_stream(feed)
    assert b'"held"' in b"".join(await games.__anext__())
    assert b'"over":false' in b"".join(await listing.__anext__())
    # While those were being sent: the game is shown, and the run ends.
    game.snapshot, game.more, game.status = b'{"whole":1}', b"", "shown"
    game.seq += 1
    feed.moved(game)
    feed.finish()
    shown = b"".join(await games.__anext__())
    assert b'"shown"' in shown and b'{"whole":1}' in shown
    assert b'"over":true' in b"".join(await listing.__anext__())
    for stream in (games, listing):
        with pytest.raises(StopAsyncIteration):
            await stream.__anext__()


async def test_a_game_shown_while_nobody_watched_is_made_once_when_first_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Reading a game's log back into its whole view costs the referee about as much as
    a tenth of the game: with nobody on its stream it is made only when a spectator
    first asks, once for every stream that asks at that moment; with a stream open it
    is made as soon as the deal is over. A log that cannot be read withholds the game."""
    from referee.live import feed as feed_module
    from referee.live.server import _game_stream

    made: list[str] = []

    def shown(log: Path, last: bytes) -> tuple[bytes, bytes]:
        made.append(log.name)
        if log.name == "bad.jsonl.gz":
            raise OSError("unreadable")
        return b'{"whole":"' + log.name.encode() + b'"}', b""

    monkeypatch.setattr(feed_module, "_shown", shown)
    feed = LiveFeed("after-deal", duplicate=True)
    feed.schedule([("g1", ["a", "b"], 7), ("g2", ["b", "a"], 7), ("g3", ["a", "b"], 8)], ())
    g1, g2, g3 = (feed.games[g] for g in ("g1", "g2", "g3"))
    watching = _game_stream(feed, g2)  # a spectator on g2 from before it is shown
    assert b'"pending"' in b"".join(await watching.__anext__())
    await feed.end("g1", tmp_path / "g1.jsonl.gz", ["a", "b"], 7)
    assert made == [] and g1.status == "held"  # its deal is not over
    await feed.end("g2", tmp_path / "g2.jsonl.gz", ["b", "a"], 7)
    assert made == ["g2.jsonl.gz"]  # watched: made at once; g1 was not
    assert g1.status == g2.status == "shown" and g1.unmade and not g2.unmade
    got = b"".join(await watching.__anext__())
    assert b'"shown"' in got and b'{"whole":"g2.jsonl.gz"}' in got
    # Two spectators come for g1 at the same moment: it is made once, for both.
    first, second = _game_stream(feed, g1), _game_stream(feed, g1)
    async with trio.open_nursery() as nursery:
        got1: list[bytes] = []
        got2: list[bytes] = []

        async def take(stream: Any, into: list[bytes]) -> None:
            into.append(b"".join(await stream.__anext__()))

        nursery.start_soon(take, first, got1)
        nursery.start_soon(take, second, got2)
    assert made == ["g2.jsonl.gz", "g1.jsonl.gz"]
    for got in (got1[0], got2[0]):
        assert b'"shown"' in got and b'{"whole":"g1.jsonl.gz"}' in got
    # A log that cannot be read: nothing of the game is sent, and the list says why.
    await feed.end("g3", tmp_path / "bad.jsonl.gz", ["a", "b"], 8)
    assert g3.unmade and g3.status == "shown"
    lately = _game_stream(feed, g3)
    late = b"".join(await lately.__anext__())
    assert g3.status == "withheld" and late == b'event: status\ndata: "withheld"\n\n'
    assert json.loads(feed.listing())["games"][2]["status"] == "withheld"
    for stream in (watching, first, second, lately):
        await stream.aclose()
    assert g1.watchers == g2.watchers == g3.watchers == 0
