"""Which moves are legal: `legal_moves`, `binding`, the helpers they are made of,
and the per-rules lookup tables (`_table`) that every decision needs.

`engine` (which applies moves) and `explain` (which says why a move is not legal)
both build on this module and not on each other's internals; its underscored
helpers are shared within `referee.rules` only. Pure functions over `State`s; no I/O.
"""

from __future__ import annotations

from bisect import insort
from functools import lru_cache

from .options import BindDuration, FirstTurn, FollowUp, OwnDoubleFollowUp, Rules, SatisfyOrder
from .state import (
    _BUILD,
    _BUILD_FOLLOW,
    _CONTINUE,
    _FOLLOW,
    _START,
    _SWAN,
    DRAW,
    END,
    MEXICAN,
    PASS,
    Ctx,
    Move,
    MoveKind,
    State,
)
from .tiles import Tile


class _Plays(dict[Tile, Move]):
    """The PLAY moves onto one train, by tile: each made once per rules value, then shared
    by every legal move list that holds it (a `Move` is immutable)."""

    def __init__(self, train: int) -> None:
        super().__init__()
        self.train = train

    def __missing__(self, tile: Tile) -> Move:
        move = Move(MoveKind.PLAY, tile, self.train)
        if type(tile) is Tile:  # anything else only equals a tile: not kept
            self[tile] = move
        return move


class _PlaysByTrain(dict[int, _Plays]):
    """`_Plays` by train index, branches included as they appear."""

    def __missing__(self, train: int) -> _Plays:
        plays = self[train] = _Plays(train)
        return plays


class _OpenGroups(dict[tuple[bool, ...], frozenset[int]]):
    """For one seat, by markers: the groups whose trains it may play on in a free turn
    (its own, the Mexican and the public ones)."""

    def __init__(self, own: int, members: tuple[tuple[int, ...], ...]) -> None:
        super().__init__()
        self.own = own
        self.members = members

    def __missing__(self, markers: tuple[bool, ...]) -> frozenset[int]:
        groups = {self.own, MEXICAN}
        for g, seats in enumerate(self.members):
            if all(markers[s] for s in seats):
                groups.add(g)
        found = self[markers] = frozenset(groups)
        return found


class _Table:
    """Facts about a rules value that every decision needs, computed once."""

    def __init__(self, rules: Rules) -> None:
        n = rules.players
        self.players = n
        self.group_of = tuple(rules.team_of(s) for s in range(n))
        self.members = tuple(
            tuple(s for s in range(n) if rules.team_of(s) == g) for g in range(rules.team_count)
        )
        self.full = rules.max_pip + 1  # tiles carrying any one pip value
        self.mexican = n if rules.mexican_train else -1  # the Mexican train's index
        # Swan drive visits the Mexican train first, then the others' trains clockwise.
        orders = []
        for seat in range(n):
            own = self.group_of[seat]
            order: list[int] = [MEXICAN] if rules.mexican_train else []
            for k in range(1, n):
                g = self.group_of[(seat + k) % n]
                if g != own and g not in order:
                    order.append(g)
            orders.append(tuple(order))
        self.swan_order = tuple(orders)
        self.next_turn = rules.doubles_bind and rules.bind_duration is BindDuration.NEXT_TURN
        self.reverse = rules.satisfy_order is SatisfyOrder.REVERSE
        self.last = rules.satisfy_order is SatisfyOrder.LAST
        self.on_double = rules.follow_up is FollowUp.ON_DOUBLE
        self.own_optional = rules.own_double_follow_up is OwnDoubleFollowUp.OPTIONAL
        self.long_first = rules.first_turn is FirstTurn.LONG
        self.delayed = rules.first_turn is FirstTurn.DELAYED
        # Filled as play goes: every PLAY move by train and tile, and each seat's open
        # groups by markers, so that listing legal moves builds neither again.
        self.plays = _PlaysByTrain()
        self.open_groups = tuple(_OpenGroups(self.group_of[s], self.members) for s in range(n))


@lru_cache(maxsize=64)
def _table(rules: Rules) -> _Table:
    return _Table(rules)


def legal_moves(state: State) -> tuple[Move, ...]:
    """Every move the seat to move may make, in a fixed order (plays, then draw, pass, end)."""
    legal = state._legal
    if legal is None:
        legal = state._legal = _legal(state) if state.outcome is None else ()
    return legal


def _lines_of(state: State, group: int) -> list[int]:
    out = []
    for i, t in enumerate(state.trains):
        if t.owner == group:
            out.append(i)
    return out


def _is_public(state: State, group: int, table: _Table) -> bool:
    if group == MEXICAN:
        return True
    markers = state.markers
    return all(markers[s] for s in table.members[group])


def _bound(state: State, table: _Table) -> list[int]:
    """The open doubles that bind a fresh turn of the seat to move, in the order played.

    Live ones only (a dead double binds nobody): all of them, or with `next-turn`
    those the previous turn left open; with `reverse`, only the latest of those;
    with `last`, only the last double played, and none once it is satisfied.
    """
    full = table.full
    trains = state.trains
    count = state.table_count
    doubles = state.bind_now if table.next_turn else state.open_doubles
    live = []
    for i in doubles:
        if count[trains[i].end] < full:
            live.append(i)
    if table.reverse and len(live) > 1:
        return live[-1:]
    if table.last:
        marked = state.marked_double
        return [marked] if marked in live else []
    return live


def binding(state: State) -> tuple[int, ...]:
    """The trains whose open double binds the seat to move now, in the order played.

    `legal_moves` confines a bound seat to these. Empty when doubles do not bind,
    and outside the first decision of an ordinary turn: during a follow-up (one's
    own double does not bind oneself), a long first train, the fast phase or a
    swan drive. The decision after a draw is still the first one.
    """
    rules = state.rules
    if (
        not rules.doubles_bind
        or state.ctx is not Ctx.START
        or state.turn_first
        or state.outcome is not None
    ):
        return ()
    return tuple(_bound(state, state.table))


def _available(state: State, seat: int, table: _Table) -> list[int]:
    """Trains open to `seat` in a free turn: its own, the Mexican, and the public ones."""
    groups = table.open_groups[seat][state.markers]
    out = []
    for i, t in enumerate(state.trains):
        if t.owner in groups:
            out.append(i)
    return out


def _plays_on(state: State, seat: int, lines: list[int], only: Tile | None) -> list[Move]:
    # Plain loops, not a comprehension: in CPython 3.11 a comprehension is a function
    # of its own, made (with a closure over `end`) and called anew for every train.
    hand = (only,) if only is not None else state.hands[seat]
    trains = state.trains
    by_train = state.table.plays
    out: list[Move] = []
    for i in lines:
        end = trains[i].end
        plays = by_train[i]
        for t in hand:
            if end in t:
                out.append(plays[t])
    return out


def _start_plays(state: State, seat: int, only: Tile | None) -> tuple[list[Move], bool]:
    """Plays open to `seat` at the start of its turn, and whether all are optional.

    Optional plays (a delayed first train that may still be saved) leave the seat
    free to draw or pass instead.
    """
    rules = state.rules
    table: _Table = state.table
    if state.ctx is not _START or state.to_move != seat:
        first = table.long_first and state.first_pending[seat]
    else:
        first = state.turn_first
    if first:
        return _plays_on(state, seat, _lines_of(state, table.group_of[seat]), only), False
    if rules.doubles_bind and state.open_doubles:
        bound = _bound(state, table)
        if bound:
            return _plays_on(state, seat, sorted(bound), only), False
    plays = _open_plays(state, seat, table, only)
    if table.delayed and not state.trains[seat].tiles:
        if only is not None:
            # 004: after drawing, the seat "may then begin their first turn or pass".
            starts = _plays_on(state, seat, [seat], None)
            plays = sorted(
                {*plays, *starts},
                key=lambda m: (m.train, m.tile),
            )
        if plays:
            return plays, all(m.train == seat for m in plays)
    return plays, False


def _open_plays(
    state: State, seat: int, table: _Table, only: Tile | None, followed: int = -1
) -> list[Move]:
    """Plays on the trains open to `seat` in a free turn, the Mexican restriction applied.

    `followed` is the train of the double `seat` is following up, open to it
    whatever its marker (002: the second tile "can be ... placed on the double").
    """
    lines = _available(state, seat, table)
    if followed >= 0 and followed not in lines:
        insort(lines, followed)
    mex = table.mexican
    if state.rules.mexican_start_restricted and mex >= 0 and not state.trains[mex].tiles:
        lines.remove(mex)
        plays = _plays_on(state, seat, lines, only)
        return plays or _plays_on(state, seat, [mex], only)
    return _plays_on(state, seat, lines, only)


def _follow_plays(state: State, seat: int, table: _Table, only: Tile | None) -> list[Move]:
    """Plays after a double: on the swan's own double, one's own train in a first
    train or the fast phase, else anywhere open (not bound by open doubles) and
    on the double just played, even on a train that is not public (a play there
    may have taken its marker down: `any_play_clears_marker`)."""
    if state.lock >= 0:
        return _plays_on(state, seat, [state.lock], only)
    if state.turn_first or state.ctx is _BUILD_FOLLOW:
        return _plays_on(state, seat, _lines_of(state, table.group_of[seat]), only)
    # In a follow-up the double just played is the last open one: a double is
    # appended when played, and none can be played on an open double (its tile
    # is unique). `explain` asks outside a follow-up too.
    followed = state.open_doubles[-1] if state.ctx is _FOLLOW else -1
    return _open_plays(state, seat, table, only, followed)


def _followed(state: State) -> int:
    """The train of the double a follow-up follows: the double laid last, so the last
    open one (a draw in between changes nothing on the table)."""
    return state.open_doubles[-1]


def _optional_follow(state: State, seat: int, table: _Table) -> bool:
    """With `own_double_follow_up = optional`: the double just laid is on the seat's
    own side's train (a branch of it too), so the seat may end the turn instead;
    not 003's exception double (`must_follow`), which must be followed wherever it lies."""
    return (
        table.own_optional
        and not state.must_follow
        and state.trains[_followed(state)].owner == table.group_of[seat]
    )


def _optional_plays(state: State, seat: int, table: _Table) -> list[Move]:
    """The plays that may follow a double on one's own side's train when its follow-up is
    optional. With `follow_up = on-double`: on that double, or (003: "Instead, players
    can place a tile on Mexican train") on the Mexican train, outside a first train;
    no other train, since a double and its tile are "the only way to play two tiles in
    one turn". With `any`: anywhere a follow-up may go."""
    if not table.on_double:
        return _follow_plays(state, seat, table, None)
    followed = _followed(state)
    plays = _plays_on(state, seat, [followed], None)
    mex = table.mexican
    if mex < 0 or state.turn_first:
        return plays
    if plays and state.rules.mexican_start_restricted and not state.trains[mex].tiles:
        return plays  # the empty Mexican train only when no other play exists
    return _plays_on(state, seat, sorted((followed, mex)), None)


def _on_double_plays(state: State, seat: int, table: _Table, only: Tile | None) -> list[Move]:
    """`follow_up = on-double`: plays on the double being followed, except that a drawn
    double may be laid wherever a follow-up may go (003's "possible exception")."""
    if only is not None and only.is_double:
        # Never playable on the followed double itself: that double is its only match.
        return _follow_plays(state, seat, table, only)
    return _plays_on(state, seat, [_followed(state)], only)


def _swan_targets(state: State, seat: int, table: _Table) -> list[int]:
    """Trains the swan drive may take next: the next public train, or past a Mexican one."""
    order = table.swan_order[seat]
    out: list[int] = []
    for pos in range(state.swan_pos, len(order)):
        group = order[pos]
        if not _is_public(state, group, table):
            continue
        out.extend(_lines_of(state, group))
        if group != MEXICAN:
            break  # a public train may not be skipped
    return sorted(out)


def _legal(state: State) -> tuple[Move, ...]:
    rules = state.rules
    table: _Table = state.table
    seat = state.to_move
    ctx = state.ctx
    drawn = state.drawn
    optional = False
    if ctx is _START:
        plays, optional = _start_plays(state, seat, drawn)
    elif ctx is _FOLLOW:
        if table.own_optional and _optional_follow(state, seat, table):
            # No obligation, and so no draw: follow where the rules allow, or end.
            plays = _optional_plays(state, seat, table)
            return (*_announced(state, seat, plays), END)
        if table.on_double:
            plays = _on_double_plays(state, seat, table, drawn)
        else:
            plays = _follow_plays(state, seat, table, drawn)
    elif ctx is _SWAN:
        plays = _plays_on(state, seat, _swan_targets(state, seat, table), None)
        return (*_announced(state, seat, plays), END)
    elif ctx is _CONTINUE or ctx is _BUILD:
        plays = _plays_on(state, seat, _lines_of(state, table.group_of[seat]), None)
        if plays and ctx is _CONTINUE and rules.first_train_until_stuck:
            # 000: the first train goes on "until they can't put down any more".
            return tuple(_announced(state, seat, plays))
        return (*_announced(state, seat, plays), END)
    else:  # BUILD_FOLLOW
        if table.on_double:
            plays = _on_double_plays(state, seat, table, None)
        else:
            plays = _follow_plays(state, seat, table, None)
        if table.own_optional and _optional_follow(state, seat, table):
            return (*_announced(state, seat, plays), END)
        return tuple(_announced(state, seat, plays)) if plays else (END,)
    moves = _announced(state, seat, plays) if rules.announce_one_tile else plays
    if drawn is None:
        if not plays or optional or not rules.must_play:
            if not state.boneyard:
                if not plays:
                    moves.append(PASS)
            elif ctx is _START and state.turn_first and not rules.first_train_draws:
                # 000: a seat unable to start its first train "simply" puts its
                # marker out, without drawing; where a draw would be, a pass is.
                moves.append(PASS)
            else:
                moves.append(DRAW)
    elif not plays or optional or not rules.must_play:
        if rules.draw_until_playable and not plays and state.boneyard:
            moves.append(DRAW)
        else:
            moves.append(PASS)
    return tuple(moves)


def _announced(state: State, seat: int, plays: list[Move]) -> list[Move]:
    """With one-tile announcement on, a play leaving one tile comes announced and not."""
    if not state.rules.announce_one_tile or len(state.hands[seat]) != 2:
        return plays
    out = []
    for m in plays:
        out.append(m._replace(announce=True))
        out.append(m)
    return out
