"""Every message of protocol v1, as msgspec Structs tagged by their `type` field.

Two unions, named by direction: `ToBot` (referee to bot) and `FromBot`. A tile
is a two-number array `[6, 4]`. New fields only ever arrive with defaults, and
decoders ignore fields they do not know, so older bots keep working. The only
key named `id` anywhere is a turn request's id (and the reply's echo of it), so
a bot may find it with a plain text search. Depends on msgspec only.
"""

from __future__ import annotations

from typing import Literal

import msgspec

PROTOCOL_VERSION = 1
MAX_LINE_DEFAULT = 1 << 20  # bytes, newline excluded

Tile = tuple[int, int]
Action = Literal["play", "draw", "pass", "end"]


class Message(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every message; `type` names it on the wire."""


# ---------------------------------------------------------------- shared parts


class TimeControl(msgspec.Struct, kw_only=True):
    """The clocks of a game, in milliseconds."""

    startup_ms: int = 10_000  # from hello to ready
    move_ms: int = 1_000  # per decision before the bank is used
    bank_ms: int = 30_000  # per game, covers overruns of move_ms
    increment_ms: int = 0  # added to the bank after each decision
    grace_ms: int = 50  # harness latency allowance, never charged to the bot


class RulesInfo(msgspec.Struct, kw_only=True):
    """Every rules option (see spec/RULES.md); `hand_size` is resolved."""

    max_pip: int = 12
    players: int = 4
    hand_size: int = 15
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
    double_blank_score: int = 50
    teams: bool = False
    branching_doubles: bool = False
    swan_drive: bool = False
    announce_one_tile: bool = False
    announce_penalty: int = 2


class MoveSpec(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A move as listed in a turn request: `play` names a tile and a train."""

    action: Action
    tile: Tile | None = None
    train: int | None = None
    announce: bool = False


class TrainInfo(msgspec.Struct, kw_only=True):
    """One train as every seat sees it."""

    train: int  # its index: seat s's train is s, the Mexican train is `players`
    owner: int  # the scoring side (a seat unless teams), -1 for the Mexican train
    tiles: list[Tile]  # in play order from the hub, each oriented as it lies
    end: int  # the open pip a new tile must match
    public: bool  # anyone may play on it (marker up, or the Mexican train)
    open_double: bool  # its last tile is a double not yet satisfied
    parent: int = -1  # for a branch: the train it grew from


class ViewInfo(msgspec.Struct, kw_only=True):
    """Everything the seat may know when it is asked to move."""

    round: int
    engine: int
    hand: list[Tile]
    drawn: Tile | None = None  # the tile just drawn, when only it may be played
    trains: list[TrainInfo]
    markers: list[bool]  # by seat
    hand_counts: list[int]  # by seat
    scores: list[int]  # totals of finished rounds, by seat
    boneyard: int  # tiles left to draw
    open_doubles: list[int]  # every live open double's train, in the order they were played
    binding: list[int] = []  # the trains whose double binds this seat now (new in v1: optional)
    step: str  # where the seat is within its turn: start, follow, continue, swan, build
    next: int  # the seat that moves after this turn, if it ends normally


class Clock(msgspec.Struct, kw_only=True):
    """Time the seat has for this decision, in milliseconds."""

    move_ms: int  # before the bank is touched
    bank_ms: int  # what is left in the bank


# ---------------------------------------------------------------- referee to bot


class Hello(Message, tag="hello", kw_only=True):
    """First message on a connection; the bot answers `ready`."""

    protocol: int = PROTOCOL_VERSION
    referee: str
    players: int
    rules: RulesInfo
    time: TimeControl
    max_line: int = MAX_LINE_DEFAULT


class GameStart(Message, tag="game_start", kw_only=True):
    """A new game on this connection; `seed` is the bot's own, for its randomness."""

    game: str
    seat: int
    players: int
    names: list[str]
    rules: RulesInfo
    time: TimeControl
    seed: int
    rounds: int


class RoundStart(Message, tag="round_start", kw_only=True):
    """A new round: the bot's own hand and the engine in the hub."""

    round: int
    engine: int
    hand: list[Tile]
    holder: int | None  # the seat that placed the engine; null when it is set out
    starter: int
    hand_counts: list[int]
    boneyard: int
    engine_draws: list[int] = []  # seats that drew, in order, until the engine turned up


class Played(Message, tag="played", kw_only=True):
    """A seat played a tile on a train."""

    seat: int
    tile: Tile  # oriented as it lies: tile[0] matched the train's old end
    train: int
    end: int  # the train's new open end
    opens_double: bool = False  # the tile is a double now waiting to be satisfied
    branches: list[int] = []  # trains opened by satisfying a double (branching doubles)
    announce: bool = False


class Drew(Message, tag="drew", kw_only=True):
    """A seat drew from the boneyard; the tile is shown only to the drawer."""

    seat: int
    tile: Tile | None = None
    reason: Literal["turn", "penalty"] = "turn"


class Passed(Message, tag="passed", kw_only=True):
    """A seat could not play; its marker is up and its turn is over."""

    seat: int


class Marker(Message, tag="marker", kw_only=True):
    """A seat's marker went up or came down."""

    seat: int
    up: bool


class Turn(Message, tag="turn", kw_only=True):
    """It is this bot's decision. Reply with `move`, echoing `id`."""

    id: int
    seat: int
    view: ViewInfo
    legal: list[MoveSpec]
    clock: Clock


class RoundEnd(Message, tag="round_end", kw_only=True):
    """A round is over: every hand is shown, with the round's scores."""

    round: int
    reason: Literal["out", "blocked"]
    out: list[int]
    hands: list[list[Tile]]
    values: list[int]  # pip value of each hand, double-blank as the rules score it
    scores: list[int]  # what each seat's side scores this round
    totals: list[int]  # running totals after this round


class GameEnd(Message, tag="game_end", kw_only=True):
    """The game is over."""

    scores: list[int]
    ranks: list[int]  # 1 is best; ties share a rank
    rounds: list[list[int]]  # scores by round, by seat
    reason: str = "complete"


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
    ]
    message: str
    request: int | None = None  # the turn request the error concerns, if any


class Ping(Message, tag="ping", kw_only=True):
    """Liveness check between games; answer `pong` with the same nonce."""

    nonce: int


class Bye(Message, tag="bye", kw_only=True):
    """The connection is over; exit cleanly."""

    reason: str = "done"


# ---------------------------------------------------------------- bot to referee


class Ready(Message, tag="ready", kw_only=True, omit_defaults=True):
    """The bot's answer to `hello`."""

    name: str
    version: str = ""
    author: str = ""
    protocol: int = PROTOCOL_VERSION


class Login(Message, tag="login", kw_only=True):
    """TCP only: the first line on a connection, before `hello`; see spec/PROTOCOL.md."""

    name: str
    token: str
    protocol: int = PROTOCOL_VERSION


class MoveReply(Message, tag="move", kw_only=True, omit_defaults=True):
    """A decision: `index` into the request's legal list, or the move spelled out."""

    id: int
    index: int | None = None
    action: Action | None = None
    tile: Tile | None = None
    train: int | None = None
    announce: bool = False


class Pong(Message, tag="pong", kw_only=True, omit_defaults=True):
    """The answer to `ping`."""

    nonce: int


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
    Bye,
)
FROM_BOT_TYPES: tuple[type[Message], ...] = (Ready, Login, MoveReply, Pong)
