"""The sample bots: each passes check-bot, and greedy clearly beats random.

check-bot runs each as a real process (Node for the JavaScript bot, POSIX sh for
the minimal one) through handshake, unknown fields, ping, every preset and
seat count, several games on one connection and a clean exit on bye.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
import statistics
import sys
from pathlib import Path
from types import ModuleType

import pytest

from protocol.bot import Game
from protocol.messages import GameStart, TimeControl
from referee.bots.process import BotSpec
from referee.game import wire
from referee.game.checkbot import battery, check_bot
from referee.rules import State, apply, legal_moves, new_game, preset

BOTS = Path(__file__).parents[1] / "sample_bots"


def spec(name: str) -> BotSpec:
    if name == "random":
        return BotSpec("random", (sys.executable, str(BOTS / "random_bot.py")))
    if name == "greedy":
        return BotSpec("greedy", (sys.executable, str(BOTS / "greedy_bot.py")))
    if name == "js":
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed")
        return BotSpec("js", (node, str(BOTS / "js" / "bot.js")))
    return BotSpec("minimal", ("sh", str(BOTS / "minimal.sh")))


@pytest.mark.parametrize("name", ["random", "greedy", "js", "minimal"])
async def test_every_sample_bot_passes_check_bot(name: str) -> None:
    checks = await check_bot(
        spec(name), plan=battery(), time=TimeControl(move_ms=2000, bank_ms=30000)
    )
    failed = [c.line() for c in checks if not c.ok]
    assert not failed, failed
    names = [c.name for c in checks]
    for expected in ("handshake", "ping", "standard", "variants", "several games", "bye"):
        assert expected in names


def load_greedy() -> ModuleType:
    loader = importlib.util.spec_from_file_location("greedy_bot", BOTS / "greedy_bot.py")
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules["greedy_bot"] = module  # dataclasses look their module up by name
    loader.loader.exec_module(module)
    return module


def test_greedy_beats_random_clearly() -> None:
    greedy = load_greedy()
    rules = preset("standard", players=4)
    greedy_scores: list[int] = []
    random_scores: list[int] = []
    for seed in range(12):
        seat = seed % 4  # greedy takes every seat in turn
        rng = random.Random(seed)
        state: State = new_game(rules, seed)
        start = GameStart(
            game="t",
            seat=seat,
            players=4,
            names=["g"] * 4,
            rules=wire.rules_info(rules),
            time=TimeControl(),
            seed=seed,
            rounds=13,
        )
        game = Game(start=start, rng=random.Random(seed))
        request = 0
        while state.outcome is None:
            moves = legal_moves(state)
            if state.to_move == seat:
                request += 1
                index = greedy.choose(wire.turn_request(state, request, 1000, 30000), game)
                state = apply(state, moves[index])
            else:
                state = apply(state, rng.choice(moves))
        greedy_scores.append(state.outcome.scores[seat])
        random_scores += [state.outcome.scores[s] for s in range(4) if s != seat]
    # Lower is better: greedy leaves far fewer pips in hand than a random player.
    assert statistics.fmean(greedy_scores) < 0.6 * statistics.fmean(random_scores)
