"""A fast, mutable forward model of one round, for searching bots' rollouts.

The engine (`referee.rules`) is pure: every `apply` builds a new immutable `State`,
which is what a referee needs and what a searcher pays for on every step of every
rollout. A `Rollout` is the same round as mutable lists and integers, changed in
place: each hand is a bitmask over the set's tiles (bit k is `full_set(max_pip)[k]`),
each train its open end, its length, whether it ends in a double, its owner and
parent; markers are a bitmask of seats. `copy()` copies a few short lists, `legal()`
lists the moves as small integers, `apply(code)` plays one, and a finished round holds
each seat's score as the engine's scoring gives it (`scores`).

    model = Rollout.from_state(state)      # any engine state of a round in play
    world = model.copy()
    while not world.over:
        world.apply(world.legal()[0])
    world.scores                           # the round's score of each seat (side)

Moves are integers (`code_of`, `move_of` convert): a play is
`tile << 9 | train << 1 | announce` (tile its index in the set), and `DRAW`, `PASS`
and `END` are -1, -2 and -3. `legal()` lists the same moves as the engine's
`legal_moves` in the same order (plays by train, then tile; an announced play before
the same play unannounced; then draw, pass or end), so the same random choices play
the same game in either (`tests/botkit/test_rollout.py` holds the two equal, move by
move, over every preset, variant and many option mixes).

It models one round, to its end: the round's end is scored as the engine scores it
(the pips left, the double-blank as `double_blank_score`, sides with teams, 0 for a
side that went out), and the next round is not dealt. Every option of the rules is
played: the four first turns (single, long with `first_turns_complete`,
`first_train_until_stuck` and `first_train_draws`, the fast build phase, the delayed
first train), the Mexican train and its restricted start, `must_play`,
`draw_until_playable`, binding doubles with every `satisfy_order` and
`bind_duration`, both `follow_up`s and `own_double_follow_up`s, markers
(`any_play_clears_marker`, `unfinished_own_double_marks`), teams, branching doubles,
the swan drive, and the one-tile announcement with its penalty. The options of the
deal (hand sizes, the engines' order, the engine's source, the first player) only
shape the state a model is made from.

`from_state` refuses (raises `ValueError`) only what a bitmask cannot hold or a round
no longer has: a state whose game is over, and a hand-made state (`position`) in which
a tile is named twice (a hand holding two copies of one tile); a searcher then rolls
that state out with the engine. The fast phase's hidden hand counts (`fast_counts`,
which only views read) are not kept.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..rules import (
    DRAW,
    END,
    MEXICAN,
    PASS,
    BindDuration,
    Ctx,
    FirstTurn,
    FollowUp,
    Move,
    MoveKind,
    OwnDoubleFollowUp,
    RoundEnd,
    Rules,
    SatisfyOrder,
    State,
    Tile,
    full_set,
)

DRAW_CODE = -1
PASS_CODE = -2
END_CODE = -3

# The steps of a turn, as the engine's `Ctx`.
START, FOLLOW, CONTINUE, SWAN, BUILD, BUILD_FOLLOW = range(6)
_CTX_OF = {
    Ctx.START: START,
    Ctx.FOLLOW: FOLLOW,
    Ctx.CONTINUE: CONTINUE,
    Ctx.SWAN: SWAN,
    Ctx.BUILD: BUILD,
    Ctx.BUILD_FOLLOW: BUILD_FOLLOW,
}
CTX_NAMES = {v: k for k, v in _CTX_OF.items()}
_OUT, _BLOCKED = RoundEnd.OUT, RoundEnd.BLOCKED


def tile_index(t: Tile) -> int:
    """The index of `t` in `full_set`: bit `tile_index(t)` of a hand mask."""
    return t[0] * (t[0] + 1) // 2 + t[1]


def code_of(move: Move) -> int:
    """The model's integer for an engine move."""
    kind = move.kind
    if kind is MoveKind.PLAY:
        assert move.tile is not None and move.train is not None
        return tile_index(move.tile) << 9 | move.train << 1 | int(move.announce)
    if kind is MoveKind.DRAW:
        return DRAW_CODE
    if kind is MoveKind.PASS:
        return PASS_CODE
    return END_CODE


_TILES = full_set(18)  # the sets nest: index k is the same tile in every set


def move_of(code: int) -> Move:
    """The engine move for one of the model's integers."""
    if code >= 0:
        return Move(MoveKind.PLAY, _TILES[code >> 9], (code >> 1) & 255, bool(code & 1))
    if code == DRAW_CODE:
        return DRAW
    if code == PASS_CODE:
        return PASS
    return END


class _Codes(dict[int, tuple[int, ...]]):
    """The play codes of the tiles in mask `key >> 8` on train `key & 255`, tile by tile,
    made once and then looked up: a hand's matching tiles are a few of the set's, so a
    round meets few such masks, and a lookup is much cheaper than walking the bits."""

    def __missing__(self, key: int) -> tuple[int, ...]:
        if len(self) >= CODES_KEPT:
            self.clear()
        train = (key & 255) << 1
        mask = key >> 8
        out = []
        while mask:
            low = mask & -mask
            out.append((low.bit_length() - 1) << 9 | train)
            mask ^= low
        found = self[key] = tuple(out)
        return found


CODES_KEPT = 1 << 15  # lookups a rules value keeps before starting afresh (a few MB)


class _Spec:
    """What a rules value fixes for every round: tiles as bits, seats' sides, flags."""

    def __init__(self, rules: Rules, table: Any) -> None:
        """`table`: the engine's lookup tables for `rules` (`State.table`), whose sides
        and swan-drive orders the model takes as they are."""
        n = rules.players
        self.rules = rules
        self.n = n
        tiles = full_set(rules.max_pip)
        self.hi = [t[0] for t in tiles]
        self.lo = [t[1] for t in tiles]
        self.pips = [(t[0], t[1]) for t in tiles]
        self.after = [(s + 1) % n for s in range(n)]  # the next seat clockwise
        blank = rules.double_blank_score
        self.value = [blank if t == (0, 0) else t[0] + t[1] for t in tiles]
        self.match = [
            sum(1 << k for k, t in enumerate(tiles) if pip in t) for pip in range(rules.max_pip + 1)
        ]
        self.full = rules.max_pip + 1
        self.codes = _Codes()
        self.group_of = list(table.group_of)
        groups = rules.team_count
        self.members_mask = [
            sum(1 << s for s in range(n) if rules.team_of(s) == g) for g in range(groups)
        ]
        self.mexican = n if rules.mexican_train else -1
        # Swan drive visits the Mexican train first, then the others' trains clockwise.
        self.swan_order: list[tuple[int, ...]] = list(table.swan_order)
        self.doubles_bind = rules.doubles_bind
        self.next_turn = rules.doubles_bind and rules.bind_duration is BindDuration.NEXT_TURN
        self.reverse = rules.satisfy_order is SatisfyOrder.REVERSE
        self.last = rules.satisfy_order is SatisfyOrder.LAST
        self.on_double = rules.follow_up is FollowUp.ON_DOUBLE
        self.own_optional = rules.own_double_follow_up is OwnDoubleFollowUp.OPTIONAL
        self.long_first = rules.first_turn is FirstTurn.LONG
        self.delayed = rules.first_turn is FirstTurn.DELAYED
        self.until_stuck = rules.first_train_until_stuck
        self.first_draws = rules.first_train_draws
        self.restricted = rules.mexican_start_restricted
        self.must_play = rules.must_play
        self.draw_until = rules.draw_until_playable
        self.announce = rules.announce_one_tile
        self.penalty = rules.announce_penalty
        self.clears = rules.any_play_clears_marker
        self.own_marks = rules.unfinished_own_double_marks
        self.complete = rules.first_turns_complete
        self.branching = rules.branching_doubles
        # A free turn's plays need no more than the trains open to the seat.
        self.fast_start = not (self.branching or self.delayed)
        self.any_order = not (self.next_turn or self.reverse or self.last)
        self.fast_follow = self.fast_start and not (self.own_optional or self.on_double)
        self.swan = rules.swan_drive
        # Without branching doubles the trains are those dealt (the seats', then the
        # Mexican): each side's lines are computed once, and the lines open to each
        # seat once per markers met (`open_for`).
        self.owners = [*self.group_of, *([MEXICAN] if rules.mexican_train else [])]
        self.lines: dict[int, list[int]] = {
            g: [i for i, o in enumerate(self.owners) if o == g] for g in [*range(groups), MEXICAN]
        }
        self.open_by: dict[int, list[list[int]]] = {}
        # A single tile ends a turn with little to settle: no delayed first train can
        # start (a swan drive and a penalty due are tested move by move).
        self.plain = not self.delayed

    def open_for(self, markers: int) -> list[list[int]]:
        """Per seat, the trains open to it in a free turn at these markers: its own, the
        Mexican, the public ones (the trains as dealt: not for branching doubles)."""
        found = self.open_by.get(markers)
        if found is None:
            mm = self.members_mask
            owners = self.owners
            found = []
            for seat in range(self.n):
                own = self.group_of[seat]
                found.append(
                    [
                        i
                        for i, o in enumerate(owners)
                        if o in (own, MEXICAN) or markers & mm[o] == mm[o]
                    ]
                )
            self.open_by[markers] = found
        return found


@lru_cache(maxsize=16)
def _spec(rules: Rules, table: Any) -> _Spec:
    return _Spec(rules, table)


class Rollout:
    """One round in play, mutable: `legal()`, `apply(code)`, `copy()`, `scores` at the end."""

    __slots__ = (
        "bind_next",
        "bind_now",
        "boneyard",
        "count",
        "ctx",
        "drawn",
        "end",
        "first_pending",
        "hands",
        "lock",
        "marked",
        "markers",
        "must_follow",
        "open",
        "open_doubles",
        "over",
        "own_doubles",
        "penalty_due",
        "scores",
        "spec",
        "starter",
        "swan_pos",
        "t_double",
        "t_end",
        "t_len",
        "t_owner",
        "t_parent",
        "to_move",
        "turn_first",
    )

    spec: _Spec
    hands: list[int]
    boneyard: list[int]
    t_owner: list[int]
    t_end: list[int]
    t_len: list[int]
    t_double: list[bool]
    t_parent: list[int]
    markers: int
    open: list[list[int]]  # `spec.open_for(markers)`, kept with them (unread if branching)
    count: list[int]
    open_doubles: list[int]
    bind_now: list[int]
    bind_next: list[int]
    marked: int
    to_move: int
    starter: int
    ctx: int
    drawn: int
    lock: int
    must_follow: bool
    swan_pos: int
    own_doubles: list[int]
    first_pending: list[bool]
    turn_first: bool
    penalty_due: bool
    over: bool
    end: RoundEnd | None
    scores: tuple[int, ...]

    @classmethod
    def from_state(cls, state: State) -> Rollout:
        """The model of `state`'s round at `state`'s decision; `ValueError` if it cannot be."""
        if state.outcome is not None:
            raise ValueError("rollout: the game is over; there is no round to play")
        spec = _spec(state.rules, state.table)
        seen: set[Tile] = set()
        for group in (*state.hands, state.boneyard, *(t.tiles for t in state.trains)):
            for t in group:
                if t in seen:
                    raise ValueError(f"rollout: tile {t} is in play twice; use the engine")
                seen.add(t)
        self = cls.__new__(cls)
        self.spec = spec
        self.hands = [sum(1 << tile_index(t) for t in h) for h in state.hands]
        self.boneyard = [tile_index(t) for t in state.boneyard]
        trains = state.trains
        self.t_owner = [t.owner for t in trains]
        self.t_end = [t.end for t in trains]
        self.t_len = [len(t.tiles) for t in trains]
        self.t_double = [bool(t.tiles) and t.tiles[-1].is_double for t in trains]
        self.t_parent = [t.parent for t in trains]
        self.markers = sum(1 << s for s, up in enumerate(state.markers) if up)
        self.open = spec.open_for(self.markers)
        self.count = list(state.table_count)
        self.open_doubles = list(state.open_doubles)
        self.bind_now = list(state.bind_now)
        self.bind_next = list(state.bind_next)
        self.marked = state.marked_double
        self.to_move = state.to_move
        self.starter = state.starter
        self.ctx = _CTX_OF[state.ctx]
        self.drawn = -1 if state.drawn is None else tile_index(state.drawn)
        self.lock = state.lock
        self.must_follow = state.must_follow
        self.swan_pos = state.swan_pos
        self.own_doubles = list(state.own_doubles)
        self.first_pending = list(state.first_pending)
        self.turn_first = state.turn_first
        self.penalty_due = state.penalty_due
        self.over = False
        self.end = None
        self.scores = ()
        return self

    def copy(self) -> Rollout:
        """An independent copy, to play a world out and throw away."""
        new = Rollout.__new__(Rollout)
        new.spec = self.spec
        new.hands = self.hands[:]
        new.boneyard = self.boneyard[:]
        new.t_owner = self.t_owner[:]
        new.t_end = self.t_end[:]
        new.t_len = self.t_len[:]
        new.t_double = self.t_double[:]
        new.t_parent = self.t_parent[:]
        new.markers = self.markers
        new.open = self.open
        new.count = self.count[:]
        new.open_doubles = self.open_doubles[:]
        new.bind_now = self.bind_now[:]
        new.bind_next = self.bind_next[:]
        new.marked = self.marked
        new.to_move = self.to_move
        new.starter = self.starter
        new.ctx = self.ctx
        new.drawn = self.drawn
        new.lock = self.lock
        new.must_follow = self.must_follow
        new.swan_pos = self.swan_pos
        new.own_doubles = self.own_doubles[:]
        new.first_pending = self.first_pending[:]
        new.turn_first = self.turn_first
        new.penalty_due = self.penalty_due
        new.over = self.over
        new.end = self.end
        new.scores = self.scores
        return new

    # ------------------------------------------------------------ reading

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """Seat `seat`'s tiles, sorted (as the engine's `State.hands`)."""
        mask = self.hands[seat]
        out = []
        while mask:
            low = mask & -mask
            out.append(_TILES[low.bit_length() - 1])
            mask ^= low
        return tuple(out)

    def tiles_left(self, seat: int) -> int:
        """How many tiles seat `seat` holds."""
        return self.hands[seat].bit_count()

    def hand_value(self, seat: int) -> int:
        """What seat `seat`'s hand would score now."""
        value = self.spec.value
        mask = self.hands[seat]
        total = 0
        while mask:
            low = mask & -mask
            total += value[low.bit_length() - 1]
            mask ^= low
        return total

    # ------------------------------------------------------------ legal moves

    def legal(self) -> list[int]:
        """The legal moves of the seat to move, as the engine lists them (empty once over)."""
        sp = self.spec
        ctx = self.ctx
        seat = self.to_move
        # The common cases, inline: a turn's first decision, before or after a draw (on
        # the bound doubles if any, else on the trains open to the seat), and a double's
        # follow-up (on those trains and the double), in a turn of no special kind.
        # `later` is the empty Mexican train of `mexican_start_restricted`, played on
        # only when no other train takes a tile (`_open_plays`), else -1.
        later = -1
        if ctx == START and sp.fast_start and not self.turn_first:
            lines = None
            if self.open_doubles and sp.doubles_bind:
                if sp.any_order:
                    # `_bound` inline: every live open double binds.
                    count = self.count
                    full = sp.full
                    ends = self.t_end
                    for i in self.open_doubles:
                        if count[ends[i]] < full:
                            if lines is None:
                                lines = [i]
                            else:
                                lines.append(i)
                    if lines is not None and len(lines) > 1:
                        lines.sort()
                else:
                    bound = self._bound()
                    if bound:
                        lines = sorted(bound) if len(bound) > 1 else bound
            if lines is None:
                lines = self.open[seat]
                if sp.restricted and not self.t_len[sp.mexican]:
                    later = sp.mexican
        elif ctx == FOLLOW and sp.fast_follow and not self.turn_first and self.lock < 0:
            followed = self.open_doubles[-1]
            lines = self.open[seat]
            if followed not in lines:
                lines = sorted([*lines, followed])
            if sp.restricted and not self.t_len[sp.mexican]:
                later = sp.mexican
        else:
            return self._legal()
        drawn = self.drawn
        mask = self.hands[seat] if drawn < 0 else 1 << drawn
        match = sp.match
        codes = sp.codes
        ends = self.t_end
        plays: list[int] = []
        if later < 0:
            for i in lines:
                m = mask & match[ends[i]]
                if m:
                    plays += codes[m << 8 | i]
        else:
            for i in lines:
                if i != later:
                    m = mask & match[ends[i]]
                    if m:
                        plays += codes[m << 8 | i]
            if not plays:
                m = mask & match[ends[later]]
                if m:
                    plays += codes[m << 8 | later]
        if sp.must_play:
            if plays:
                return self._announced(seat, plays) if sp.announce else plays
            if drawn < 0:
                return [DRAW_CODE] if self.boneyard else [PASS_CODE]
            if not sp.draw_until or not self.boneyard:
                return [PASS_CODE]
        return self._rest(seat, ctx, drawn, plays, False)

    def _legal(self) -> list[int]:
        """`legal` in general: every step of a turn, every option."""
        if self.over:
            return []
        sp = self.spec
        seat = self.to_move
        ctx = self.ctx
        drawn = self.drawn
        optional = False
        if ctx == START:
            plays, optional = self._start_plays(seat, drawn)
        elif ctx == FOLLOW:
            if sp.own_optional and self._optional_follow(seat):
                plays = self._optional_plays(seat)
                out = self._announced(seat, plays)
                out.append(END_CODE)
                return out
            if sp.on_double:
                plays = self._on_double_plays(seat, drawn)
            else:
                plays = self._follow_plays(seat, drawn)
        elif ctx == SWAN:
            plays = self._plays_on(seat, self._swan_targets(seat), -1)
            out = self._announced(seat, plays)
            out.append(END_CODE)
            return out
        elif ctx in (CONTINUE, BUILD):
            plays = self._plays_on(seat, self._lines_of(sp.group_of[seat]), -1)
            if plays and ctx == CONTINUE and sp.until_stuck:
                return self._announced(seat, plays)
            out = self._announced(seat, plays)
            out.append(END_CODE)
            return out
        else:  # BUILD_FOLLOW
            if sp.on_double:
                plays = self._on_double_plays(seat, -1)
            else:
                plays = self._follow_plays(seat, -1)
            if sp.own_optional and self._optional_follow(seat):
                out = self._announced(seat, plays)
                out.append(END_CODE)
                return out
            return self._announced(seat, plays) if plays else [END_CODE]
        return self._rest(seat, ctx, drawn, plays, optional)

    def _rest(self, seat: int, ctx: int, drawn: int, plays: list[int], optional: bool) -> list[int]:
        """The moves of a turn's first decision or a follow-up, given its plays."""
        sp = self.spec
        moves = self._announced(seat, plays) if sp.announce else plays
        if drawn < 0:
            if not plays or optional or not sp.must_play:
                if not self.boneyard:
                    if not plays:
                        moves.append(PASS_CODE)
                elif ctx == START and self.turn_first and not sp.first_draws:
                    moves.append(PASS_CODE)
                else:
                    moves.append(DRAW_CODE)
        elif not plays or optional or not sp.must_play:
            if sp.draw_until and not plays and self.boneyard:
                moves.append(DRAW_CODE)
            else:
                moves.append(PASS_CODE)
        return moves

    def _announced(self, seat: int, plays: list[int]) -> list[int]:
        if not self.spec.announce or self.hands[seat].bit_count() != 2:
            return plays
        out = []
        for c in plays:
            out.append(c | 1)
            out.append(c)
        return out

    def _plays_on(self, seat: int, lines: list[int], only: int) -> list[int]:
        mask = 1 << only if only >= 0 else self.hands[seat]
        match = self.spec.match
        codes = self.spec.codes
        ends = self.t_end
        out: list[int] = []
        for i in lines:
            m = mask & match[ends[i]]
            if m:
                out += codes[m << 8 | i]
        return out

    def _lines_of(self, group: int) -> list[int]:
        if not self.spec.branching:
            return self.spec.lines[group]
        return [i for i, o in enumerate(self.t_owner) if o == group]

    def _available(self, seat: int) -> list[int]:
        """Trains open to `seat` in a free turn: its own, the Mexican, the public ones."""
        sp = self.spec
        markers = self.markers
        if not sp.branching:
            return sp.open_for(markers)[seat]
        own = sp.group_of[seat]
        mm = sp.members_mask
        out = []
        for i, o in enumerate(self.t_owner):
            if o in (own, MEXICAN) or markers & mm[o] == mm[o]:
                out.append(i)
        return out

    def _is_public(self, group: int) -> bool:
        if group == MEXICAN:
            return True
        mm = self.spec.members_mask[group]
        return self.markers & mm == mm

    def _bound(self) -> list[int]:
        sp = self.spec
        full = sp.full
        ends = self.t_end
        count = self.count
        doubles = self.bind_now if sp.next_turn else self.open_doubles
        live = []
        for i in doubles:
            if count[ends[i]] < full:
                live.append(i)
        if sp.reverse and len(live) > 1:
            return live[-1:]
        if sp.last:
            return [self.marked] if self.marked in live else []
        return live

    def _start_plays(self, seat: int, only: int) -> tuple[list[int], bool]:
        sp = self.spec
        if self.ctx != START or self.to_move != seat:
            first = sp.long_first and self.first_pending[seat]
        else:
            first = self.turn_first
        if first:
            return self._plays_on(seat, self._lines_of(sp.group_of[seat]), only), False
        if sp.doubles_bind and self.open_doubles:
            bound = self._bound()
            if bound:
                return self._plays_on(seat, sorted(bound), only), False
        plays = self._open_plays(seat, only, -1)
        if sp.delayed and not self.t_len[seat]:
            if only >= 0:
                starts = self._plays_on(seat, [seat], -1)
                plays = sorted({*plays, *starts}, key=lambda c: (c >> 1 & 255, c >> 9))
            if plays:
                return plays, all(c >> 1 & 255 == seat for c in plays)
        return plays, False

    def _open_plays(self, seat: int, only: int, followed: int) -> list[int]:
        sp = self.spec
        lines = self._available(seat)
        if followed >= 0 and followed not in lines:
            lines = sorted([*lines, followed])
        mex = sp.mexican
        if sp.restricted and mex >= 0 and not self.t_len[mex]:
            lines = [i for i in lines if i != mex] if mex in lines else lines
            plays = self._plays_on(seat, lines, only)
            return plays or self._plays_on(seat, [mex], only)
        return self._plays_on(seat, lines, only)

    def _follow_plays(self, seat: int, only: int) -> list[int]:
        if self.lock >= 0:
            return self._plays_on(seat, [self.lock], only)
        if self.turn_first or self.ctx == BUILD_FOLLOW:
            return self._plays_on(seat, self._lines_of(self.spec.group_of[seat]), only)
        followed = self.open_doubles[-1] if self.ctx == FOLLOW else -1
        return self._open_plays(seat, only, followed)

    def _optional_follow(self, seat: int) -> bool:
        sp = self.spec
        return (
            sp.own_optional
            and not self.must_follow
            and self.t_owner[self.open_doubles[-1]] == sp.group_of[seat]
        )

    def _optional_plays(self, seat: int) -> list[int]:
        sp = self.spec
        if not sp.on_double:
            return self._follow_plays(seat, -1)
        followed = self.open_doubles[-1]
        plays = self._plays_on(seat, [followed], -1)
        mex = sp.mexican
        if mex < 0 or self.turn_first:
            return plays
        if plays and sp.restricted and not self.t_len[mex]:
            return plays
        return self._plays_on(seat, sorted((followed, mex)), -1)

    def _on_double_plays(self, seat: int, only: int) -> list[int]:
        sp = self.spec
        if only >= 0 and sp.hi[only] == sp.lo[only]:
            return self._follow_plays(seat, only)
        return self._plays_on(seat, [self.open_doubles[-1]], only)

    def _swan_targets(self, seat: int) -> list[int]:
        order = self.spec.swan_order[seat]
        out: list[int] = []
        for pos in range(self.swan_pos, len(order)):
            group = order[pos]
            if not self._is_public(group):
                continue
            out.extend(self._lines_of(group))
            if group != MEXICAN:
                break
        return sorted(out)

    # ------------------------------------------------------------ applying moves

    def apply(self, code: int) -> None:
        """Play move `code` (one of `legal()`'s, in a round not over; not checked) in place."""
        if code < 0:
            if code == DRAW_CODE:
                tile = self.boneyard.pop()
                self.hands[self.to_move] |= 1 << tile
                self.drawn = tile
            else:
                self._end_turn(code == PASS_CODE)
            return
        sp = self.spec
        seat = self.to_move
        k = code >> 9
        index = code >> 1 & 255
        hi, lo = sp.pips[k]
        double = hi == lo
        rest = self.hands[seat] & ~(1 << k)
        self.hands[seat] = rest
        ends = self.t_end
        end = ends[index]
        ends[index] = lo if hi == end else hi
        self.t_len[index] += 1
        satisfied = self.t_double[index]
        self.t_double[index] = double
        owner = self.t_owner[index]
        if satisfied or double:
            self._doubles(index, owner, end, satisfied, double)
        count = self.count
        count[hi] += 1
        if not double:
            count[lo] += 1
        drawn = self.drawn
        self.drawn = -1

        ctx = self.ctx
        markers = self.markers
        if markers and (owner == sp.group_of[seat] or (sp.clears and owner != MEXICAN)):
            cleared = markers & ~sp.members_mask[owner]
            if cleared != markers:
                self.markers = cleared
                self.open = sp.open_by.get(cleared) or sp.open_for(cleared)
        if (
            ctx <= FOLLOW  # START or FOLLOW: the steps of an ordinary turn
            and rest
            and not double
            and sp.plain
            and not self.turn_first
            and not self.own_doubles
            and (not sp.announce or rest & (rest - 1))  # two tiles left or more
            and (not sp.swan or (self.lock < 0 and owner != sp.group_of[seat]))
        ):
            # The common case, inline: a single tile, or a double's follow-up, ends an
            # ordinary turn; what `_end_turn` does then: no marker, no penalty, no seat
            # out (a seat is out before the end only in masters' first turns), no swan
            # drive going on; only a `next-turn` binding moves on.
            if ctx == FOLLOW:
                self.ctx = START
                self.must_follow = False
            if sp.announce:
                self.penalty_due = False
            if sp.next_turn:
                self.bind_now = self.bind_next
                self.bind_next = []
            nxt = sp.after[seat]
            self.to_move = nxt
            self.turn_first = self.first_pending[nxt]
            return

        building = ctx in (BUILD, BUILD_FOLLOW)
        own = sp.group_of[seat]
        if double and owner == own and sp.own_marks and not building:
            self.own_doubles.append(index)

        if sp.announce:
            self.penalty_due = rest.bit_count() == 1 and not code & 1

        if not rest:
            if sp.complete and any(self.first_pending[s] for s in range(sp.n) if s != seat):
                self._end_turn(False)
            else:
                self._close(_OUT)
            return

        if double:
            self.ctx = BUILD_FOLLOW if building else FOLLOW
            if ctx == FOLLOW and drawn >= 0 and sp.on_double:
                self.must_follow = True
            if ctx == SWAN:
                self.lock = index
            return
        if building:
            self.ctx = BUILD
            return
        if self.turn_first or ctx == CONTINUE:
            self.ctx = CONTINUE
            return
        if (
            sp.delayed
            and index == seat
            and self.t_len[index] == 1
            and ctx in (START, FOLLOW)
            and self.lock < 0
        ):
            self.ctx = CONTINUE
            self.turn_first = True
            return
        if sp.swan:
            if ctx == SWAN or self.lock >= 0:
                self.lock = -1
                self.ctx = SWAN
                order = sp.swan_order[seat]
                if owner in order:
                    self.swan_pos = order.index(owner) + 1
                return
            if owner == own:
                self.ctx = SWAN
                self.swan_pos = 0
                return
        self._end_turn(False)

    def _doubles(self, index: int, owner: int, end: int, satisfied: bool, double: bool) -> None:
        """A play that satisfies a double or lays one: the open doubles and their marks."""
        sp = self.spec
        doubles = self.open_doubles
        was_open = satisfied and index in doubles
        if was_open:
            doubles.remove(index)
            if sp.branching:
                for _ in range(2):
                    self.t_owner.append(owner)
                    self.t_end.append(end)
                    self.t_len.append(0)
                    self.t_double.append(False)
                    self.t_parent.append(index)
        if double:
            doubles.append(index)
        if sp.last:
            if double:
                self.marked = index
            elif satisfied and index == self.marked:
                self.marked = -1
        if sp.next_turn:
            if was_open:
                self.bind_now = [i for i in self.bind_now if i != index]
                self.bind_next = [i for i in self.bind_next if i != index]
            if double:
                self.bind_next.append(index)

    def _end_turn(self, marker: bool) -> None:
        sp = self.spec
        seat = self.to_move
        ctx = self.ctx
        if (
            sp.plain
            and ctx <= FOLLOW  # START or FOLLOW: the steps of an ordinary turn
            and not self.turn_first
            and not self.own_doubles
            and not self.penalty_due
        ):
            # The common case, inline: an ordinary turn's pass (or end), with nothing
            # more to settle than in `apply`'s (and a swan drive's lock and place reset).
            if ctx == FOLLOW:
                self.ctx = START
                self.must_follow = False
            if sp.swan:
                self.lock = -1
                self.swan_pos = -1
            if sp.next_turn:
                self.bind_now = self.bind_next
                self.bind_next = []
            if marker:
                markers = self.markers | 1 << seat
                self.markers = markers
                self.open = sp.open_by.get(markers) or sp.open_for(markers)
            self.drawn = -1
            nxt = sp.after[seat]
            self.to_move = nxt
            self.turn_first = self.first_pending[nxt]
            if marker and not self.boneyard and self._blocked():
                self._close(_OUT if 0 in self.hands else _BLOCKED)
            return
        n = sp.n
        own_doubles = self.own_doubles
        if own_doubles:
            self.own_doubles = []
        if marker or (own_doubles and any(i in self.open_doubles for i in own_doubles)):
            self.markers |= 1 << seat
            self.open = sp.open_for(self.markers)
        if self.penalty_due:
            hand = self.hands[seat]
            pile = self.boneyard
            if hand.bit_count() == 1 and pile:
                take = min(sp.penalty, len(pile))
                for _ in range(take):
                    hand |= 1 << pile.pop()
                self.hands[seat] = hand
            self.penalty_due = False
        self.drawn = -1
        self.lock = -1
        self.must_follow = False
        self.swan_pos = -1
        if sp.next_turn:
            self.bind_now = self.bind_next
            self.bind_next = []

        ctx = self.ctx
        if ctx in (BUILD, BUILD_FOLLOW):
            nxt = (seat + 1) % n
            self.ctx = START if nxt == self.starter else BUILD
            self.to_move = nxt
            return

        pending = self.first_pending
        if self.turn_first:
            pending[seat] = False
        self.ctx = START
        hands = self.hands
        if 0 in hands:
            waiting = [s for s in range(n) if pending[s] and hands[s]]
            if not waiting:
                self._close(_OUT)
                return
            nxt = next((seat + k) % n for k in range(1, n + 1) if (seat + k) % n in waiting)
        else:
            nxt = (seat + 1) % n
        self.to_move = nxt
        self.turn_first = pending[nxt]
        if marker and not self.boneyard and self._blocked():
            self._close(_OUT if 0 in hands else _BLOCKED)

    def _blocked(self) -> bool:
        """No seat could ever play again (the engine's test: every marker up)."""
        if not any(self.first_pending):
            # No first turn is pending, so with every marker up each seat may play on
            # the bound doubles if any, else on every train: one test for all seats.
            sp = self.spec
            lines: list[int] | range = range(len(self.t_end))
            if sp.doubles_bind and self.open_doubles and not sp.next_turn:
                lines = self._bound() or lines
            match = sp.match
            ends = self.t_end
            reach = 0
            for i in lines:
                reach |= match[ends[i]]
            held = 0
            for hand in self.hands:
                held |= hand
            return not reach & held
        markers, bind_now = self.markers, self.bind_now
        self.markers = (1 << self.spec.n) - 1
        self.bind_now = []
        try:
            for seat, hand in enumerate(self.hands):
                if hand and self._start_plays(seat, -1)[0]:
                    return False
            return True
        finally:
            self.markers, self.bind_now = markers, bind_now

    def _close(self, end: RoundEnd) -> None:
        sp = self.spec
        n = sp.n
        group_of = sp.group_of
        side: dict[int, int] = {}
        for seat in range(n):
            g = group_of[seat]
            side[g] = side.get(g, 0) + self.hand_value(seat)
        for seat in range(n):
            if not self.hands[seat]:
                side[group_of[seat]] = 0
        self.scores = tuple(side[group_of[s]] for s in range(n))
        self.end = end
        self.over = True
        self.ctx = -1  # no step: `legal` takes its general path, which finds the round over
