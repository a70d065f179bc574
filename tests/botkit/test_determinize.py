"""The determinizer: every guessed world shows the seat what the real game shows it,
holds no hidden fact of the real game, and respects what passes and draws revealed.

Property tests over many seeds and every preset; scenario tests with hand-dealt
positions for the inferences (a pass rules tiles out; a tile drawn after the pass is
free of it). Where a test looks at many decisions of one game, the seat's knowledge
is the one built as the game goes (`decisions(..., known=True)`, equal to
`Knowledge.from_moves` at every decision), not replayed from the round's start at each.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.botkit.determinize import Determinizer, determinize, is_consistent
from referee.botkit.knowledge import Knowledge
from referee.rules import (
    DRAW,
    PASS,
    PRESETS,
    VARIANTS,
    State,
    Tile,
    apply,
    legal_moves,
    position,
    preset,
)

from ._games import decisions

RULE_SETS = [*PRESETS, *(f"standard+{v}" for v in VARIANTS if v != "fast-first-turn")]


def _hidden(state: State, seat: int) -> Counter[Tile]:
    """The tiles `seat` cannot see: the other hands and the boneyard."""
    tiles = Counter(state.boneyard)
    for s, hand in enumerate(state.hands):
        if s != seat:
            tiles.update(hand)
    return tiles


@pytest.mark.parametrize("name", RULE_SETS)
def test_every_world_gives_the_seat_the_same_view_and_legal_moves(name: str) -> None:
    rules = preset(name)
    made = 0
    for seed in range(2):
        rng = random.Random(seed)
        for i, point in enumerate(decisions(rules, seed, known=True)):
            if i % 7:
                continue
            seat = point.state.to_move
            assert point.known is not None
            det = Determinizer(point.known[seat])
            for _ in range(2):
                world = det.world(rng, mover=seat)
                if world is None:
                    continue
                made += 1
                assert is_consistent(world, point.state, seat), (name, seed, i)
                # The hidden tiles are the same tiles, spread over the same places.
                assert _hidden(world, seat) == _hidden(point.state, seat)
                assert [len(h) for h in world.hands] == [len(h) for h in point.state.hands]
    assert made > 50, f"{name}: only {made} worlds were made"


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6), pick=st.integers(0, 10**6))
def test_strict_worlds_are_histories_that_could_have_happened(
    seed: int, players: int, pick: int
) -> None:
    """With `strict`, every move of the round is legal in the guessed world: each
    pass and draw of another seat happened while it held nothing it could play."""
    rules = preset("standard", players=players)
    points = list(decisions(rules, seed))
    point = points[pick % len(points)]
    seat = point.state.to_move
    k = Knowledge.from_moves(point.start, point.moves, seat)
    world = determinize(k, random.Random(pick), strict=True, mover=seat)
    assert world is not None
    assert is_consistent(world, point.state, seat)


def test_knowledge_holds_no_hidden_tile_and_worlds_come_from_it_alone() -> None:
    """Every tile the knowledge names is the seat's own (dealt or drawn) or on the
    table; another seat's draw names no tile. So the worlds, which are made from the
    knowledge and the random numbers alone, cannot carry a hidden fact: the knowledge
    `from_moves` replays and the one built as the game went give the same world."""
    rules = preset("standard", players=3)
    checked = 0
    for point in decisions(rules, 5, known=True):
        if point.state.to_move != 0 or len(point.moves) < 8:
            continue
        k = Knowledge.from_moves(point.start, point.moves, 0)
        table = {t for train in point.state.trains for t in train.tiles}
        named = set(k.hand)
        for step in k.steps:
            if step.seat != 0:
                assert step.drawn is None
            elif step.drawn is not None:
                named.add(step.drawn)
            if step.move is not None and step.move.tile is not None:
                named.add(step.move.tile)
        own = set(point.state.hands[0])
        assert named <= own | table | set(k.hand)
        assert point.known is not None
        a = Determinizer(k).world(random.Random(1), mover=0)
        b = Determinizer(point.known[0]).world(random.Random(1), mover=0)
        assert a is not None and b is not None
        assert (a.hands, a.boneyard) == (b.hands, b.boneyard)
        checked += 1
    assert checked > 10


def test_a_pass_rules_out_every_tile_the_seat_could_have_played() -> None:
    """Seat 1 drew and passed when only the engine's 6s were open to it: no world gives
    it a 6 among the tiles it was dealt, nor as the tile it drew (that was no play
    either); seat 0, which knows this, is to move."""
    rules = preset("standard", players=2, max_pip=6)
    hands = [
        [(6, 5), (5, 1), (1, 1), (2, 0), (4, 3)],
        [(3, 3), (3, 2), (2, 2), (1, 0), (4, 4)],
    ]
    start = position(rules, hands, to_move=1)
    assert start.engine == 6
    state = apply(start, DRAW)
    assert legal_moves(state) == (PASS,)  # the drawn tile does not play either
    state = apply(state, PASS)
    k = Knowledge.from_moves(start, [DRAW, PASS], 0)
    det = Determinizer(k)
    rng = random.Random(3)
    sixes = Counter[Tile]()
    for _ in range(200):
        world = det.world(rng, strict=True, mover=0)
        assert world is not None
        assert is_consistent(world, state, 0)
        sixes.update(t for t in world.hands[1] if 6 in t)
    assert not sixes
    # Without the pass, the same seat's hand may well hold sixes.
    free = Knowledge.from_moves(start, [], 1)
    assert free.steps == []
    unconstrained = Counter[Tile]()
    other = Knowledge.from_moves(start, [], 0)
    for _ in range(50):
        world = Determinizer(other).world(rng, strict=True)
        assert world is not None
        unconstrained.update(t for t in world.hands[1] if 6 in t)
    assert unconstrained


def test_a_fast_first_turn_is_not_guessed() -> None:
    """In a fast first turn the other sides' builds are shown only when the phase
    ends, so the seat does not know the order of the round's steps: no world."""
    rules = preset("standard+fast-first-turn")
    for point in decisions(rules, 3):
        seat = point.state.to_move
        k = Knowledge.from_moves(point.start, point.moves, seat)
        assert determinize(k, random.Random(0), mover=seat) is None
        break
