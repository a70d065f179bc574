// START HERE: the strategy. This is the file to replace with your own.
//
// choose(turn, game) gets one turn request (spec/PROTOCOL.md, "The turn
// request"; its type is `Turn` in messages.ts) and what protocol.ts remembers
// of the game, and returns the index of the chosen move in turn.legal (or one
// of its entries). Every entry of turn.legal is legal, so any index from 0 to
// turn.legal.length - 1 is a legal answer.
//
//   turn.seat         this bot's seat
//   turn.view.hand    its tiles, e.g. [[6,4],[3,3]], high end first
//   turn.view.trains  every train: {train, owner, tiles, end, public, open_double, parent}
//   turn.view.drawn   the tile just drawn when only it may be played, else null
//   turn.legal        {action:"play", tile:[a,b], train:t} | {action:"draw"} | {action:"pass"} | {action:"end"}
//   game.start        the game_start message (rules, names, seat, seed)
//   game.events       everything played, drawn and passed this game
//   game.random()     a number in [0, 1) seeded for this game
//   game.say(note, info)  a note and numbers sent with this move, e.g.
//                     game.say("why", { estimate: -2.5 }) (README, "Saying why")
//
// This strategy plays the heaviest tile it can. A double counts a little more
// when the hand holds a tile that can follow it; between equal plays it
// prefers its own train. With no play it ends its turn, draws or passes,
// whichever of those is legal first.

import type { LegalMove, PlayMove, Tile, Turn } from "./messages";
import type { Game } from "./protocol";

const DOUBLE_BONUS = 0.5; // less than one pip: a followed double beats only an equal or lighter tile
const FALLBACKS: LegalMove["action"][] = ["end", "draw", "pass"]; // when no tile can be played, in this order

function pips(tile: Tile): number {
  return tile[0] + tile[1];
}

/** How much a play is worth: its pips, plus a bonus for a double another tile of the hand can follow. */
export function worth(move: PlayMove, hand: Tile[]): number {
  const [a, b] = move.tile;
  let value = pips(move.tile);
  if (a === b) {
    const follows = hand.some((tile) => !(tile[0] === a && tile[1] === b) && (tile[0] === a || tile[1] === a));
    if (follows) value += DOUBLE_BONUS;
  }
  return value;
}

export function choose(turn: Turn, _game: Game): number | LegalMove {
  const view = turn.view;
  const mySide = view.trains[turn.seat].owner; // the owner of this seat's own train
  let best = -1;
  let bestWorth = -Infinity;
  let bestOwn = false;
  turn.legal.forEach((move, i) => {
    if (move.action !== "play") return;
    const value = worth(move, view.hand);
    const own = view.trains[move.train].owner === mySide;
    // Strictly better only, so an equal later entry never displaces an earlier
    // one (with announce_one_tile the announced play is listed first).
    if (value > bestWorth || (value === bestWorth && own && !bestOwn)) {
      best = i;
      bestWorth = value;
      bestOwn = own;
    }
  });
  if (best >= 0) return best;
  for (const action of FALLBACKS) {
    const i = turn.legal.findIndex((move) => move.action === action);
    if (i >= 0) return i;
  }
  return 0;
}
