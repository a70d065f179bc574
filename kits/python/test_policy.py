"""`bot.py --policy`: a learning environment's policy playing over the protocol.

In memory, every fixture's turn is answered with the move whose action id the
policy chose; then the bot runs as a real process under `referee check-bot`.
Needs the repository installed with its `learn` extra (numpy).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import example_policy
import numpy as np
import numpy.typing as npt
import pytest
from test_strategy import FIXTURES, check_replies, replay

from protocol.codec import decode_to_bot
from protocol.messages import Turn
from referee.learn import encode
from referee.rules import Rules

KIT = Path(__file__).parent


def test_every_turn_gets_the_move_the_policy_chose() -> None:
    assert FIXTURES, "fixtures/ is empty or missing: run `make examples` at the repository root"
    for path in FIXTURES:
        lines = path.read_bytes().splitlines(keepends=True)
        requests = [json.loads(line) for line in lines]
        replies = replay(lines, ["--policy", "example_policy:policy"])
        check_replies(requests, replies)
        start = next(r for r in requests if r["type"] == "game_start")
        rules = Rules.from_dict(start["rules"])
        turns = [r for r in requests if r["type"] == "turn"]
        moves = [r for r in replies if r["type"] == "move"]
        for turn, move in zip(turns, moves, strict=True):
            request = decode_to_bot(json.dumps(turn))
            assert isinstance(request, Turn)
            observation = encode.observation(rules, request.view, request.seat)
            wanted = example_policy.policy(observation, encode.action_mask(rules, request.legal))
            assert encode.action_id(rules, request.legal[move["index"]]) == wanted


def never_legal(observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
    """A policy that ignores its mask: always the first action id that is not legal."""
    return int(np.flatnonzero(mask == 0)[0])


def test_an_action_outside_the_mask_is_logged_and_the_strategy_plays(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = FIXTURES[0].read_bytes().splitlines(keepends=True)
    requests: list[dict[str, Any]] = [json.loads(line) for line in lines]
    replies = replay(lines, ["--policy", "test_policy:never_legal"])
    check_replies(requests, replies)
    assert replies[1:] == replay(lines)[1:]  # the moves of strategy.choose
    assert "not legal now" in capsys.readouterr().err


def test_a_policy_bot_passes_check_bot_as_a_process() -> None:
    command = [sys.executable, "bot.py", "--policy", "example_policy:policy"]
    check = [sys.executable, "-m", "referee", "check-bot", "--rules", "standard", "--", *command]
    done = subprocess.run(check, cwd=KIT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the bot conforms" in done.stdout
