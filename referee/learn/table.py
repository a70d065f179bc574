"""The engine side the three environments share: rules, rounds, rewards, moves by id.

- `table_rules` makes the `Rules` of a preset (with `+variant`s) for a table size
  and set; `round_limit` turns an environment's `rounds` argument into a count.
- `round_rewards` is every environment's reward: when a round ends, each seat gets
  the mean of the other seats' points in that round minus its own points, so the
  rewards of a round sum to zero and a seat gains by scoring less than the others.
- `legal_actions` lists the legal engine moves by their action id (`encode`).
- `shuffle_hidden` deals the tiles a seat cannot see anew: the no-leak tests use
  it, and so does the OpenSpiel resampler when the determinizer finds no world.
- `board_text` shows a whole position (every hand too) for `render_mode="ansi"`.
"""

from __future__ import annotations

import random

from ..game.wire import move_spec
from ..rules import (
    Move,
    RoundResult,
    Rules,
    State,
    Tile,
    legal_moves,
    preset,
    train_name,
)
from .encode import action_id


def table_rules(name: str, players: int, max_pip: int) -> Rules:
    """The rules of preset `name` (`+variant`s too), `players` seats, a double-`max_pip` set."""
    return preset(name, players=players, max_pip=max_pip)


def round_limit(rules: Rules, rounds: int | None) -> int:
    """How many rounds an episode plays: `rounds` (the first ones of the game), or the
    whole game when `rounds` is None or 0."""
    whole = len(rules.engines)
    if not rounds:
        return whole
    if not 1 <= rounds <= whole:
        raise ValueError(f"rounds={rounds}: these rules play 1 to {whole} rounds")
    return rounds


def round_rewards(result: RoundResult) -> list[float]:
    """Each seat's reward for a finished round: the mean of the others' points minus its own."""
    scores = result.scores
    n = len(scores)
    total = sum(scores)
    return [(total - p) / (n - 1) - p for p in scores]


def totals(results: tuple[RoundResult, ...], players: int) -> list[int]:
    """Each seat's points over the finished rounds."""
    return [sum(r.scores[s] for r in results) for s in range(players)]


def legal_actions(state: State) -> dict[int, Move]:
    """The legal moves of the seat to move, by action id (in ascending id order)."""
    rules = state.rules
    found = {action_id(rules, move_spec(m)): m for m in legal_moves(state)}
    return dict(sorted(found.items()))


def closed_round(before: State, after: State) -> RoundResult | None:
    """The result of the round that the move from `before` to `after` ended, if any.

    When a round ends with rounds left, `apply` deals the next one from the state's
    seed; an environment replaces that deal with its own (`deal_round`)."""
    if len(after.results) > len(before.results):
        return after.results[-1]
    return None


def shuffle_hidden(state: State, seat: int, rng: random.Random) -> State:
    """A copy of `state` in which the tiles `seat` cannot see are dealt anew: the other
    hands and the boneyard are shuffled among themselves, each hand keeping its size.

    A tile the seat to move has just drawn stays in its hand (the state stays one
    the engine can go on from); `seat`'s own hand, the table and every count are
    unchanged, so `view(state, seat)` is too.
    """
    hands = [list(h) for h in state.hands]
    keep: dict[int, Tile] = {}
    if state.drawn is not None and state.to_move != seat:
        keep[state.to_move] = state.drawn
        hands[state.to_move].remove(state.drawn)
    others = [s for s in range(len(hands)) if s != seat]
    pool = [t for s in others for t in hands[s]] + list(state.boneyard)
    rng.shuffle(pool)
    new_hands = list(state.hands)
    for s in others:
        size = len(hands[s])
        dealt = pool[:size]
        del pool[:size]
        if s in keep:
            dealt.append(keep[s])
        new_hands[s] = tuple(sorted(dealt))
    new = state.copy()
    new.hands = tuple(new_hands)
    new.boneyard = tuple(pool)
    return new


def _laid(train_tiles: tuple[Tile, ...], end: int) -> list[str]:
    """A train's tiles as they lie from the hub, each written near end first."""
    out = []
    far = end
    for t in reversed(train_tiles):
        near = t.other(far)
        out.append(f"{near}-{far}")
        far = near
    return out[::-1]


def board_text(state: State, results: tuple[RoundResult, ...], names: list[str]) -> str:
    """The whole position as text: trains, markers, every hand, the boneyard and totals."""
    rules = state.rules
    lines = [
        f"round {state.round_index + 1}, engine {state.engine}-{state.engine}, "
        f"{len(state.boneyard)} tiles in the boneyard; "
        f"{names[state.to_move]} to move ({state.ctx.value})"
    ]
    for i, train in enumerate(state.trains):
        tiles = " ".join(_laid(train.tiles, train.end)) or "(empty)"
        flags = []
        if i < rules.players and state.markers[i]:
            flags.append("marker up")
        if i in state.open_doubles:
            flags.append("open double")
        suffix = f"  [{', '.join(flags)}]" if flags else ""
        lines.append(f"  {train_name(state, i)}: {tiles}{suffix}")
    for s, hand in enumerate(state.hands):
        lines.append(f"  {names[s]} holds {' '.join(str(t) for t in hand) or 'nothing'}")
    points = totals(results, rules.players)
    lines.append("  points: " + ", ".join(f"{names[s]} {points[s]}" for s in range(rules.players)))
    return "\n".join(lines) + "\n"
