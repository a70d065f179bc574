"""The search example on every recorded fixture, in memory: every reply is legal.

The fixtures' events after each request are what the recorded bot played, so the
example's tracker follows a game it did not play; it must still answer every turn
with one of its legal moves.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import search_example
from test_strategy import FIXTURES

from protocol.bot import run


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_the_search_example_answers_every_request_legally(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_example, "THINK_S", 0.02)
    lines = path.read_bytes().splitlines(keepends=True)
    requests = [json.loads(line) for line in lines]
    out = io.BytesIO()
    run(search_example.choose, name="example", stdin=io.BytesIO(b"".join(lines)), stdout=out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    turns = [r for r in requests if r["type"] == "turn"]
    moves = [r for r in replies if r["type"] == "move"]
    assert len(moves) == len(turns) > 0
    for turn, move in zip(turns, moves, strict=True):
        assert move["id"] == turn["id"] and 0 <= move["index"] < len(turn["legal"])
