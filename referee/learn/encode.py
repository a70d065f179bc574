"""Action ids and observation vectors for learning agents, from the protocol alone.

Everything here reads protocol values (`ViewInfo`, `MoveSpec`) and the table's
`Rules`, never an engine `State`: the environments build a `ViewInfo` with
`referee.game.wire.view_info(state, seat)`, and a bot process gets the same
`ViewInfo` as a turn request's `view`. So an agent trained in an environment sees
exactly the same numbers when it plays over the protocol.

**Actions.** One `Discrete` space per table configuration (`Rules`). With `S` the
tiles of the set (in `full_set` order: 0-0, 1-0, 1-1, 2-0, ...), `T` the most trains
the rules allow (`max_trains`) and `V` 2 when the rules announce a last-but-one tile
(else 1), playing tile `t` on train `k` is `(t * T + k) * V + a` (`a` = 1 announces),
then `draw`, `pass` and `end` are the last three ids. `action_count(rules)` is the
size of the space.

**Observation.** A float32 vector of values in [0, 1] (`observation_size(rules)`),
laid out by `Layout`: the seat's hand, its drawn tile and the tiles on the table
(one slot per tile of the set each); one block per possible train (present, owner
relative to the seat, Mexican, open end, public, open double, live open double,
binding, length, branch); one block per seat from this seat on (tiles in hand,
marker, total score); the boneyard; the round; the engine; the step; and the seat
to move. Counts are divided by the set's size and scores by the most points a game
can give, so every value stays in [0, 1].
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from protocol.messages import Action, MoveSpec, ViewInfo

from ..rules import Rules, full_set

Observation = npt.NDArray[np.float32]
Mask = npt.NDArray[np.int8]

# The steps of a turn as the wire names them, in the order of the observation's one-hot.
STEPS = ("start", "follow", "continue", "swan", "build")
# The three actions that are not plays, in the order of their ids after the plays.
OTHER_ACTIONS: tuple[Action, ...] = ("draw", "pass", "end")
# Features of one train block, before its one-hots (see `Layout.train_fields`).
TRAIN_FLAGS = ("present", "mexican", "public", "open_double", "live", "binding", "length", "branch")


def tile_index(a: int, b: int) -> int:
    """The position of tile a-b (either order) in `full_set`: 0-0 is 0, 1-0 is 1, 1-1 is 2."""
    hi, lo = (a, b) if a >= b else (b, a)
    return hi * (hi + 1) // 2 + lo


def max_trains(rules: Rules) -> int:
    """The most trains a round of these rules can have: one per seat, the Mexican
    train, and two branches for each double that can be satisfied (every double but
    the round's engine) when doubles branch."""
    count = rules.players + (1 if rules.mexican_train else 0)
    if rules.branching_doubles:
        count += 2 * rules.max_pip
    return count


@dataclass(frozen=True)
class Layout:
    """Where each part of the observation lies, for one table configuration."""

    tiles: int  # S: tiles in the set
    pips: int  # P: pip values, 0 to max_pip
    trains: int  # T: train blocks
    seats: int  # N: players
    sides: int  # G: scoring sides (players, or pairs of partners)
    rounds: int  # R: rounds of a whole game
    score_scale: float  # the most points one seat can total over a whole game

    @property
    def train_fields(self) -> int:
        """Values per train block: the flags, the owner one-hot (G) and the end one-hot (P)."""
        return len(TRAIN_FLAGS) + self.sides + self.pips

    @property
    def hand(self) -> int:
        """Offset of the hand (S slots)."""
        return 0

    @property
    def drawn(self) -> int:
        """Offset of the drawn tile (S slots, one-hot)."""
        return self.tiles

    @property
    def table(self) -> int:
        """Offset of the tiles on the table (S slots)."""
        return 2 * self.tiles

    @property
    def train_blocks(self) -> int:
        """Offset of the first train block (T blocks of `train_fields`)."""
        return 3 * self.tiles

    @property
    def seat_blocks(self) -> int:
        """Offset of the first seat block (N blocks of 3: hand count, marker, score)."""
        return self.train_blocks + self.trains * self.train_fields

    @property
    def boneyard(self) -> int:
        """Offset of the boneyard count (1)."""
        return self.seat_blocks + 3 * self.seats

    @property
    def round(self) -> int:
        """Offset of the round one-hot (R)."""
        return self.boneyard + 1

    @property
    def engine(self) -> int:
        """Offset of the engine one-hot (P)."""
        return self.round + self.rounds

    @property
    def step(self) -> int:
        """Offset of the step one-hot (5, `STEPS`)."""
        return self.engine + self.pips

    @property
    def to_move(self) -> int:
        """Offset of the seat to move, one-hot relative to this seat (N)."""
        return self.step + len(STEPS)

    @property
    def size(self) -> int:
        """Length of the whole vector."""
        return self.to_move + self.seats


@functools.lru_cache(maxsize=64)
def layout(rules: Rules) -> Layout:
    """The observation layout of a table configuration."""
    pips = rules.max_pip + 1
    set_pips = sum(t.pips for t in full_set(rules.max_pip))
    round_points = set_pips + rules.double_blank_score  # a side's worst round
    return Layout(
        tiles=rules.tile_count,
        pips=pips,
        trains=max_trains(rules),
        seats=rules.players,
        sides=rules.team_count,
        rounds=len(rules.engines),
        score_scale=float(len(rules.engines) * round_points),
    )


def observation_size(rules: Rules) -> int:
    """Length of the observation vector for these rules."""
    return layout(rules).size


def _variants(rules: Rules) -> int:
    return 2 if rules.announce_one_tile else 1


def action_count(rules: Rules) -> int:
    """Size of the `Discrete` action space: every play, then draw, pass and end."""
    return rules.tile_count * max_trains(rules) * _variants(rules) + len(OTHER_ACTIONS)


def action_id(rules: Rules, move: MoveSpec) -> int:
    """The stable id of a move as a turn request lists it."""
    plays = rules.tile_count * max_trains(rules) * _variants(rules)
    if move.action != "play":
        return plays + OTHER_ACTIONS.index(move.action)
    if move.tile is None or move.train is None:
        raise ValueError(f"a play names a tile and a train: {move}")
    trains = max_trains(rules)
    if not 0 <= move.train < trains:
        raise ValueError(f"train {move.train} is beyond the {trains} trains these rules allow")
    a, b = move.tile
    if not (0 <= a <= rules.max_pip and 0 <= b <= rules.max_pip):
        raise ValueError(f"tile {a}-{b} is not in the double-{rules.max_pip} set")
    if move.announce and not rules.announce_one_tile:
        raise ValueError("these rules do not announce a last-but-one tile")
    return (tile_index(a, b) * trains + move.train) * _variants(rules) + int(move.announce)


def move_of_action(rules: Rules, action: int) -> MoveSpec:
    """The move an action id stands for (tiles named high pip first)."""
    variants = _variants(rules)
    trains = max_trains(rules)
    plays = rules.tile_count * trains * variants
    if not 0 <= action < plays + len(OTHER_ACTIONS):
        raise ValueError(f"action {action} is outside 0..{plays + len(OTHER_ACTIONS) - 1}")
    if action >= plays:
        return MoveSpec(action=OTHER_ACTIONS[action - plays])
    slot, announce = divmod(action, variants)
    index, train = divmod(slot, trains)
    t = full_set(rules.max_pip)[index]
    return MoveSpec(action="play", tile=(t.hi, t.lo), train=train, announce=bool(announce))


def action_mask(rules: Rules, legal: Sequence[MoveSpec]) -> Mask:
    """1 for the id of every move in `legal` (a turn request's list), 0 elsewhere."""
    mask = np.zeros(action_count(rules), dtype=np.int8)
    for move in legal:
        mask[action_id(rules, move)] = 1
    return mask


def legal_index(rules: Rules, legal: Sequence[MoveSpec], action: int) -> int | None:
    """The index in `legal` of the move with id `action` (what a `move` reply sends),
    or None when that move is not legal."""
    for i, move in enumerate(legal):
        if action_id(rules, move) == action:
            return i
    return None


def _tile_slot(tile: Sequence[int]) -> int:
    return tile_index(tile[0], tile[1])


def observation(rules: Rules, view: ViewInfo, seat: int) -> Observation:
    """The observation vector of `seat` from its view (see the module's docstring)."""
    lay = layout(rules)
    out = np.zeros(lay.size, dtype=np.float32)
    n = lay.seats
    for t in view.hand:
        out[lay.hand + _tile_slot(t)] = 1.0
    if view.drawn is not None:
        out[lay.drawn + _tile_slot(view.drawn)] = 1.0
    own_side = rules.team_of(seat)
    live = set(view.open_doubles)
    binding = set(view.binding)
    fields = lay.train_fields
    flags = len(TRAIN_FLAGS)
    for train in view.trains:
        if train.train >= lay.trains:
            raise ValueError(f"train {train.train} is beyond the {lay.trains} these rules allow")
        for t in train.tiles:
            out[lay.table + _tile_slot(t)] = 1.0
        base = lay.train_blocks + train.train * fields
        out[base : base + flags] = (
            1.0,  # present
            float(train.owner < 0),  # the Mexican train or one of its branches
            float(train.public),
            float(train.open_double),
            float(train.train in live),
            float(train.train in binding),
            len(train.tiles) / lay.tiles,
            float(train.parent >= 0),
        )
        if train.owner >= 0:  # the owner's side, counted clockwise from this seat's side
            out[base + flags + (train.owner - own_side) % lay.sides] = 1.0
        out[base + flags + lay.sides + train.end] = 1.0
    for k in range(n):
        other = (seat + k) % n
        base = lay.seat_blocks + 3 * k
        out[base] = view.hand_counts[other] / lay.tiles
        out[base + 1] = float(view.markers[other])
        out[base + 2] = min(view.scores[other] / lay.score_scale, 1.0)
    out[lay.boneyard] = view.boneyard / lay.tiles
    out[lay.round + view.round] = 1.0
    out[lay.engine + view.engine] = 1.0
    out[lay.step + STEPS.index(view.step)] = 1.0
    to_move = (view.next - 1) % n
    out[lay.to_move + (to_move - seat) % n] = 1.0
    return out
