// START HERE: this file is the bot's strategy, the one file to rewrite.
//
// Choose gets each turn request and returns the index of the move to play in
// turn.Legal. The referee lists every legal move there (plays first, then
// draw, pass, end), so any index in range is a legal move. What it may read:
//
//   - turn.View: this seat's hand, every train, markers, hand counts, scores,
//     open doubles, and the step within the turn (see spec/PROTOCOL.md);
//   - game.Start: the game's seat, names and rules; game.Round: the round's
//     deal; game.Events: what every seat did this round;
//   - game.Rand: a random generator seeded with the game's bot seed.
//
// To say why it chose a move, Choose may call game.Say(note, info): a note and
// numbers sent with this move only (README.md).
//
// The strategy below is a simple greedy one: play the heaviest tile it can,
// so that few pips are left in hand when someone goes out.

package main

// The bot's name, version and author, sent in ready.
const (
	BotName    = "go-kit"
	BotVersion = "1.0"
	BotAuthor  = "Mexican Train starter kit"
)

// Choose returns the index in turn.Legal of the move to play: the heaviest
// playable tile; else the first of end, draw and pass that is legal.
func Choose(turn *Turn, game *Game) int {
	best, bestScore := -1, 0
	for i, move := range turn.Legal {
		if move.Action != "play" {
			continue
		}
		// Strictly better only: of two equal plays the first listed stays. With
		// announce_one_tile the announced play comes first, so it is the one kept.
		if score := playScore(move, turn); best < 0 || score > bestScore {
			best, bestScore = i, score
		}
	}
	if best >= 0 {
		return best
	}
	for _, action := range []string{"end", "draw", "pass"} {
		for i, move := range turn.Legal {
			if move.Action == action {
				return i
			}
		}
	}
	return 0 // never reached: Legal always holds a play, end, draw or pass
}

// playScore rates a play: ten points a pip, five more for a double when the
// hand keeps a tile to follow it, and one more on the bot's own train (train
// number = seat), so that of two equal plays its own train goes first.
func playScore(move Move, turn *Turn) int {
	score := 10 * move.Tile.Pips()
	if move.Tile.IsDouble() && holdsFollower(turn.View.Hand, move.Tile) {
		score += 5
	}
	if move.Train == turn.Seat {
		score++
	}
	return score
}

// holdsFollower says whether the hand has another tile that matches the double.
func holdsFollower(hand []Tile, double Tile) bool {
	for _, tile := range hand {
		if tile != double && tile.Has(double[0]) {
			return true
		}
	}
	return false
}
