"""Hand-dealt positions: build a `State` from named hands and trains.

For scenario tests, puzzles and bot authors' own unit tests, where a shuffled
deal would not reach the position of interest. The result is an ordinary
`State`: `legal_moves` and `apply` treat it like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .engine import _deal
from .legal import _table
from .options import BindDuration, FirstTurn, Rules, RulesError, SatisfyOrder
from .state import Ctx, RoundResult, State, Train
from .tiles import Tile, full_set, tile

TileLike = Tile | tuple[int, int] | Sequence[int]


def _tiles(items: Iterable[TileLike]) -> tuple[Tile, ...]:
    out = []
    for item in items:
        a, b = item
        out.append(tile(a, b))
    return tuple(out)


def position(
    rules: Rules,
    hands: Sequence[Iterable[TileLike]],
    *,
    boneyard: Iterable[TileLike] | None = None,
    trains: Mapping[int, Iterable[TileLike]] | None = None,
    markers: Iterable[int] = (),
    to_move: int = 0,
    round_index: int = 0,
    seed: int = 0,
    first_turns: bool = False,
    results: Sequence[RoundResult] = (),
) -> State:
    """A state at the start of `to_move`'s turn with exactly these tiles where they are named.

    `hands[s]` is seat s's hand. `trains` maps a train index (seat s's train is s,
    the Mexican train is `rules.players`) to its tiles in play order from the hub.
    `boneyard` lists tiles in the order they will be drawn; left out, every tile not
    named elsewhere goes there in ascending order; given, it is the whole boneyard and
    tiles named nowhere are out of play (handy for end-game positions). `markers` are
    the seats whose marker is up. `first_turns` gives every seat its first-turn
    privilege (long first trains, the fast phase). Open doubles are the trains that
    end in a double, in train order; with `bind_duration = "next-turn"` they count as
    left open by the previous turn, so they bind `to_move`.
    """
    n = rules.players
    if len(hands) != n:
        raise RulesError(f"position: {len(hands)} hands given for players={n}")
    base = _deal(rules, seed, round_index, tuple(results))
    engine = base.engine
    engine_tile = Tile(engine, engine)
    hand_tiles = [tuple(sorted(_tiles(h))) for h in hands]
    lines = [Train(t.owner, (), t.end, t.parent) for t in base.trains]
    count = [0] * (rules.max_pip + 1)
    count[engine] = 1
    seen: set[Tile] = {engine_tile}
    for h in hand_tiles:
        for t in h:
            if t in seen:
                raise RulesError(f"position: tile {t} is named twice")
            seen.add(t)
    doubles: list[int] = []
    for index, items in sorted((trains or {}).items()):
        if not 0 <= index < len(lines):
            raise RulesError(f"position: there is no train {index}")
        end = engine
        played = _tiles(items)
        for t in played:
            if t in seen:
                raise RulesError(f"position: tile {t} is named twice")
            if end not in t:
                raise RulesError(
                    f"position: {t} does not match the open end {end} of train {index}"
                )
            seen.add(t)
            end = t.other(end)
            count[t.hi] += 1
            if not t.is_double:
                count[t.lo] += 1
        lines[index] = Train(lines[index].owner, played, end)
        if played and played[-1].is_double:
            doubles.append(index)
    if boneyard is None:
        pile = [t for t in full_set(rules.max_pip) if t not in seen]
    else:
        pile = list(_tiles(boneyard))
        for t in pile:
            if t in seen:
                raise RulesError(f"position: tile {t} is named twice")
            seen.add(t)
    state = base.copy()
    state.hands = tuple(hand_tiles)
    state.boneyard = tuple(reversed(pile))  # the engine draws from the end
    state.trains = tuple(lines)
    state.table_count = tuple(count)
    state.open_doubles = tuple(doubles)
    if rules.doubles_bind and rules.bind_duration is BindDuration.NEXT_TURN:
        state.bind_now = tuple(doubles)
    if rules.satisfy_order is SatisfyOrder.LAST and doubles:
        state.marked_double = doubles[-1]  # the double marker is on the last one given
    marked = set(markers)
    state.markers = tuple(s in marked for s in range(n))
    state.to_move = to_move
    state.starter = to_move
    state.holder = (to_move - 1) % n if base.holder is not None else None
    state.engine_draws = ()
    long_first = first_turns and rules.first_turn is FirstTurn.LONG
    state.first_pending = (long_first,) * n
    state.turn_first = long_first
    state.fast_counts = tuple(len(h) for h in hand_tiles)
    state.ctx = Ctx.BUILD if first_turns and rules.first_turn is FirstTurn.FAST else Ctx.START
    state.drawn = None
    state.lock = -1
    state.must_follow = False
    state.swan_pos = -1
    state.penalty_due = False
    _table(rules)  # fail early on a rules value the engine cannot seat
    return state


def round_state(
    rules: Rules,
    round_index: int,
    results: Sequence[RoundResult],
    hands: Sequence[Iterable[TileLike]],
    boneyard: Iterable[TileLike],
    *,
    holder: int | None,
    starter: int,
    engine_draws: Sequence[int] = (),
) -> State:
    """The first decision of round `round_index` with exactly these hands and this
    boneyard (`boneyard[-1]` is drawn first), as the engine would have dealt it: the
    engine in the hub, `holder` the seat that placed it (None when it is set out),
    `engine_draws` the seats that drew before it turned up (their draws already in
    `hands`), and `starter` to move. Every tile of the set but the engine is in a hand
    or the boneyard once. For a seat's guess at the deal (`referee.botkit`)."""
    base = _deal(rules, 0, round_index, tuple(results))
    hand_tiles = tuple(tuple(sorted(_tiles(h))) for h in hands)
    pile = _tiles(boneyard)
    if len(hand_tiles) != rules.players:
        raise RulesError(f"round_state: {len(hand_tiles)} hands given for players={rules.players}")
    engine_tile = Tile(base.engine, base.engine)
    named = sorted([*pile, *(t for h in hand_tiles for t in h)])
    expected = [t for t in full_set(rules.max_pip) if t != engine_tile]
    if named != expected:
        raise RulesError("round_state: the hands and boneyard are not the set less the engine")
    state = base.copy()
    state.hands = hand_tiles
    state.boneyard = pile
    state.holder = holder
    state.starter = starter
    state.to_move = starter
    state.engine_draws = tuple(engine_draws)
    state.fast_counts = tuple(len(h) for h in hand_tiles)
    state.turn_first = state.first_pending[starter]
    return state
