import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * What the protocol helper remembers of the game in progress, for the
 * strategy: the game_start message, the current round's round_start, and the
 * events of this round so far. {@link Session} fills it in.
 */
public final class Game {
    /**
     * One event every seat sees: "played", "drew", "passed" or "marker" ({@code type});
     * only that type's fields are set.
     *
     * @param tile played: the tile as it lies; drew: the tile, or null unless this bot drew it
     * @param end played: the train's new open end
     * @param reason drew: "turn" or "penalty"
     * @param up marker: the seat's marker went up (true) or came down
     */
    public record Event(String type, int seat, Tile tile, int train, int end, boolean opensDouble,
            List<Integer> branches, boolean announce, String reason, boolean up) {

        static Event fromJson(Map<String, Object> event) {
            return new Event(
                    Json.getString(event, "type", ""),
                    Json.getInt(event, "seat", -1),
                    Tile.fromJson(event.get("tile")),
                    Json.getInt(event, "train", -1),
                    Json.getInt(event, "end", -1),
                    Json.getBool(event, "opens_double", false),
                    Json.getInts(event, "branches"),
                    Json.getBool(event, "announce", false),
                    Json.getString(event, "reason", ""),
                    Json.getBool(event, "up", false));
        }
    }

    private Map<String, Object> start = Map.of();
    private Map<String, Object> roundStart = Map.of();
    private final List<Event> events = new ArrayList<>();
    private Random random = new Random(0);
    private String note; // what say() set for the move being chosen; cleared before each turn
    private Map<String, Number> info = new LinkedHashMap<>();

    /** A new game: game_start has arrived. */
    void start(Map<String, Object> gameStart) {
        start = gameStart;
        roundStart = Map.of();
        events.clear();
        random = new Random(seed());
    }

    /** A new round: round_start has arrived. */
    void startRound(Map<String, Object> message) {
        roundStart = message;
        events.clear();
    }

    void add(Event event) {
        events.add(event);
    }

    /** This bot's seat in this game. */
    public int seat() {
        return Json.getInt(start, "seat", 0);
    }

    /** How many seats the table has. */
    public int players() {
        return Json.getInt(start, "players", 0);
    }

    /** Each seat's bot name, by seat. */
    public List<String> names() {
        List<String> names = new ArrayList<>();
        for (Object name : Json.getList(start, "names")) {
            names.add(String.valueOf(name));
        }
        return names;
    }

    /**
     * The game's rules options (spec/RULES.md, "Options"), as JSON values:
     * {@code Json.getBool(game.rules(), "mexican_train", true)}.
     */
    public Map<String, Object> rules() {
        return Json.getObject(start, "rules");
    }

    /** The bot's own seed, 0 to 2^32 - 1 (a long: an int would overflow). */
    public long seed() {
        return Json.getLong(start, "seed", 0);
    }

    /** How many rounds the game has. */
    public int rounds() {
        return Json.getInt(start, "rounds", 0);
    }

    /** A generator seeded with {@link #seed()}: a game replays identically. */
    public Random random() {
        return random;
    }

    /** The current round's number, from 0. */
    public int round() {
        return Json.getInt(roundStart, "round", 0);
    }

    /** The current round's engine number. */
    public int engine() {
        return Json.getInt(roundStart, "engine", 0);
    }

    /** This bot's hand as dealt at the start of the round. */
    public List<Tile> dealt() {
        return Tile.listFromJson(Json.getList(roundStart, "hand"));
    }

    /** This round's events so far, oldest first, this bot's own included. */
    public List<Event> events() {
        return Collections.unmodifiableList(events);
    }

    /**
     * A note and numbers by name to send with the move being chosen, and with
     * no other: call it in {@link Strategy#choose}, e.g.
     * {@code game.say("the double first", Map.of("estimate", -2.5, "worlds", 16))}.
     * A second call replaces the first. The referee keeps them in the game log
     * and never sends them to another seat. When the move is sent, the note is
     * cut to 280 characters (code points) and an entry of {@code info} the
     * protocol would refuse is dropped with a line on the log; of more than 16
     * good entries the first 16 in the map's iteration order are kept (use a
     * LinkedHashMap or a TreeMap when that order matters: Map.of has none).
     *
     * @param note any text; null or "" for none
     * @param info numbers by name (keys 1 to 32 of A-Z a-z 0-9 _ . -, values
     *     finite and within ±1e15); null or empty for none
     */
    public void say(String note, Map<String, ? extends Number> info) {
        this.note = note;
        this.info = info == null ? new LinkedHashMap<>() : new LinkedHashMap<>(info);
    }

    /** A note alone for the move being chosen: {@code say(note, null)}. */
    public void say(String note) {
        say(note, null);
    }

    /** What {@link #say} set for the move being chosen: the note, or null. */
    public String note() {
        return note;
    }

    /** What {@link #say} set for the move being chosen: the numbers (empty for none). */
    public Map<String, Number> info() {
        return Collections.unmodifiableMap(info);
    }

    /** A new turn: nothing said yet. */
    void clearSay() {
        note = null;
        info = new LinkedHashMap<>();
    }
}
