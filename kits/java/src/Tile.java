import java.util.ArrayList;
import java.util.List;

/**
 * A domino: its two pip counts. In hands and in legal moves the high end comes
 * first ({@code [6,4]}); on a train a tile is written as it lies, {@code a}
 * touching the tile before it.
 */
public record Tile(int a, int b) {
    /** The tile's value: the sum of its two ends. */
    public int pips() {
        return a + b;
    }

    /** Whether both ends are the same number. */
    public boolean isDouble() {
        return a == b;
    }

    /** Whether either end shows {@code pip}. */
    public boolean has(int pip) {
        return a == pip || b == pip;
    }

    /** The tile a JSON array {@code [a, b]} names, or null for JSON null (or anything else). */
    static Tile fromJson(Object value) {
        if (value instanceof List<?> pair && pair.size() == 2
                && pair.get(0) instanceof Number a && pair.get(1) instanceof Number b) {
            return new Tile(a.intValue(), b.intValue());
        }
        return null;
    }

    /** The tiles of a JSON array of tiles. */
    static List<Tile> listFromJson(List<Object> values) {
        List<Tile> tiles = new ArrayList<>();
        for (Object value : values) {
            Tile tile = fromJson(value);
            if (tile != null) {
                tiles.add(tile);
            }
        }
        return List.copyOf(tiles);
    }

    @Override
    public String toString() {
        return "[" + a + "," + b + "]";
    }
}
