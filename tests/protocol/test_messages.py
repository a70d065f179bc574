"""Every protocol message on the wire: round trips, tile shape, the one `id`, bad input."""

from __future__ import annotations

import json
import string
import types
import typing
from typing import Annotated, Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    LocalProtocolError,
    MalformedMessageError,
    ProtocolError,
    decode_from_bot,
    decode_to_bot,
    encode,
)
from protocol import messages as m
from referee.game.wire import rules_info, turn_request
from referee.rules import apply, legal_moves, new_game, play, position, preset


def played_state(moves: int):
    """The standard four-seat game of seed 1 after `moves` first-legal decisions."""
    state = new_game(preset("standard"), 1)
    for _ in range(moves):
        state = apply(state, legal_moves(state)[0])
    return state


RULES = rules_info(preset("standard"))
TIME = m.TimeControl(startup_ms=5000, move_ms=800, bank_ms=20_000, increment_ms=100, grace_ms=40)
# After 27 decisions seat 3 has just drawn in the follow-up of its 4-4, trains hold
# tiles, a double is open and markers are up: a turn request with every part of the
# view filled in.
TURN_START = turn_request(played_state(0), 1, 1000, 30_000)
TURN_LATE = turn_request(played_state(27), 28, 800, 12_345)

TO_BOT: list[m.Message] = [
    m.Hello(referee="mexican-train-referee 0.1.0", players=4, rules=RULES, time=TIME),
    m.GameStart(
        game="league-17",
        seat=2,
        players=4,
        names=["alpha", "beta", "gamma", "delta"],
        rules=RULES,
        time=TIME,
        seed=3_141_592_653,
        rounds=13,
    ),
    m.RoundStart(
        round=0,
        engine=12,
        hand=[(12, 9), (9, 6), (6, 0), (11, 5), (1, 1)],
        holder=2,
        starter=3,
        hand_counts=[15, 15, 14, 15],
        boneyard=31,
        engine_draws=[0, 1],
    ),
    m.RoundStart(
        round=1,
        engine=11,
        hand=[(5, 5)],
        holder=None,
        starter=0,
        hand_counts=[15, 15],
        boneyard=59,
    ),
    m.Played(seat=1, tile=(12, 8), train=3, end=8),
    m.Played(
        seat=2, tile=(7, 7), train=2, end=7, opens_double=True, branches=[5, 6], announce=True
    ),
    m.Drew(seat=0),
    m.Drew(seat=2, tile=(4, 4), reason="penalty"),
    m.Passed(seat=3),
    m.Marker(seat=3, up=True),
    TURN_START,
    TURN_LATE,
    m.RoundEnd(
        round=0,
        reason="out",
        out=[1],
        hands=[[(6, 5), (0, 0)], [], [(12, 12)], [(3, 2), (1, 0)]],
        values=[11, 0, 24, 6],
        scores=[11, 0, 24, 6],
        totals=[11, 0, 24, 6],
    ),
    m.GameEnd(scores=[120, 98, 240, 77], ranks=[3, 2, 4, 1], rounds=[[11, 0, 24, 6]]),
    m.GameEnd(scores=[0, 0], ranks=[1, 1], rounds=[], reason="forfeit"),
    m.Error(code="illegal", message="seat 0 does not hold 1-0", request=7),
    m.Error(code="version", message="bot speaks protocol 2"),
    m.Ping(nonce=4242),
    m.Resumed(game="g00007", received=12),
    m.Bye(),
    m.Bye(reason="forfeit: timeout"),
]

FROM_BOT: list[m.Message] = [
    m.Ready(name="random", version="1.2", author="A. Person"),
    m.Ready(name="minimal"),
    m.Login(name="tcp-bot", token="not-a-real-token"),
    m.Login(name="tcp-bot", token="not-a-real-token", resume=m.Resume(game="g00007", received=31)),
    m.MoveReply(id=26, index=0),
    m.MoveReply(id=27, action="play", tile=(4, 4), train=3, announce=True),
    m.MoveReply(id=28, action="draw"),
    m.MoveReply(id=29, action="pass"),
    m.Pong(nonce=4242),
]


def label(message: m.Message) -> str:
    return type(message).__name__


def test_the_samples_cover_every_message_type() -> None:
    assert {type(x) for x in TO_BOT} == set(m.TO_BOT_TYPES)
    assert {type(x) for x in FROM_BOT} == set(m.FROM_BOT_TYPES)


@pytest.mark.parametrize("message", TO_BOT, ids=label)
def test_to_bot_round_trip(message: m.Message) -> None:
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_to_bot(line) == message
    assert decode_to_bot(line.decode()) == message


@pytest.mark.parametrize("message", FROM_BOT, ids=label)
def test_from_bot_round_trip(message: m.Message) -> None:
    line = encode(message)
    assert decode_from_bot(line) == message
    assert decode_from_bot(line.decode()) == message


@pytest.mark.parametrize("message", TO_BOT + FROM_BOT, ids=label)
def test_type_field_names_the_message(message: m.Message) -> None:
    obj = json.loads(encode(message))
    assert obj["type"] == type(message).__struct_config__.tag


def test_directions_do_not_mix() -> None:
    with pytest.raises(MalformedMessageError) as info:
        decode_from_bot(encode(m.Ping(nonce=1)))
    assert info.value.path == "$.type"
    with pytest.raises(MalformedMessageError) as info:
        decode_to_bot(encode(m.Pong(nonce=1)))
    assert info.value.path == "$.type"


def test_tiles_are_two_number_arrays() -> None:
    played = json.loads(encode(m.Played(seat=1, tile=(6, 4), train=0, end=4)))
    assert played["tile"] == [6, 4]
    drew = json.loads(encode(m.Drew(seat=0, tile=(4, 4))))
    assert drew["tile"] == [4, 4]
    reply = json.loads(encode(m.MoveReply(id=1, action="play", tile=(12, 3), train=0)))
    assert reply["tile"] == [12, 3]
    turn = json.loads(encode(TURN_LATE))
    view = turn["view"]
    assert view["drawn"] == [8, 7]
    assert all(isinstance(t, list) and len(t) == 2 for t in view["hand"])
    assert view["hand"] == [list(t) for t in TURN_LATE.view.hand]
    laid = [t for train in view["trains"] for t in train["tiles"]]
    assert laid and all(isinstance(t, list) and len(t) == 2 for t in laid)
    assert turn["legal"] == [{"action": "play", "tile": [8, 7], "train": 4}]


def test_a_realistic_view_is_realistic() -> None:
    # Guards the premise of the `id` test below: the late turn has something everywhere.
    view = TURN_LATE.view
    assert view.drawn is not None
    assert all(train.tiles for train in view.trains)
    assert view.open_doubles and any(view.markers)


def test_binding_is_on_the_wire() -> None:
    # The late turn is seat 3's own follow-up of its 4-4 on train 2: the double is open
    # and binds nobody.
    late = json.loads(encode(TURN_LATE))["view"]
    assert late["step"] == "follow" and late["open_doubles"] == [2] and late["binding"] == []
    # Seat 0 left 5-5 open on its train: seat 1's turn request names the train that binds it.
    hands = [[(5, 5), (12, 3), (9, 1)], [(5, 1), (12, 9)], [(3, 2)], [(11, 0)]]
    state = position(preset("standard"), hands, trains={0: [(12, 5)]}, boneyard=[(10, 10)])
    state = apply(apply(state, play(5, 5, 0)), play(12, 3, 4))
    view = json.loads(encode(turn_request(state, 3, 1000, 30_000)))["view"]
    assert view["open_doubles"] == [0] and view["binding"] == [0]
    # A bot written before `binding` decodes the view as before, and the field is optional.
    assert json.loads(encode(TURN_START))["view"]["binding"] == []
    line = encode(TURN_LATE).decode().replace(',"binding":[]', "")
    assert '"binding"' not in line
    turn = decode_to_bot(line)
    assert isinstance(turn, m.Turn) and turn.view.binding == []


@pytest.mark.parametrize("turn", [TURN_START, TURN_LATE], ids=["start", "late"])
def test_the_only_id_key_in_a_turn_is_the_request_id(turn: m.Turn) -> None:
    text = encode(turn).decode()
    assert text.count('"id":') == 1
    assert json.loads(text)["id"] == turn.id


@pytest.mark.parametrize("message", TO_BOT + FROM_BOT, ids=label)
def test_id_appears_only_in_turn_and_move(message: m.Message) -> None:
    expected = 1 if isinstance(message, m.Turn | m.MoveReply) else 0
    assert encode(message).decode().count('"id":') == expected


def test_omitted_optional_fields_take_their_defaults() -> None:
    hello = decode_to_bot('{"type":"hello","referee":"r","players":2,"rules":{},"time":{}}')
    assert isinstance(hello, m.Hello)
    assert hello.protocol == m.PROTOCOL_VERSION
    assert hello.max_line == m.MAX_LINE_DEFAULT
    assert hello.rules == m.RulesInfo()
    assert hello.time == m.TimeControl()
    reply = decode_from_bot('{"type":"move","id":3}')
    assert reply == m.MoveReply(id=3)


def test_move_spec_omits_defaults() -> None:
    assert json.loads(msgspec.json.encode(m.MoveSpec(action="draw"))) == {"action": "draw"}


def every_field(kind: type[msgspec.Struct]) -> st.SearchStrategy[msgspec.Struct]:
    """Instances of `kind` with every field drawn (hypothesis would pass a default
    factory object itself for a field like `branches: list[int] = []`), nested
    structs too (`Turn.view` has `binding: list[int] = []`)."""
    fields = msgspec.structs.fields(kind)
    return st.builds(kind, **{f.name: _field_strategy(f.type) for f in fields})


INFO_KEY_CHARS = string.ascii_letters + string.digits + "_.-"


def _field_strategy(kind: Any) -> st.SearchStrategy[Any]:
    """Values of the field type `kind`, each number within its range: hypothesis does
    not read msgspec's `Meta`, so bounded integers and lists are drawn here, down
    through unions, lists and tuples."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return every_field(kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Annotated:
        base, *extras = args
        meta = next(x for x in extras if isinstance(x, msgspec.Meta))
        if base is int:
            return st.integers(min_value=meta.ge, max_value=meta.le)
        if base is float:  # a move's info numbers
            return st.floats(min_value=meta.ge, max_value=meta.le, allow_nan=False)
        if base is str and meta.pattern == m.InfoKey.__metadata__[0].pattern:
            return st.text(alphabet=INFO_KEY_CHARS, min_size=1, max_size=meta.max_length)
        if base is str and meta.pattern is not None:
            # a login's nonce: printable ASCII, of a bounded length
            ascii_text = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
            return st.text(alphabet=ascii_text, max_size=meta.max_length)
        if base is str:  # a move's note: any text (control characters too), bounded
            return st.text(max_size=meta.max_length)
        if typing.get_origin(base) is dict:  # a move's info: at most so many numbers
            key, value = typing.get_args(base)
            return st.dictionaries(
                _field_strategy(key), _field_strategy(value), max_size=meta.max_length
            )
        (item,) = typing.get_args(base)  # a list with a length range
        low = meta.min_length or 0
        return st.lists(_field_strategy(item), min_size=low, max_size=low + 4)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([_field_strategy(a) for a in args])
    if origin is list:
        return st.lists(_field_strategy(args[0]), max_size=6)
    if origin is tuple:
        return st.tuples(*(_field_strategy(a) for a in args))
    return st.from_type(kind)


@pytest.mark.parametrize("kind", m.TO_BOT_TYPES + m.FROM_BOT_TYPES, ids=lambda t: t.__name__)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_message_round_trips_on_one_line(kind: type[m.Message], data) -> None:
    # Any field values at all (any text, any integer in its range), not only realistic ones.
    message = data.draw(every_field(kind))
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    decode = decode_to_bot if kind in m.TO_BOT_TYPES else decode_from_bot
    assert decode(line) == message


# ---------------------------------------------------------------- unknown fields


FUTURE = {"x_future": {"nested": [1, "two", None, {"deep": True}]}, "x_flag": False}


@pytest.mark.parametrize("message", TO_BOT, ids=label)
def test_to_bot_decoder_ignores_unknown_fields(message: m.Message) -> None:
    obj = json.loads(encode(message))
    assert decode_to_bot(json.dumps({**FUTURE, **obj})) == message
    assert decode_to_bot(json.dumps({**obj, **FUTURE})) == message


@pytest.mark.parametrize("message", FROM_BOT, ids=label)
def test_from_bot_decoder_ignores_unknown_fields(message: m.Message) -> None:
    obj = json.loads(encode(message))
    assert decode_from_bot(json.dumps({**obj, **FUTURE})) == message


def test_unknown_fields_are_ignored_at_every_depth() -> None:
    obj = json.loads(encode(TURN_LATE))
    obj["view"]["x_future"] = 1
    obj["view"]["trains"][2]["x_future"] = [1, 2]
    obj["legal"][0]["x_future"] = {"a": None}
    obj["clock"]["x_future"] = "soon"
    assert decode_to_bot(json.dumps(obj)) == TURN_LATE
    hello = json.loads(encode(TO_BOT[0]))
    hello["rules"]["x_new_option"] = True
    hello["time"]["x_new_clock"] = 5
    assert decode_to_bot(json.dumps(hello)) == TO_BOT[0]


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ('{"type":"move","id":"7","index":0}', "$.id"),
        ('{"type":"move","id":7.5,"index":0}', "$.id"),
        ('{"type":"move","id":true,"index":0}', "$.id"),
        ('{"type":"move","id":7,"index":"0"}', "$.index"),
        ('{"type":"move","id":7,"action":"fly"}', "$.action"),
        ('{"type":"move","id":7,"action":"play","tile":"6-4","train":0}', "$.tile"),
        ('{"type":"move","id":7,"action":"play","tile":[6],"train":0}', "$.tile"),
        ('{"type":"move","id":7,"action":"play","tile":[6,4,2],"train":0}', "$.tile"),
        ('{"type":"move","id":7,"action":"play","tile":[6,"4"],"train":0}', "$.tile[1]"),
        (
            '{"type":"move","id":7,"action":"play","tile":[6,4],"train":null,"announce":1}',
            "$.announce",
        ),
        ('{"type":"ready","name":7}', "$.name"),
        ('{"type":"ready","name":"x","protocol":"1"}', "$.protocol"),
        ('{"type":"pong","nonce":null}', "$.nonce"),
        ('{"type":7}', "$.type"),
        ('{"type":"moves","id":7}', "$.type"),
        ('{"type":"hello","referee":"r","players":2,"rules":{},"time":{}}', "$.type"),
    ],
)
def test_from_bot_wrong_types_name_the_field(line: str, path: str) -> None:
    with pytest.raises(MalformedMessageError) as info:
        decode_from_bot(line)
    assert info.value.path == path
    assert info.value.code == "malformed"


@pytest.mark.parametrize(
    ("line", "path", "field"),
    [
        ('{"type":"move","index":0}', "$.id", "id"),
        ('{"type":"pong"}', "$.nonce", "nonce"),
        ('{"type":"ready","version":"1"}', "$.name", "name"),
        ('{"id":7,"index":0}', "$.type", "type"),
        # msgspec checks the fields before it notices trailing text
        ('{"nonce":1}}', "$.type", "type"),
        ('{"nonce":1} {"nonce":2}', "$.type", "type"),
    ],
)
def test_from_bot_missing_fields(line: str, path: str, field: str) -> None:
    # The path names the missing field itself, and so does the message.
    with pytest.raises(MalformedMessageError) as info:
        decode_from_bot(line)
    assert info.value.path == path
    assert f"`{field}`" in str(info.value)


def to_bot_variant(change) -> str:
    obj = json.loads(encode(TURN_LATE))
    change(obj)
    return json.dumps(obj)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda o: o.update(id="26"), "$.id"),
        (lambda o: o["view"].update(hand="none"), "$.view.hand"),
        (lambda o: o["view"]["hand"].__setitem__(3, [1]), "$.view.hand[3]"),
        (lambda o: o["view"].update(drawn=[4, 4, 4]), "$.view.drawn"),
        (lambda o: o["view"]["trains"][1].update(end="one"), "$.view.trains[1].end"),
        (
            lambda o: o["view"]["trains"][4]["tiles"][0].__setitem__(0, None),
            "$.view.trains[4].tiles[0][0]",
        ),
        (lambda o: o["legal"][0].update(action="jump"), "$.legal[0].action"),
        (lambda o: o["clock"].update(bank_ms=1.5), "$.clock.bank_ms"),
        (lambda o: o["view"].pop("hand"), "$.view.hand"),
        (lambda o: o["clock"].pop("move_ms"), "$.clock.move_ms"),
        (lambda o: o.pop("legal"), "$.legal"),
    ],
)
def test_to_bot_bad_fields_name_the_path(change, path: str) -> None:
    with pytest.raises(MalformedMessageError) as info:
        decode_to_bot(to_bot_variant(change))
    assert info.value.path == path


@pytest.mark.parametrize(
    "line",
    [
        "[1, 2]",
        '[{"type":"pong","nonce":1}]',
        "42",
        "-1.5",
        '"pong"',
        "null",
        "true",
        "",
        "   ",
        "\t\r",
        "{",
        '{"nonce":1',
        "{'type':'pong','nonce':1}",
        '{"nonce":NaN}',
        "\ufeff" + '{"type":"pong","nonce":1}',
        "move 0",
    ],
)
@pytest.mark.parametrize("decode", [decode_from_bot, decode_to_bot], ids=["from", "to"])
def test_not_a_json_object_is_malformed(decode, line: str) -> None:
    with pytest.raises(MalformedMessageError) as info:
        decode(line)
    assert info.value.path == "$"
    with pytest.raises(MalformedMessageError):
        decode(line.encode())


def test_whitespace_around_a_message_is_allowed() -> None:
    assert decode_from_bot(' \t{"type":"pong","nonce":1}\r ') == m.Pong(nonce=1)
    assert decode_from_bot(b'{"type":"pong","nonce":1}\r') == m.Pong(nonce=1)


def test_unknown_type_is_malformed_at_type() -> None:
    for decode in (decode_from_bot, decode_to_bot):
        with pytest.raises(MalformedMessageError) as info:
            decode('{"type":"x_future_notice","text":"from a later version"}')
        assert info.value.path == "$.type"
        assert isinstance(info.value, ProtocolError)


# ---------------------------------------------------------------- encode limits


def test_encode_rejects_a_message_longer_than_max_line() -> None:
    message = m.Error(code="malformed", message="x" * 500)
    size = len(encode(message)) - 1  # without the newline
    assert encode(message, max_line=size) == encode(message)
    with pytest.raises(LocalProtocolError):
        encode(message, max_line=size - 1)
    with pytest.raises(LocalProtocolError):
        encode(TURN_LATE, max_line=100)


def test_local_errors_are_not_remote_errors() -> None:
    # A referee bug must never be mistaken for a bot's fault.
    from protocol import RemoteProtocolError

    assert not issubclass(LocalProtocolError, RemoteProtocolError)
    assert issubclass(LocalProtocolError, ProtocolError)


def test_invalid_json_after_a_valid_type_is_malformed() -> None:
    with pytest.raises(MalformedMessageError) as info:
        decode_from_bot('{"type":"pong","nonce":1')
    assert info.value.path == "$"
    with pytest.raises(MalformedMessageError) as info:
        decode_to_bot('{"type":"ping","nonce":1} trailing')
    assert info.value.path == "$"


def test_moderately_nested_unknown_field_is_ignored() -> None:
    line = '{"type":"move","id":1,"x":' + "[" * 200 + "]" * 200 + "}"
    assert decode_from_bot(line) == m.MoveReply(id=1)


@pytest.mark.parametrize(
    ("decode", "head"),
    [(decode_from_bot, '{"type":"move","id":1,'), (decode_to_bot, '{"type":"ping","nonce":1,')],
    ids=["from", "to"],
)
def test_deeply_nested_json_is_malformed_not_a_crash(decode, head: str) -> None:
    line = head + '"x":' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(MalformedMessageError):
        decode(line)


def test_lone_surrogate_in_a_str_line_is_malformed() -> None:
    with pytest.raises(MalformedMessageError):
        decode_from_bot('{"type":"pong","nonce":1,"x":"\ud800"}')
