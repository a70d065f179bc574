//! How the bot plays. This is the file to replace.
//!
//! `choose` gets the turn request (`turn.view` is everything this seat may
//! know, `turn.legal` every legal move) and the game so far (`game.events`,
//! `game.rng`, `game.start.rules`), and returns an index into `turn.legal`.
//! `protocol.rs` does the rest: a panic or an index out of range plays legal
//! move 0 instead. To say why, `choose` may call `game.say(note, info)`: a
//! note and numbers sent with this move only (README.md).

use crate::protocol::{Action, Game, Move, Turn};

/// How good a play is; higher is better. Pips count ten each, so the bonuses
/// below only decide between plays of (nearly) equal weight.
fn value(play: &Move, turn: &Turn) -> i32 {
    let tile = match play.tile {
        Some(tile) => tile,
        None => return 0,
    };
    let view = &turn.view;
    let mut score = 10 * tile.pips();
    // A double counts a little more when another tile in hand can follow it.
    if tile.is_double() && view.hand.iter().any(|&t| t != tile && t.has(tile.0)) {
        score += 5;
    }
    // Between equal plays, its own train (its side's, with teams) first.
    let own_side = view.trains.get(turn.seat).map(|t| t.owner);
    let side = play.train.and_then(|t| view.trains.get(t)).map(|t| t.owner);
    if side.is_some() && side == own_side {
        score += 1;
    }
    score
}

// START HERE: write your strategy in this function.
//
/// Plays the heaviest tile it can (shedding pips is what scores), and never
/// draws, passes or ends its turn while it can play. When a play that leaves
/// one tile is listed twice (`announce_one_tile`), the announced one comes
/// first, and a tie keeps the first: it always announces.
pub fn choose(turn: &Turn, game: &mut Game) -> usize {
    let _ = game; // unused here: game.rng and game.events are there when you need them
    let mut best: Option<(usize, i32)> = None;
    for (i, play) in turn.legal.iter().enumerate() {
        if play.action != Action::Play {
            continue;
        }
        let v = value(play, turn);
        if best.map_or(true, |(_, best_value)| v > best_value) {
            best = Some((i, v));
        }
    }
    if let Some((i, _)) = best {
        return i;
    }
    // No play: end the turn if it may, else draw, else pass.
    [Action::End, Action::Draw, Action::Pass]
        .iter()
        .find_map(|&action| turn.legal.iter().position(|m| m.action == action))
        .unwrap_or(0)
}
