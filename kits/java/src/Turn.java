import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A turn request: this bot must answer with an index into {@code legal}.
 *
 * @param id the request's id, 1 to 2^53 - 1, echoed in the reply
 * @param seat this bot's seat
 * @param view everything this seat may know now
 * @param legal every legal move (plays, then draw, pass, end); never empty, and legal.get(0) is always legal
 * @param moveMs this decision's own time, in ms
 * @param bankMs the time left in the game's bank, in ms
 */
public record Turn(long id, int seat, View view, List<Move> legal, long moveMs, long bankMs) {

    /**
     * The table as this seat sees it (spec/PROTOCOL.md, "The turn request").
     *
     * @param drawn the tile just drawn when only it may be played, else null
     * @param trains every train, indexed by train number: seat s's own train is train s
     * @param step where the seat is within its turn: start, follow, continue, swan or build
     */
    public record View(int round, int engine, List<Tile> hand, Tile drawn, List<Train> trains,
            List<Boolean> markers, List<Integer> handCounts, List<Integer> scores, int boneyard,
            List<Integer> openDoubles, List<Integer> binding, String step, int next) {}

    /**
     * One train on the table.
     *
     * @param owner the side it belongs to; -1 for the Mexican train
     * @param tiles from the hub outwards, each as it lies
     * @param end the number a new tile must match
     * @param isPublic anyone may play on it
     * @param openDouble its last tile is a double not yet played on
     * @param parent for a branch, the train it grew from; else -1
     */
    public record Train(int train, int owner, List<Tile> tiles, int end, boolean isPublic,
            boolean openDouble, int parent) {}

    static Turn fromJson(Map<String, Object> turn) {
        Map<String, Object> view = Json.getObject(turn, "view");
        List<Train> trains = new ArrayList<>();
        for (Object item : Json.getList(view, "trains")) {
            if (item instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, Object> train = (Map<String, Object>) item;
                trains.add(new Train(
                        Json.getInt(train, "train", trains.size()),
                        Json.getInt(train, "owner", -1),
                        Tile.listFromJson(Json.getList(train, "tiles")),
                        Json.getInt(train, "end", 0),
                        Json.getBool(train, "public", false),
                        Json.getBool(train, "open_double", false),
                        Json.getInt(train, "parent", -1)));
            }
        }
        List<Boolean> markers = new ArrayList<>();
        for (Object item : Json.getList(view, "markers")) {
            markers.add(Boolean.TRUE.equals(item));
        }
        List<Move> legal = new ArrayList<>();
        for (Object item : Json.getList(turn, "legal")) {
            if (item instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, Object> move = (Map<String, Object>) item;
                legal.add(Move.fromJson(move));
            }
        }
        Map<String, Object> clock = Json.getObject(turn, "clock");
        return new Turn(
                Json.getLong(turn, "id", 0),
                Json.getInt(turn, "seat", 0),
                new View(
                        Json.getInt(view, "round", 0),
                        Json.getInt(view, "engine", 0),
                        Tile.listFromJson(Json.getList(view, "hand")),
                        Tile.fromJson(view.get("drawn")),
                        List.copyOf(trains),
                        List.copyOf(markers),
                        Json.getInts(view, "hand_counts"),
                        Json.getInts(view, "scores"),
                        Json.getInt(view, "boneyard", 0),
                        Json.getInts(view, "open_doubles"),
                        Json.getInts(view, "binding"),
                        Json.getString(view, "step", "start"),
                        Json.getInt(view, "next", 0)),
                List.copyOf(legal),
                Json.getLong(clock, "move_ms", 0),
                Json.getLong(clock, "bank_ms", 0));
    }
}
