"""Over the wire, a bot's tracker knows exactly what the seat knows in-process.

The protocol's messages for each seat (`referee.game.wire`, what the referee sends)
are fed to a `Tracker`; at every decision its knowledge must equal what the
engine's own states say the seat knows, for every rule set whose steps every seat
sees (in a fast first turn the other sides' builds are shown only when the phase
ends, and the search bot then plays the plan).

The engine's side is built as the game goes: `Knowledge.at_start` at each round's
first decision and `record` of each step, which is what `Knowledge.from_moves` does
over the moves so far. `from_moves` itself is called once a round, on the round's
whole list of moves, and must agree; calling it at every decision replayed each
round from its start for every seat, and cost a few seconds a rule set.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from protocol import messages as m
from referee.botkit.knowledge import Knowledge
from referee.botkit.tracker import Tracker
from referee.game import wire
from referee.rules import PRESETS, VARIANTS, apply, legal_moves, new_game, preset

RULE_SETS = [*PRESETS, *(f"standard+{v}" for v in VARIANTS if v != "fast-first-turn")]


def _start(rules_info: m.RulesInfo, seat: int, players: int, rounds: int) -> m.GameStart:
    return m.GameStart(
        game="game-1",
        seat=seat,
        players=players,
        names=[f"bot{i}" for i in range(players)],
        rules=rules_info,
        time=m.TimeControl(),
        seed=0,
        rounds=rounds,
    )


@pytest.mark.parametrize("name", RULE_SETS)
def test_the_tracker_knows_what_the_seat_knows(name: str) -> None:
    rules = preset(name)
    n = rules.players
    info = wire.rules_info(rules)
    trackers = [Tracker(_start(info, s, n, len(rules.engines))) for s in range(n)]
    rng = random.Random(name)
    state = new_game(rules, 11)
    for s, t in enumerate(trackers):
        t.take(wire.round_start(state, s))
    start, moves = state, []
    known = [Knowledge.at_start(state, s) for s in range(n)]
    compared = replayed = 0
    while state.outcome is None:
        for s, t in enumerate(trackers):
            expected = known[s]
            got = t.knowledge
            assert got is not None
            # The wire names the hand size the table resolves to; the engine alike.
            assert got.rules.to_dict() == expected.rules.to_dict()
            assert replace(got, rules=expected.rules) == expected, (name, s, len(moves))
            compared += 1
        move = rng.choice(legal_moves(state))
        after = apply(state, move)
        for event in wire.events(state, move, after):
            for s, t in enumerate(trackers):
                message = event.for_seat(s)
                if message is not None:
                    t.take(message)
        if after.round_index != state.round_index and after.outcome is None:
            # The round's last decision: from_moves over the whole round says the same.
            for s in range(n):
                assert Knowledge.from_moves(start, moves, s) == known[s], (name, s)
                replayed += 1
            for s, t in enumerate(trackers):
                t.take(wire.round_start(after, s))
            start, moves = after, []
            known = [Knowledge.at_start(after, s) for s in range(n)]
        else:
            for k in known:
                k.record(state, move, after)
            moves.append(move)
        state = after
    assert compared > 100
    assert replayed == n * (len(rules.engines) - 1)
    assert all(len(t.results) == len(rules.engines) for t in trackers)
