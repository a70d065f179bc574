"""Every message of protocol v1, as msgspec Structs tagged by their `type` field.

Two unions, named by direction: `ToBot` (referee to bot) and `FromBot`. A tile
is a two-number array `[6, 4]`. New fields only ever arrive with defaults, and
decoders ignore fields they do not know, so older bots keep working. The only
key named `id` anywhere is a turn request's id (and the reply's echo of it), so
a bot may find it with a plain text search.

Every integer field has a range (spec/PROTOCOL.md, "Integer ranges"): its type below
says it with `Meta(ge=..., le=...)`, so the schema states it as `minimum` and
`maximum` and decoding refuses a number outside it. The bounds follow from the
rules' limits (spec/RULES.md): the largest set is double-18, a table deals at least
one tile to each of at least two seats and keeps the engine. Depends on msgspec only.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

PROTOCOL_VERSION = 1
MAX_LINE_DEFAULT = 1 << 20  # bytes, newline excluded

# ---------------------------------------------------------------- integer ranges

INT32_MAX = 2**31 - 1  # a C `int32_t`, a Java `int`
UINT32_MAX = 2**32 - 1  # a C `uint32_t`; in Java a `long`
COUNTER_MAX = 2**53 - 1  # ids, nonces: a double (a JavaScript number) holds them exactly

PIP_MAX = 18  # the largest set: double-18
SET_TILES_MAX = (PIP_MAX + 1) * (PIP_MAX + 2) // 2  # 190 tiles in double-18
SET_PIPS_MAX = PIP_MAX * (PIP_MAX + 1) * (PIP_MAX + 2) // 2  # 3420 pips on them
SEATS_MAX = SET_TILES_MAX - 1  # 189: one tile each, and the engine left over
DEALT_MAX = (SET_TILES_MAX - 1) // 2  # 94: two seats, the engine left over
HAND_MAX = SET_TILES_MAX - 1  # 189: every tile but the engine
BONEYARD_MAX = SET_TILES_MAX - 1 - 2  # 187: two seats dealt one tile each
# Each seat's own train, the Mexican train, and two branches for each double satisfied
# (every double of the set but the engine).
TRAINS_MAX = SEATS_MAX + 1 + 2 * PIP_MAX  # 226
LEGAL_MAX = HAND_MAX * TRAINS_MAX + 3  # every tile on every train, draw, pass and end
ROUNDS_MAX = PIP_MAX + 1  # one round per engine double: 19
DOUBLE_BLANK_MAX = 1000  # what the double-blank may score (rules option)
PENALTY_MAX = BONEYARD_MAX  # tiles an unannounced play may cost (rules option)
HAND_POINTS_MAX = SET_PIPS_MAX + DOUBLE_BLANK_MAX  # 4420: a hand, or a side, in a round
SCORE_MAX = ROUNDS_MAX * HAND_POINTS_MAX  # 83980: a game's total
MS_MAX = INT32_MAX  # every clock, in ms (24.8 days)
LINE_MAX = INT32_MAX  # bytes of a line
NOTE_MAX = 280  # characters of a move's `note`
INFO_KEYS_MAX = 16  # numbers in a move's `info`
INFO_KEY_MAX = 32  # characters of an `info` key
INFO_ABS_MAX = 1e15  # an `info` number's size: a double holds every integer up to it

Pip = Annotated[int, Meta(ge=0, le=PIP_MAX)]
Tile = tuple[Pip, Pip]
Seat = Annotated[int, Meta(ge=0, le=SEATS_MAX - 1)]
Seats = Annotated[int, Meta(ge=2, le=SEATS_MAX)]
Owner = Annotated[int, Meta(ge=-1, le=SEATS_MAX - 1)]  # a side, or -1: the Mexican train
TrainIndex = Annotated[int, Meta(ge=0, le=TRAINS_MAX - 1)]
Parent = Annotated[int, Meta(ge=-1, le=TRAINS_MAX - 1)]  # a train, or -1: none
RoundIndex = Annotated[int, Meta(ge=0, le=ROUNDS_MAX - 1)]
Rounds = Annotated[int, Meta(ge=1, le=ROUNDS_MAX)]
HandCount = Annotated[int, Meta(ge=0, le=HAND_MAX)]
Boneyard = Annotated[int, Meta(ge=0, le=BONEYARD_MAX)]
Points = Annotated[int, Meta(ge=0, le=HAND_POINTS_MAX)]  # a hand's, or a side's, in a round
Total = Annotated[int, Meta(ge=0, le=SCORE_MAX)]
Rank = Annotated[int, Meta(ge=1, le=SEATS_MAX)]
Millis = Annotated[int, Meta(ge=0, le=MS_MAX)]
RequestId = Annotated[int, Meta(ge=1, le=COUNTER_MAX)]
Nonce = Annotated[int, Meta(ge=0, le=COUNTER_MAX)]
BotSeed = Annotated[int, Meta(ge=0, le=UINT32_MAX)]
Version = Annotated[int, Meta(ge=1, le=INT32_MAX)]
LineBytes = Annotated[int, Meta(ge=1, le=LINE_MAX)]
MoveIndex = Annotated[int, Meta(ge=0, le=LEGAL_MAX - 1)]
# A login's nonce: at most 128 characters of printable ASCII (space to `~`). `$` alone
# would let a final newline through (Python's `$` matches before one).
LOGIN_NONCE_MAX = 128
# A move's note and numbers (optional): kept in the log, never sent to another seat.
Note = Annotated[str, Meta(max_length=NOTE_MAX)]
InfoKey = Annotated[str, Meta(min_length=1, max_length=INFO_KEY_MAX, pattern=r"^[A-Za-z0-9_.-]+$")]
InfoNumber = Annotated[float, Meta(ge=-INFO_ABS_MAX, le=INFO_ABS_MAX)]
Info = Annotated[dict[InfoKey, InfoNumber], Meta(max_length=INFO_KEYS_MAX)]
LoginNonce = Annotated[str, Meta(max_length=LOGIN_NONCE_MAX, pattern=r"^[ -~]*$(?!\n)")]

Action = Literal["play", "draw", "pass", "end"]


class Message(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every message; `type` names it on the wire."""


# ---------------------------------------------------------------- shared parts


class TimeControl(msgspec.Struct, kw_only=True):
    """The clocks of a game, in milliseconds."""

    startup_ms: Millis = 10_000  # from hello to ready
    move_ms: Millis = 1_000  # per decision before the bank is used
    bank_ms: Millis = 30_000  # per game, covers overruns of move_ms
    increment_ms: Millis = 0  # added to the bank after each decision
    grace_ms: Millis = 50  # harness latency allowance, never charged to the bot


class RulesInfo(msgspec.Struct, kw_only=True):
    """Every rules option (see spec/RULES.md); `hand_size` is resolved."""

    max_pip: Annotated[int, Meta(ge=6, le=PIP_MAX)] = 12  # 6, 9, 12, 15 or 18
    players: Seats = 4
    hand_size: Annotated[int, Meta(ge=1, le=DEALT_MAX)] = 15
    hand_table: str = "standard"
    rounds: str = "descending"
    engine_source: str = "holder"
    first_player: str = "after-holder"
    first_turn: str = "single"
    first_turns_complete: bool = False
    first_train_until_stuck: bool = False
    first_train_draws: bool = True
    mexican_train: bool = True
    mexican_start_restricted: bool = False
    must_play: bool = True
    draw_until_playable: bool = False
    doubles_bind: bool = True
    satisfy_order: str = "any"
    follow_up: str = "any"
    own_double_follow_up: str = "required"
    bind_duration: str = "until-satisfied"
    any_play_clears_marker: bool = False
    unfinished_own_double_marks: bool = True
    double_blank_score: Annotated[int, Meta(ge=0, le=DOUBLE_BLANK_MAX)] = 50
    teams: bool = False
    branching_doubles: bool = False
    swan_drive: bool = False
    announce_one_tile: bool = False
    announce_penalty: Annotated[int, Meta(ge=0, le=PENALTY_MAX)] = 2


class MoveSpec(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A move as listed in a turn request: `play` names a tile and a train."""

    action: Action
    tile: Tile | None = None
    train: TrainIndex | None = None
    announce: bool = False


class TrainInfo(msgspec.Struct, kw_only=True):
    """One train as every seat sees it."""

    train: TrainIndex  # its index: seat s's train is s, the Mexican train is `players`
    owner: Owner  # the scoring side (a seat unless teams), -1 for the Mexican train
    tiles: list[Tile]  # in play order from the hub, each oriented as it lies
    end: Pip  # the open pip a new tile must match
    public: bool  # anyone may play on it (marker up, or the Mexican train)
    open_double: bool  # its last tile is a double not yet satisfied
    parent: Parent = -1  # for a branch: the train it grew from


class ViewInfo(msgspec.Struct, kw_only=True):
    """Everything the seat may know when it is asked to move."""

    round: RoundIndex
    engine: Pip
    hand: list[Tile]
    drawn: Tile | None = None  # the tile just drawn, when only it may be played
    trains: list[TrainInfo]
    markers: list[bool]  # by seat
    hand_counts: list[HandCount]  # by seat
    scores: list[Total]  # totals of finished rounds, by seat
    boneyard: Boneyard  # tiles left to draw
    # every live open double's train, in the order they were played
    open_doubles: list[TrainIndex]
    # the trains whose double binds this seat now (new in v1: optional)
    binding: list[TrainIndex] = []
    step: str  # where the seat is within its turn: start, follow, continue, swan, build
    next: Seat  # the seat that moves after this turn, if it ends normally


class Clock(msgspec.Struct, kw_only=True):
    """Time the seat has for this decision, in milliseconds."""

    move_ms: Millis  # before the bank is touched
    bank_ms: Millis  # what is left in the bank


# ---------------------------------------------------------------- referee to bot


class Hello(Message, tag="hello", kw_only=True):
    """First message on a connection; the bot answers `ready`."""

    protocol: Version = PROTOCOL_VERSION
    referee: str
    players: Seats
    rules: RulesInfo
    time: TimeControl
    max_line: LineBytes = MAX_LINE_DEFAULT


class GameStart(Message, tag="game_start", kw_only=True):
    """A new game on this connection; `seed` is the bot's own, for its randomness."""

    game: str
    seat: Seat
    players: Seats
    names: list[str]
    rules: RulesInfo
    time: TimeControl
    seed: BotSeed
    rounds: Rounds


class RoundStart(Message, tag="round_start", kw_only=True):
    """A new round: the bot's own hand and the engine in the hub."""

    round: RoundIndex
    engine: Pip
    hand: list[Tile]
    holder: Seat | None  # the seat that placed the engine; null when it is set out
    starter: Seat
    hand_counts: list[HandCount]
    boneyard: Boneyard
    engine_draws: list[Seat] = []  # seats that drew, in order, until the engine turned up


class Played(Message, tag="played", kw_only=True):
    """A seat played a tile on a train."""

    seat: Seat
    tile: Tile  # oriented as it lies: tile[0] matched the train's old end
    train: TrainIndex
    end: Pip  # the train's new open end
    opens_double: bool = False  # the tile is a double now waiting to be satisfied
    branches: list[TrainIndex] = []  # trains opened by satisfying a double (branching doubles)
    announce: bool = False


class Drew(Message, tag="drew", kw_only=True):
    """A seat drew from the boneyard; the tile is shown only to the drawer."""

    seat: Seat
    tile: Tile | None = None
    reason: Literal["turn", "penalty"] = "turn"


class Passed(Message, tag="passed", kw_only=True):
    """A seat could not play; its marker is up and its turn is over."""

    seat: Seat


class Marker(Message, tag="marker", kw_only=True):
    """A seat's marker went up or came down."""

    seat: Seat
    up: bool


class Turn(Message, tag="turn", kw_only=True):
    """It is this bot's decision. Reply with `move`, echoing `id`."""

    id: RequestId
    seat: Seat
    view: ViewInfo
    legal: Annotated[list[MoveSpec], Meta(min_length=1, max_length=LEGAL_MAX)]  # never empty
    clock: Clock


class RoundEnd(Message, tag="round_end", kw_only=True):
    """A round is over: every hand is shown, with the round's scores."""

    round: RoundIndex
    reason: Literal["out", "blocked"]
    out: list[Seat]
    hands: list[list[Tile]]
    values: list[Points]  # pip value of each hand, double-blank as the rules score it
    scores: list[Points]  # what each seat's side scores this round
    totals: list[Total]  # running totals after this round


class Receipt(msgspec.Struct, kw_only=True, omit_defaults=True):
    """In `game_end` of a league game: what the referee recorded of this seat's game, for
    its bot to keep; signed by the organiser when the league signs (see spec/PROTOCOL.md)."""

    league: str  # the league's commitment: sha256: and 64 hex digits
    game: str  # the game's id
    seat: Seat
    name: str  # the bot's name in the league
    scores: list[Total]
    ranks: list[Rank]
    log_sha256: str  # the game log's digest: sha256: and 64 hex digits
    key_id: str | None = None  # the organiser's key id (16 hex digits), when signed
    signature: str | None = None  # base64 Ed25519 over `receipt_bytes`, when signed


RECEIPT_PREFIX = b"mexican-train-referee receipt 1\n"


def receipt_bytes(receipt: Receipt) -> bytes:
    """What a receipt's signature signs: `RECEIPT_PREFIX`, then the receipt without its
    `signature` as JSON with sorted keys and no spaces (key_id included)."""
    fields = msgspec.structs.asdict(receipt)
    del fields["signature"]
    body = {k: v for k, v in fields.items() if v is not None}
    return RECEIPT_PREFIX + json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


class GameEnd(Message, tag="game_end", kw_only=True):
    """The game is over."""

    scores: list[Total]
    ranks: list[Rank]  # 1 is best; ties share a rank
    rounds: list[list[Points]]  # scores by round, by seat
    reason: str = "complete"
    receipt: Receipt | None = None  # a league game's record, for the bot to keep


class Error(Message, tag="error", kw_only=True):
    """The referee's answer to a bad line; `code` is stable, `message` is for people."""

    code: Literal[
        "malformed",
        "illegal",
        "timeout",
        "stale",
        "oversize",
        "unexpected",
        "version",
        "login",
        "busy",
        "resume",
    ]
    message: str
    request: RequestId | None = None  # the turn request the error concerns, if any


class Ping(Message, tag="ping", kw_only=True):
    """Liveness check between games; answer `pong` with the same nonce."""

    nonce: Nonce


class Resumed(Message, tag="resumed", kw_only=True):
    """TCP only: the answer to a `login` with `resume`, instead of `hello`: the game goes
    on on this connection. `received`: how many lines the referee has received from the
    bot since it sent that game's `game_start`; the lines the bot missed follow."""

    game: str
    received: Annotated[int, Meta(ge=0, le=COUNTER_MAX)]


class Bye(Message, tag="bye", kw_only=True):
    """The connection is over; exit cleanly."""

    reason: str = "done"


# ---------------------------------------------------------------- bot to referee


class Ready(Message, tag="ready", kw_only=True, omit_defaults=True):
    """The bot's answer to `hello`."""

    name: str
    version: str = ""
    author: str = ""
    protocol: Version = PROTOCOL_VERSION


class Resume(msgspec.Struct, kw_only=True, frozen=True):
    """In a `login` after a dropped connection: the game to go on with, and how many of
    its lines (from `game_start` on) the bot has received."""

    game: str
    received: Annotated[int, Meta(ge=0, le=COUNTER_MAX)]


class Login(Message, tag="login", kw_only=True):
    """TCP only: the first line on a connection, before `hello`; see spec/PROTOCOL.md.
    `nonce`: the entrant's own contribution to the deals' seeds (recorded). `resume`:
    a connection that dropped mid-game coming back to it, within `reconnect_ms`."""

    name: str
    token: str
    protocol: Version = PROTOCOL_VERSION
    nonce: LoginNonce | None = None
    resume: Resume | msgspec.UnsetType = msgspec.UNSET  # left out of a fresh login


class MoveReply(Message, tag="move", kw_only=True, omit_defaults=True):
    """A decision: `index` into the request's legal list, or the move spelled out."""

    id: RequestId
    index: MoveIndex | None = None
    action: Action | None = None
    tile: Tile | None = None
    train: TrainIndex | None = None
    announce: bool = False
    # The bot's own words and numbers on its move (its estimate, worlds searched...):
    # the log keeps them; other seats never get them; spectators see them after the game.
    note: Note | None = None
    info: Info | None = None


class Pong(Message, tag="pong", kw_only=True, omit_defaults=True):
    """The answer to `ping`."""

    nonce: Nonce


ToBot = (
    Hello
    | GameStart
    | RoundStart
    | Played
    | Drew
    | Passed
    | Marker
    | Turn
    | RoundEnd
    | GameEnd
    | Error
    | Ping
    | Resumed
    | Bye
)
FromBot = Ready | Login | MoveReply | Pong

TO_BOT_TYPES: tuple[type[Message], ...] = (
    Hello,
    GameStart,
    RoundStart,
    Played,
    Drew,
    Passed,
    Marker,
    Turn,
    RoundEnd,
    GameEnd,
    Error,
    Ping,
    Resumed,
    Bye,
)
FROM_BOT_TYPES: tuple[type[Message], ...] = (Ready, Login, MoveReply, Pong)
