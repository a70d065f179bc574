"""The plan and search bots play legal moves only, in-process over many seeds and rule
sets, and pass check-bot as real processes; the search thinks within its clock.

In-process, each bot's own `choose` is given the turn requests and events the
referee would send (`referee.game.wire`), so a whole game costs no process or pipe.
The search runs with a fixed number of worlds there: the test is about legality,
not time. One world runs the determinizer, the model and the rollouts in every rule
set: below `MIN_WORLDS` (8) the search takes the same path with one world as with
seven (it keeps the plan's move), and the choice between the plan's move and
another, and the early stop, are tested in test_search_stats.py. The
timing test is a real process under the referee's own clocks.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from protocol import messages as m
from protocol.bot import Game
from referee.botkit.search import Rollouts, _score
from referee.bots.process import BotSpec
from referee.game import wire
from referee.game.checkbot import battery, check_bot
from referee.rules import (
    PRESETS,
    VARIANTS,
    MoveKind,
    apply,
    legal_moves,
    new_game,
    position,
    preset,
)

from ._games import decisions

BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


def _load(name: str) -> ModuleType:
    loader = importlib.util.spec_from_file_location(name, BOTS / f"{name}.py")
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module
    loader.loader.exec_module(module)
    return module


def _play(
    rules_name: str,
    seed: int,
    choose: Any,
    seat: int,
    players: int | None = None,
    **options: Any,
) -> int:
    """One game: `choose` in `seat`, random elsewhere; every chosen index must be legal.
    Returns the number of decisions `choose` made. `options` change the preset."""
    if players is not None:
        options["players"] = players
    rules = preset(rules_name, **options)
    n = rules.players
    state = new_game(rules, seed)
    rng = random.Random(seed)
    start = m.GameStart(
        game="game-1",
        seat=seat,
        players=n,
        names=[f"bot{i}" for i in range(n)],
        rules=wire.rules_info(rules),
        time=m.TimeControl(),
        seed=seed,
        rounds=len(rules.engines),
    )
    game = Game(start=start, rng=random.Random(seed))
    game.events.append(wire.round_start(state, seat))
    made = 0
    request = 0
    while state.outcome is None:
        moves = legal_moves(state)
        if state.to_move == seat:
            request += 1
            turn = wire.turn_request(state, request, 1000, 30000)
            index = choose(turn, game)
            assert isinstance(index, int) and 0 <= index < len(moves), (rules_name, seed)
            move = moves[index]
            made += 1
        else:
            move = rng.choice(moves)
        after = apply(state, move)
        for event in wire.events(state, move, after):
            message = event.for_seat(seat)
            if message is not None:
                game.events.append(message)
        if after.round_index != state.round_index and after.outcome is None:
            game.events.append(wire.round_start(after, seat))
        state = after
    return made


RULE_SETS = [*PRESETS, *(f"standard+{v}" for v in VARIANTS)]


@pytest.mark.parametrize("name", RULE_SETS)
def test_the_plan_bot_plays_legal_moves_only(name: str) -> None:
    plan_bot = _load("plan_bot")
    made = sum(_play(name, seed, plan_bot.choose, seed % 4) for seed in range(4))
    assert made > 100


@pytest.mark.parametrize("name", RULE_SETS)
def test_the_search_bot_plays_legal_moves_only(name: str) -> None:
    search_bot = _load("search_bot")
    rules = preset(name)
    made = 0
    for seed in range(2):
        bot = search_bot.SearchBot(cap_ms=0, worlds=1)
        made += _play(name, seed, bot.choose, seed % rules.players)
    assert made > 40


def test_the_search_bot_is_deterministic_with_a_fixed_world_count() -> None:
    """With `--worlds N` the search bot's moves depend only on the game and its seed
    (its worlds come from the game's random generator, no clock): the same game played
    twice gets the same moves, whatever the time each search took."""
    search_bot = _load("search_bot")

    def moves(seed: int) -> list[int]:
        bot = search_bot.SearchBot(cap_ms=0, worlds=6)
        chosen: list[int] = []

        def choose(turn: m.Turn, game: Game) -> int:
            chosen.append(bot.choose(turn, game))
            return chosen[-1]

        _play("standard", seed, choose, 0, players=3, rounds="single")
        return chosen

    first = moves(11)
    assert len(first) > 10 and moves(11) == first


def test_the_rollouts_score_a_round_won_with_a_last_tile_as_the_engine_does() -> None:
    """A rollout scores the play of a seat's last tile itself, without the engine's
    `apply` (which would deal the next round, only for the rollout to drop it): in
    every rule set, from every seat's side, what the engine's step and the rest of the
    rollout give. In masters a seat out in the first turns leaves the others theirs."""
    states = [
        point.state
        for name, seed in itertools.product(RULE_SETS, (0, 1))
        for point in decisions(preset(name), seed)
        if len(point.state.hands[point.state.to_move]) == 1
    ]
    early = [[(12, 5)], [(12, 1), (1, 2), (2, 3)], [(12, 3), (3, 4), (11, 0)], [(9, 0), (9, 9)]]
    states.append(position(preset("masters"), early, first_turns=True))
    ended = going_on = 0
    for state in states:
        for seat in range(state.rules.players):
            rng = random.Random(seat)
            move = Rollouts().move(state, rng)
            if move.kind is not MoveKind.PLAY:
                continue
            after = apply(state, move)
            if after.round_index != state.round_index or after.outcome is not None:
                expected = _score(after, state.round_index, seat)
                ended += 1
            else:
                expected = Rollouts().finish(after, seat, rng)
                going_on += 1
            got = Rollouts().finish(state, seat, random.Random(seat))
            assert got == expected, (state.rules, seat, state)
    assert ended > 100 and going_on > 0, (ended, going_on)


@pytest.mark.parametrize("players", [2, 3, 5, 8])
def test_the_search_bot_plays_legal_moves_at_every_table_size(players: int) -> None:
    search_bot = _load("search_bot")
    bot = search_bot.SearchBot(cap_ms=0, worlds=1)
    assert _play("standard", players, bot.choose, players - 1, players=players) > 10


@pytest.mark.parametrize("script", ["plan_bot.py", "search_bot.py"])
async def test_the_baseline_bots_pass_check_bot(script: str) -> None:
    argv: tuple[str, ...] = (sys.executable, str(BOTS / script))
    if script == "search_bot.py":
        # check-bot plays about a thousand decisions: the search thinks 5 ms on each (a
        # world or two; the search's choices are what the in-process tests above check).
        argv += ("--budget-ms", "5")
    checks = await check_bot(
        BotSpec(script, argv), plan=battery(), time=m.TimeControl(move_ms=2000, bank_ms=60000)
    )
    failed = [c.line() for c in checks if not c.ok]
    assert not failed, failed


@pytest.mark.parametrize("players", [2, 8])
async def test_the_search_bot_thinks_within_the_requests_clock(
    tmp_path: Path, players: int
) -> None:
    """A real search-bot process in every seat, under the referee's own clocks (time
    is the subject): it takes a share of each request's `move_ms` and no fault."""
    from referee.play.runner import run_game

    rules = preset("standard", players=players, rounds="single")  # double-12, one round
    argv = (sys.executable, str(BOTS / "search_bot.py"))
    specs = [BotSpec(f"search{i}", argv) for i in range(players)]
    time = m.TimeControl(move_ms=150, bank_ms=20_000)
    report = await run_game(
        specs, rules, 7, game_id="game-clock", time=time, log_path=tmp_path / "g.jsonl"
    )
    result = report.result
    assert result is not None
    assert not any(result.faults), result.faults
    assert result.outcome is not None


def test_the_search_budget_comes_from_the_clock_and_never_empties_the_bank() -> None:
    search_bot = _load("search_bot")
    budget = search_bot.budget_ms
    assert budget(m.Clock(move_ms=1000, bank_ms=30_000), 400) == 400
    assert budget(m.Clock(move_ms=100, bank_ms=0), 400) == pytest.approx(40)
    # No move time: a slice of what is left, so the bank lasts however long the game.
    bank = 30_000.0
    for _ in range(10_000):
        bank -= budget(m.Clock(move_ms=0, bank_ms=int(bank)), 400)
    assert bank > 0
