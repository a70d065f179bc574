"""The in-process players: legal, reproducible from their seeds, and of different strength."""

from __future__ import annotations

import statistics

from referee.rules import MoveKind, legal_moves, new_game, preset
from referee.stats import game_score
from referee.stats.players import (
    greedy_player,
    heavy_player,
    play_game,
    play_recorded,
    random_player,
)

RULES = preset("standard", players=3, max_pip=6, rounds="single")


def test_players_only_make_legal_moves_and_games_end() -> None:
    for seed in range(10):
        players = [random_player(seed), heavy_player(seed, noise=0.2), greedy_player(seed)]
        end, steps = play_recorded(RULES, seed, players)
        assert end.outcome is not None
        for before, _ in steps:
            # Every player, asked anywhere in the game, answers with a legal move.
            assert all(p(before) in legal_moves(before) for p in players)


def test_a_game_is_a_function_of_the_seeds() -> None:
    def final(seed: int, bot_seed: int) -> tuple[int, ...]:
        players = [greedy_player((bot_seed, s), noise=0.1) for s in range(3)]
        end = play_game(RULES, seed, players)
        assert end.outcome is not None
        return end.outcome.scores

    assert final(4, 1) == final(4, 1)
    assert len({final(4, b) for b in range(8)}) > 1  # the noise depends on the bot's seed


def test_heavy_plays_its_heaviest_tile_and_greedy_beats_random() -> None:
    state = new_game(RULES, 9)
    plays = [m for m in legal_moves(state) if m.kind is MoveKind.PLAY]
    move = heavy_player(0)(state)
    if plays:
        assert move.tile is not None and move.tile.pips == max(m.tile.pips for m in plays if m.tile)
    two = preset("standard", players=2, max_pip=6, rounds="single")
    scores = []
    for seed in range(150):
        seat = seed % 2
        players = [random_player((seed, 1)), random_player((seed, 2))]
        players[seat] = greedy_player(seed)
        end = play_game(two, seed, players)
        assert end.outcome is not None
        scores.append(game_score(end.outcome.ranks, seat))
    assert statistics.fmean(scores) > 0.6  # about 0.7 over many games
