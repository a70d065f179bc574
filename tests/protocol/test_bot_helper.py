"""protocol.bot.run over in-memory stdin and stdout."""

from __future__ import annotations

import io
import random

import pytest

from protocol import decode_from_bot, encode
from protocol import messages as m
from protocol.bot import Game, reply_for, run
from referee.game.wire import rules_info, turn_request
from referee.rules import apply, legal_moves, new_game, preset

RULES = preset("standard")
TIME = m.TimeControl(move_ms=500, bank_ms=5000)
HELLO = m.Hello(referee="test", players=4, rules=rules_info(RULES), time=TIME)


def game_start(seed: int, game: str = "g1") -> m.GameStart:
    return m.GameStart(
        game=game,
        seat=0,
        players=4,
        names=["a", "b", "c", "d"],
        rules=rules_info(RULES),
        time=TIME,
        seed=seed,
        rounds=13,
    )


def turns(count: int) -> list[m.Turn]:
    """Real turn requests: the seed-1 standard game, whoever is to move, ids 1, 2, ..."""
    state = new_game(RULES, 1)
    out = []
    for request in range(1, count + 1):
        out.append(turn_request(state, request, 500, 5000))
        state = apply(state, legal_moves(state)[0])
    return out


def talk(choose, lines: list[bytes | m.Message], **kwargs) -> list[m.Message]:
    """Run the helper on `lines`; every message it wrote, decoded."""
    data = b"".join(x if isinstance(x, bytes) else encode(x) for x in lines)
    out = io.BytesIO()
    run(choose, name=kwargs.pop("name", "tester"), stdin=io.BytesIO(data), stdout=out, **kwargs)
    written = out.getvalue()
    assert written == b"" or written.endswith(b"\n")
    return [decode_from_bot(line) for line in written.splitlines()]


def first(turn: m.Turn, game: Game) -> int:
    return 0


def test_hello_gets_ready_with_name_and_version() -> None:
    out = talk(first, [HELLO, m.Bye()], name="mybot", version="2.5", author="me")
    assert out == [m.Ready(name="mybot", version="2.5", author="me")]
    assert out[0].protocol == m.PROTOCOL_VERSION


def test_ping_gets_pong_with_the_same_nonce() -> None:
    pings = [m.Ping(nonce=77), m.Ping(nonce=0), m.Ping(nonce=m.COUNTER_MAX)]  # its whole range
    out = talk(first, [HELLO, *pings, m.Bye()])
    assert out[1:] == [m.Pong(nonce=p.nonce) for p in pings]


def test_turn_with_an_index_gets_a_move_with_that_index() -> None:
    (turn,) = turns(1)
    turn = m.Turn(id=41, seat=turn.seat, view=turn.view, legal=turn.legal, clock=turn.clock)
    last = len(turn.legal) - 1
    out = talk(lambda t, g: last, [HELLO, game_start(5), turn, m.Bye()])
    assert out[1:] == [m.MoveReply(id=41, index=last)]


def test_turn_with_a_move_spec_gets_the_move_spelled_out() -> None:
    (turn,) = turns(1)
    spec = next(s for s in turn.legal if s.action == "play")
    out = talk(lambda t, g: spec, [HELLO, game_start(5), turn, m.Bye()])
    assert out[1:] == [
        m.MoveReply(id=turn.id, action="play", tile=spec.tile, train=spec.train, announce=False)
    ]


def test_reply_for() -> None:
    (turn,) = turns(1)
    assert reply_for(turn, 3) == m.MoveReply(id=turn.id, index=3)
    spec = m.MoveSpec(action="play", tile=(12, 5), train=2, announce=True)
    assert reply_for(turn, spec) == m.MoveReply(
        id=turn.id, action="play", tile=(12, 5), train=2, announce=True
    )
    assert reply_for(turn, m.MoveSpec(action="draw")) == m.MoveReply(id=turn.id, action="draw")


def test_every_turn_is_answered_in_order_with_events_kept() -> None:
    requests = turns(6)
    seen: list[int] = []

    def choose(turn: m.Turn, game: Game) -> int:
        seen.append(len(game.events))
        return 0

    lines: list[bytes | m.Message] = [HELLO, game_start(9)]
    for turn in requests:
        lines += [m.Passed(seat=1), turn]
    out = talk(choose, [*lines, m.Bye()])
    assert [r.id for r in out[1:]] == [t.id for t in requests]
    assert seen == [1, 2, 3, 4, 5, 6]  # each Passed before a turn is an event of the game


def test_unknown_message_types_and_fields_are_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    (turn,) = turns(1)
    future = b'{"type":"x_future_notice","text":"from a later version"}\n'
    extra = b'{"x_new":[1,{"a":null}],' + encode(m.Ping(nonce=8))[1:]
    out = talk(first, [HELLO, future, game_start(1), future, extra, turn, m.Bye()])
    assert out == [
        m.Ready(name="tester", version="1.0"),
        m.Pong(nonce=8),
        m.MoveReply(id=1, index=0),
    ]
    assert "x_future_notice" in capsys.readouterr().err


def test_referee_errors_are_reported_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    error = m.Error(code="illegal", message="seat 0 does not hold 1-0", request=3)
    out = talk(first, [HELLO, error, m.Bye()])
    assert out == [m.Ready(name="tester", version="1.0")]
    assert "illegal: seat 0 does not hold 1-0" in capsys.readouterr().err


def test_bye_ends_the_loop_even_with_input_left() -> None:
    out = talk(first, [HELLO, m.Bye(), m.Ping(nonce=1), HELLO])
    assert out == [m.Ready(name="tester", version="1.0")]


def test_end_of_input_ends_the_loop() -> None:
    assert talk(first, [HELLO, m.Ping(nonce=2)]) == [
        m.Ready(name="tester", version="1.0"),
        m.Pong(nonce=2),
    ]
    assert talk(first, []) == []


def test_crlf_input_is_understood() -> None:
    out = talk(first, [encode(HELLO)[:-1] + b"\r\n", b'{"type":"ping","nonce":5}\r\n'])
    assert out[1:] == [m.Pong(nonce=5)]


def test_a_turn_before_game_start_is_an_error() -> None:
    (turn,) = turns(1)
    with pytest.raises(RuntimeError, match="before game_start"):
        talk(first, [HELLO, turn])


def random_choices(seed: int, games: int = 1) -> tuple[list[int], list[float]]:
    """The indices a random bot sends and the rng draws it sees, over `games` games."""
    requests = turns(8)
    draws: list[float] = []

    def choose(turn: m.Turn, game: Game) -> int:
        draws.append(game.rng.random())
        return game.rng.randrange(len(turn.legal))

    lines: list[bytes | m.Message] = [HELLO]
    for number in range(games):
        lines += [game_start(seed + number, f"g{number}"), *requests]
    out = talk(choose, [*lines, m.Bye()])
    picks = []
    for reply in out[1:]:
        assert isinstance(reply, m.MoveReply) and reply.index is not None
        picks.append(reply.index)
    return picks, draws


def expected_choices(seed: int) -> tuple[list[int], list[float]]:
    reference = random.Random(seed)
    picks, draws = [], []
    for turn in turns(8):
        draws.append(reference.random())
        picks.append(reference.randrange(len(turn.legal)))
    return picks, draws


def test_the_game_rng_is_seeded_from_game_start() -> None:
    assert random_choices(123_456) == expected_choices(123_456)
    assert random_choices(123_456) == random_choices(123_456)
    assert random_choices(654_321)[1] != random_choices(123_456)[1]


def test_each_game_start_reseeds() -> None:
    picks, draws = random_choices(50, games=2)
    first_picks, first_draws = expected_choices(50)
    second_picks, second_draws = expected_choices(51)
    assert picks == first_picks + second_picks
    assert draws == first_draws + second_draws


def test_say_sends_a_note_and_numbers_with_that_move_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`game.say` in `choose`: the note (cut to 280 characters) and the numbers go with
    that move; a number the protocol would refuse is left out with a line on stderr
    (never a malformed move); the next move says nothing unless it says so again."""
    one, two = turns(2)

    def choose(turn: m.Turn, game: Game) -> int:
        if turn.id == one.id:
            numbers = {f"n{i}": i for i in range(17)} | {"bad key": 1, "big": 1e16}
            game.say("é" * 300, nan=float("nan"), **numbers)
        return 0

    out = talk(choose, [HELLO, game_start(5), one, two, m.Bye()])
    said, quiet = out[1], out[2]
    assert isinstance(said, m.MoveReply) and said.note == "é" * m.NOTE_MAX
    assert said.info == {f"n{i}": float(i) for i in range(16)}
    assert quiet == m.MoveReply(id=two.id, index=0)
    err = capsys.readouterr().err
    assert "'n16' left out" in err and "'bad key'" in err and "nan" in err
