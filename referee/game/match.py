"""One game between connected bots: requests, clocks, faults, events.

The engine decides; this module waits. Every message to a seat is built by
`referee.game.wire` from that seat's view. Clocks are absolute trio deadlines,
measured from the flush of a request to the arrival of a whole reply line,
less the time the referee itself was stalled (`referee.game.lag`).
Bot misbehaviour becomes a `Fault` at its seat, never an exception; what the
protocol says to ignore (a stale reply) becomes a `Notice`, which costs nothing.

A tcp seat with a reconnect window (`Seat.rejoin`, `Seat.reconnect_ms`) keeps every
line meant for it in this game (its outbox, redacted as what it is sent). When its
connection drops, the game goes on without it; a new connection that logs in with
its token and names this game within the window gets `resumed` and the lines from
where the bot says it stopped, then plays on. Its clock runs while it is away on its
own turn; a bot not back within the window has the crash it would have had at once.
"""

from __future__ import annotations

import contextlib
import enum
import gc
import hashlib
import hmac
import logging
import math
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Final, Protocol, TypeVar

import msgspec
import trio

from protocol import RemoteProtocolError, decode_from_bot, encode
from protocol import messages as m

from ..bots.connection import BotGoneError, BotStalledError, Connection
from ..bots.faults import FATAL, Fault, FaultKind, Notice, NoticeKind, Policy, evidence
from ..bots.session import ResumeHandler
from ..rules import (
    DRAW,
    END,
    PASS,
    Move,
    Outcome,
    RoundResult,
    Rules,
    State,
    apply,
    legal_moves,
    new_game,
)
from . import wire
from .lag import LagMonitor
from .lag import current as current_monitor

log = logging.getLogger("referee.match")  # its name before the move: serve prints it

T = TypeVar("T")


class Rejoin(Protocol):
    """What a game needs of a tcp session to take it back mid-game."""

    def hold(self, game: str, handler: ResumeHandler | None) -> None:
        """Send a login that resumes `game` to `handler` (None: the game is over)."""


class _Wait(enum.Enum):
    WAIT = "wait"


_WAIT: Final = _Wait.WAIT  # a line that is ignored: the reply is still to come


@dataclass
class Seat:
    """A bot at a table: its connection and what the game has cost it so far."""

    name: str
    connection: Connection | None = None
    local: Callable[[State], Move] | None = None  # an in-process player instead of a bot
    # After the bot's output ends: what kind of fault that was, and a note (its exit).
    diagnose: Callable[[], Awaitable[tuple[FaultKind, str]]] | None = None
    rejoin: Rejoin | None = None  # a tcp bot's session, which may come back mid-game
    reconnect_ms: int = 0  # how long it may be away: 0, not at all
    bank_ms: float = 0.0
    faults: list[Fault] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    forfeited: bool = False
    decisions: int = 0
    think_ms: float = 0.0
    # The note and numbers of the reply being judged (`move` fields), for its decision.
    said: tuple[str | None, dict[str, float] | None] = (None, None)

    @property
    def live(self) -> bool:
        """True while the bot is still asked for its decisions."""
        return (self.connection is not None or self.local is not None) and not self.forfeited


class Decision(msgspec.Struct, frozen=True):
    """One decision as the log keeps it (a frozen struct: one is made per decision, and
    msgspec builds one several times faster than a frozen dataclass or a named tuple)."""

    seat: int
    request: int
    move: Move
    latency_ms: float | None  # None when the referee decided (forfeited seat, default move)
    auto: bool
    faults: tuple[Fault, ...]
    round: int
    # How long the referee itself was late (stopped, busy) while the bot's reply waited;
    # never part of `latency_ms`, which is what the bot is charged.
    late_ms: float = 0.0
    notices: tuple[Notice, ...] = ()  # what the bot sent that was ignored (stale replies)
    # The bot's optional `note` and `info` on its move (never sent to another seat).
    note: str | None = None
    info: dict[str, float] | None = None


@dataclass
class GameResult:
    """A finished game: the engine's outcome, ranks after forfeits, faults and notices
    by seat."""

    outcome: Outcome
    ranks: tuple[int, ...]
    forfeited: tuple[bool, ...]
    faults: tuple[tuple[Fault, ...], ...]
    decisions: int
    results: tuple[RoundResult, ...]
    final: State
    notices: tuple[tuple[Notice, ...], ...] = ()
    # The bots' decision time, summed over the game: what their clocks were charged, and
    # what the referee's own lateness added while replies waited (left off their clocks).
    charged_ms: float = 0.0
    excused_ms: float = 0.0

    @property
    def excused_share(self) -> float:
        """The share of the decision time that was excused (0 without decisions)."""
        total = self.charged_ms + self.excused_ms
        return self.excused_ms / total if total else 0.0


class Recorder:
    """Receives the game as it happens; the log writer subclasses it."""

    def decision(self, record: Decision, state: State) -> None:
        """A decision was applied; `state` is the state after it."""

    def round_end(self, result: RoundResult) -> None:
        """A round was scored."""


class Fanout(Recorder):
    """Passes each event to several recorders."""

    def __init__(self, *recorders: Recorder) -> None:
        self.recorders = recorders

    def decision(self, record: Decision, state: State) -> None:
        for r in self.recorders:
            r.decision(record, state)

    def round_end(self, result: RoundResult) -> None:
        for r in self.recorders:
            r.round_end(result)


def bot_seed(game_seed: int, seat: int, key: bytes) -> int:
    """The seed a bot gets for its own randomness.

    Keyed: a function of the game seed alone could be inverted by a bot trying
    small game seeds until one gives its bot seed, and then it would know every
    hand. With the key (kept by the referee, written only in the full log) the
    same key, game seed and seat always give the same bot seed.
    """
    digest = hmac.new(key, f"bot/{game_seed}/{seat}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big")


def new_bot_seed_key() -> bytes:
    """A fresh secret for `bot_seed`."""
    return secrets.token_bytes(16)


SEED_BITS = 128  # a game seed is the deal's only secret: too many bits to search


def new_game_seed() -> int:
    """A fresh secret game seed."""
    return secrets.randbits(SEED_BITS)


def seed_problem(seed: int) -> str | None:
    """Why `seed` cannot be a game seed (out of 0 to 2**128-1), or None.

    The engine would take any integer, but a log is named after its seed
    (`game--1.jsonl.gz` reads badly, and `game-7-2.jsonl.gz` is the second log of seed 7)
    and every seed the referee draws lies in this range."""
    if 0 <= seed < 1 << SEED_BITS:
        return None
    return f"{seed} is out of range: a seed is a whole number from 0 to 2**{SEED_BITS}-1"


# The collector's first threshold while games are played: a decision allocates a few
# hundred tracked objects, nearly all freed by their reference counts at once, so the
# default of 700 ran a collection every few decisions for nothing.
GC_THRESHOLD = 20_000
_gc_settled = False


def settle_gc() -> None:
    """Once per process, as its first game starts: move everything alive after start-up
    (modules, classes, the rules' tables) out of the collector's sight (`gc.freeze`), and
    collect less often. Later calls do nothing: a freeze per game would keep each game's
    garbage cycles alive for good."""
    global _gc_settled
    if _gc_settled:
        return
    _gc_settled = True
    gc.collect()
    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, second, third)


def auto_move(state: State) -> Move:
    """The move made for a forfeited seat: draw or pass when possible, else the first move."""
    legal = legal_moves(state)
    for choice in (DRAW, PASS, END):
        if choice in legal:
            return choice
    return legal[0]


def final_ranks(outcome: Outcome, forfeited: Sequence[bool], rules: Rules) -> tuple[int, ...]:
    """Engine ranks, with every forfeited side moved below every other side."""
    n = rules.players
    lost = {rules.team_of(s) for s in range(n) if forfeited[s]}
    if not lost:
        return outcome.ranks

    def key(seat: int) -> tuple[bool, int]:
        return (rules.team_of(seat) in lost, outcome.ranks[seat])

    keys = [key(s) for s in range(n)]
    sides = {rules.team_of(s): keys[s] for s in range(n)}
    return tuple(1 + sum(1 for k in sides.values() if k < keys[s]) for s in range(n))


class Game:
    """Drives one game over connected, handshaken bots."""

    def __init__(
        self,
        seats: Sequence[Seat],
        rules: Rules,
        seed: int,
        *,
        game_id: str,
        time: m.TimeControl,
        policy: Policy = Policy.FORFEIT,
        max_faults: int = 3,
        recorder: Recorder | None = None,
        clock: Callable[[], float] = trio.current_time,
        on_forfeit: Callable[[int], None] | None = None,
        output_cap: int | None = None,
        bot_seed_key: bytes | None = None,
        monitor: LagMonitor | None = None,
        seat_times: Sequence[m.TimeControl] | None = None,
        receipts: Callable[[GameResult], Sequence[m.Receipt | None]] | None = None,
    ) -> None:
        if len(seats) != rules.players:
            raise ValueError(f"{len(seats)} bots for a table of {rules.players}")
        self.seats = list(seats)
        self.rules = rules
        self.seed = seed
        self.game_id = game_id
        self.time = time
        # Time odds: a seat may have a clock of its own ("does more thinking time help?").
        self.times = list(seat_times) if seat_times is not None else [time] * len(self.seats)
        if len(self.times) != len(self.seats):
            raise ValueError(f"{len(self.times)} clocks for a table of {len(self.seats)}")
        self.policy = policy
        self.max_faults = max_faults
        self.recorder = recorder or Recorder()
        self.clock = clock
        self.on_forfeit = on_forfeit
        self.output_cap = output_cap  # bytes a bot may write during one decision
        self.bot_seed_key = bot_seed_key if bot_seed_key is not None else new_bot_seed_key()
        # Measures the referee's own stalls, which no bot is charged for; by default the
        # monitor of the running loop (none: every wait counts, as in a bare test loop).
        self.monitor = monitor
        self._lag = monitor  # the one the game uses: `play` looks the loop's up
        # Called once the game is decided, before `game_end` is sent: each seat's receipt
        # (a league writes the log's footer first, so the receipt can carry its digest).
        self.receipts = receipts
        for seat, seat_time in zip(self.seats, self.times, strict=True):
            seat.bank_ms = float(seat_time.bank_ms)
        # The reconnect window's state, for seats that have one: every line meant for
        # the seat in this game, its connection's line count when the game began, since
        # when it is away (None: connected), and what is set when it is back.
        self._outbox: list[list[bytes] | None] = [
            [] if s.rejoin is not None and s.reconnect_ms > 0 else None for s in self.seats
        ]
        self._base_in = [0] * len(self.seats)
        self._away: list[float | None] = [None] * len(self.seats)
        self._back = [trio.Event() for _ in self.seats]

    # ------------------------------------------------------------ sending

    def _send(self, index: int, message: m.Message) -> None:
        seat = self.seats[index]
        connection = seat.connection
        if connection is None or seat.forfeited:  # not live, or an in-process player
            return
        if self._outbox[index] is not None:
            self._queue(index, encode(message, connection.max_line))
            return
        try:
            connection.send(message)
        except BotGoneError as exc:
            self._gone(index, exc)
        except BotStalledError as exc:
            self._fault(index, FaultKind.TIMEOUT, str(exc))

    def _broadcast(self, event: wire.Event) -> None:
        public = encode(event.public)  # encoded once for every seat that gets it
        audience, private, owner = event.audience, event.private, event.owner
        for index, seat in enumerate(self.seats):
            connection = seat.connection
            if connection is None or seat.forfeited:  # not live, or an in-process player
                continue
            if audience is not None and index not in audience:
                continue
            if private is not None and index == owner:
                self._send(index, private)
                continue
            if self._outbox[index] is not None:
                self._queue(index, public)
                continue
            try:
                connection.send_raw(public)
            except BotGoneError as exc:
                self._gone(index, exc)
            except BotStalledError as exc:
                self._fault(index, FaultKind.TIMEOUT, str(exc))

    def _queue(self, index: int, data: bytes) -> None:
        """A line for a seat with a reconnect window: kept, and sent unless it is away."""
        outbox = self._outbox[index]
        connection = self.seats[index].connection
        assert outbox is not None and connection is not None
        outbox.append(data)
        if self._away[index] is not None:
            return
        try:
            connection.send_raw(data)
        except BotGoneError:
            self._drop(index)
        except BotStalledError as exc:
            self._fault(index, FaultKind.TIMEOUT, str(exc))

    # ------------------------------------------------------------ reconnecting

    def _drop(self, index: int) -> None:
        """The seat's connection is gone: it is away from now (if not already)."""
        if self._away[index] is None:
            self._away[index] = self.clock()
            self._back[index] = trio.Event()
            log.info(
                "seat %d: connection lost; waiting up to %d ms for it to log in again",
                index,
                self.seats[index].reconnect_ms,
            )

    async def _await_back(self, index: int, until: float) -> bool:
        """Wait until the seat is back on a new connection, until `until` or the end of
        its reconnect window, whichever comes first. True when it is back."""
        away = self._away[index]
        if away is None:
            return True
        end = min(until, away + self.seats[index].reconnect_ms / 1000)
        with trio.move_on_at(end):
            await self._back[index].wait()
        return self._away[index] is None

    def _not_back(self, index: int, request: int | None, round_index: int | None) -> None:
        """The crash of a seat whose window ended before it came back."""
        if self._away[index] == -math.inf:
            detail = "disconnected, and logged in again without resuming the game"
        else:
            detail = f"disconnected, and not back within {self.seats[index].reconnect_ms} ms"
        self._fault(index, FaultKind.CRASH, detail, request, round_index)

    async def _resume(self, index: int, connection: Connection | None, received: int) -> int | None:
        """A new connection of seat `index`'s bot that names this game and has had its
        first `received` lines: it takes the seat's place, is sent `resumed` and the
        lines after those, and the game goes on with it. None when it may not: the
        seat was forfeited, its window is over, or the count is not one of its lines.

        `connection` None: the bot logged in again without naming the game (its bridge
        started afresh): it is not coming back, and its window ends now."""
        seat = self.seats[index]
        outbox = self._outbox[index]
        if connection is None:
            if outbox is not None and seat.live:
                self._away[index] = -math.inf
                self._back[index].set()
            return None
        away = self._away[index]
        if outbox is None or not seat.live or not 0 <= received <= len(outbox):
            return None
        if away is not None and self.clock() > away + seat.reconnect_ms / 1000:
            return None
        old = seat.connection
        if old is not None and old is not connection:
            connection.continue_from(old)
        got = connection.lines_in - self._base_in[index]
        try:
            connection.send(m.Resumed(game=self.game_id, received=got))
            for data in outbox[received:]:
                connection.send_raw(data)
        except (BotGoneError, BotStalledError):
            return None
        connection.kick()
        seat.connection = connection
        self._away[index] = None
        self._back[index].set()
        log.info("seat %d: back, from line %d of %d", index, received, len(outbox))
        if old is not None and old is not connection:
            # A reader still waiting on the old connection learns that it is gone.
            await old.aclose()
        return got

    def _error(self, index: int, code: str, message: str, request: int | None) -> None:
        self._send(index, m.Error(code=code, message=message, request=request))  # type: ignore[arg-type]
        connection = self.seats[index].connection
        if connection is not None:
            connection.kick()  # the bot hears about its error now, not with the next request

    # ------------------------------------------------------------ faults

    def _fault(
        self,
        index: int,
        kind: FaultKind,
        detail: str,
        request: int | None = None,
        round_index: int | None = None,
    ) -> Fault:
        seat = self.seats[index]
        fault = Fault(index, kind, evidence(detail), request, round_index)
        seat.faults.append(fault)
        log.info("fault: %s", fault)
        if (
            kind in FATAL
            or self.policy is Policy.FORFEIT
            or len(seat.faults) >= self.max_faults
            or kind is FaultKind.OVERSIZE
        ):
            self._forfeit(index, fault)
        return fault

    def _gone(
        self,
        index: int,
        exc: BotGoneError,
        request: int | None = None,
        round_index: int | None = None,
    ) -> None:
        """A write found the bot gone: a crash, or the limit that ended it where that
        shows at once (its memory, ended by its keeper or its cgroup)."""
        connection = self.seats[index].connection
        limit = connection.limit_hit() if connection and connection.limit_hit else None
        if limit is not None:
            self._fault(index, FaultKind.RESOURCE_LIMIT, f"{exc}: {limit}", request, round_index)
        else:
            self._fault(index, FaultKind.CRASH, str(exc), request, round_index)

    def _notice(
        self, index: int, kind: NoticeKind, detail: str, request: int, round_index: int
    ) -> None:
        notice = Notice(index, kind, evidence(detail), request, round_index)
        self.seats[index].notices.append(notice)
        log.info("ignored: %s", notice)

    def _forfeit(self, index: int, fault: Fault) -> None:
        seat = self.seats[index]
        if seat.connection is not None and seat.live:
            with contextlib.suppress(BotGoneError, BotStalledError):
                seat.connection.send(m.Bye(reason=f"forfeit: {fault.kind.value}"))
            seat.connection.close_output()
        seat.forfeited = True
        if self.on_forfeit is not None:
            self.on_forfeit(index)

    # ------------------------------------------------------------ the game

    async def play(self) -> GameResult:
        """Play the whole game and return its result."""
        held = []
        for index, seat in enumerate(self.seats):
            if self._outbox[index] is not None and seat.rejoin is not None and seat.live:
                assert seat.connection is not None
                self._base_in[index] = seat.connection.lines_in
                seat.rejoin.hold(self.game_id, partial(self._resume, index))
                held.append(seat.rejoin)
        try:
            return await self._play()
        finally:
            for rejoin in held:
                rejoin.hold(self.game_id, None)

    async def _play(self) -> GameResult:
        settle_gc()
        if self.clock is trio.current_time:
            # The same clock read without the three calls `trio.current_time` makes to
            # reach it: a decision reads it two to four times.
            self.clock = trio.lowlevel.current_clock().current_time
        # The monitor of the game's decisions: its own, or the loop's, found once.
        self._lag = self.monitor if self.monitor is not None else current_monitor()
        recorder = self.recorder
        rules = self.rules
        names = [s.name for s in self.seats]
        for index in range(rules.players):
            self._send(
                index,
                m.GameStart(
                    game=self.game_id,
                    seat=index,
                    players=rules.players,
                    names=names,
                    rules=wire.rules_info(rules),
                    time=self.times[index],
                    seed=bot_seed(self.seed, index, self.bot_seed_key),
                    rounds=len(rules.engines),
                ),
            )
        state = new_game(rules, self.seed)
        self._round_start(state)
        decisions = 0
        charged_ms = excused_ms = 0.0
        while state.outcome is None:
            before = state
            record = await self._decide(state)
            state = apply(state, record.move)
            decisions += 1
            if record.latency_ms is not None:  # a bot was waited for
                charged_ms += record.latency_ms
                excused_ms += record.late_ms
            for event in wire.events(before, record.move, state):
                self._broadcast(event)
            recorder.decision(record, state)
            if state.round_index != before.round_index or state.outcome is not None:
                recorder.round_end(state.results[-1])
                if state.outcome is None:
                    self._round_start(state)
        assert state.outcome is not None
        forfeited = tuple(s.forfeited for s in self.seats)
        ranks = final_ranks(state.outcome, forfeited, rules)
        outcome = state.outcome
        result = GameResult(
            outcome=outcome,
            ranks=ranks,
            forfeited=forfeited,
            faults=tuple(tuple(s.faults) for s in self.seats),
            decisions=decisions,
            results=state.results,
            final=state,
            notices=tuple(tuple(s.notices) for s in self.seats),
            charged_ms=charged_ms,
            excused_ms=excused_ms,
        )
        receipts = self.receipts(result) if self.receipts is not None else ()
        for index in range(rules.players):
            self._send(
                index,
                m.GameEnd(
                    scores=list(outcome.scores),
                    ranks=list(ranks),
                    rounds=[list(r) for r in outcome.rounds],
                    receipt=receipts[index] if index < len(receipts) else None,
                ),
            )
        await self._flush_all()
        if self.receipts is None:
            # A bot that failed to read game_end is a fault of this game. (With receipts
            # the footer is already written: the result is the one they carry.)
            faults = tuple(tuple(s.faults) for s in self.seats)
            result = replace(result, faults=faults)
        return result

    def _round_start(self, state: State) -> None:
        for index in range(self.rules.players):
            self._send(index, wire.round_start(state, index))

    async def _flush_all(self) -> None:
        for index, seat in enumerate(self.seats):
            while seat.live and seat.connection is not None:
                if not await self._await_back(index, trio.current_time() + 3600):
                    self._not_back(index, None, None)
                    break
                conn = seat.connection
                with trio.move_on_after(self.times[index].grace_ms / 1000 + 1):
                    try:
                        await conn.flush()
                    except BotGoneError as exc:
                        if self._outbox[index] is None:
                            self._gone(index, exc)
                            break
                        if seat.connection is conn:  # else it is back already
                            self._drop(index)
                        continue  # wait for it to come back, within its window
                break

    async def _decide(self, state: State) -> Decision:
        index = state.to_move
        seat = self.seats[index]
        connection = seat.connection
        live = seat.live
        # Request ids count per connection, so they never repeat on a connection
        # that plays several games; 0 marks a decision no bot was asked for.
        bot = live and connection is not None and seat.local is None
        request = connection.next_request() if bot and connection is not None else 0
        round_index = state.round_index
        if not live:
            return Decision(index, request, auto_move(state), None, True, (), round_index)
        if seat.local is not None:
            seat.decisions += 1
            move = seat.local(state)
            return Decision(index, request, move, None, False, (), round_index)
        first, first_notice = len(seat.faults), len(seat.notices)
        asked, latency, late = await self._ask(index, state, request)
        # Most decisions add neither: no slices to copy then.
        faults = tuple(seat.faults[first:]) if len(seat.faults) > first else ()
        notices = tuple(seat.notices[first_notice:]) if len(seat.notices) > first_notice else ()
        note, info = seat.said
        if note is not None or info is not None:
            seat.said = (None, None)  # said of this reply only, even when it was not taken
        if asked is None:
            # A fault took the decision out of the bot's hands.
            auto = legal_moves(state)[0] if seat.live else auto_move(state)
            return Decision(index, request, auto, latency, True, faults, round_index, late, notices)
        seat.decisions += 1
        return Decision(
            index, request, asked, latency, False, faults, round_index, late, notices, note, info
        )

    async def _ask(
        self, index: int, state: State, request: int
    ) -> tuple[Move | None, float | None, float]:
        """Send the turn request and wait for a legal reply; `None` after a fault.
        With the move: the time charged to the bot and the referee's own lateness, in ms."""
        seat = self.seats[index]
        conn = seat.connection
        assert conn is not None
        seat_time = self.times[index]
        move_ms = seat_time.move_ms
        turn = wire.turn_request(state, request, move_ms, int(seat.bank_ms))
        self._send(index, turn)
        if not seat.live:
            return None, None, 0.0
        budget_s = (move_ms + seat.bank_ms + seat_time.grace_ms) / 1000
        round_index = state.round_index
        monitor = self._lag  # none: every wait counts, as in a bare test loop
        away_s = 0.0  # how long its clock ran while it was away (reconnect window)
        flushed = False
        if monitor is not None:
            monitor.watch()  # no context manager: one object less per decision
        try:
            while True:
                if self._away[index] is not None:
                    left = self.clock()
                    back = await self._await_back(index, left + budget_s - away_s)
                    away_s += self.clock() - left
                    if not back:
                        if away_s < budget_s:
                            self._not_back(index, request, round_index)
                            return None, away_s * 1000, 0.0
                        break  # its clock ran out while it was away: a timeout, below
                conn = seat.connection
                assert conn is not None
                try:
                    # What the pipe takes at once needs no scope and no await: the
                    # decision's only scope is then the reply's.
                    flushed = conn.write_now() or await self._flush(
                        conn, budget_s - away_s, monitor
                    )
                    break
                except BotGoneError as exc:
                    if self._outbox[index] is None:
                        self._gone(index, exc, request, round_index)
                        return None, None, 0.0
                    if seat.connection is conn:  # else it is back already
                        self._drop(index)
            if away_s >= budget_s:
                detail = f"no reply within {move_ms} ms + bank {int(seat.bank_ms)} ms (away)"
                self._fault(index, FaultKind.TIMEOUT, detail, request, round_index)
                seat.bank_ms = 0.0
                return None, away_s * 1000, 0.0
            budget_s -= away_s
            if not flushed:
                # The events and the request did not fit into the pipe within the whole
                # budget: the bot is not reading its input.
                detail = f"stopped reading its input ({budget_s:.1f} s to take a request)"
                self._fault(index, FaultKind.TIMEOUT, detail, request, round_index)
                return None, budget_s * 1000, 0.0
            started = self.clock()
            cap_from = conn.bytes_in  # the output cap counts from the request, across reads
            # A reply already in the pipe is judged at once, without a deadline to set up.
            line = conn.line_now()
            verdict = _WAIT if line is None else self._judge(index, state, request, cap_from, line)
            if verdict is _WAIT:
                move, in_time = await self._in_time(
                    lambda: self._read_reply(index, state, request, cap_from),
                    started,
                    budget_s,
                    monitor,
                )
            else:
                move, in_time = verdict, True
            waited_s = self.clock() - started
            late_s = monitor.waited(started, started + waited_s) if monitor is not None else 0.0
        finally:
            if monitor is not None:
                monitor.unwatch()
        late_ms = late_s * 1000
        elapsed_ms = (waited_s - late_s + away_s) * 1000  # what the bot is charged
        if not in_time and seat.live:
            detail = f"no reply within {move_ms} ms + bank {int(seat.bank_ms)} ms"
            if self._away[index] is not None:
                detail += " (away)"  # its connection dropped, and it was not back in time
            self._error(index, "timeout", detail, request)
            self._fault(index, FaultKind.TIMEOUT, detail, request, round_index)
            seat.bank_ms = 0.0
            return None, elapsed_ms, late_ms
        if move is None:
            return None, elapsed_ms, late_ms
        # Accepted in time: the deadline had not cut the read. The read may still end a
        # moment after it (the loop ran other games first, too briefly to be a stall);
        # that moment is the referee's, so a reply in time costs at most its budget.
        elapsed_ms = min(elapsed_ms, (budget_s + away_s) * 1000)
        seat.think_ms += elapsed_ms
        over = max(0.0, elapsed_ms - move_ms - seat_time.grace_ms)
        # The increment may grow the bank up to the largest clock the wire carries.
        seat.bank_ms = min(float(m.MS_MAX), max(0.0, seat.bank_ms - over) + seat_time.increment_ms)
        return move, elapsed_ms, late_ms

    async def _flush(self, conn: Connection, budget_s: float, monitor: LagMonitor | None) -> bool:
        """Write the request and what came before it, which the pipe did not take at once
        (`Connection.write_now`); False when the bot did not take it within the budget
        (`BotGoneError` when it is gone).

        A write cut short ends the bot's decision with a fault, so no deadline may cut
        it just after the referee's own stall: the monitor ends it once the budget has
        passed, stalls left out (see `LagMonitor.guard`)."""
        started = self.clock()
        with trio.CancelScope() as writing:
            if monitor is None:
                writing.deadline = started + budget_s
                await conn.flush()
            else:
                with monitor.guard(writing, started, budget_s):
                    await conn.flush()
        return not writing.cancelled_caught

    async def _in_time(
        self,
        work: Callable[[], Awaitable[T]],
        started: float,
        budget_s: float,
        monitor: LagMonitor | None,
    ) -> tuple[T | None, bool]:
        """`work()` with `budget_s` from `started` to finish, less the referee's own
        stalls; its result, and False (with None) when the budget ran out.

        When the deadline passes just after the referee was stopped or busy, what
        the bot sent meanwhile may be waiting: `work` goes on for a moment (it must
        lose nothing when cancelled). Once the referee has been on time for that
        moment, the bot has had its budget."""
        deadline = started + budget_s
        while True:
            with trio.move_on_at(deadline) as scope:
                result = await work()
            if not scope.cancelled_caught:
                return result, True
            now = self.clock()
            late_s = monitor.waited(started, now) if monitor is not None else 0.0
            left_s = budget_s - (now - started - late_s)
            if left_s <= 0 or monitor is None:
                return None, False
            deadline = now + min(left_s, monitor.join_s)

    async def _read_reply(
        self, index: int, state: State, request: int, start_bytes: int
    ) -> Move | None:
        seat = self.seats[index]
        conn = seat.connection
        assert conn is not None
        round_index = state.round_index
        while True:
            try:
                line = await conn.receive_line()
            except BotGoneError as exc:
                if self._outbox[index] is not None and seat.live:
                    # A tcp seat with a reconnect window: its clock runs while it is away.
                    if seat.connection is conn:
                        self._drop(index)
                    if await self._await_back(index, trio.current_time() + 3600):
                        assert seat.connection is not None
                        conn = seat.connection
                        continue
                    self._not_back(index, request, round_index)
                    return None
                kind, note = FaultKind.CRASH, ""
                if seat.diagnose is not None:
                    with trio.CancelScope(shield=True):
                        kind, note = await seat.diagnose()
                self._fault(index, kind, f"{exc}{note}", request, round_index)
                return None
            except RemoteProtocolError as exc:
                kind = FaultKind.OVERSIZE if exc.code == "oversize" else FaultKind.MALFORMED
                self._error(index, exc.code, str(exc), request)
                self._fault(index, kind, str(exc), request, round_index)
                return None
            verdict = self._judge(index, state, request, start_bytes, line)
            if verdict is not _WAIT:
                return verdict

    def _judge(
        self, index: int, state: State, request: int, start_bytes: int, line: str
    ) -> Move | _Wait | None:
        """A line the bot sent while `request` is open: the move it names, None after a
        fault, or `_WAIT` when it is to be ignored and the next line awaited."""
        round_index = state.round_index
        conn = self.seats[index].connection
        assert conn is not None
        try:
            reply = decode_from_bot(line)
        except RemoteProtocolError as exc:
            self._error(index, "malformed", str(exc), request)
            self._fault(index, FaultKind.MALFORMED, f"{exc}: {line}", request, round_index)
            return None
        if self.output_cap is not None and conn.bytes_in - start_bytes > self.output_cap:
            detail = f"wrote over {self.output_cap} bytes in one decision"
            self._error(index, "unexpected", detail, request)
            self._fault(index, FaultKind.RESOURCE_LIMIT, detail, request, round_index)
            return None
        if not isinstance(reply, m.MoveReply):
            if not isinstance(reply, m.Pong):  # a late pong is harmless
                name = type(reply).__name__.lower()
                self._error(index, "unexpected", f"{name} is not expected now; ignored", request)
            log.info("seat %d: ignored unsolicited %s", index, type(reply).__name__)
            return _WAIT
        if reply.id != request:
            # Ignored and never a fault (PROTOCOL.md): kept as a notice for the organiser.
            self._notice(
                index,
                NoticeKind.STALE_REPLY,
                f"reply for request {reply.id} while {request} is open: {line}",
                request,
                round_index,
            )
            self._send(
                index,
                m.Error(
                    code="stale",
                    message=f"request {reply.id} is not open; {request} is",
                    request=reply.id,
                ),
            )
            return _WAIT
        try:
            move = wire.move_of(reply, state)
            if reply.note is not None or reply.info is not None:
                self.seats[index].said = (reply.note, reply.info)
            return move
        except wire.ReplyError as exc:
            kind = FaultKind.ILLEGAL if exc.code == "illegal" else FaultKind.MALFORMED
            self._error(index, exc.code, str(exc), request)
            self._fault(index, kind, f"{exc}: {line}", request, round_index)
            return None
