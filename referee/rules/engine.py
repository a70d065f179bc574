"""The game itself: dealing, applying a move, ending rounds (legal moves: `legal`).

Pure functions over immutable `State`s. Chance enters only through the game
seed: each round is shuffled by `random.Random` seeded from (seed, round), so
the same rules, seed and moves always give the same game. No I/O, no clock.
"""

from __future__ import annotations

import random

from .explain import explain
from .legal import _start_plays, _Table, _table, legal_moves
from .options import EngineSource, FirstPlayer, FirstTurn, Rules
from .scoring import finish_round, outcome_of
from .state import (
    _BUILD,
    _BUILD_FOLLOW,
    _CONTINUE,
    _DRAW,
    _FOLLOW,
    _PASS,
    _PLAY,
    _START,
    _SWAN,
    MEXICAN,
    Ctx,
    Move,
    RoundEnd,
    RoundResult,
    State,
    Train,
)
from .tiles import Tile, full_set


class IllegalMoveError(ValueError):
    """A move that the rules do not allow at this point; the message says why."""


# ---------------------------------------------------------------- dealing


def new_game(rules: Rules, seed: int) -> State:
    """The state at the first decision of a game with these rules and this seed."""
    return _deal(rules, seed, 0, ())


def _round_random(seed: int, index: int) -> random.Random:
    # Seeding with a string hashes it with SHA-512: stable across runs and platforms.
    return random.Random(f"mexican-train/{seed}/{index}")


def round_tiles(rules: Rules, index: int) -> list[Tile]:
    """The tiles that round `index` deals, in set order: the whole set, less the
    engine when it starts in the centre."""
    tiles = list(full_set(rules.max_pip))
    if rules.engine_source is EngineSource.CENTER:
        engine = rules.engines[index]
        tiles.remove(Tile(engine, engine))
    return tiles


def _deal(rules: Rules, seed: int, index: int, results: tuple[RoundResult, ...]) -> State:
    tiles = round_tiles(rules, index)
    _round_random(seed, index).shuffle(tiles)
    state = _lay_out(rules, index, results, tiles)
    state.seed = seed
    return state


def deal_round(
    rules: Rules, index: int, results: tuple[RoundResult, ...], order: list[Tile]
) -> State:
    """Round `index` dealt from `order`, an arrangement of `round_tiles(rules, index)`:
    seat s gets the s-th hand-sized slice and the rest is the boneyard, drawn from its
    end. The engine deals each round this way from a shuffle of the game's seed; a
    learning environment or a search deals it from an order of its own choosing.
    The returned state's `seed` is 0 (later rounds are dealt from it by `apply`)."""
    tiles = list(order)
    if sorted(tiles) != round_tiles(rules, index):
        raise ValueError(f"deal_round: the order is not the tiles of round {index}")
    return _lay_out(rules, index, results, tiles)


def _lay_out(
    rules: Rules, index: int, results: tuple[RoundResult, ...], tiles: list[Tile]
) -> State:
    n = rules.players
    engine = rules.engines[index]
    engine_tile = Tile(engine, engine)
    size = rules.hand
    hands = [tiles[s * size : (s + 1) * size] for s in range(n)]
    boneyard = tiles[n * size :]

    holder: int | None = None
    draws: list[int] = []
    if rules.engine_source is EngineSource.HOLDER:
        for seat in range(n):
            if engine_tile in hands[seat]:
                holder = seat
                break
        seat = 0
        while holder is None:
            # Nobody holds the engine: draw one tile each in seat order until it turns up.
            drawn = boneyard.pop()
            hands[seat].append(drawn)
            draws.append(seat)
            if drawn == engine_tile:
                holder = seat
            seat = (seat + 1) % n
        hands[holder].remove(engine_tile)

    starter = _starter(rules, index, holder, hands, results)
    count = [0] * (rules.max_pip + 1)
    count[engine] = 1
    trains = [Train(rules.team_of(s), (), engine) for s in range(n)]
    if rules.mexican_train:
        trains.append(Train(MEXICAN, (), engine))

    state = State.__new__(State)
    state.rules = rules
    state.table = _table(rules)
    state.seed = 0
    state.round_index = index
    state.engine = engine
    state.holder = holder
    state.engine_draws = tuple(draws)
    state.starter = starter
    state.hands = tuple(tuple(sorted(h)) for h in hands)
    state.boneyard = tuple(boneyard)
    state.trains = tuple(trains)
    state.markers = (False,) * n
    state.table_count = tuple(count)
    state.open_doubles = ()
    state.bind_now = ()
    state.bind_next = ()
    state.marked_double = -1
    state.to_move = starter
    state.drawn = None
    state.lock = -1
    state.must_follow = False
    state.swan_pos = -1
    state.own_doubles = ()
    state.first_pending = (rules.first_turn is FirstTurn.LONG,) * n
    state.turn_first = rules.first_turn is FirstTurn.LONG
    state.penalty_due = False
    state.fast_counts = tuple(len(h) for h in state.hands)
    state.ctx = Ctx.BUILD if rules.first_turn is FirstTurn.FAST else Ctx.START
    state.results = results
    state.outcome = None
    state._legal = None
    return state


def _starter(
    rules: Rules,
    index: int,
    holder: int | None,
    hands: list[list[Tile]],
    results: tuple[RoundResult, ...],
) -> int:
    n = rules.players
    if rules.first_player is FirstPlayer.HIGHEST_SINGLE:
        if not results:
            # The holder of the highest-valued single tile; equal sums go to the higher end.
            singles = [(t.pips, t.hi, s) for s in range(n) for t in hands[s] if not t.is_double]
            return max(singles)[2] if singles else 0
        # Later rounds: the lowest round score of the last round leads (as scored: with
        # teams the side's, shared by both partners; 003: "whoever has the fewest points
        # leads the next round"); ties go to the first such seat clockwise after the last
        # round's starter.
        last = results[-1]
        ring = [(last.starter + k) % n for k in range(1, n + 1)]
        return min(ring, key=lambda s: (last.scores[s], ring.index(s)))
    if holder is not None:
        return (holder + 1) % n
    return (index + 1) % n  # engine in the centre: the lead passes round the table


# ---------------------------------------------------------------- legal moves


def apply(state: State, move: Move, *, check: bool = True) -> State:
    """The state after `move`; `state` itself is unchanged. Illegal moves raise.

    `check=False` skips the legality test, for a caller that replays moves known to
    have been legal in the real game on a guessed world (`referee.botkit`) and checks
    the result itself; a move that is not even possible (a tile in no hand, a train
    that does not exist) is then the caller's error.
    """
    if check and move not in legal_moves(state):
        raise IllegalMoveError(explain(state, move))
    kind = move.kind
    if kind is _PLAY:
        return _play(state, move)
    if kind is _DRAW:
        new = state.copy()
        seat = state.to_move
        tile = state.boneyard[-1]
        new.boneyard = state.boneyard[:-1]
        new.hands = _with_hand(state.hands, seat, tuple(sorted((*state.hands[seat], tile))))
        new.drawn = tile
        return new
    if kind is _PASS:
        return _end_turn(state.copy(), marker=True)
    return _end_turn(state.copy(), marker=False)


def _with_hand(
    hands: tuple[tuple[Tile, ...], ...], seat: int, hand: tuple[Tile, ...]
) -> tuple[tuple[Tile, ...], ...]:
    out = list(hands)
    out[seat] = hand
    return tuple(out)


def _without(hand: tuple[Tile, ...], tile: Tile) -> tuple[Tile, ...]:
    """`hand` less `tile` (every copy of it; unchanged if it holds none)."""
    try:
        at = hand.index(tile)
    except ValueError:
        return hand
    rest = hand[:at] + hand[at + 1 :]
    if tile in rest:  # never in a dealt hand, whose tiles are distinct
        return tuple([t for t in rest if t != tile])
    return rest


def _play(state: State, move: Move) -> State:
    rules = state.rules
    table: _Table = state.table
    seat = state.to_move
    tile = move.tile
    index = move.train
    assert tile is not None and index is not None  # guaranteed by the legal list
    new = state.copy()
    hi, lo = tile
    double = hi == lo

    rest = _without(state.hands[seat], tile)
    new.hands = _with_hand(state.hands, seat, rest)
    trains = list(state.trains)
    line = trains[index]
    owner, line_tiles, end, parent = line
    # A train ending in a double is that double's open end: this tile satisfies it.
    satisfied = bool(line_tiles) and line_tiles[-1].is_double
    trains[index] = Train(owner, (*line_tiles, tile), lo if hi == end else hi, parent)
    doubles = state.open_doubles
    if satisfied and index in doubles:
        doubles = tuple([i for i in doubles if i != index])
        if rules.branching_doubles:
            # The satisfied double opens two more directions from its sides.
            trains.append(Train(owner, (), end, index))
            trains.append(Train(owner, (), end, index))
    if double:
        doubles = (*doubles, index)
    if table.last:
        # 002: the double marker goes on the last double played, and back to the
        # engine when that double is played on.
        if double:
            new.marked_double = index
        elif satisfied and index == state.marked_double:
            new.marked_double = -1
    if table.next_turn:
        now, laid = state.bind_now, state.bind_next
        if satisfied and index in state.open_doubles:
            now = tuple([i for i in now if i != index])
            laid = tuple([i for i in laid if i != index])
        new.bind_now = now
        new.bind_next = (*laid, index) if double else laid
    new.trains = tuple(trains)
    new.open_doubles = doubles
    count = list(state.table_count)
    count[hi] += 1
    if not double:
        count[lo] += 1
    new.table_count = tuple(count)
    new.drawn = None

    ctx = state.ctx
    building = ctx is _BUILD or ctx is _BUILD_FOLLOW
    own = table.group_of[seat]
    if double and owner == own and rules.unfinished_own_double_marks and not building:
        # 004: left unfinished at the end of this turn, it makes the train public.
        # The fast phase is exempt: there turns are ignored (004's Fast Game).
        new.own_doubles = (*state.own_doubles, index)
    if owner == own or (rules.any_play_clears_marker and owner != MEXICAN):
        members = table.members[owner]
        markers = state.markers
        for s in members:
            if markers[s]:
                cleared = list(markers)
                for m in members:
                    cleared[m] = False
                new.markers = tuple(cleared)
                break

    if rules.announce_one_tile:
        new.penalty_due = len(rest) == 1 and not move.announce

    if not rest:
        return _went_out(new, seat)

    if double:
        new.ctx = _BUILD_FOLLOW if building else _FOLLOW
        if ctx is _FOLLOW and state.drawn is not None and table.on_double:
            # 003's exception: a double drawn in an on-double follow-up and laid "must"
            # be followed "as well", wherever it was laid, the seat's own train included.
            new.must_follow = True
        if ctx is _SWAN:
            new.lock = index  # a swan drive finishes its own double before going on
        return new
    if building:
        new.ctx = _BUILD
        return new
    if state.turn_first or ctx is _CONTINUE:
        new.ctx = _CONTINUE
        return new
    if (
        table.delayed
        and index == seat
        and not line_tiles
        and (ctx is _START or ctx is _FOLLOW)
        and state.lock < 0
    ):
        new.ctx = _CONTINUE  # the saved first train is played now, as long as wanted
        new.turn_first = True
        return new
    if rules.swan_drive:
        if ctx is _SWAN or state.lock >= 0:
            new.lock = -1
            new.ctx = _SWAN
            new.swan_pos = _swan_after(state, seat, owner, table)
            return new
        if owner == own:
            new.ctx = _SWAN
            new.swan_pos = 0
            return new
    return _end_turn(new, marker=False)


def _swan_after(state: State, seat: int, group: int, table: _Table) -> int:
    order = table.swan_order[seat]
    return order.index(group) + 1 if group in order else state.swan_pos


def _went_out(state: State, seat: int) -> State:
    rules = state.rules
    if rules.first_turns_complete and any(
        state.first_pending[s] for s in range(rules.players) if s != seat
    ):
        # masters: the others still finish their first turn before the round ends.
        return _end_turn(state, marker=False)
    return _close_round(state, RoundEnd.OUT)


def _end_turn(state: State, marker: bool) -> State:
    """Close the seat's turn (marker, penalty) and hand the move to the next seat."""
    rules = state.rules
    seat = state.to_move
    n = rules.players
    own_doubles = state.own_doubles
    if own_doubles:
        state.own_doubles = ()
    if marker or (own_doubles and any(i in state.open_doubles for i in own_doubles)):
        # A pass, or a double played this turn on the seat's own side's train and
        # still unfinished (`unfinished_own_double_marks`, 004): the seat's marker
        # goes up, as for any failure to play; with teams the side's train is
        # public once the partner's marker is up too.
        markers = list(state.markers)
        markers[seat] = True
        state.markers = tuple(markers)
    if state.penalty_due:
        hand = state.hands[seat]
        if len(hand) == 1 and state.boneyard:
            take = min(rules.announce_penalty, len(state.boneyard))
            taken = state.boneyard[len(state.boneyard) - take :]
            state.boneyard = state.boneyard[: len(state.boneyard) - take]
            state.hands = _with_hand(state.hands, seat, tuple(sorted((*hand, *taken))))
        state.penalty_due = False
    state.drawn = None
    state.lock = -1
    state.must_follow = False
    state.swan_pos = -1
    if state.table.next_turn:
        # The doubles this turn left open bind the next turn, and no other.
        state.bind_now = state.bind_next
        state.bind_next = ()

    if state.ctx is _BUILD or state.ctx is _BUILD_FOLLOW:
        nxt = (seat + 1) % n
        if nxt == state.starter:
            state.ctx = _START  # everyone has built: turns begin
        else:
            state.ctx = _BUILD
        state.to_move = nxt
        return state

    if state.turn_first:
        pending = list(state.first_pending)
        pending[seat] = False
        state.first_pending = tuple(pending)
    state.ctx = _START
    if () in state.hands:
        # Someone went out during the first turns (masters): only first turns remain.
        waiting = [s for s in range(n) if state.first_pending[s] and state.hands[s]]
        if not waiting:
            return _close_round(state, RoundEnd.OUT)
        nxt = next((seat + k) % n for k in range(1, n + 1) if (seat + k) % n in waiting)
    else:
        nxt = (seat + 1) % n
    state.to_move = nxt
    state.turn_first = state.first_pending[nxt]
    if marker and not state.boneyard and _blocked(state):
        # With `first_turns_complete`, a seat may be out already while the first turns
        # left end blocked: the round was won by going out, and ends so.
        out = any(not h for h in state.hands)
        return _close_round(state, RoundEnd.OUT if out else RoundEnd.BLOCKED)
    return state


def _blocked(state: State) -> bool:
    """True when no seat could ever play again with the boneyard empty.

    Passing only raises markers, and every seat that cannot play will pass in
    turn, so the position to test is the one with every marker up: if nobody
    can play even then, nobody ever will. Checking the markers as they stand
    would end the round while a later pass could still open a train.
    """
    probe = state.copy()
    probe.markers = (True,) * state.rules.players
    # A `next-turn` binding lapses after one turn, so it never stops a seat for good.
    probe.bind_now = ()
    for seat in range(state.rules.players):
        if state.hands[seat] and _start_plays(probe, seat, None)[0]:
            return False
    return True


def _close_round(state: State, end: RoundEnd) -> State:
    result = finish_round(
        state.rules, state.round_index, state.engine, state.starter, end, state.hands
    )
    results = (*state.results, result)
    if len(results) < len(state.rules.engines):
        return _deal(state.rules, state.seed, len(results), results)
    state.results = results
    state.outcome = outcome_of(state.rules, results)
    state.ctx = Ctx.START
    state.drawn = None
    state._legal = ()
    return state
