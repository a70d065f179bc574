"""The bot on every recorded fixture, in memory, and the sample strategy on its own.

Each `fixtures/*.jsonl` holds the lines one seat received in a real game. They are
fed to `bot.main` through in-memory streams (no process) and every reply is
checked: `ready` for `hello`, `pong` for `ping`, and for each `turn` exactly one
`move` with the request's `id` and an index into its `legal` list; nothing else.
Run with `python -m pytest` in this folder.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import bot
import pytest
import strategy

from protocol.bot import Game
from protocol.codec import decode_to_bot
from protocol.messages import GameStart, RulesInfo, TimeControl, Turn

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.jsonl"))


def replay(lines: list[bytes], argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Everything the bot writes when it reads `lines`, parsed."""
    out = io.BytesIO()
    bot.main(argv or [], stdin=io.BytesIO(b"".join(lines)), stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def check_replies(requests: list[dict[str, Any]], replies: list[dict[str, Any]]) -> None:
    """Exactly the expected replies, in order, each one right for its request."""
    expected = [r for r in requests if r["type"] in ("hello", "ping", "turn")]
    assert len(replies) == len(expected), f"{len(replies)} replies to {len(expected)} requests"
    for request, reply in zip(expected, replies, strict=True):
        if request["type"] == "hello":
            assert reply["type"] == "ready" and reply["name"] == bot.NAME
        elif request["type"] == "ping":
            assert reply == {"type": "pong", "nonce": request["nonce"]}
        else:
            assert reply["type"] == "move" and reply["id"] == request["id"]
            assert 0 <= reply["index"] < len(request["legal"])


def test_the_fixtures_are_there() -> None:
    assert FIXTURES, "fixtures/ is empty or missing: run `make examples` at the repository root"


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_every_request_of_a_fixture_gets_a_legal_answer(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    requests = [json.loads(line) for line in lines]
    assert any(r["type"] == "turn" for r in requests), f"{path.name} holds no turn request"
    check_replies(requests, replay(lines))


def test_pings_unknown_messages_and_fields_and_bye() -> None:
    lines = FIXTURES[0].read_bytes().splitlines(keepends=True)
    extra = [
        b'{"type":"ping","nonce":5,"later_field":1}\n',
        b'{"type":"from_a_later_version","x":[1,2]}\n',
        b'{"type":"bye"}\n',
        lines[-1],  # after bye: never read
    ]
    requests = [json.loads(line) for line in [*lines, *extra[:3]]]
    check_replies(requests, replay(lines + extra))


def _turn(hand: list[list[int]], legal: list[dict[str, Any]], seat: int = 0) -> Turn:
    """A hand-made turn request at a two-seat table (seat 0's train is 0, the Mexican 2)."""
    trains = [
        {
            "train": i,
            "owner": owner,
            "tiles": [],
            "end": 6,
            "public": owner < 0,
            "open_double": False,
        }
        for i, owner in enumerate((0, 1, -1))
    ]
    view = {
        "round": 0,
        "engine": 6,
        "hand": hand,
        "trains": trains,
        "markers": [False, False],
        "hand_counts": [len(hand), 7],
        "scores": [0, 0],
        "boneyard": 10,
        "open_doubles": [],
        "step": "start",
        "next": 1,
    }
    clock = {"move_ms": 1000, "bank_ms": 30000}
    message = {"type": "turn", "id": 1, "seat": seat, "view": view, "legal": legal, "clock": clock}
    turn = decode_to_bot(json.dumps(message))
    assert isinstance(turn, Turn)
    return turn


def _game() -> Game:
    rules = RulesInfo(max_pip=6, players=2, hand_size=7)
    start = GameStart(
        game="g",
        seat=0,
        players=2,
        names=["a", "b"],
        rules=rules,
        time=TimeControl(),
        seed=1,
        rounds=7,
    )
    return Game(start=start, rng=random.Random(1))


def test_the_sample_strategy_plays_the_heaviest_tile_and_its_own_train_between_equals() -> None:
    legal = [
        {"action": "play", "tile": [6, 1], "train": 2},
        {"action": "play", "tile": [6, 4], "train": 2},
        {"action": "play", "tile": [6, 4], "train": 0},
        {"action": "draw"},
    ]
    turn = _turn([[6, 1], [6, 4], [3, 3]], legal)
    assert strategy.choose(turn, _game()) == 2


def test_a_double_that_the_hand_can_follow_counts_a_little_more() -> None:
    legal = [
        {"action": "play", "tile": [6, 0], "train": 2},
        {"action": "play", "tile": [3, 3], "train": 2},
    ]
    # 6-0 and 3-3 weigh 6 each; 3-1 can follow the double.
    assert strategy.choose(_turn([[6, 0], [3, 3], [3, 1]], legal), _game()) == 1
    assert strategy.choose(_turn([[6, 0], [3, 3], [5, 1]], legal), _game()) == 0


def test_with_no_play_it_ends_then_draws_then_passes() -> None:
    assert strategy.choose(_turn([[1, 0]], [{"action": "pass"}, {"action": "end"}]), _game()) == 1
    assert strategy.choose(_turn([[1, 0]], [{"action": "pass"}, {"action": "draw"}]), _game()) == 1
    assert strategy.choose(_turn([[1, 0]], [{"action": "pass"}]), _game()) == 0


def test_a_failing_strategy_costs_a_move_not_the_game(capsys: pytest.CaptureFixture[str]) -> None:
    def broken(turn: Turn, game: Game) -> int:
        raise ZeroDivisionError

    turn = _turn([[6, 1]], [{"action": "play", "tile": [6, 1], "train": 2}, {"action": "draw"}])
    assert bot.safe(broken)(turn, _game()) == 0
    assert bot.safe(lambda t, g: 7)(turn, _game()) == 0
    assert "playing legal move 0" in capsys.readouterr().err


def test_a_move_says_its_note_and_numbers_and_the_next_one_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`game.say` in `choose` puts a note and numbers on that move only; a move that
    says nothing is byte for byte the line it was before (no `note`, no `info`)."""
    fixture = Path(__file__).parent / "fixtures" / "pass.jsonl"
    lines = fixture.read_bytes().splitlines(keepends=True)
    turns = [json.loads(line) for line in lines]
    first_turn = next(t["id"] for t in turns if t["type"] == "turn")

    def moves() -> list[bytes]:
        out = io.BytesIO()
        bot.main([], stdin=io.BytesIO(b"".join(lines)), stdout=out)
        return [line for line in out.getvalue().splitlines() if json.loads(line)["type"] == "move"]

    quiet = moves()
    sample = strategy.choose

    def talkative(turn: Turn, game: Game) -> int:
        if turn.id == first_turn:
            game.say("the heaviest tile, café ☕", estimate=-2.5, worlds=16)
        return sample(turn, game)

    monkeypatch.setattr(strategy, "choose", talkative)
    said = moves()
    assert len(said) == len(quiet) >= 2
    first = json.loads(said[0])
    assert first["note"] == "the heaviest tile, café ☕"
    assert first["info"] == {"estimate": -2.5, "worlds": 16}
    assert {k: v for k, v in first.items() if k not in ("note", "info")} == json.loads(quiet[0])
    # The next moves said nothing: the very lines a quiet bot sends.
    assert said[1:] == quiet[1:]
    assert b"note" not in said[1] and b"info" not in said[1]
