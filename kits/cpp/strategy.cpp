// strategy.cpp: how the bot plays. This is the file to replace.
//
// choose() gets the turn request (turn.view is everything this seat may know,
// turn.legal every legal move) and the game so far (game.events, game.rng,
// game.rules), and returns an index into turn.legal. protocol.cpp does the
// rest: an exception or an index out of range plays legal move 0 instead.
// To say why, choose() may call game.say(note, info): a note and numbers sent
// with this move only (README.md).
#include "protocol.hpp"

namespace kit {
namespace {

// How good a play is; higher is better. Pips count ten each, so the bonuses
// below only decide between plays of (nearly) equal weight.
int value(const Move& move, const Turn& turn) {
  const View& view = turn.view;
  int score = 10 * move.tile.pips();
  if (move.tile.is_double()) {
    // A double counts a little more when another tile in hand can follow it.
    for (const Tile& t : view.hand) {
      if (!(t == move.tile) && t.has(move.tile.a)) {
        score += 5;
        break;
      }
    }
  }
  // Between equal plays, its own train (its side's, with teams) first.
  const int own = static_cast<int>(view.trains.size()) > turn.seat ? view.trains[turn.seat].owner : turn.seat;
  if (move.train >= 0 && move.train < static_cast<int>(view.trains.size()) &&
      view.trains[move.train].owner == own) {
    score += 1;
  }
  return score;
}

}  // namespace

// START HERE: write your strategy in this function.
//
// This one plays the heaviest tile it can (shedding pips is what scores), and
// never draws, passes or ends its turn while it can play. When a play that
// leaves one tile is listed twice (announce_one_tile), the announced one comes
// first, and a tie keeps the first: it always announces.
int choose(const Turn& turn, Game& game) {
  (void)game;  // unused here: game.rng and game.events are there when you need them
  int best = -1;
  int best_value = 0;
  for (int i = 0; i < static_cast<int>(turn.legal.size()); ++i) {
    const Move& move = turn.legal[i];
    if (!move.is_play()) continue;
    int v = value(move, turn);
    if (best < 0 || v > best_value) {
      best = i;
      best_value = v;
    }
  }
  if (best >= 0) return best;
  // No play: end the turn if it may, else draw, else pass.
  for (const char* action : {"end", "draw", "pass"}) {
    for (int i = 0; i < static_cast<int>(turn.legal.size()); ++i) {
      if (turn.legal[i].action == action) return i;
    }
  }
  return 0;
}

}  // namespace kit
