import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests of the sample strategy in Strategy.java: rewrite them with yours. */
class StrategyTest {
    private static Move play(int a, int b, int train) {
        return new Move("play", new Tile(a, b), train, false);
    }

    private static Move other(String action) {
        return new Move(action, null, -1, false);
    }

    private static int choose(int seat, List<Tile> hand, List<Move> legal) {
        Turn.View view = new Turn.View(0, 12, hand, null, List.of(), List.of(), List.of(), List.of(), 0,
                List.of(), List.of(), "start", 0);
        return Strategy.choose(new Turn(1, seat, view, legal, 1000, 30000), new Game());
    }

    @Test
    void playsTheHeaviestTile() {
        assertEquals(1, choose(0, List.of(new Tile(3, 1), new Tile(6, 5)),
                List.of(play(3, 1, 0), play(6, 5, 3), other("draw"))));
    }

    @Test
    void prefersItsOwnTrainWhenEqual() {
        assertEquals(1, choose(1, List.of(new Tile(6, 5)), List.of(play(6, 5, 3), play(6, 5, 1))));
    }

    @Test
    void aDoubleCountsMoreWhenItCanBeFollowed() {
        List<Move> legal = List.of(play(5, 1, 2), play(3, 3, 2));
        assertEquals(1, choose(0, List.of(new Tile(3, 3), new Tile(3, 0), new Tile(5, 1)), legal));
        assertEquals(0, choose(0, List.of(new Tile(3, 3), new Tile(5, 1)), legal));
    }

    @Test
    void withoutAPlayEndsThenDrawsThenPasses() {
        assertEquals(0, choose(0, List.of(new Tile(1, 0)), List.of(other("draw"), other("pass"))));
        assertEquals(1, choose(0, List.of(new Tile(1, 0)), List.of(other("pass"), other("end"))));
        assertEquals(0, choose(0, List.of(new Tile(1, 0)), List.of(other("pass"))));
    }
}
