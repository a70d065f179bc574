"""Helpers shared by the scenario tests: playing a line of moves, checking views."""

from __future__ import annotations

import dataclasses

from referee.rules import PASS, State, Tile, apply, legal_moves, view


def run(state: State, *moves: object) -> State:
    for move in moves:
        state = apply(state, move)
    return state


def pass_to_round_end(state: State) -> State:
    """Every seat passes (it must: nothing plays) until the round is blocked."""
    index = state.round_index
    while state.round_index == index:
        assert legal_moves(state) == (PASS,)
        state = apply(state, PASS)
    return state


def tiles_in(value: object) -> set[Tile]:
    """Every Tile reachable from `value` through dataclass fields and containers."""
    if isinstance(value, Tile):
        return {value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found: set[Tile] = set()
        for field in dataclasses.fields(value):
            found |= tiles_in(getattr(value, field.name))
        return found
    if isinstance(value, tuple | list | set | frozenset):
        found = set()
        for item in value:
            found |= tiles_in(item)
        return found
    if isinstance(value, dict):
        return tiles_in(list(value.keys())) | tiles_in(list(value.values()))
    return set()


def assert_views_private(state: State) -> None:
    """Each seat's view holds its own hand and no tile of another hand or the boneyard."""
    assert not state.results  # past rounds' shown hands reuse this round's tiles
    for seat in range(state.rules.players):
        v = view(state, seat)
        assert v.seat == seat
        assert v.hand == state.hands[seat]
        hidden = set(state.boneyard)
        for other in range(state.rules.players):
            if other != seat:
                hidden |= set(state.hands[other])
        assert hidden, "the check needs something to hide"
        assert not tiles_in(v) & hidden
