"""Property tests: the invariants of spec/RULES.md, checked after every move of random games.

Each example plays a game choosing uniformly among `legal_moves` with a
`random.Random` fed by a hypothesis-drawn seed, and after every decision checks
that tiles are conserved, trains are chains, the legal list is non-empty and
accepted by `apply`, plausible illegal moves raise `IllegalMoveError`, `apply`
leaves the old state alone, views leak nothing, and each round is scored from
the hands left. The same moves are then replayed to check determinism.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
import random
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules import (
    DRAW,
    END,
    MEXICAN,
    PASS,
    PRESETS,
    VARIANTS,
    Ctx,
    FirstTurn,
    IllegalMoveError,
    Move,
    MoveKind,
    RoundEnd,
    RoundResult,
    Rules,
    State,
    Tile,
    apply,
    binding,
    full_set,
    legal_moves,
    new_game,
    preset,
    view,
)

PRESET_NAMES = ("standard", "masters", "celko", "private-trains")
SOLO_VARIANTS = (
    "",
    "+branching-doubles",
    "+swan-drive",
    "+fast-first-turn",
    "+delayed-first-turn",
    "+announce",
    "+optional-rule",
)
TEAM_COUNTS = (4, 6, 8)
COMBOS = (
    "masters+teams+swan-drive",
    "celko+teams+branching-doubles",
    "standard+teams+fast-first-turn+swan-drive",
    "private-trains+teams+delayed-first-turn+announce",
    "celko+branching-doubles+swan-drive",
    "standard+branching-doubles+swan-drive+delayed-first-turn+announce",
    "private-trains+fast-first-turn+branching-doubles",
)
# Options no preset sets, played on top of a preset (4 players, double-12).
EXTRAS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("standard", {"must_play": False}),
    ("standard+swan-drive", {"must_play": False}),
    ("celko+delayed-first-turn", {"must_play": False}),
    ("standard", {"doubles_bind": False}),
    ("standard", {"satisfy_order": "reverse", "any_play_clears_marker": True}),
    ("standard", {"engine_source": "center"}),
    ("standard", {"first_player": "highest-single"}),
    ("standard", {"draw_until_playable": True}),
    ("masters", {"mexican_train": False}),
    ("standard+branching-doubles", {"doubles_bind": False, "must_play": False}),
    ("celko", {"announce_penalty": 5, "double_blank_score": 0}),
    ("standard+swan-drive", {"unfinished_own_double_marks": False}),
    ("celko+teams+branching-doubles", {"unfinished_own_double_marks": True}),
    ("private-trains", {"draw_until_playable": True, "must_play": False}),
    ("standard", {"follow_up": "on-double"}),
    ("standard", {"own_double_follow_up": "optional"}),
    ("standard", {"bind_duration": "next-turn"}),
    ("standard+teams", {"own_double_follow_up": "optional", "bind_duration": "next-turn"}),
    ("masters", {"follow_up": "on-double", "own_double_follow_up": "optional"}),
    ("celko+swan-drive", {"follow_up": "on-double", "bind_duration": "next-turn"}),
    ("standard+fast-first-turn", {"follow_up": "on-double", "own_double_follow_up": "optional"}),
    ("private-trains+branching-doubles", {"satisfy_order": "reverse"}),
    ("standard+teams", {"satisfy_order": "last"}),
    ("masters+swan-drive", {"satisfy_order": "last", "bind_duration": "next-turn"}),
)
# Player counts each set's standard hand table covers (spec/RULES.md, "Hand sizes").
SET_PLAYERS = {6: range(2, 5), 9: range(2, 9), 12: range(2, 9), 15: range(2, 13), 18: range(2, 17)}


def _double12_matrix() -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for name in PRESET_NAMES:
        for variant in SOLO_VARIANTS:
            out.extend((name + variant, n) for n in SET_PLAYERS[12])
        out.extend((name + "+teams", n) for n in TEAM_COUNTS)
    for combo in COMBOS:
        counts = TEAM_COUNTS if "+teams" in combo else (2, 5, 8)
        out.extend((combo, n) for n in counts)
    return out


DOUBLE12 = _double12_matrix()

KINDS = {MoveKind.DRAW: 0, MoveKind.PASS: 1, MoveKind.END: 2}
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
QUICK = settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- the checks


def _snapshot(state: State) -> tuple[object, ...]:
    return tuple(getattr(state, name) for name in State.__slots__)


def _value(hand: tuple[Tile, ...], double_blank: int) -> int:
    return sum(double_blank if (t.hi, t.lo) == (0, 0) else t.hi + t.lo for t in hand)


_ATOMS = (int, str, float, enum.Enum, type(None))
_PLAIN = frozenset((int, bool, str, float, type(None)))
_FIELDS: dict[type, tuple[str, ...]] = {}


def _tiles_in(value: object, out: list[Tile]) -> None:
    """Collect every tile anywhere inside `value`: containers and dataclasses walked."""
    if type(value) is Tile:
        out.append(value)
    elif isinstance(value, _ATOMS):
        return
    elif isinstance(value, (tuple, list, set, frozenset)):
        kinds = set(map(type, value))
        if kinds <= _PLAIN:
            return
        if kinds == {Tile}:
            out.extend(value)
            return
        for item in value:
            kind = type(item)
            if kind is Tile:
                out.append(item)
            elif kind not in _PLAIN:
                _tiles_in(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _tiles_in(key, out)
            _tiles_in(item, out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS.get(type(value))
        if names is None:
            names = _FIELDS[type(value)] = tuple(f.name for f in dataclasses.fields(value))
        for name in names:
            item = getattr(value, name)
            kind = type(item)
            if kind is Tile:
                out.append(item)
            elif kind not in _PLAIN:
                _tiles_in(item, out)
    else:
        raise AssertionError(f"the view holds a {type(value).__name__} the walk does not know")


class Checker:
    """The invariants of one playthrough; remembers where each branch started."""

    def __init__(self, rules: Rules, rng: random.Random) -> None:
        self.rules = rules
        self.rng = rng
        self.full = full_set(rules.max_pip)
        self.branch_start: dict[tuple[int, int], int] = {}
        in_rules: list[Tile] = []
        _tiles_in(rules, in_rules)
        assert not in_rules

    def state(self, state: State) -> None:
        """Everything that must hold of any state, the game over or not."""
        self.tiles(state)
        self.trains(state)
        if state.outcome is None:
            self.moves(state)
        else:
            assert legal_moves(state) == ()
        self.views(state)

    def tiles(self, state: State) -> None:
        rules = self.rules
        assert 0 <= state.round_index < len(rules.engines)
        assert state.engine == rules.engines[state.round_index]
        placed: list[Tile] = [Tile(state.engine, state.engine)]  # the engine is in the hub
        for hand in state.hands:
            placed.extend(hand)
        placed.extend(state.boneyard)
        for train in state.trains:
            placed.extend(train.tiles)
        if sorted(placed) != list(self.full):
            counts = Counter(placed)
            missing = [t for t in self.full if counts[t] == 0]
            twice = [t for t, k in counts.items() if k > 1]
            foreign = [t for t in counts if t not in self.full]
            raise AssertionError(
                f"tiles not conserved: missing {missing}, twice {twice}, {foreign}"
            )
        # The table count behind dead doubles: tiles on the table carrying each pip.
        count = [0] * (rules.max_pip + 1)
        count[state.engine] += 1
        for train in state.trains:
            for t in train.tiles:
                count[t.hi] += 1
                if not t.is_double:
                    count[t.lo] += 1
        assert tuple(count) == state.table_count

    def trains(self, state: State) -> None:
        rules = self.rules
        n = rules.players
        trains = state.trains
        hub = n + (1 if rules.mexican_train else 0)
        assert len(trains) >= hub
        for i, train in enumerate(trains):
            if i < n:
                assert (train.owner, train.parent) == (rules.team_of(i), -1), (i, train)
                start = state.engine
            elif i == n and rules.mexican_train:
                assert (train.owner, train.parent) == (MEXICAN, -1), (i, train)
                start = state.engine
            else:
                assert rules.branching_doubles, f"train {i} without branching doubles"
                assert 0 <= train.parent < i, (i, train)
                parent = trains[train.parent]
                assert train.owner == parent.owner, (i, train, parent)
                key = (state.round_index, i)
                if key not in self.branch_start:
                    assert train.tiles == (), f"branch {i} appeared with tiles {train.tiles}"
                    self.branch_start[key] = train.end
                start = self.branch_start[key]
                double = Tile(start, start)
                assert double in parent.tiles[:-1], f"branch {i} from no satisfied {double}"
            end = start
            for t in train.tiles:
                assert end in (t.hi, t.lo), f"train {i}: {t} does not match {end}: {train}"
                end = t.other(end)
            assert train.end == end, (i, train)
        branches = len(trains) - hub
        assert branches % 2 == 0, "branches open in pairs"
        ending_double = {i for i, t in enumerate(trains) if t.tiles and t.tiles[-1].is_double}
        assert len(set(state.open_doubles)) == len(state.open_doubles)
        assert set(state.open_doubles) == ending_double

    def moves(self, state: State) -> None:
        legal = legal_moves(state)
        seat = state.to_move
        assert legal, f"no legal move for seat {seat} in {state!r}"
        assert len(set(legal)) == len(legal), f"duplicate moves in {legal}"
        assert 0 <= seat < self.rules.players
        hand = state.hands[seat]
        assert hand, f"seat {seat} is to move with no tiles"
        if state.drawn is not None:
            assert state.drawn in hand
        delayed_start = self.rules.first_turn is FirstTurn.DELAYED and not state.trains[seat].tiles
        # The documented order: plays by train then tile (announced first), then the rest.
        order = [
            (0, m.train, m.tile, not m.announce) if m.kind is MoveKind.PLAY else (1, KINDS[m.kind])
            for m in legal
        ]
        assert order == sorted(order), f"legal moves out of order: {legal}"
        for m in legal:
            if m.kind is MoveKind.PLAY:
                assert m.tile is not None and m.train is not None
                assert m.tile in hand, m
                # After a draw only the drawn tile plays, except that a delayed first
                # train may still be started with any tile (spec: "begin ... or pass").
                assert (
                    state.drawn is None
                    or m.tile == state.drawn
                    or (delayed_start and m.train == seat)
                ), m
                assert state.trains[m.train].end in (m.tile.hi, m.tile.lo), m
            else:
                assert m == Move(m.kind), m
        if MoveKind.DRAW in {m.kind for m in legal}:
            assert state.boneyard
        # `binding` names live open doubles, only at the start of a turn, and confines
        # every play to them.
        bound = binding(state)
        if bound:
            full = self.rules.max_pip + 1
            live = {i for i in state.open_doubles if state.table_count[state.trains[i].end] < full}
            assert state.ctx is Ctx.START and set(bound) <= live, (bound, state.open_doubles)
            assert all(m.train in bound for m in legal if m.kind is MoveKind.PLAY), legal
        before = _snapshot(state)
        for m in legal:
            after = apply(state, m)
            assert isinstance(after, State) and after is not state
        self.illegal(state, legal)
        assert _snapshot(state) == before, "apply changed the state it was given"

    def illegal(self, state: State, legal: tuple[Move, ...]) -> None:
        rng = self.rng
        offered = set(legal)
        hand = state.hands[state.to_move]
        probes: list[Move] = [DRAW, PASS, END]
        for _ in range(4):
            t = rng.choice(hand) if rng.random() < 0.7 else rng.choice(self.full)
            train = rng.randrange(-1, len(state.trains) + 1)  # -1 is MEXICAN, a frequent slip
            probes.append(Move(MoveKind.PLAY, t, train, rng.random() < 0.25))
        plays = [m for m in legal if m.kind is MoveKind.PLAY]
        if plays:
            m = rng.choice(plays)
            probes.append(m._replace(announce=not m.announce))
        for m in probes:
            if m in offered:
                continue
            try:
                apply(state, m)
            except IllegalMoveError:
                continue
            raise AssertionError(f"apply accepted {m}, which legal_moves does not offer")

    def views(self, state: State) -> None:
        n = self.rules.players
        # The seat to move (it may hold a drawn tile) and one other seat, drawn at random.
        seats = {state.to_move, self.rng.randrange(n)}
        for seat in sorted(seats):
            v = view(state, seat)
            assert v.hand == state.hands[seat]
            assert v.binding == (binding(state) if seat == state.to_move else ())
            assert set(v.binding) <= set(v.open_doubles) <= set(state.open_doubles)
            assert v.results == state.results  # hands of past rounds are public
            hidden: set[Tile] = set(state.boneyard)
            for other in range(n):
                if other != seat:
                    hidden.update(state.hands[other])
            seen: list[Tile] = []
            for field in dataclasses.fields(v):
                if field.name == "rules":
                    assert v.rules is self.rules  # walked once, in __init__
                elif field.name != "results":
                    _tiles_in(getattr(v, field.name), seen)
            leak = hidden.intersection(seen)
            assert not leak, f"seat {seat} sees {sorted(leak)} of other hands or the boneyard"

    def round_end(self, before: State, move: Move, after: State) -> None:
        """`move` in `before` ended a round: check its result against the hands left."""
        rules = self.rules
        n = rules.players
        assert len(after.results) == len(before.results) + 1
        assert after.results[:-1] == before.results
        result: RoundResult = after.results[-1]
        assert (result.number, result.engine, result.starter) == (
            before.round_index,
            before.engine,
            before.starter,
        )
        mover = before.to_move
        expected = [list(h) for h in before.hands]
        if move.kind is MoveKind.PLAY:
            assert move.tile is not None
            expected[mover].remove(move.tile)
        for seat in range(n):
            hand = list(result.hands[seat])
            if seat == mover and sorted(hand) != sorted(expected[seat]):
                # Only a one-tile announcement penalty can add tiles as a turn closes.
                take = min(rules.announce_penalty, len(before.boneyard))
                assert rules.announce_one_tile and take, (move, hand, expected[seat])
                expected[seat].extend(before.boneyard[len(before.boneyard) - take :])
            assert sorted(hand) == sorted(expected[seat]), (seat, hand, expected[seat])
        values = tuple(_value(h, rules.double_blank_score) for h in result.hands)
        assert result.values == values
        out = tuple(s for s in range(n) if not result.hands[s])
        assert result.out == out
        if result.end is RoundEnd.BLOCKED:
            assert not out and not before.boneyard and move.kind is MoveKind.PASS
        else:
            assert out
        if rules.teams:
            scores = []
            for seat in range(n):
                partners = [s for s in range(n) if rules.team_of(s) == rules.team_of(seat)]
                assert partners == sorted({seat, (seat + n // 2) % n})  # partners sit opposite
                gone = any(s in out for s in partners)
                scores.append(0 if gone else sum(values[s] for s in partners))
            assert result.scores == tuple(scores)
        else:
            assert result.scores == values
        if after.outcome is None:
            assert after.round_index == before.round_index + 1
            assert after.engine == rules.engines[after.round_index]

    def outcome(self, state: State) -> None:
        rules = self.rules
        n = rules.players
        outcome = state.outcome
        assert outcome is not None
        assert len(state.results) == len(rules.engines)
        assert [r.engine for r in state.results] == list(rules.engines)
        rounds = tuple(r.scores for r in state.results)
        assert outcome.rounds == rounds
        totals = tuple(sum(r[s] for r in rounds) for s in range(n))
        assert outcome.scores == totals

        def key(seat: int) -> tuple[int, int, int]:
            mine = [r[seat] for r in rounds]
            nonzero = [x for x in mine if x]
            return (sum(mine), -mine.count(0), min(nonzero) if nonzero else 0)

        sides = {rules.team_of(s): key(s) for s in range(n)}
        for seat in range(n):
            better = sum(1 for k in sides.values() if k < key(seat))
            assert outcome.ranks[seat] == 1 + better, (seat, outcome)


# ---------------------------------------------------------------- a playthrough


def _fingerprint(state: State) -> tuple[object, ...]:
    return (
        state.round_index,
        state.engine,
        state.starter,
        state.to_move,
        state.ctx,
        state.hands,
        state.boneyard,
        state.trains,
        state.markers,
        state.open_doubles,
        state.drawn,
        state.results,
        state.outcome,
        legal_moves(state),
    )


def _decision_bound(rules: Rules) -> int:
    # Per round every tile is played and drawn at most once, and between two of those
    # at most a round of passes or ENDs; this is several times that.
    return len(rules.engines) * 4 * rules.tile_count * (rules.players + 3)


def play_and_check(rules: Rules, seed: int, chooser: int) -> State:
    """Play a random game under full checks, then replay it for determinism."""
    rng = random.Random(chooser)
    checker = Checker(rules, random.Random(f"probe/{chooser}"))
    state = new_game(rules, seed)
    checker.state(state)
    moves: list[Move] = []
    prints = [_fingerprint(state)]
    bound = _decision_bound(rules)
    while state.outcome is None:
        assert len(moves) < bound, f"no end after {bound} decisions (seed {seed})"
        move = rng.choice(legal_moves(state))
        after = apply(state, move)
        moves.append(move)
        if len(after.results) != len(state.results):
            checker.round_end(state, move, after)
        checker.state(after)
        prints.append(_fingerprint(after))
        state = after
    checker.outcome(state)

    replay = new_game(rules, seed)
    assert _fingerprint(replay) == prints[0]
    for step, move in enumerate(moves, 1):
        replay = apply(replay, move)
        assert _fingerprint(replay) == prints[step], f"replay differs at decision {step}"
    return state


# ---------------------------------------------------------------- the tests


def test_matrix_covers_every_preset_variant_and_player_count() -> None:
    assert set(PRESET_NAMES) == set(PRESETS)
    named = {v.lstrip("+") for v in SOLO_VARIANTS if v} | {"teams"}
    assert named == set(VARIANTS)
    for name in PRESET_NAMES:
        for variant in SOLO_VARIANTS:
            counts = {n for rules, n in DOUBLE12 if rules == name + variant}
            assert counts == set(range(2, 9)), (name, variant)
        assert {n for rules, n in DOUBLE12 if rules == name + "+teams"} == set(TEAM_COUNTS)


@pytest.mark.parametrize(("name", "players"), DOUBLE12, ids=[f"{r}-p{n}" for r, n in DOUBLE12])
@QUICK
@given(seed=SEEDS, chooser=SEEDS)
def test_single_round_double12(name: str, players: int, seed: int, chooser: int) -> None:
    play_and_check(preset(name, players=players, rounds="single"), seed, chooser)


@pytest.mark.parametrize(("name", "options"), EXTRAS, ids=[f"{n}-{'-'.join(o)}" for n, o in EXTRAS])
@SOME
@given(seed=SEEDS, chooser=SEEDS)
def test_single_round_other_options(
    name: str, options: dict[str, Any], seed: int, chooser: int
) -> None:
    play_and_check(preset(name, rounds="single", **options), seed, chooser)


@st.composite
def _other_set(draw: st.DrawFn, max_pip: int, name: str) -> Rules:
    counts = list(SET_PLAYERS[max_pip])
    variants = [*SOLO_VARIANTS, "+teams"]
    if name == "private-trains" and max_pip == 6:
        counts.remove(4)  # 4 hands of 7 leave no engine: see test_options
        variants.remove("+teams")  # which leaves no even count of 4 or more
    variant = draw(st.sampled_from(variants))
    if variant == "+teams":
        counts = [n for n in counts if n >= 4 and n % 2 == 0]
    players = draw(st.sampled_from(counts))
    return preset(name + variant, max_pip=max_pip, players=players, rounds="single")


@pytest.mark.parametrize("name", PRESET_NAMES)
@pytest.mark.parametrize("max_pip", [6, 9, 15, 18])
@SOME
@given(data=st.data(), seed=SEEDS, chooser=SEEDS)
def test_single_round_other_sets(
    max_pip: int, name: str, data: st.DataObject, seed: int, chooser: int
) -> None:
    rules = data.draw(_other_set(max_pip, name), label="rules")
    play_and_check(rules, seed, chooser)


WHOLE = (*PRESET_NAMES, "standard+teams+branching-doubles+swan-drive")


@pytest.mark.parametrize("name", WHOLE)
@QUICK
@given(seed=SEEDS, chooser=SEEDS)
def test_whole_game_double12(name: str, seed: int, chooser: int) -> None:
    rules = preset(name)
    assert len(rules.engines) == 13
    play_and_check(rules, seed, chooser)


@pytest.mark.parametrize("name", WHOLE)
@pytest.mark.parametrize("rounds", ["descending", "ascending"])
@SOME
@given(seed=SEEDS, chooser=SEEDS)
def test_whole_game_double6(name: str, rounds: str, seed: int, chooser: int) -> None:
    players = 3 if name.startswith("private-trains") else 4  # 4 hands of 7 leave no engine
    rules = preset(name, max_pip=6, players=players, rounds=rounds)
    assert len(rules.engines) == 7
    play_and_check(rules, seed, chooser)


# ---------------------------------------------------------------- determinism


_DIGEST_SCRIPT = """
import hashlib, random, sys
from referee.rules import apply, legal_moves, new_game, preset
rules = preset(sys.argv[1])
state = new_game(rules, int(sys.argv[2]))
rng = random.Random(7)
while state.outcome is None:
    state = apply(state, rng.choice(legal_moves(state)))
print(hashlib.sha256(repr((state.results, state.outcome)).encode()).hexdigest())
"""


def _digest(name: str, seed: int) -> str:
    state = new_game(preset(name), seed)
    rng = random.Random(7)
    while state.outcome is None:
        state = apply(state, rng.choice(legal_moves(state)))
    return hashlib.sha256(repr((state.results, state.outcome)).encode()).hexdigest()


@pytest.mark.parametrize("name", ["celko+branching-doubles+swan-drive"])
def test_same_game_in_another_interpreter(name: str) -> None:
    """No hash-order or process state leaks in: another interpreter plays the same game."""
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", _DIGEST_SCRIPT, name, "2024"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert out.stdout.strip() == _digest(name, 2024)


@QUICK
@given(seed=SEEDS)
def test_different_seeds_deal_differently(seed: int) -> None:
    rules = preset("standard")
    assert new_game(rules, seed).hands != new_game(rules, seed + 1).hands
