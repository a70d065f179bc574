"""The games of a league run and what a spectator may see of each, now.

A game is `waiting` (scheduled), `playing`, `held` (over, but another game of its
deal is not: under duplicate deals its public view would tell that game's seats
about their own deal), or `shown` (its deal is over: the whole game, every hand, as
the replay page shows it). With `live = "public"` (refused with duplicate deals) a
game in play is shown move by move as a spectator sees it: the public view, no hand,
no draw, no clock (`SpectatorData`), hands only once the game is over.

The feed fails closed: every snapshot of a game in play is checked with
`public_problem` before it is encoded; one that holds anything a spectator may not
see is never sent, the game is marked `withheld` for the rest of the run, and the
problem is logged for the organiser. A game's snapshot is encoded once per change
(at most every `interval` seconds), however many spectators follow it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from ..game.match import Decision, Recorder
from ..logs.gamelog import read_log
from ..logs.replay_html import SpectatorData, page_data, public_problem
from ..logs.replay_text import select
from ..rules import Rules, State

log = logging.getLogger(__name__)

PUBLIC = "public"  # games in play shown move by move (not with duplicate deals)
AFTER_DEAL = "after-deal"  # a game shown once every game of its deal is over
MODES = (AFTER_DEAL, PUBLIC)
_GONE = ("shown", "withheld", "abandoned", "recorded")  # nothing more of it will come


@dataclass
class LiveGame:
    """One game of the run, as the feed knows it."""

    game_id: str
    names: list[str]
    deal: int  # its deal's seed: the games that share it are its deal's rotations
    status: str = "waiting"  # waiting, playing, held, shown, withheld, abandoned
    view: SpectatorData | None = None  # public mode, while it is played
    snapshot: bytes = b""  # the page data last encoded for spectators
    log: Path | None = None
    version: int = 0  # changes whenever what spectators may see of it changes
    changed: trio.Event = field(default_factory=trio.Event)  # set when `version` changes
    snapped: int = -1  # the version `snapshot` holds
    snapped_at: float = float("-inf")
    seq: int = 0  # snapshots made; each is sent whole, or as `more` after the one before
    more: bytes = b""  # the event that takes a page from snapshot seq - 1 to seq (or none)
    framed: bytes = b""  # the snapshot as an event (`LiveFeed.framed`)
    framed_seq: int = -1
    lengths: tuple[int, int] = (0, 0)  # the snapshot's decisions and deals
    watchers: int = 0  # its open streams
    unmade: bool = False  # shown, its whole view not made yet (nobody was watching)
    making: trio.Event | None = None  # set when the whole view being made is made

    def shown_status(self, public: bool) -> str:
        """Its status as spectators see it. Until its deal is over a game of a league that
        is not public is only `pending`: when it started or ended would tell the seats of
        its deal's other games how long the deal took to play."""
        if not public and self.status in ("waiting", "playing", "held"):
            return "pending"
        return self.status

    def summary(self, public: bool) -> dict[str, Any]:
        """Its line in the list of games: its seats and status, no progress (a game's own
        page shows its moves where the league allows it)."""
        return {"game": self.game_id, "names": self.names, "status": self.shown_status(public)}


@dataclass
class LiveFeed:
    """The games of one run and the spectators' view of them (see the module's doc)."""

    mode: str
    duplicate: bool
    games: dict[str, LiveGame] = field(default_factory=dict)
    deal_games: Counter[int] = field(default_factory=Counter)  # games per deal, all told
    deal_over: Counter[int] = field(default_factory=Counter)  # games of each deal over
    interval: float = 0.5  # seconds between snapshots of a game in play
    per_deal: int = 1  # games of a deal the schedule did not list (a match's: 2)
    version: int = 0  # the list's
    changed: trio.Event = field(default_factory=trio.Event)
    over: bool = False  # the run ended: the streams end once they have sent the last
    ended: trio.Event = field(default_factory=trio.Event)  # set with `over`
    streams: int = 0  # open event streams (the server counts them)
    keep: int | None = None  # games kept in the list (an arena's: the latest), None: all
    _listed: tuple[int, bytes] = (-1, b"")  # `listing()` of the list's version

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"live = {self.mode!r}: expected one of {', '.join(MODES)}")
        if self.mode == PUBLIC and self.duplicate:
            raise ValueError(
                'live = "public" shows a deal while its other rotations are played: '
                "not with duplicate deals"
            )

    @property
    def public(self) -> bool:
        return self.mode == PUBLIC

    def schedule(self, games: Iterable[tuple[str, list[str], int]], done: Iterable[str]) -> None:
        """Every game of the run (id, seat names, deal seed), and those recorded already."""
        finished = set(done)
        for game_id, names, deal in games:
            self.deal_games[deal] += 1
            game = self.games.setdefault(game_id, LiveGame(game_id, names, deal))
            if game_id in finished:
                self.deal_over[deal] += 1
                game.status = "recorded"  # before this run: its log is on the results site
        self._touch()

    def _game(self, game_id: str, names: list[str], deal: int) -> LiveGame:
        """The game `game_id`, added when the schedule did not list it (a match's open
        stream, an arena's tables)."""
        game = self.games.get(game_id)
        if game is None:
            game = self.games[game_id] = LiveGame(game_id, names, deal)
            if deal not in self.deal_games:
                self.deal_games[deal] = self.per_deal
            self._trim()
        return game

    def begin(
        self,
        game_id: str,
        names: list[str],
        deal: int,
        rules: Rules,
        first: State,
        move_ms: list[int],
    ) -> Recorder:
        """A game starts: the recorder that follows it for the feed."""
        game = self._game(game_id, names, deal)
        game.status = "playing"
        if self.public:
            game.view = SpectatorData(game_id, rules, first, names, move_ms)
            self._snap(game)
        self._touch(game)
        return _Follow(self, game)

    async def end(self, game_id: str, log_path: Path, names: list[str], deal: int) -> None:
        """A game is over and its log complete: it is held, or shown with its deal (the
        pages are made from the logs in a worker thread: the games play on)."""
        game = self._game(game_id, names, deal)
        game.log = log_path
        game.view = None
        game.status = "held"
        self.deal_over[game.deal] += 1
        self._touch(game)
        await self._show_deal(game.deal)

    async def _show_deal(self, deal: int) -> None:
        """Show the held games of `deal` once every game of it is over."""
        if self.deal_over[deal] < self.deal_games[deal]:
            return
        held = [g for g in self.games.values() if g.deal == deal and g.status == "held"]
        for other in held:
            assert other.log is not None
            if other.watchers:
                await self._make(other)  # its spectators get it as soon as it is made
            else:  # made when a spectator first asks (`ready`): nobody may ever ask
                other.unmade = True
            if other.status == "held":
                other.status = "shown"
            self._touch(other)
        self._trim()

    async def ready(self, game: LiveGame) -> None:
        """Make a shown game's whole view if it was shown with nobody watching: once,
        however many streams ask at the same moment."""
        while game.unmade:
            if game.making is None:
                await self._make(game)
            else:
                await game.making.wait()

    async def _make(self, game: LiveGame) -> None:
        """The game's whole view, made from its log in a worker thread (the games play
        on). A page that has the last snapshot in play gets what it lacks (`reveal`):
        about a third of the bytes; any other gets the whole game. A log that cannot be
        read makes the game `withheld`: nothing is sent of it."""
        assert game.log is not None
        game.making = making = trio.Event()
        try:
            shown = await trio.to_thread.run_sync(_shown, game.log, game.snapshot)
        except Exception as exc:  # an unreadable log: nothing of it is sent
            log.error("live feed: %s: %s; withheld", game.game_id, exc)
            game.status, game.snapshot, game.more = "withheld", b"", b""
            self._touch(game)
        else:
            game.snapshot, game.more = shown
            game.seq += 1
            self.moved(game)
        finally:
            game.unmade = False
            game.making = None
            making.set()

    async def close_deal(self, deal: int) -> None:
        """No other game of `deal` will be played (an arena's unit was abandoned): its
        games over are shown, as when a deal's last game ends."""
        self.deal_games[deal] = self.deal_over[deal]
        await self._show_deal(deal)

    def abandon(self, game_id: str) -> None:
        """A game stopped before its end (the run was stopped): nothing more of it."""
        game = self.games[game_id]
        if game.status == "playing":
            game.status = "abandoned"
            game.view = None
            game.snapshot = b""
            self._touch(game)

    def finish(self) -> None:
        """The run is over: the streams send what they have and end."""
        self.over = True
        self.ended.set()
        for game in self.games.values():
            game.changed.set()
        self._touch()

    async def pause(self) -> None:
        """Wait an interval, or less if the run ends meanwhile (streams send at most one
        change an interval, and the last one at once)."""
        with trio.move_on_after(self.interval):
            await self.ended.wait()

    def moved(self, game: LiveGame) -> None:
        """A move of a game shown in play: its page changes, the list does not."""
        game.version += 1
        game.changed.set()
        game.changed = trio.Event()

    def snapshot(self, game: LiveGame) -> bytes:
        """What spectators may see of `game` now, encoded (empty: nothing). A game in
        play is encoded at most once every `interval` seconds, however many ask: its
        snapshot may then lag behind (`game.snapped` < `game.version`)."""
        if game.status == "playing" and game.view is not None and game.snapped != game.version:
            now = trio.current_time()
            if now - game.snapped_at >= self.interval or not game.snapshot:
                version = game.version
                self._snap(game)
                game.snapped, game.snapped_at = version, now
        elif game.status != "playing":
            game.snapped = game.version
        return game.snapshot

    def framed(self, game: LiveGame, have: int) -> bytes:
        """The event a page that has snapshot `have` needs: the snapshot as `more` (the
        decisions and deals since `have`) when it has the one before, else whole
        (`game`). Each is made once per snapshot, for every stream that sends it."""
        if have == game.seq - 1 and game.more:
            return game.more
        if game.framed_seq != game.seq:
            game.framed_seq = game.seq
            game.framed = b"event: game\ndata: " + game.snapshot + b"\n\n"
        return game.framed

    def listing(self) -> bytes:
        """The list of games as JSON, encoded once per change of the list however many
        streams send it (a league's list grows with its games)."""
        if self._listed[0] != self.version:
            body = msgspec.json.encode(
                {
                    "mode": self.mode,
                    "over": self.over,
                    "games": [g.summary(self.public) for g in self.games.values()],
                }
            )
            self._listed = (self.version, body)
        return self._listed[1]

    def _snap(self, game: LiveGame) -> None:
        assert game.view is not None
        data = game.view.data()
        problem = public_problem(data)
        if problem is not None:  # never sent: the game is withheld from here on
            log.error("live feed: %s would have shown %s; withheld", game.game_id, problem)
            game.status, game.view, game.snapshot, game.more = "withheld", None, b"", b""
            self._touch(game)  # the list says so
            return
        game.snapshot = msgspec.json.encode(data)
        # What changed since the snapshot before, made now from the data just checked:
        # the new decisions, and the deals from the last one it had (whose count and end
        # may have changed since).
        steps, deals = game.lengths
        if game.seq:
            more = {
                "from": steps,
                "S": data["S"][steps:],
                "rfrom": deals - 1,
                "R": data["R"][deals - 1 :],
                "next": data["next"],
                "start": data["start"],
            }
            game.more = _event(b"more", more)
        game.seq += 1
        game.lengths = (len(data["S"]), len(data["R"]))

    def _trim(self) -> None:
        """At most `keep` games in the list: the oldest of those with nothing more to
        come leave it (their streams end; their pages stay on the results site)."""
        if self.keep is None or len(self.games) <= self.keep:
            return
        done = [g for g in self.games.values() if g.status in _GONE]
        for game in done[: len(self.games) - self.keep]:
            del self.games[game.game_id]
            self.moved(game)  # its streams look once more and end
            if not any(g.deal == game.deal for g in self.games.values()):
                self.deal_games.pop(game.deal, None)
                self.deal_over.pop(game.deal, None)
        self._touch()

    def _touch(self, game: LiveGame | None = None) -> None:
        """The list changed (and `game`, if given)."""
        if game is not None:
            self.moved(game)
        self.version += 1
        self.changed.set()
        self.changed = trio.Event()


def _event(name: bytes, data: dict[str, Any]) -> bytes:
    return b"event: " + name + b"\ndata: " + msgspec.json.encode(data) + b"\n\n"


def _reveal(public: dict[str, Any], whole: dict[str, Any]) -> dict[str, Any] | None:
    """What takes a page from the game's last public snapshot to the whole game: each
    decision's time (`ms`, the fifth field, hidden in play), the tiles hidden in play
    (`tiles`: a draw's), the extras the public view lacked (`x`: notes, numbers, merged
    into what it had), any decision that differs otherwise (`fix`, whole), the
    decisions after the snapshot (`S`), the deals (`R`, whole: their hands), and the
    other fields that differ (`top`) or go (`drop`). None when the whole game does not
    extend the snapshot (then it is sent whole)."""
    seen, steps = public["S"], whole["S"]
    if len(steps) < len(seen):
        return None
    ms: list[int] = []
    tiles: list[list[int]] = []
    extras: list[list[Any]] = []
    fix: list[list[Any]] = []
    for i, (a, b) in enumerate(zip(seen, steps, strict=False)):
        ms.append(b[4] if len(b) > 4 else -1)
        mine: dict[str, Any] = a[5] if len(a) == 6 else {}
        theirs: dict[str, Any] = b[5] if len(b) == 6 else {}
        if (
            len(a) not in (5, 6)
            or len(b) not in (5, 6)
            or a[:2] != b[:2]
            or a[3] != b[3]
            or any(k not in theirs for k in mine)
        ):
            fix.append([i, b])
            continue
        if a[2] != b[2]:
            tiles.append([i, b[2]])
        added = {k: v for k, v in theirs.items() if k not in mine or mine[k] != v}
        if added:
            extras.append([i, added])
    missing = object()
    return {
        "from": len(seen),
        "ms": ms,
        "tiles": tiles,
        "x": extras,
        "fix": fix,
        "S": steps[len(seen) :],
        "R": whole["R"],
        "top": {
            k: v for k, v in whole.items() if k not in ("S", "R") and public.get(k, missing) != v
        },
        "drop": [k for k in public if k not in whole],
    }


def _shown(log: Path, last: bytes) -> tuple[bytes, bytes]:
    """The whole game, encoded, and the `reveal` event from the snapshot `last` in play
    to it (empty: none, when there was no snapshot)."""
    data = _whole(log)
    patch = _reveal(msgspec.json.decode(last), data) if last else None
    return msgspec.json.encode(data), (b"" if patch is None else _event(b"reveal", patch))


def _whole(log: Path) -> dict[str, Any]:
    """The whole game, every hand: its deal is over. Without the seed (it deals the
    boneyard's order, and stays the organiser's), as on the results site, and without
    the legal moves of each decision."""
    full = read_log(log)
    data = page_data(full, select(full, None, None, None))
    data["seed"] = None
    data["start"] = 0
    # Each decision's legal moves are left out: about half the bytes, sent to every
    # spectator; the results site and `replay --html` have them.
    data["legal"] = 0
    for step in data["S"]:
        if len(step) > 5:
            step[5].pop("g", None)
            if not step[5]:
                step.pop()
    return data


class _Follow(Recorder):
    """Follows one game for the feed: in public mode its spectator's view, move by move."""

    def __init__(self, feed: LiveFeed, game: LiveGame) -> None:
        self.feed = feed
        self.game = game

    def decision(self, record: Decision, state: State) -> None:
        view = self.game.view
        if view is not None:  # public mode: the seat and its move, nothing else of it
            view.add(record.seat, record.move, state)
            self.feed.moved(self.game)
