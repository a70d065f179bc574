"""The leak checker: no seat is ever told a tile it may not know.

Whole games run in-process: `referee.game.match.Game` drives fake bots over trio memory
streams, and every connection keeps a transcript of every byte queued for its
seat, each stamped with the omniscient game state at that moment (the engine's
`new_game` and `apply`, as `Game` calls them, are wrapped to follow it). Each
line is then decoded and walked, and every tile in it is checked against what
that seat could know at that moment: its own hand and the tiles on the table.
Another seat's hand and the boneyard are secret; so, during the fast-first-turn
phase, are the other sides' builds (spec/RULES.md: the phase happens at once in
the physical game, and the view shows the other trains empty). Hands become public
in `round_end`, the boneyard never.

The same goes for per-seat logs (`LogWriter(seat=N)`) and for the deal seed: the
bots are never told anything from which the deal could be re-derived.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from click.testing import CliRunner

from protocol import messages as m
from referee.bots.connection import Connection
from referee.bots.faults import Policy
from referee.bots.session import goodbye
from referee.cli import main
from referee.game import match, wire
from referee.game.match import Fanout, Game, GameResult, Recorder, Seat
from referee.logs.gamelog import Header, LogError, LogWriter, make_header, read_log
from referee.play import runner
from referee.rules import (
    MEXICAN,
    Ctx,
    Move,
    RoundResult,
    Rules,
    State,
    Tile,
    new_game,
    preset,
)
from tests._procs import assert_none_left, new_token

TIME = m.TimeControl(startup_ms=2000, move_ms=2000, bank_ms=10000, grace_ms=50)

# Keys whose values are tiles, and keys whose values are numbers by seat, train or round:
# a two-number list anywhere else would be an unexplained tile.
TILE_KEYS = {"hand", "drawn", "tiles", "tile", "hands"}
NUMBER_KEYS = {
    "scores",
    "hand_counts",
    "markers",
    "out",
    "values",
    "totals",
    "rounds",
    "ranks",
    "engine_draws",
    "branches",
    "open_doubles",
    "binding",
}
TILE_TEXT = re.compile(r"(\d+)\s*-\s*(\d+)|\[\s*(\d+)\s*,\s*(\d+)\s*\]")


def as_tile(a: int, b: int) -> Tile:
    return Tile(a, b) if a >= b else Tile(b, a)


# ---------------------------------------------------------------- following the game


@dataclass(frozen=True)
class Moment:
    """The omniscient state when a message was queued: the state now (`cur`), and the
    state before the last move with that move (to judge the events of a move that
    ended a round, after which `cur` is already the next deal)."""

    prev: State | None
    move: Move | None
    cur: State | None


class Tracker:
    """Follows the state `Game.play` is at, by wrapping the engine calls it makes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = Moment(None, None, None)
        real_new_game, real_apply = match.new_game, match.apply

        def tracked_new_game(rules: Rules, seed: int) -> State:
            state = real_new_game(rules, seed)
            self.now = Moment(None, None, state)
            return state

        def tracked_apply(state: State, move: Move) -> State:
            after = real_apply(state, move)
            self.now = Moment(state, move, after)
            return after

        monkeypatch.setattr(match, "new_game", tracked_new_game)
        monkeypatch.setattr(match, "apply", tracked_apply)


class StampedTranscript(list[tuple[bytes, Moment]]):
    """A `Connection.transcript` that keeps each chunk with the moment it was queued."""

    def __init__(self, tracker: Tracker) -> None:
        super().__init__()
        self.tracker = tracker

    def append(self, data: bytes) -> None:  # type: ignore[override]  # as Connection calls it
        super().append((data, self.tracker.now))


# ---------------------------------------------------------------- what a seat may know


def secret(state: State, seat: int) -> set[Tile]:
    """Tiles `seat` may not know in `state`: other hands, the boneyard, and during the
    fast-first-turn phase the other sides' builds."""
    hidden = set(state.boneyard)
    for other, hand in enumerate(state.hands):
        if other != seat:
            hidden.update(hand)
    if state.ctx in (Ctx.BUILD, Ctx.BUILD_FOLLOW):
        own = state.rules.team_of(seat)
        for train in state.trains:
            if train.owner not in (own, MEXICAN):
                hidden.update(train.tiles)
    return hidden


def tiles_in(message: Any, key: str = "") -> Iterator[tuple[str, Tile]]:
    """Every tile a decoded message names, with the key it sits under."""
    if isinstance(message, dict):
        for k, value in message.items():
            yield from tiles_in(value, k)
    elif isinstance(message, list):
        pair = len(message) == 2 and all(type(x) is int for x in message)
        if pair and key not in NUMBER_KEYS:
            assert key in TILE_KEYS, f"a two-number list under {key!r}: {message}"
            yield key, as_tile(*message)
        else:
            for value in message:
                yield from tiles_in(value, key)
    elif isinstance(message, str):
        for match_ in TILE_TEXT.finditer(message):
            a, b = (int(g) for g in match_.groups() if g is not None)
            yield f"text of {key!r}", as_tile(a, b)


@dataclass
class Audit:
    """What the checker saw, so that a test can tell it did look."""

    messages: int = 0
    tiles: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    leaks: list[str] = field(default_factory=list)


def judge(
    seat: int, message: dict[str, Any], raw: bytes, moment: Moment, dealt: bool, audit: Audit
) -> None:
    """Check one line sent to `seat` against the state when it was queued; `dealt` says
    that this seat already got the `round_start` of the deal `moment.cur` holds."""
    kind = message["type"]
    audit.messages += 1
    audit.kinds[kind] = audit.kinds.get(kind, 0) + 1
    prev, move, cur = moment.prev, moment.move, moment.cur
    round_over = prev is not None and cur is not None and prev.round_index != cur.round_index
    game_over = cur is not None and cur.outcome is not None
    # After the move that ends a round, `cur` is already the next deal (or the end): the
    # move's events and the round end belong to the round that ended, until round_start.
    finished = (round_over or game_over) and not dealt
    named = list(tiles_in(message))
    audit.tiles += len(named)
    if cur is None:
        hidden: set[Tile] = set()
        assert named == [], f"{kind} before the deal names tiles"
    elif kind == "round_end":
        assert prev is not None and finished
        result: RoundResult = cur.results[-1]
        shown = [sorted(as_tile(*t) for t in hand) for hand in message["hands"]]
        assert shown == [sorted(hand) for hand in result.hands]
        hidden = set(prev.boneyard) - {t for hand in result.hands for t in hand}
    elif finished and kind not in ("round_start", "game_end"):
        # An event of the move that ended a round: judged where that round stood.
        assert prev is not None and move is not None
        hidden = secret(prev, seat) - {move.tile}
    else:
        hidden = secret(cur, seat)
    if kind == "drew":
        mine = message["seat"] == seat
        assert (message["tile"] is not None) == mine, f"seat {seat} got {raw!r}"
    for where, tile in named:
        if tile in hidden:
            audit.leaks.append(f"seat {seat} was told {list(tile)} in {where} of {raw[:300]!r}")


# ---------------------------------------------------------------- games with fake bots


async def fake_bot(
    stream: trio.abc.Stream, received: bytearray, seed: int, blunder: bool = False
) -> None:
    """Answers each turn with a random legal index (with `blunder`, the first one with
    an index past the end of `legal`); keeps every byte it receives."""
    rng = random.Random(seed)
    pending = b""
    while True:
        data = await stream.receive_some()
        if not data:
            return
        received += data
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if message["type"] == "turn":
                index = rng.randrange(len(message["legal"]))
                if blunder:
                    index, blunder = len(message["legal"]), False
                reply = {"type": "move", "id": message["id"], "index": index}
                await stream.send_all(json.dumps(reply).encode() + b"\n")
            elif message["type"] == "bye":
                return


@dataclass
class Transcripts:
    result: GameResult
    sent: list[StampedTranscript]
    received: list[bytes]

    def lines(self, seat: int) -> Iterator[tuple[bytes, Moment]]:
        for chunk, moment in self.sent[seat]:
            for line in chunk.splitlines():
                yield line, moment


async def play_recorded(
    rules: Rules,
    seed: int,
    tracker: Tracker,
    recorder: Recorder | None = None,
    blunderer: int | None = None,
) -> Transcripts:
    """One whole game between fake bots, every byte to each seat kept and stamped."""
    seats, sent, received = [], [], []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for s in range(rules.players):
                ours, theirs = trio.testing.memory_stream_pair()
                conn = Connection(ours, ours, name=f"fake{'abcdefgh'[s]}")
                conn.transcript = StampedTranscript(tracker)
                sent.append(conn.transcript)
                received.append(bytearray())
                seats.append(Seat(name=conn.name, connection=conn))
                nursery.start_soon(conn.writer)
                nursery.start_soon(fake_bot, theirs, received[s], seed * 10 + s, s == blunderer)
            game = Game(
                seats,
                rules,
                seed,
                game_id="leaks",
                time=TIME,
                recorder=recorder,
                policy=Policy.DEFAULT_MOVE,  # a blunder costs a move, not the game
            )
            result = await game.play()
            final = tracker.now.cur
            assert final is not None and final.outcome is not None, "the tracker lost the game"
            for seat in seats:
                assert seat.connection is not None
                await goodbye(seat.connection)
    return Transcripts(result, sent, [bytes(r) for r in received])


def audit_game(game: Transcripts, rules: Rules) -> list[Audit]:
    audits = []
    for seat in range(rules.players):
        audit = Audit()
        dealt_under: Moment | None = None
        for line, moment in game.lines(seat):
            message = json.loads(line)
            judge(seat, message, line, moment, dealt_under is moment, audit)
            if message["type"] == "round_start":
                dealt_under = moment
        audits.append(audit)
        # The transcript is every byte the bot received, nothing sent around it.
        assert b"".join(chunk for chunk, _ in game.sent[seat]) == game.received[seat]
    return audits


# ---------------------------------------------------------------- the games

GAMES = [
    ("standard", {"players": 4}),
    ("standard", {"players": 2, "max_pip": 6}),
    ("standard+teams", {"players": 4}),
    ("standard+teams", {"players": 6}),
    ("standard+announce", {"players": 3}),
    ("celko", {"players": 4}),
    ("masters", {"players": 3}),
    ("private-trains", {"players": 4}),
    ("standard+branching-doubles+swan-drive", {"players": 4}),
    ("standard+delayed-first-turn", {"players": 3}),
    ("standard+fast-first-turn", {"players": 3}),
    ("standard+teams+fast-first-turn", {"players": 4}),
]


def game_id(entry: tuple[str, dict[str, int]]) -> str:
    name, options = entry
    return "-".join([name, *(f"{k}={v}" for k, v in options.items())])


@pytest.mark.parametrize("entry", GAMES, ids=[game_id(g) for g in GAMES])
async def test_no_message_tells_a_seat_a_secret_tile(
    entry: tuple[str, dict[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, options = entry
    rules = preset(name, **{"max_pip": 9, **options})
    tracker = Tracker(monkeypatch)
    game = await play_recorded(rules, 5, tracker)
    assert game.result.outcome.scores
    audits = audit_game(game, rules)
    leaks = [leak for audit in audits for leak in audit.leaks]
    assert leaks == [], f"{len(leaks)} leaks, the first: {leaks[:3]}"
    for audit in audits:  # the checker did look at real games
        assert audit.kinds["round_start"] == len(rules.engines)
        assert audit.kinds["turn"] > 0 and audit.kinds["played"] > 0
        assert audit.tiles > 100


async def test_the_checker_catches_a_private_draw_sent_to_everyone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The control: break the one place a drawn tile is kept private, and look.
    real = wire.events

    def events_all_public(before: State, move: Move, after: State) -> Iterator[wire.Event]:
        for event in real(before, move, after):
            yield wire.Event(event.private) if event.private is not None else event

    monkeypatch.setattr(wire, "events", events_all_public)
    rules = preset("standard", max_pip=6, players=3)
    game = await play_recorded(rules, 5, Tracker(monkeypatch))
    with pytest.raises(AssertionError, match=r"seat \d got b'\{\"type\":\"drew\""):
        audit_game(game, rules)


async def test_the_checker_catches_a_hand_in_a_turn_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = wire.turn_request

    def turn_with_the_next_hand(state: State, *args: int) -> m.Turn:
        turn = real(state, *args)
        turn.view.hand = [(t.hi, t.lo) for t in state.hands[(turn.seat + 1) % 3]]
        return turn

    monkeypatch.setattr(wire, "turn_request", turn_with_the_next_hand)
    rules = preset("standard", max_pip=6, players=3)
    game = await play_recorded(rules, 5, Tracker(monkeypatch))
    leaks = [leak for audit in audit_game(game, rules) for leak in audit.leaks]
    assert leaks and 'in hand of b\'{"type":"turn"' in leaks[0]


# ---------------------------------------------------------------- per-seat logs


async def write_seat_logs(
    rules: Rules, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game (seat 1 blunders once) logged whole to full.jsonl and for each seat N, as
    the runner's --seat-logs does, to seatN.jsonl."""

    def header() -> Header:  # a fresh one for each writer: LogWriter stamps its seat in it
        return make_header(
            game="leaks",
            rules=rules,
            seed=seed,
            bots=[],
            time=TIME,
            policy="default-move",
            max_faults=3,
        )

    full = LogWriter(tmp_path / "full.jsonl", header())
    mine = [LogWriter(tmp_path / f"seat{s}.jsonl", header(), seat=s) for s in range(rules.players)]
    game = await play_recorded(rules, seed, Tracker(monkeypatch), Fanout(full, *mine), blunderer=1)
    for writer in (full, *mine):
        writer.finish(game.result)


@pytest.mark.parametrize("name", ["standard+announce", "private-trains", "standard+teams"])
async def test_a_per_seat_log_holds_no_tile_another_seat_drew(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rules = preset(name, max_pip=9, players=4)
    await write_seat_logs(rules, 8, tmp_path, monkeypatch)

    complete = read_log(tmp_path / "full.jsonl")
    blunders = [f for d in complete.decisions for f in d.faults]
    assert [(f.seat, f.kind) for f in blunders] == [(1, "illegal")]
    assert "outside the" in blunders[0].detail
    draws = [d for d in complete.decisions if d.move.action == "draw"]
    assert draws and all(d.drew is not None for d in draws)
    assert {d.seat for d in draws} == set(range(4))
    for s in range(4):
        path = tmp_path / f"seat{s}.jsonl"
        log = read_log(path, allow_redacted=True)
        assert log.header.seat == s and log.complete
        # No seed and no bot-seed key: with the rules they would re-derive every hand.
        assert log.header.seed is None and log.header.bot_seed_key is None
        with pytest.raises(LogError, match="redacted for seat"):
            read_log(path)
        for line, whole in zip(log.decisions, complete.decisions, strict=True):
            assert line.move == whole.move and line.seat == whole.seat
            if line.seat == s:
                assert line.drew == whole.drew
                assert line.faults == whole.faults
            else:
                assert line.drew is None
                # The kind of another seat's fault, never its evidence.
                assert [f.kind for f in line.faults] == [f.kind for f in whole.faults]
                assert all(f.detail == "(withheld in this seat's log)" for f in line.faults)
        assert log.footer is not None and complete.footer is not None
        assert [f.kind for f in log.footer.faults] == ["illegal"]
        withheld = log.footer.faults[0].detail == "(withheld in this seat's log)"
        assert withheld == (s != 1)
        for raw in path.read_bytes().splitlines():
            entry = json.loads(raw)
            if entry["type"] == "decision" and entry["seat"] != s:
                assert "drew" not in entry
                assert entry["move"]["action"] != "draw" or b"[" not in raw


async def test_a_per_seat_log_does_not_hold_the_seed_of_the_deal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A seat's log withholds other seats' draws and fault evidence (spec/LOGS.md); but with
    # the deal seed in its header, the rules re-derive every hand and the boneyard order.
    rules = preset("standard", max_pip=9, players=4)
    # A seed no timestamp, clock or count in the header can spell by chance (a seed of 8
    # once matched the "08" of the minute the header was written).
    seed = 918273645
    await write_seat_logs(rules, seed, tmp_path, monkeypatch)
    hands = new_game(rules, seed).hands
    for s in range(4):
        raw = (tmp_path / f"seat{s}.jsonl").read_bytes().splitlines()[0]
        header = json.loads(raw)
        assert header["type"] == "header" and header["seat"] == s
        numbers = {int(n) for n in re.findall(rb"\d+", raw)}
        rederived = sorted(n for n in numbers if new_game(rules, n).hands == hands)
        assert rederived == [], f"seat {s}'s log header deals every hand: seed {rederived}"


# ---------------------------------------------------------------- the deal seed


def deal_seeds_in(game_start: dict[str, Any], rules: Rules, seat: int, hand: list) -> list[int]:
    """Numbers in `game_start` (digits in strings too) that deal `seat` exactly `hand`."""
    text = json.dumps(game_start)
    candidates = {int(n) for n in re.findall(r"\d+", text)}
    wanted = sorted(as_tile(*t) for t in hand)
    return sorted(n for n in candidates if sorted(new_game(rules, n).hands[seat]) == wanted)


def test_referee_play_tells_no_bot_the_seed_of_the_deal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # spec/PROTOCOL.md: game_start.seed is the bot's own seed, "not the seed of the deal".
    # With the deal seed and the rules, a bot could re-derive every hand and the boneyard.
    token = new_token()
    sent: list[list[bytes]] = []
    real_start = runner.start_bot

    async def start_with_transcript(spec, stderr_path=None):
        proc = await real_start(spec, stderr_path)
        proc.connection.transcript = []
        sent.append(proc.connection.transcript)
        return proc

    monkeypatch.setattr(runner, "start_bot", start_with_transcript)
    samples = Path(__file__).resolve().parents[1] / "sample_bots"
    bots = [
        f"random={shlex.join([sys.executable, str(samples / 'random_bot.py'), token])}",
        f"minimal={shlex.join(['sh', str(samples / 'minimal.sh'), token])}",
    ]
    args = ["play", *bots, "--set", "max_pip=6", "--set", "rounds=single", "--seed", "4242"]
    args += ["--log-dir", str(tmp_path), "--json", "-q"]
    try:
        result = CliRunner().invoke(main, args)
    finally:
        assert_none_left(token)
    assert result.exit_code == 0, result.output
    rules = preset("standard", max_pip=6, players=2, rounds="single")
    assert len(sent) == 2
    for seat, transcript in enumerate(sent):
        messages = [json.loads(line) for chunk in transcript for line in chunk.splitlines()]
        start = next(x for x in messages if x["type"] == "game_start")
        first = next(x for x in messages if x["type"] == "round_start")
        assert start["seat"] == seat
        assert sorted(new_game(rules, 4242).hands[seat]) == sorted(
            as_tile(*t) for t in first["hand"]
        )
        leaked = deal_seeds_in(start, rules, seat, first["hand"])
        assert leaked == [], f"game_start lets seat {seat} re-derive the deal: {start['game']!r}"
