"""The one translation between engine values and protocol messages.

Every message meant for a seat is built here from that seat's `view` or from
public facts, never from the whole state: a drawn tile goes only to its drawer,
hands only at round end. The leak checker in the tests holds this module to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

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
    view,
)


class ReplyError(Exception):
    """A reply that does not name a legal move; `code` is the protocol error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def rules_info(rules: Rules) -> m.RulesInfo:
    """The rules as the wire carries them."""
    return m.RulesInfo(**rules.to_dict())


_ORIENTED: dict[int, tuple[tuple[Tile, ...], int, list[m.Tile]]] = {}


def _oriented(tiles: tuple[Tile, ...], end: int) -> list[m.Tile]:
    """Tiles of a train as they lie, walking back from the open end: in each pair the
    first number touches the tile before (or the hub) and the second the tile after.

    Trains share their tile tuples from state to state, so the result is cached
    by the tuple's identity (the cache holds the tuple, so the identity stays valid).
    """
    key = id(tiles)
    hit = _ORIENTED.get(key)
    if hit is not None and hit[0] is tiles and hit[1] == end:
        return hit[2]
    out: list[m.Tile] = []
    far = end
    for t in reversed(tiles):
        near = t.other(far)
        out.append((near, far))
        far = near
    out.reverse()
    if len(_ORIENTED) > 4096:
        _ORIENTED.clear()
    _ORIENTED[key] = (tiles, end, out)
    return out


# A train that did not change from one request to the next (the same `Train`, index and
# marker) goes out as the same struct; as for `_oriented`, each entry holds its key's
# object, so the identity stays valid. The wire's structs are only ever encoded.
_TRAIN_INFO: dict[int, tuple[Train, int, bool, m.TrainInfo]] = {}
_TOTALS: dict[int, tuple[tuple[RoundResult, ...], list[int]]] = {}


def view_info(state: State, seat: int) -> m.ViewInfo:
    """The `view` of a turn request for `seat`.

    Built in one pass from the state straight into the wire's structs, as
    `referee.rules.view` would show it and then converted (which cost a turn
    request about a tenth of the referee's CPU): the same hiding rules, held equal
    to `view` by tests/test_wire_view.py. Tiles go out as they are: a `Tile` is a
    named tuple, which encodes as the pair it is.
    """
    rules = state.rules
    players = rules.players
    table = state.table
    own = table.group_of[seat]
    fast = state.ctx is Ctx.BUILD or state.ctx is Ctx.BUILD_FOLLOW
    markers = state.markers
    members = table.members
    engine = state.engine
    trains = []
    for i, t in enumerate(state.trains):
        owner = t.owner
        if fast and owner != own and owner != MEXICAN:  # built in the fast phase: not yet seen
            trains.append(
                m.TrainInfo(
                    train=i,
                    owner=owner,
                    tiles=[],
                    end=engine,
                    public=all(markers[s] for s in members[owner]),
                    open_double=False,
                    parent=t.parent,
                )
            )
            continue
        public = owner == MEXICAN or all(markers[s] for s in members[owner])
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
    counts = [len(h) for h in state.hands]
    full = table.full
    live = [i for i in state.open_doubles if state.table_count[state.trains[i].end] < full]
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
        step=STEP_NAMES[state.ctx],
        next=(state.to_move + 1) % players,
    )


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


def move_spec(move: Move) -> m.MoveSpec:
    """An engine move as listed in a turn request."""
    if move.kind is MoveKind.PLAY:
        assert move.tile is not None
        return m.MoveSpec(
            action="play",
            tile=(move.tile.hi, move.tile.lo),
            train=move.train,
            announce=move.announce,
        )
    return m.MoveSpec(action=move.kind.value)


def turn_request(state: State, request_id: int, move_ms: int, bank_ms: int) -> m.Turn:
    """The turn request for the seat to move."""
    seat = state.to_move
    return m.Turn(
        id=request_id,
        seat=seat,
        view=view_info(state, seat),
        legal=[move_spec(mv) for mv in legal_moves(state)],
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


@dataclass(frozen=True, slots=True)
class Event:
    """A message for every seat (or only the `audience`), or a private variant for one."""

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
    """The round-start message for `seat`: its own hand, public counts."""
    v = view(state, seat)
    return m.RoundStart(
        round=v.round_index,
        engine=v.engine,
        hand=[tuple(t) for t in v.hand],  # type: ignore[misc]
        holder=v.holder,
        starter=v.starter,
        hand_counts=list(v.hand_counts),
        boneyard=v.boneyard_count,
        engine_draws=list(v.engine_draws),
    )


def events(before: State, move: Move, after: State) -> Iterator[Event]:
    """Everything every seat should learn from `move`, in order, round ends included."""
    seat = before.to_move
    round_changed = after.round_index != before.round_index or after.outcome is not None
    if move.kind is MoveKind.DRAW:
        drawn = after.drawn
        assert drawn is not None
        yield Event(m.Drew(seat=seat), m.Drew(seat=seat, tile=(drawn.hi, drawn.lo)), seat)
    elif move.kind is MoveKind.PLAY:
        assert move.tile is not None and move.train is not None
        line = before.trains[move.train]
        end = line.end
        new_end = move.tile.other(end)
        opened = [] if round_changed else list(range(len(before.trains), len(after.trains)))
        building = before.ctx in (Ctx.BUILD, Ctx.BUILD_FOLLOW)
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
    elif move.kind is MoveKind.PASS:
        yield Event(m.Passed(seat=seat))
    if round_changed:
        yield from _round_end(before, move, after)
        return
    if before.ctx in (Ctx.BUILD, Ctx.BUILD_FOLLOW) and after.ctx not in (
        Ctx.BUILD,
        Ctx.BUILD_FOLLOW,
    ):
        yield from _reveal_builds(after)
    yield from _marker_changes(before, after)
    # A penalty draw happens as the turn closes: the drawer sees the tiles.
    if move.kind is not MoveKind.DRAW:
        gained = len(after.hands[seat]) - len(before.hands[seat])
        if move.kind is MoveKind.PLAY:
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
