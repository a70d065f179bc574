"""The engine's values: moves, trains, round results, the outcome and the game state.

`State` is immutable by convention and by construction: every container in it
is a tuple, and `apply` builds a new `State` instead of changing one. Only the
engine module creates states; everything else reads them.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, NamedTuple

from .tiles import Tile

if TYPE_CHECKING:
    from .options import Rules

MEXICAN = -1  # the owner of the Mexican train and of its branches


class MoveKind(enum.Enum):
    """The four kinds of decision a seat can make."""

    PLAY = "play"
    DRAW = "draw"
    PASS = "pass"  # unable to play: the seat's marker goes up and the turn ends
    END = "end"  # ends a multi-tile turn (long first train, swan drive) without a marker


class Move(NamedTuple):
    """One atomic decision; `train` is a train index of `State.trains`."""

    kind: MoveKind
    tile: Tile | None = None
    train: int | None = None
    announce: bool = False

    def __str__(self) -> str:
        if self.kind is MoveKind.PLAY:
            flag = " (announcing one tile)" if self.announce else ""
            return f"play {self.tile} on train {self.train}{flag}"
        return str(self.kind.value)


DRAW = Move(MoveKind.DRAW)
PASS = Move(MoveKind.PASS)
END = Move(MoveKind.END)


def play(a: int, b: int, train: int, announce: bool = False) -> Move:
    """A PLAY move, tile named in either order."""
    return Move(MoveKind.PLAY, Tile(a, b) if a >= b else Tile(b, a), train, announce)


class Train(NamedTuple):
    """One line of tiles from the hub (or from a branching double).

    `owner` is the scoring side whose train this is, or `MEXICAN`. `end` is the
    open pip; an empty line's end is the engine (or the branching double).
    `parent` is the train a branch grew from, -1 for a train from the hub.
    """

    owner: int
    tiles: tuple[Tile, ...]
    end: int
    parent: int = -1


class Ctx(enum.Enum):
    """Where the seat to move stands within its turn."""

    START = "start"  # a fresh turn
    FOLLOW = "follow"  # just played a double: must play again
    CONTINUE = "continue"  # building a long first train: may play on or end
    SWAN = "swan"  # swan drive: may play on the next public train or end
    BUILD = "build"  # fast-first-turn phase: may build on or end
    BUILD_FOLLOW = "build-follow"  # fast phase, just played a double


# The steps and the move kinds under plain module names, for the engine's hot paths:
# CPython 3.11 reads an attribute of an enum class (`Ctx.START`) through the enum
# metaclass's `__getattr__` hook, several times slower than reading a global.
_START, _FOLLOW, _CONTINUE = Ctx.START, Ctx.FOLLOW, Ctx.CONTINUE
_SWAN, _BUILD, _BUILD_FOLLOW = Ctx.SWAN, Ctx.BUILD, Ctx.BUILD_FOLLOW
_PLAY, _DRAW, _PASS = MoveKind.PLAY, MoveKind.DRAW, MoveKind.PASS


class RoundEnd(enum.Enum):
    """Why a round ended."""

    OUT = "out"  # a seat played its last tile
    BLOCKED = "blocked"  # the boneyard is empty and no seat can play


class RoundResult(NamedTuple):
    """A finished round: the hands shown, each seat's hand value and each seat's score."""

    number: int  # 0-based round number within the game
    engine: int
    starter: int
    end: RoundEnd
    out: tuple[int, ...]  # seats with no tile left
    hands: tuple[tuple[Tile, ...], ...]
    values: tuple[int, ...]  # pip value of each seat's hand (double-blank scored as configured)
    scores: tuple[int, ...]  # what each seat's side scores this round


class Outcome(NamedTuple):
    """The end of a game: totals, scores by round, and ranks (1 is best; ties share)."""

    scores: tuple[int, ...]
    rounds: tuple[tuple[int, ...], ...]
    ranks: tuple[int, ...]

    @property
    def order(self) -> tuple[int, ...]:
        """Seats from best to worst, ties in seat order."""
        return tuple(sorted(range(len(self.ranks)), key=lambda s: (self.ranks[s], s)))


class State:
    """A whole game at one decision point. Read it; make new ones only with `apply`."""

    __slots__ = (
        "_legal",
        "bind_next",
        "bind_now",
        "boneyard",
        "ctx",
        "drawn",
        "engine",
        "engine_draws",
        "fast_counts",
        "first_pending",
        "hands",
        "holder",
        "lock",
        "marked_double",
        "markers",
        "must_follow",
        "open_doubles",
        "outcome",
        "own_doubles",
        "penalty_due",
        "results",
        "round_index",
        "rules",
        "seed",
        "starter",
        "swan_pos",
        "table",
        "table_count",
        "to_move",
        "trains",
        "turn_first",
    )

    rules: Rules
    seed: int
    round_index: int
    engine: int
    holder: int | None
    engine_draws: tuple[int, ...]
    starter: int
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    trains: tuple[Train, ...]
    markers: tuple[bool, ...]
    table_count: tuple[int, ...]
    open_doubles: tuple[int, ...]
    # With bind_duration = "next-turn" only (else both empty): the open doubles left open
    # by the previous turn, which bind this turn, and those laid in this turn, which will
    # bind the next. A satisfied double leaves both.
    bind_now: tuple[int, ...]
    bind_next: tuple[int, ...]
    # With satisfy_order = "last" only (else -1): the train of the last double played
    # while it is open (002's double marker); -1 once it is satisfied or before any.
    marked_double: int
    to_move: int
    ctx: Ctx
    drawn: Tile | None
    lock: int
    # With follow_up = "on-double" only: the double being followed is 003's exception, a
    # drawn double laid during a follow-up, which "must" be followed on one's own train too.
    must_follow: bool
    swan_pos: int
    own_doubles: tuple[int, ...]  # own-side trains the seat to move put a double on this turn
    table: Any  # the engine's per-rules lookup tables, shared by every state of a game
    first_pending: tuple[bool, ...]
    turn_first: bool
    penalty_due: bool
    fast_counts: tuple[int, ...]
    results: tuple[RoundResult, ...]
    outcome: Outcome | None
    _legal: tuple[Move, ...] | None

    def copy(self) -> State:
        """A shallow copy for the engine to change before handing it out."""
        new = State.__new__(State)
        new._legal = None
        new.bind_next = self.bind_next
        new.bind_now = self.bind_now
        new.marked_double = self.marked_double
        new.boneyard = self.boneyard
        new.ctx = self.ctx
        new.drawn = self.drawn
        new.engine = self.engine
        new.engine_draws = self.engine_draws
        new.fast_counts = self.fast_counts
        new.first_pending = self.first_pending
        new.hands = self.hands
        new.holder = self.holder
        new.lock = self.lock
        new.markers = self.markers
        new.must_follow = self.must_follow
        new.open_doubles = self.open_doubles
        new.outcome = self.outcome
        new.own_doubles = self.own_doubles
        new.penalty_due = self.penalty_due
        new.results = self.results
        new.round_index = self.round_index
        new.rules = self.rules
        new.seed = self.seed
        new.starter = self.starter
        new.swan_pos = self.swan_pos
        new.table = self.table
        new.table_count = self.table_count
        new.to_move = self.to_move
        new.trains = self.trains
        new.turn_first = self.turn_first
        return new

    @property
    def is_over(self) -> bool:
        """True once the last round has been scored."""
        return self.outcome is not None

    def __repr__(self) -> str:
        return (
            f"<State round={self.round_index} engine={self.engine} to_move={self.to_move} "
            f"ctx={self.ctx.value} boneyard={len(self.boneyard)} over={self.is_over}>"
        )
