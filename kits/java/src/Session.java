import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntBiFunction;
import java.util.regex.Pattern;

/**
 * The protocol helper: everything between the referee's lines and the strategy.
 *
 * <p>The bot contract is spec/PROTOCOL.md (protocol version 1): one JSON object
 * per line on stdin, one per line on stdout, logs on stderr. A session answers
 * hello with ready, ping with pong, and every turn with a move chosen by
 * {@link Strategy#choose}; it keeps the game's messages in a {@link Game} for
 * the strategy, stops at bye, and ignores every message type and field it does
 * not know. You should not need to change it: write your strategy in
 * Strategy.java.
 *
 * <p>{@link #handle} works on one line at a time and returns the reply lines,
 * so the whole bot can be driven in memory (see SessionTest); {@link #run}
 * connects a session to real streams.
 */
public final class Session {
    /** The protocol this bot speaks (hello.protocol, ready.protocol). */
    public static final int PROTOCOL = 1;

    // The limits of a move's note and info (spec/PROTOCOL.md, "The reply"):
    // beyond them the reply is malformed, so the helper keeps within them.
    /** Characters (Unicode code points, not chars) of a move's note. */
    public static final int NOTE_MAX = 280;
    /** Numbers in a move's info. */
    public static final int INFO_KEYS_MAX = 16;
    private static final Pattern INFO_KEY = Pattern.compile("[A-Za-z0-9_.-]{1,32}");
    private static final double INFO_ABS_MAX = 1e15;

    private final PrintStream log;
    private final ToIntBiFunction<Turn, Game> strategy;
    private final Game game = new Game();
    private boolean done;

    /** A session that plays with {@link Strategy#choose} and logs to {@code log}. */
    public Session(PrintStream log) {
        this(log, Strategy::choose);
    }

    /** A session that plays with another strategy (tests use this). */
    public Session(PrintStream log, ToIntBiFunction<Turn, Game> strategy) {
        this.log = log;
        this.strategy = strategy;
    }

    /** Whether the referee said bye: nothing more will come. */
    public boolean done() {
        return done;
    }

    private void log(String text) {
        log.println(Strategy.NAME + ": " + text);
    }

    private static String shorten(String line) {
        return line.length() <= 80 ? line : line.substring(0, 80) + "...";
    }

    /**
     * Takes one line from the referee (its line ending optional) and returns
     * the lines to send back, each without its newline: none for most
     * messages, one for hello, turn and ping. A line it cannot read is logged
     * and ignored.
     */
    public List<String> handle(String line) {
        line = line.replaceAll("[\r\n]+$", "");
        if (line.isBlank()) {
            return List.of();
        }
        Map<String, Object> message;
        try {
            Object value = Json.parse(line);
            if (!(value instanceof Map)) {
                log("not a JSON object, ignored: " + shorten(line));
                return List.of();
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> object = (Map<String, Object>) value;
            message = object;
        } catch (Json.JsonException e) {
            log("not JSON (" + e.getMessage() + "), ignored: " + shorten(line));
            return List.of();
        }
        String type = Json.getString(message, "type", "");
        try {
            Map<String, Object> reply = dispatch(type, message);
            return reply == null ? List.of() : List.of(Json.write(reply));
        } catch (RuntimeException e) {
            log("cannot read " + type + " (" + e + "), ignored: " + shorten(line));
            return List.of();
        }
    }

    /** Acts on one message by its type; returns the reply, or null. */
    private Map<String, Object> dispatch(String type, Map<String, Object> message) {
        switch (type) {
            case "hello":
                int protocol = Json.getInt(message, "protocol", PROTOCOL);
                if (protocol != PROTOCOL) {
                    log("referee speaks protocol " + protocol + "; this bot speaks " + PROTOCOL);
                }
                return Json.object("type", "ready", "name", Strategy.NAME, "version", Strategy.VERSION,
                        "author", Strategy.AUTHOR, "protocol", PROTOCOL);
            case "game_start":
                game.start(message);
                return null;
            case "round_start":
                game.startRound(message);
                return null;
            case "played":
            case "drew":
            case "passed":
            case "marker":
                game.add(Game.Event.fromJson(message));
                return null;
            case "turn":
                Turn turn = Turn.fromJson(message);
                game.clearSay(); // what the strategy says goes with this move only
                Map<String, Object> move = Json.object("type", "move", "id", turn.id(), "index", decide(turn));
                String note = cleanNote(game.note());
                Map<String, Object> info = cleanInfo(game.info());
                if (note != null) {
                    move.put("note", note);
                }
                if (!info.isEmpty()) {
                    move.put("info", info);
                }
                return move;
            case "ping":
                return Json.object("type", "pong", "nonce", Json.getLong(message, "nonce", 0));
            case "error":
                log("referee says " + Json.getString(message, "code", "?") + ": "
                        + Json.getString(message, "message", ""));
                return null;
            case "game_end":
                log("game over: scores " + Json.getList(message, "scores")
                        + ", ranks " + Json.getList(message, "ranks"));
                return null;
            case "bye":
                done = true;
                return null;
            default:
                return null; // round_end, and any message type added later
        }
    }

    /**
     * Asks the strategy for a move. A strategy that throws or returns an index
     * out of range is logged, and legal move 0 (always legal) is played
     * instead, so a bug costs a poor move rather than a forfeit.
     */
    private int decide(Turn turn) {
        int index;
        try {
            index = strategy.applyAsInt(turn, game);
        } catch (RuntimeException | StackOverflowError e) {
            log("strategy failed on request " + turn.id() + " (" + e + "); playing legal move 0");
            return 0;
        }
        if (index < 0 || index >= turn.legal().size()) {
            log("strategy returned " + index + " for " + turn.legal().size()
                    + " legal moves; playing legal move 0");
            return 0;
        }
        return index;
    }

    /**
     * The note as sent: null for none, else at most {@link #NOTE_MAX} code
     * points (a character outside the BMP is one, never cut in half), a lone
     * surrogate (which no UTF-8 line can carry) replaced by U+FFFD.
     */
    static String cleanNote(String note) {
        if (note == null || note.isEmpty()) {
            return null;
        }
        int[] points = note.codePoints()
                .limit(NOTE_MAX)
                .map(c -> c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE ? 0xFFFD : c)
                .toArray();
        return new String(points, 0, points.length);
    }

    /**
     * The info as sent (empty for none): each key 1 to 32 of A-Z a-z 0-9 _ . -
     * and each value a finite number within ±1e15; any other entry is dropped
     * with a line on the log. Past {@link #INFO_KEYS_MAX} good entries (in the
     * map's order) the rest are dropped. A whole number is written without ".0".
     */
    private Map<String, Object> cleanInfo(Map<String, Number> info) {
        Map<String, Object> clean = new LinkedHashMap<>();
        for (Map.Entry<String, Number> entry : info.entrySet()) {
            String key = entry.getKey();
            Number number = entry.getValue();
            double value = number == null ? Double.NaN : number.doubleValue();
            if (key == null || !INFO_KEY.matcher(key).matches()) {
                log("info key " + (key == null ? "null" : Json.write(shorten(key)))
                        + " dropped: a key is 1 to 32 of A-Z a-z 0-9 _ . -");
            } else if (!Double.isFinite(value) || Math.abs(value) > INFO_ABS_MAX) {
                log("info " + key + " dropped: " + number + " is not a number from -1e15 to 1e15");
            } else if (clean.size() >= INFO_KEYS_MAX) {
                log("info " + key + " dropped: at most " + INFO_KEYS_MAX + " numbers");
            } else if (value == Math.rint(value)) {
                clean.put(key, (long) value); // 16, not 16.0
            } else {
                clean.put(key, value);
            }
        }
        return clean;
    }

    /**
     * Plays one connection: reads lines from {@code in} until bye or end of
     * input, and writes each reply to {@code out} as one line, flushed at once.
     */
    public static void run(BufferedReader in, Writer out, PrintStream log) throws IOException {
        Session session = new Session(log);
        String line;
        while (!session.done() && (line = in.readLine()) != null) {
            for (String reply : session.handle(line)) {
                out.write(reply);
                out.write('\n');
                out.flush(); // a reply still in a buffer has not been sent
            }
        }
    }
}
