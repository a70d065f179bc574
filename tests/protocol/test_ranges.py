"""Every integer on the wire has a range (spec/PROTOCOL.md, "Integer ranges").

The ranges are the Structs' `Meta` bounds: the schema states them as `minimum` and
`maximum`, and decoding checks them, so a bot's number out of range is `malformed`.
Here: every integer of the schema has both bounds; a bot's number just past a bound
is refused with a message naming the number and the bound; the bounds are the ones
the rules allow; and what the referee sends stays within them, in random games of
many rules and seeds: the engine's messages, then whole games over the referee's
own `Game` (bot seeds, request ids and clocks at their largest included).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import MalformedMessageError, decode_from_bot, decode_to_bot, encode
from protocol import messages as m
from protocol.schema import json_schema
from referee.bots.connection import Connection
from referee.game import wire
from referee.game.match import Game, Seat, bot_seed
from referee.rules import Rules, RulesError, apply, legal_moves, new_game, preset
from referee.rules.options import DOUBLE_BLANK_MAX, PENALTY_MAX, SETS
from referee.rules.tiles import full_set, set_size

# ---------------------------------------------------------------- the schema


def integers(node: Any, where: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every integer schema in `node`, with where it is."""
    if isinstance(node, dict):
        if node.get("type") == "integer":
            yield where, node
        for key, value in node.items():
            yield from integers(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from integers(value, f"{where}/{i}")


def test_every_integer_in_the_schema_has_a_range() -> None:
    found = list(integers(json_schema()))
    assert len(found) > 50
    unbounded = [where for where, node in found if not {"minimum", "maximum"} <= set(node)]
    assert not unbounded, unbounded


def test_a_turn_request_lists_one_to_legal_max_moves_in_the_schema() -> None:
    legal = json_schema()["$defs"]["Turn"]["properties"]["legal"]
    assert (legal["minItems"], legal["maxItems"]) == (1, m.LEGAL_MAX)


# ---------------------------------------------------------------- what a bot sends

MOVE = '{"type":"move","id":%s,"index":0}'
INDEX = '{"type":"move","id":1,"index":%s}'
TILE_HIGH = '{"type":"move","id":1,"action":"play","tile":[%s,0],"train":0}'
TILE_LOW = '{"type":"move","id":1,"action":"play","tile":[0,%s],"train":0}'
TRAIN = '{"type":"move","id":1,"action":"play","tile":[1,0],"train":%s}'
PONG = '{"type":"pong","nonce":%s}'
READY = '{"type":"ready","name":"a","protocol":%s}'
LOGIN = '{"type":"login","name":"a","token":"t","protocol":%s}'

# Every integer field of every message a bot sends: (line, path, lowest, highest).
FROM_BOT = [
    (MOVE, "$.id", 1, m.COUNTER_MAX),
    (INDEX, "$.index", 0, m.LEGAL_MAX - 1),
    (TILE_HIGH, "$.tile[0]", 0, m.PIP_MAX),
    (TILE_LOW, "$.tile[1]", 0, m.PIP_MAX),
    (TRAIN, "$.train", 0, m.TRAINS_MAX - 1),
    (PONG, "$.nonce", 0, m.COUNTER_MAX),
    (READY, "$.protocol", 1, m.INT32_MAX),
    (LOGIN, "$.protocol", 1, m.INT32_MAX),
]


@pytest.mark.parametrize(("line", "path", "low", "high"), FROM_BOT)
def test_a_bots_number_past_its_range_is_malformed_and_said(
    line: str, path: str, low: int, high: int
) -> None:
    decode_from_bot(line % low)
    decode_from_bot(line % high)
    for value, bound in ((low - 1, f"at least {low}"), (high + 1, f"at most {high}")):
        with pytest.raises(MalformedMessageError) as caught:
            decode_from_bot(line % value)
        assert str(caught.value) == f"{value} is out of range at `{path}`: it must be {bound}"
        assert caught.value.path == path


def test_a_number_too_long_for_any_integer_type_is_still_said() -> None:
    with pytest.raises(MalformedMessageError, match=r"^9{30} is out of range at `\$\.id`"):
        decode_from_bot(MOVE % ("9" * 30))


def test_a_range_error_beside_deep_nesting_falls_back_to_msgspecs_words() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(MalformedMessageError, match=r"^Expected `int` >= 1 - at `\$\.id`$"):
        decode_from_bot('{"type":"move","id":0,"x":' + deep + "}")


# ---------------------------------------------------------------- the bounds are the rules'


def test_the_bounds_are_what_the_rules_allow() -> None:
    assert max(SETS) == m.PIP_MAX
    assert set_size(m.PIP_MAX) == m.SET_TILES_MAX
    assert sum(t.hi + t.lo for t in full_set(m.PIP_MAX)) == m.SET_PIPS_MAX
    assert (m.DOUBLE_BLANK_MAX, m.PENALTY_MAX) == (DOUBLE_BLANK_MAX, PENALTY_MAX)
    assert len(Rules(max_pip=m.PIP_MAX, rounds=preset().rounds).engines) == m.ROUNDS_MAX
    most_seats = Rules(max_pip=m.PIP_MAX, players=m.SEATS_MAX, hand_size=1)
    biggest_deal = Rules(max_pip=m.PIP_MAX, players=2, hand_size=m.DEALT_MAX)
    assert (most_seats.players, biggest_deal.hand) == (m.SEATS_MAX, m.DEALT_MAX)
    with pytest.raises(RulesError):
        Rules(max_pip=m.PIP_MAX, players=m.SEATS_MAX + 1, hand_size=1)
    with pytest.raises(RulesError):
        Rules(max_pip=m.PIP_MAX, players=2, hand_size=m.DEALT_MAX + 1)
    centre = preset("private-trains", max_pip=m.PIP_MAX, players=2, hand_size=1)
    assert len(new_game(centre, 0).boneyard) == m.BONEYARD_MAX
    for name, top in (("double_blank_score", DOUBLE_BLANK_MAX), ("announce_penalty", PENALTY_MAX)):
        Rules(**{name: top})
        with pytest.raises(RulesError, match=f"{name}={top + 1}: must be at most {top}"):
            Rules(**{name: top + 1})


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**128 - 1),
    seat=st.integers(0, m.SEATS_MAX - 1),
    key=st.binary(min_size=16, max_size=16),
)
def test_a_bot_seed_is_a_uint32(seed: int, seat: int, key: bytes) -> None:
    assert 0 <= bot_seed(seed, seat, key) <= m.UINT32_MAX


def test_a_bot_seed_overflows_a_32_bit_signed_int_about_half_the_time() -> None:
    key = bytes(16)
    seeds = [bot_seed(game, seat, key) for game in range(50) for seat in range(4)]
    above = sum(s > m.INT32_MAX for s in seeds)
    assert 0.35 < above / len(seeds) < 0.65


# ---------------------------------------------------------------- what the referee sends

# From the defaults to the extremes: the largest set, the most seats, the biggest hands,
# the most trains (branches), the largest scores and penalties.
RULES = [
    preset("standard"),
    preset("masters", players=8),
    preset("celko", players=5, announce_penalty=PENALTY_MAX, double_blank_score=DOUBLE_BLANK_MAX),
    preset("private-trains", players=4),
    preset(
        "standard+teams+branching-doubles+swan-drive",
        players=6,
        max_pip=18,
        double_blank_score=DOUBLE_BLANK_MAX,
    ),
    preset("standard+fast-first-turn+branching-doubles", max_pip=18, players=40, hand_size=4),
    preset(
        "standard+delayed-first-turn+announce",
        max_pip=18,
        players=2,
        hand_size=m.DEALT_MAX,
        rounds="single",
        announce_penalty=PENALTY_MAX,
    ),
]


def label(rules: Rules) -> str:
    return f"{rules.players}p-d{rules.max_pip}-hand{rules.hand}"


def engine_messages(rules: Rules, seed: int) -> Iterator[m.Message]:
    """What `referee.game.wire` builds for the seats in a game of random legal moves: each
    round's start for every seat, every request, every event (both forms)."""
    rng = random.Random(seed)
    state = new_game(rules, seed)
    request = 0
    for seat in range(rules.players):
        yield wire.round_start(state, seat)
    while state.outcome is None:
        request += 1
        yield wire.turn_request(state, request, m.MS_MAX, m.MS_MAX)
        move = rng.choice(legal_moves(state))
        before, state = state, apply(state, move)
        for event in wire.events(before, move, state):
            yield event.public
            if event.private is not None:
                yield event.private
        if state.round_index != before.round_index and state.outcome is None:
            for seat in range(rules.players):
                yield wire.round_start(state, seat)


@pytest.mark.parametrize("rules", RULES, ids=label)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**128 - 1))
def test_every_message_of_a_random_game_is_in_range(rules: Rules, seed: int) -> None:
    kinds = set()
    for message in engine_messages(rules, seed):
        kinds.add(type(message))
        assert decode_to_bot(encode(message)) == message  # decoding checks every range
    assert {m.RoundStart, m.Turn, m.RoundEnd} <= kinds


async def scripted(stream: trio.testing.StapledStream, seed: int, lines: list[bytes]) -> None:
    """A bot on an in-memory stream: keeps every line, answers each request with a
    random legal index, until `bye` or the end of the stream."""
    rng = random.Random(seed)
    buffer = b""
    while data := await stream.receive_some():
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            lines.append(line)
            message = json.loads(line)
            if message["type"] == "turn":
                index = rng.randrange(len(message["legal"]))
                reply = {"type": "move", "id": message["id"], "index": index}
                await stream.send_all(json.dumps(reply).encode() + b"\n")


# Every clock at the largest the wire carries: the increment would grow the bank past it.
LONGEST = m.TimeControl(
    startup_ms=m.MS_MAX,
    move_ms=m.MS_MAX,
    bank_ms=m.MS_MAX,
    increment_ms=m.MS_MAX,
    grace_ms=m.MS_MAX,
)
GAME_RULES = [
    preset("standard", players=3, max_pip=6),
    preset("celko+teams+branching-doubles", players=4, max_pip=9, rounds="single"),
    preset("standard+fast-first-turn+swan-drive", players=5, max_pip=9, rounds="single"),
]


async def referee_lines(rules: Rules, seed: int, key: bytes) -> list[list[bytes]]:
    """Every line the referee sent each seat in a whole game between scripted bots."""
    lines: list[list[bytes]] = [[] for _ in range(rules.players)]
    seats = []
    async with trio.open_nursery() as nursery:
        for index in range(rules.players):
            ours, theirs = trio.testing.memory_stream_pair()
            conn = Connection(ours, ours, name=f"scripted{index}")
            seats.append(Seat(f"scripted{index}", connection=conn))
            nursery.start_soon(conn.writer)
            nursery.start_soon(scripted, theirs, seed + index, lines[index])
        game = Game(seats, rules, seed, game_id="g", time=LONGEST, bot_seed_key=key)
        await game.play()
        nursery.cancel_scope.cancel()
    return lines


@pytest.mark.parametrize("rules", GAME_RULES, ids=label)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**128 - 1), key=st.binary(min_size=16, max_size=16))
def test_what_the_referee_sends_in_a_game_is_in_range(rules: Rules, seed: int, key: bytes) -> None:
    lines = trio.run(referee_lines, rules, seed, key)
    for seat, sent in enumerate(lines):
        messages = [decode_to_bot(line) for line in sent]  # decoding checks every range
        (start,) = [x for x in messages if isinstance(x, m.GameStart)]
        assert start.seed == bot_seed(seed, seat, key)
        assert isinstance(messages[-1], m.GameEnd)
        turns = [x for x in messages if isinstance(x, m.Turn)]
        assert [t.id for t in turns] == list(range(1, len(turns) + 1))
        assert {t.clock.bank_ms for t in turns} <= {m.MS_MAX}  # the bank stops at the top
