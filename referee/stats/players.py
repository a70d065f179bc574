"""In-process players for benchmarks and rollouts: policies over engine states, no bots.

A player is a function from a `State` to one of its `legal_moves`, with its own
seeded random generator, so that a game between local players is a pure function
of the rules, the deal seed and the players' seeds. They decide from what the
seat may know (its legal moves and the tiles in them), never from the boneyard.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import lru_cache

from referee.rules import Move, MoveKind, Rules, State, Tile, apply, legal_moves, new_game

Player = Callable[[State], Move]


def random_player(seed: object) -> Player:
    """Chooses uniformly among the legal moves."""
    rng = random.Random(f"random-player/{seed}")

    def choose(state: State) -> Move:
        return rng.choice(legal_moves(state))

    return choose


def heavy_player(seed: object, noise: float = 0.0) -> Player:
    """Plays its heaviest playable tile (ties at random), draws only when it cannot play.

    With `noise` > 0 it makes a uniformly random legal move instead with that
    probability: a weaker copy whose strength can be set finely.
    """
    rng = random.Random(f"heavy-player/{seed}")

    def choose(state: State) -> Move:
        moves = legal_moves(state)
        if noise and rng.random() < noise:
            return rng.choice(moves)
        best: list[Move] = []
        top = -1
        for move in moves:
            if move.kind is not MoveKind.PLAY or move.tile is None:
                continue
            pips = move.tile.pips
            if pips > top:
                best, top = [move], pips
            elif pips == top:
                best.append(move)
        if best:
            return best[0] if len(best) == 1 else rng.choice(best)
        return moves[0]  # no play: draw, pass or end, whichever the rules offer

    return choose


@lru_cache(maxsize=1 << 16)
def _chain(hand: tuple[Tile, ...], start: int, budget: int = 200) -> tuple[int, int]:
    """(tiles, pips) of the longest chain of hand tiles from `start`, heaviest among equals.

    The search stops after `budget` placements; hands repeat often enough across
    games for the cache to pay.
    """
    by_pip: dict[int, list[tuple[int, int, int]]] = {}  # pip -> (bit, other end, pips)
    for i, (hi, lo) in enumerate(hand):
        by_pip.setdefault(hi, []).append((1 << i, lo, hi + lo))
        if lo != hi:
            by_pip.setdefault(lo, []).append((1 << i, hi, hi + lo))
    best = (0, 0)
    left = budget

    def walk(end: int, used: int, count: int, total: int) -> None:
        nonlocal best, left
        if (count, total) > best:
            best = (count, total)
        for bit, other, pips in by_pip.get(end, ()):
            if used & bit or left <= 0:
                continue
            left -= 1
            walk(other, used | bit, count + 1, total + pips)

    walk(start, 0, 0, 0)
    return best


def greedy_player(seed: object, noise: float = 0.0, *, plan: bool = True) -> Player:
    """The sample greedy bot's idea in-process: keep a chain for its own train, shed the rest.

    Each play is scored by what it leaves: pips and tiles off the longest chain
    that its own train could take next (fewer is better); a double is welcome
    when a follow-up stays in hand; a play on its own train is welcome when its
    marker is up; once an opponent holds two tiles or fewer, shedding pips comes
    first. `noise` as for `heavy_player`. `plan=False` forgets the chain and
    counts every tile left in hand as stuck: a slightly weaker, still
    deterministic version (apart from ties), the kind of change an author tests.
    """
    rng = random.Random(f"greedy-player/{seed}")

    def value(state: State, move: Move, danger: bool) -> float:
        seat = state.to_move
        tile = move.tile
        assert tile is not None and move.train is not None
        rest = list(state.hands[seat])
        rest.remove(tile)
        train = state.trains[move.train]
        own_side = state.rules.team_of(seat)
        own_end = tile.other(train.end) if move.train == seat else state.trains[seat].end
        length, planned = _chain(tuple(rest), own_end) if plan else (0, 0)
        left = sum(t.pips for t in rest)
        stuck = left - planned + 2.0 * (len(rest) - length)
        score = -10.0 * left - stuck if danger else -stuck
        if tile.is_double and rest:
            score += 8.0 if any(tile.hi in t for t in rest) else -6.0
        if train.owner == own_side:
            if state.markers[seat]:
                score += 6.0
        else:
            score += 0.5
        return score + (0.01 if move.announce else 0.0)

    def choose(state: State) -> Move:
        moves = legal_moves(state)
        if noise and rng.random() < noise:
            return rng.choice(moves)
        plays = [m for m in moves if m.kind is MoveKind.PLAY]
        if not plays:
            return moves[0]
        seat = state.to_move
        side = state.rules.team_of(seat)
        danger = any(
            len(h) <= 2 for s, h in enumerate(state.hands) if state.rules.team_of(s) != side
        )
        scored = [(value(state, m, danger), i) for i, m in enumerate(plays)]
        top = max(v for v, _ in scored)
        best = [plays[i] for v, i in scored if v == top]
        return best[0] if len(best) == 1 else rng.choice(best)

    return choose


def play_game(rules: Rules, seed: int, players: Sequence[Player]) -> State:
    """Plays one whole game, seat s moving with `players[s]`; the final state."""
    state = new_game(rules, seed)
    while state.outcome is None:
        state = apply(state, players[state.to_move](state))
    return state


def play_recorded(
    rules: Rules, seed: int, players: Sequence[Player]
) -> tuple[State, list[tuple[State, State]]]:
    """Like `play_game`, also returning every (before, after) pair of states in order."""
    state = new_game(rules, seed)
    steps: list[tuple[State, State]] = []
    while state.outcome is None:
        after = apply(state, players[state.to_move](state))
        steps.append((state, after))
        state = after
    return state, steps
