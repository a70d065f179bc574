"""START HERE: the strategy. This is the file to replace with your own.

`choose(turn, game)` gets one turn request (spec/PROTOCOL.md, "The turn request")
and what the protocol helper remembers of the game, and returns the index of the
chosen move in `turn.legal`. Every entry of `turn.legal` is legal, so any index
from 0 to `len(turn.legal) - 1` is a legal answer.

    turn.seat          this bot's seat
    turn.view.hand     its tiles, e.g. [(6, 4), (3, 3)], high end first
    turn.view.trains   every train: .train, .owner, .tiles, .end, .public, .open_double, .parent
    turn.view.drawn    the tile just drawn when only it may be played, else None
    turn.legal         MoveSpec(action="play", tile=(a, b), train=t) or action "draw", "pass", "end"
    turn.clock         .move_ms and .bank_ms: the time this decision has
    game.start         the game_start message (rules, names, seat, seed, rounds)
    game.events        every message of this game since game_start (played, drew, ...)
    game.rng           a random.Random seeded for this game

This strategy plays the heaviest tile it can. A double counts a little more when
the hand holds a tile that can follow it; between equal plays it prefers its own
train. With no play it ends its turn, draws or passes, whichever is legal first.
"""

from __future__ import annotations

from protocol.bot import Game
from protocol.messages import MoveSpec, Tile, Turn

DOUBLE_BONUS = 0.5  # less than one pip: a followed double beats only an equal or lighter tile
FALLBACKS = ("end", "draw", "pass")  # when no tile can be played, in this order


def worth(move: MoveSpec, hand: list[Tile]) -> float:
    """How much a play is worth: its pips, plus a bonus for a double that another
    tile of the hand can follow."""
    assert move.tile is not None
    a, b = move.tile
    value = float(a + b)
    if a == b and any(tile != (a, b) and a in tile for tile in hand):
        value += DOUBLE_BONUS
    return value


def choose(turn: Turn, game: Game) -> int:
    """The index of the chosen move in `turn.legal`."""
    del game  # this strategy looks at the request alone
    my_side = turn.view.trains[turn.seat].owner  # the owner of this seat's own train
    best, best_key = -1, (float("-inf"), False)
    for i, move in enumerate(turn.legal):
        if move.action != "play":
            continue
        assert move.train is not None
        own = turn.view.trains[move.train].owner == my_side
        key = (worth(move, turn.view.hand), own)
        # Strictly better only, so an equal later entry never displaces an earlier one
        # (with announce_one_tile the announced play is listed first).
        if key > best_key:
            best, best_key = i, key
    if best >= 0:
        return best
    for action in FALLBACKS:
        for i, move in enumerate(turn.legal):
            if move.action == action:
                return i
    return 0
