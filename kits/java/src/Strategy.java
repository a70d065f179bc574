import java.util.List;

/**
 * START HERE: the bot's strategy, the one file to rewrite.
 *
 * <p>{@link #choose} gets each turn request and returns the index of the move
 * to play in {@code turn.legal()}. The referee lists every legal move there
 * (plays first, then draw, pass, end), so any index in range is a legal move.
 * What it may read:
 * <ul>
 *   <li>{@code turn.view()}: this seat's hand, every train, markers, hand
 *       counts, scores, open doubles, and the step within the turn (see
 *       spec/PROTOCOL.md);</li>
 *   <li>{@code game}: the game's seat, names, rules and seed, the round's deal,
 *       what every seat did this round, and {@code game.random()}, seeded with
 *       the game's bot seed; {@code game.say(note, info)} sends a note and
 *       numbers with this move only (README.md).</li>
 * </ul>
 *
 * <p>The strategy below is a simple greedy one: play the heaviest tile it can,
 * so that few pips are left in hand when someone goes out.
 */
public final class Strategy {
    /** The bot's name, version and author, sent in ready. */
    public static final String NAME = "java-kit";
    public static final String VERSION = "1.0";
    public static final String AUTHOR = "Mexican Train starter kit";

    private Strategy() {}

    /**
     * The index in {@code turn.legal()} of the move to play: the heaviest
     * playable tile; else the first of end, draw and pass that is legal.
     */
    public static int choose(Turn turn, Game game) {
        List<Move> legal = turn.legal();
        int best = -1;
        int bestScore = 0;
        for (int i = 0; i < legal.size(); i++) {
            Move move = legal.get(i);
            if (!move.isPlay()) {
                continue;
            }
            // Strictly better only: of two equal plays the first listed stays. With
            // announce_one_tile the announced play comes first, so it is the one kept.
            int score = playScore(move, turn);
            if (best < 0 || score > bestScore) {
                best = i;
                bestScore = score;
            }
        }
        if (best >= 0) {
            return best;
        }
        for (String action : List.of("end", "draw", "pass")) {
            for (int i = 0; i < legal.size(); i++) {
                if (legal.get(i).action().equals(action)) {
                    return i;
                }
            }
        }
        return 0; // never reached: legal always holds a play, end, draw or pass
    }

    /**
     * How good a play is: ten points a pip, five more for a double when the
     * hand keeps a tile to follow it, and one more on the bot's own train
     * (train number = seat), so that of two equal plays its own train goes first.
     */
    static int playScore(Move move, Turn turn) {
        Tile tile = move.tile();
        int score = 10 * tile.pips();
        if (tile.isDouble() && holdsFollower(turn.view().hand(), tile)) {
            score += 5;
        }
        if (move.train() == turn.seat()) {
            score += 1;
        }
        return score;
    }

    /** Whether the hand has another tile that matches the double. */
    static boolean holdsFollower(List<Tile> hand, Tile dbl) {
        for (Tile tile : hand) {
            if (!tile.equals(dbl) && tile.has(dbl.a())) {
                return true;
            }
        }
        return false;
    }
}
