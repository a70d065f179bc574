"""The one translation between engine values and protocol messages.

Every message meant for a seat is built here from that seat's `view` (or
`view_info`, the same view built in one pass for the wire, held equal to it by
tests/test_wire_view.py) or from public facts, never from the whole state: a drawn
tile goes only to its drawer, hands only at round end. The leak checker in the tests
holds this module to it.

Turn requests and events are the referee's work for every decision, so what does
not change from one decision to the next (a train, the list of trains, a move's
wire form, the sides' markers, the round totals) is kept and sent again as it is.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from protocol import messages as m

from ..rules import (
    MEXICAN,
    Ctx,
    Move,
    MoveKind,
    RoundResult,
    Rules,
    State,
    Tile,
    Train,
    binding,
    legal_moves,
)


class ReplyError(Exception):
    """A reply that does not name a legal move; `code` is the protocol error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def rules_info(rules: Rules) -> m.RulesInfo:
    """The rules as the wire carries them."""
    return m.RulesInfo(**rules.to_dict())


# The engine's enum members under plain names: CPython 3.11 reads an attribute of an enum
# class (`Ctx.BUILD`) through the enum metaclass's `__getattr__` hook, and hashes a member
# with a Python `__hash__`: each costs a turn request or an event about 150 ns.
_BUILD, _BUILD_FOLLOW = Ctx.BUILD, Ctx.BUILD_FOLLOW
_PLAY, _DRAW, _PASS = MoveKind.PLAY, MoveKind.DRAW, MoveKind.PASS

_ORIENTED: dict[tuple[Tile, ...], tuple[int, list[m.Tile]]] = {}


def _oriented(tiles: tuple[Tile, ...], end: int) -> list[m.Tile]:
    """Tiles of a train as they lie, walking back from the open end: in each pair the
    first number touches the tile before (or the hub) and the second the tile after.

    Cached by the tiles (their value: hashing a tuple is C work) and the end. A train
    grows by one tile at its end, and the tiles before it lie as they did: a train one
    tile longer than one already oriented is that one's list and one more pair.
    """
    hit = _ORIENTED.get(tiles)
    if hit is not None and hit[0] == end:
        return hit[1]
    out: list[m.Tile]
    last = tiles[-1] if tiles else None
    near = 0 if last is None else last.lo if last.hi == end else last.hi
    before = _ORIENTED.get(tiles[:-1]) if last is not None else None
    if before is not None and before[0] == near:
        out = [*before[1], (near, end)]
    else:
        out = []
        far = end
        for t in reversed(tiles):
            near = t.lo if t.hi == far else t.hi
            out.append((near, far))
            far = near
        out.reverse()
    if len(_ORIENTED) > 4096:
        _ORIENTED.clear()
    _ORIENTED[tiles] = (end, out)
    return out


# A train that did not change from one request to the next (the same `Train`, index and
# marker) goes out as the same struct; the entry holds its key's object, so the identity
# stays valid. The same for the whole list of trains and the round totals. The wire's
# structs (and their lists) are only ever encoded.
_TRAIN_INFO: dict[int, tuple[Train, int, bool, m.TrainInfo]] = {}
_TRAINS: dict[int, tuple[tuple[Train, ...], tuple[bool, ...], list[m.TrainInfo]]] = {}
_TOTALS: dict[int, tuple[tuple[RoundResult, ...], list[int]]] = {}
_PUBLIC: dict[tuple[tuple[tuple[int, ...], ...], tuple[bool, ...]], tuple[bool, ...]] = {}


def view_info(state: State, seat: int) -> m.ViewInfo:
    """The `view` of a turn request for `seat`.

    Built in one pass from the state straight into the wire's structs, as
    `referee.rules.view` would show it and then converted (which cost a turn
    request about a tenth of the referee's CPU): the same hiding rules, held equal
    to `view` by tests/test_wire_view.py. Tiles go out as they are: a `Tile` is a
    named tuple, which encodes as the pair it is.
    """
    players = state.rules.players
    table = state.table
    own = table.group_of[seat]
    ctx = state.ctx
    fast = ctx is _BUILD or ctx is _BUILD_FOLLOW
    markers = state.markers
    public_of = _public_sides(markers, table.members)
    engine = state.engine
    if fast:  # the other sides' trains are hidden from this seat's side only
        trains = _trains_info(state, public_of, own)
    else:
        # A draw, a pass or the end of a turn leaves the trains as they were: the same
        # tuple of them, shown as the same list while the markers show the same.
        hit = _TRAINS.get(id(state.trains))
        if hit is not None and hit[0] is state.trains and hit[1] is public_of:
            trains = hit[2]
        else:
            trains = _trains_info(state, public_of, None)
            if len(_TRAINS) > 4096:
                _TRAINS.clear()
            _TRAINS[id(state.trains)] = (state.trains, public_of, trains)
    counts = list(map(len, state.hands))
    live = []
    if state.open_doubles:
        full = table.full
        table_count = state.table_count
        all_trains = state.trains
        live = [i for i in state.open_doubles if table_count[all_trains[i].end] < full]
    if fast:
        group_of = table.group_of
        counts = [counts[s] if group_of[s] == own else state.fast_counts[s] for s in range(players)]
        live = [i for i in live if state.trains[i].owner == own]
    moving = seat == state.to_move
    return m.ViewInfo(
        round=state.round_index,
        engine=engine,
        hand=list(state.hands[seat]),
        drawn=state.drawn if moving else None,
        trains=trains,
        markers=list(markers),
        hand_counts=counts,
        scores=_totals(state),
        boneyard=len(state.boneyard),
        open_doubles=live,
        binding=list(binding(state)) if moving else [],
        step=_STEPS[ctx._value_],
        next=(state.to_move + 1) % players,
    )


def _trains_info(
    state: State, public_of: tuple[bool, ...], hidden_from: int | None
) -> list[m.TrainInfo]:
    """The trains as a request shows them; in the fast phase (`hidden_from`: the seat's
    side) the other sides' trains as they stood before it."""
    engine = state.engine
    trains = []
    for i, t in enumerate(state.trains):
        owner = t.owner
        if owner == MEXICAN:
            public = True
        else:
            public = public_of[owner]
            if hidden_from is not None and owner != hidden_from:  # built in the fast phase
                trains.append(
                    m.TrainInfo(
                        train=i,
                        owner=owner,
                        tiles=[],
                        end=engine,
                        public=public,
                        open_double=False,
                        parent=t.parent,
                    )
                )
                continue
        hit = _TRAIN_INFO.get(id(t))
        if hit is not None and hit[0] is t and hit[1] == i and hit[2] == public:
            trains.append(hit[3])
            continue
        tiles = t.tiles
        info = m.TrainInfo(
            train=i,
            owner=owner,
            tiles=_oriented(tiles, t.end),
            end=t.end,
            public=public,
            open_double=bool(tiles) and tiles[-1].is_double,
            parent=t.parent,
        )
        if len(_TRAIN_INFO) > 4096:
            _TRAIN_INFO.clear()
        _TRAIN_INFO[id(t)] = (t, i, public, info)
        trains.append(info)
    return trains


def _public_sides(
    markers: tuple[bool, ...], members: tuple[tuple[int, ...], ...]
) -> tuple[bool, ...]:
    """For each side, whether its trains are public: every marker of the side is up.
    Kept by value: a table has few marker patterns, and a game goes through new tuples
    of them all the time (every pass, every play on one's own train)."""
    key = (members, markers)
    sides = _PUBLIC.get(key)
    if sides is None:
        sides = tuple([all(markers[s] for s in seats) for seats in members])
        if len(_PUBLIC) > 4096:
            _PUBLIC.clear()
        _PUBLIC[key] = sides
    return sides


def _totals(state: State) -> list[int]:
    """Each seat's points over the finished rounds (the same list while they stay)."""
    results = state.results
    if not results:  # the one empty tuple, whatever the table: not cached
        return [0] * state.rules.players
    hit = _TOTALS.get(id(results))
    if hit is not None and hit[0] is results:
        return hit[1]
    totals = list(map(sum, zip(*(r.scores for r in results), strict=True)))
    if len(_TOTALS) > 4096:
        _TOTALS.clear()
    _TOTALS[id(results)] = (results, totals)
    return totals


# The name of each engine step on the wire (and in replays): the two build steps are one.
STEP_NAMES = {
    Ctx.START: "start",
    Ctx.FOLLOW: "follow",
    Ctx.CONTINUE: "continue",
    Ctx.SWAN: "swan",
    Ctx.BUILD: "build",
    Ctx.BUILD_FOLLOW: "build",
}
# The same by the step's value (`_value_`, a plain attribute): a string hashes in C.
_STEPS = {ctx._value_: name for ctx, name in STEP_NAMES.items()}


def move_spec(move: Move) -> m.MoveSpec:
    """An engine move as listed in a turn request."""
    if move.kind is _PLAY:
        assert move.tile is not None
        return m.MoveSpec(
            action="play",
            tile=(move.tile.hi, move.tile.lo),
            train=move.train,
            announce=move.announce,
        )
    return m.MoveSpec(action=move.kind._value_)


# Each move's wire form, made once: the engine lists the same `Move` objects from state
# to state (its plays by train and tile, and the `DRAW`, `PASS`, `END` constants). Keyed
# by identity, which the entry keeps valid by holding the move.
_SPECS: dict[int, tuple[Move, m.MoveSpec]] = {}


def spec_of(move: Move) -> m.MoveSpec:
    """`move_spec(move)`, made once per move and shared: only to be encoded."""
    hit = _SPECS.get(id(move))
    if hit is None or hit[0] is not move:
        if len(_SPECS) > 4096:
            _SPECS.clear()
        hit = _SPECS[id(move)] = (move, move_spec(move))
    return hit[1]


def legal_specs(state: State) -> list[m.MoveSpec]:
    """The legal moves of `state` as a turn request lists them, in the engine's order."""
    specs = []
    for move in legal_moves(state):
        hit = _SPECS.get(id(move))
        specs.append(hit[1] if hit is not None and hit[0] is move else spec_of(move))
    return specs


def turn_request(state: State, request_id: int, move_ms: int, bank_ms: int) -> m.Turn:
    """The turn request for the seat to move."""
    seat = state.to_move
    return m.Turn(
        id=request_id,
        seat=seat,
        view=view_info(state, seat),
        legal=legal_specs(state),
        clock=m.Clock(move_ms=move_ms, bank_ms=bank_ms),
    )


_KINDS = {"play": MoveKind.PLAY, "draw": MoveKind.DRAW, "pass": MoveKind.PASS, "end": MoveKind.END}


def move_of(reply: m.MoveReply, state: State) -> Move:
    """The engine move a reply names; `ReplyError` when it names none that is legal."""
    legal = legal_moves(state)
    if reply.index is not None:
        if reply.action is not None:
            raise ReplyError("malformed", "give either index or action, not both")
        if not 0 <= reply.index < len(legal):
            raise ReplyError(
                "illegal", f"index {reply.index} is outside the {len(legal)} legal moves"
            )
        return legal[reply.index]
    if reply.action is None:
        raise ReplyError("malformed", "a move needs index or action")
    kind = _KINDS[reply.action]
    if kind is MoveKind.PLAY:
        if reply.tile is None or reply.train is None:
            raise ReplyError("malformed", "a play needs tile and train")
        a, b = reply.tile
        tile = Tile(a, b) if a >= b else Tile(b, a)
        move = Move(kind, tile, reply.train, reply.announce)
    else:
        move = Move(kind)
    if move not in legal:
        from ..rules import explain

        raise ReplyError("illegal", explain(state, move))
    return move


# ---------------------------------------------------------------- events


class Event(msgspec.Struct, frozen=True):
    """A message for every seat (or only the `audience`), or a private variant for one.

    A frozen struct: a decision makes one or two, and msgspec builds one several times
    faster than a frozen dataclass or a named tuple."""

    public: m.Message
    private: m.Message | None = None
    owner: int = -1  # the seat that gets `private` instead of `public`
    audience: frozenset[int] | None = None  # None: every seat

    def for_seat(self, seat: int) -> m.Message | None:
        """What `seat` receives, if anything."""
        if self.audience is not None and seat not in self.audience:
            return None
        return self.private if self.private is not None and seat == self.owner else self.public


def round_start(state: State, seat: int) -> m.RoundStart:
    """The round-start message for `seat`: its own hand, public counts (as its turn
    requests show them: `view_info`, which is `view` built for the wire)."""
    v = view_info(state, seat)
    return m.RoundStart(
        round=v.round,
        engine=v.engine,
        hand=v.hand,
        holder=state.holder,
        starter=state.starter,
        hand_counts=v.hand_counts,
        boneyard=v.boneyard,
        engine_draws=list(state.engine_draws),
    )


def events(before: State, move: Move, after: State) -> Iterator[Event]:
    """Everything every seat should learn from `move`, in order, round ends included."""
    seat = before.to_move
    kind = move.kind
    round_changed = after.round_index != before.round_index or after.outcome is not None
    ctx = before.ctx
    building = ctx is _BUILD or ctx is _BUILD_FOLLOW
    if kind is _DRAW:
        drawn = after.drawn
        assert drawn is not None
        yield Event(m.Drew(seat=seat), m.Drew(seat=seat, tile=(drawn.hi, drawn.lo)), seat)
    elif kind is _PLAY:
        assert move.tile is not None and move.train is not None
        line = before.trains[move.train]
        end = line.end
        new_end = move.tile.other(end)
        had = len(before.trains)  # a branching double satisfied opens two more trains
        opened = (
            [] if round_changed or len(after.trains) == had else list(range(had, len(after.trains)))
        )
        yield Event(
            m.Played(
                seat=seat,
                tile=(end, new_end),
                train=move.train,
                end=new_end,
                opens_double=move.tile.is_double,
                branches=opened,
                announce=move.announce,
            ),
            # In the fast phase everyone builds at once: only the builder's side sees it now.
            audience=_side(before, seat) if building else None,
        )
    elif kind is _PASS:
        yield Event(m.Passed(seat=seat))
    if round_changed:
        yield from _round_end(before, move, after)
        return
    if building and not (after.ctx is _BUILD or after.ctx is _BUILD_FOLLOW):
        yield from _reveal_builds(after)
    if after.markers is not before.markers:  # the engine keeps the tuple while none changes
        yield from _marker_changes(before, after)
    # A penalty draw happens as the turn closes: the drawer sees the tiles.
    if kind is not _DRAW:
        gained = len(after.hands[seat]) - len(before.hands[seat])
        if kind is _PLAY:
            gained += 1
        if gained > 0:
            new = sorted(set(after.hands[seat]) - set(before.hands[seat]))
            for t in new:
                yield Event(
                    m.Drew(seat=seat, reason="penalty"),
                    m.Drew(seat=seat, tile=(t.hi, t.lo), reason="penalty"),
                    seat,
                )


def _side(state: State, seat: int) -> frozenset[int]:
    rules = state.rules
    team = rules.team_of(seat)
    return frozenset(s for s in range(rules.players) if rules.team_of(s) == team)


def _reveal_builds(state: State) -> Iterator[Event]:
    """At the end of the fast phase, every seat learns the trains the other sides built."""
    rules = state.rules
    for index, train in enumerate(state.trains):
        if train.owner < 0 or not train.tiles:
            continue
        builder = index if index < rules.players else state.table.members[train.owner][0]
        others = frozenset(range(rules.players)) - _side(state, builder)
        for a, b in _oriented(train.tiles, train.end):
            yield Event(
                m.Played(seat=builder, tile=(a, b), train=index, end=b, opens_double=a == b),
                audience=others,
            )


def _marker_changes(before: State, after: State) -> Iterator[Event]:
    for s, (was, now) in enumerate(zip(before.markers, after.markers, strict=True)):
        if was != now:
            yield Event(m.Marker(seat=s, up=now))


def _round_end(before: State, move: Move, after: State) -> Iterator[Event]:
    result = after.results[-1]
    totals = [sum(r.scores[s] for r in after.results) for s in range(before.rules.players)]
    yield Event(
        m.RoundEnd(
            round=result.number,
            reason="out" if result.end.value == "out" else "blocked",
            out=list(result.out),
            hands=[[(t.hi, t.lo) for t in h] for h in result.hands],
            values=list(result.values),
            scores=list(result.scores),
            totals=totals,
        )
    )
    del move
