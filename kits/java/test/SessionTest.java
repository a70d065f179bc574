import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Tests of the protocol helper with the strategy, in memory (no process). The
 * fixtures are real requests recorded by the referee (spec/kit_fixtures.py
 * writes them; `make examples` refreshes them).
 */
class SessionTest {
    private static final PrintStream QUIET = new PrintStream(OutputStream.nullOutputStream());

    @SuppressWarnings("unchecked")
    private static Map<String, Object> obj(String line) {
        return (Map<String, Object>) Json.parse(line);
    }

    /** Checks what the session answered to one referee line. */
    private static void checkReplies(String line, List<String> replies) {
        Map<String, Object> message = obj(line);
        Object type = message.get("type");
        if ("hello".equals(type)) {
            assertEquals(1, replies.size(), "hello: one reply");
            Map<String, Object> reply = obj(replies.get(0));
            assertEquals("ready", reply.get("type"));
            assertEquals(Strategy.NAME, reply.get("name"));
        } else if ("turn".equals(type)) {
            assertEquals(1, replies.size(), "turn " + message.get("id") + ": one reply");
            Map<String, Object> reply = obj(replies.get(0));
            assertEquals("move", reply.get("type"));
            assertEquals(message.get("id"), reply.get("id"), "the reply echoes the request's id");
            int legal = Json.getList(message, "legal").size();
            long index = Json.getLong(reply, "index", -1);
            assertTrue(index >= 0 && index < legal,
                    "turn " + message.get("id") + ": index " + index + " is not one of " + legal + " legal moves");
        } else {
            assertEquals(List.of(), replies, type + ": no reply");
        }
    }

    @TestFactory
    Stream<DynamicTest> everyFixture() throws IOException {
        Path folder = Path.of("fixtures");
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(folder)) {
            try (Stream<Path> list = Files.list(folder)) {
                list.filter(p -> p.toString().endsWith(".jsonl")).sorted().forEach(files::add);
            }
        }
        assertFalse(files.isEmpty(), "no fixtures/*.jsonl: run `make examples` at the repository root");
        return files.stream().map(path -> DynamicTest.dynamicTest(path.getFileName().toString(), () -> {
            List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
            Session session = new Session(QUIET);
            int turns = 0;
            for (String line : lines) {
                checkReplies(line, session.handle(line));
                if ("turn".equals(obj(line).get("type"))) {
                    turns++;
                }
            }
            if (!path.getFileName().toString().startsWith("game_end")) {
                assertTrue(turns > 0, path + " holds no turn request");
            }
            // The same lines through run() end cleanly at end of input, with one
            // line written for hello and one for each turn, and no more.
            StringWriter out = new StringWriter();
            String input = lines.stream().collect(Collectors.joining("\n", "", "\n"));
            Session.run(new BufferedReader(new StringReader(input)), out, QUIET);
            assertEquals(turns + 1, out.toString().lines().count(), "lines written by run()");
        }));
    }

    @Test
    void pingPongKeepsLargeNonce() {
        assertEquals(List.of("{\"type\":\"pong\",\"nonce\":9007199254740991}"),
                new Session(QUIET).handle("{\"type\":\"ping\",\"nonce\":9007199254740991}"));
    }

    @Test
    void turnEchoesLargeId() {
        String turn = "{\"type\":\"turn\",\"id\":9007199254740991,\"seat\":1,\"view\":{\"hand\":[[4,2]],\"drawn\":null},"
                + "\"legal\":[{\"action\":\"draw\"}],\"clock\":{\"move_ms\":1000,\"bank_ms\":30000}}";
        assertEquals(List.of("{\"type\":\"move\",\"id\":9007199254740991,\"index\":0}"),
                new Session(QUIET).handle(turn));
    }

    @Test
    void ignoresWhatItDoesNotKnow() {
        Session session = new Session(QUIET);
        for (String line : List.of("{\"type\":\"from_the_future\",\"x\":[1,{\"y\":null}]}",
                "{\"extra\":true,\"type\":\"round_end\",\"round\":0,\"new_field\":\"ignored\"}",
                "not json", "[1,2]", "", "\r")) {
            assertEquals(List.of(), session.handle(line), line);
        }
        List<String> replies = session.handle("{\"future\":1,\"type\":\"hello\",\"protocol\":1,\"rules\":{\"new_rule\":3}}\r\n");
        assertEquals(1, replies.size());
        assertEquals("ready", obj(replies.get(0)).get("type"));
    }

    @Test
    void runStopsAtBye() throws IOException {
        String input = "{\"type\":\"hello\",\"protocol\":1}\n{\"type\":\"bye\",\"reason\":\"done\"}\n"
                + "{\"type\":\"ping\",\"nonce\":5}\n";
        StringWriter out = new StringWriter();
        Session.run(new BufferedReader(new StringReader(input)), out, QUIET);
        assertEquals(1, out.toString().lines().count(), "only ready before bye: " + out);
    }

    @Test
    void brokenStrategyPlaysLegalMoveZero() {
        String turn = "{\"type\":\"turn\",\"id\":7,\"seat\":0,\"view\":{},\"legal\":[{\"action\":\"draw\"}]}";
        String zero = "{\"type\":\"move\",\"id\":7,\"index\":0}";
        assertEquals(List.of(zero), new Session(QUIET, (t, g) -> {
            throw new IllegalStateException("bug");
        }).handle(turn));
        assertEquals(List.of(zero), new Session(QUIET, (t, g) -> 3).handle(turn));
    }

    @Test
    void gameKeepsStartAndEvents() {
        Game[] seen = new Game[1];
        Turn[] turns = new Turn[1];
        Session session = new Session(QUIET, (turn, game) -> {
            seen[0] = game;
            turns[0] = turn;
            return 0;
        });
        for (String line : List.of(
                "{\"type\":\"game_start\",\"seat\":2,\"players\":3,\"names\":[\"a\",\"b\",\"c\"],\"seed\":4294967295,"
                        + "\"rules\":{\"max_pip\":9},\"rounds\":10}",
                "{\"type\":\"round_start\",\"round\":0,\"engine\":9,\"hand\":[[5,1]],\"holder\":null}",
                "{\"type\":\"played\",\"seat\":0,\"tile\":[9,4],\"train\":0,\"end\":4}",
                "{\"type\":\"drew\",\"seat\":1,\"tile\":null,\"reason\":\"turn\"}",
                "{\"type\":\"turn\",\"id\":1,\"seat\":2,\"view\":{\"hand\":[[5,1]],\"drawn\":[5,1],\"trains\":"
                        + "[{\"train\":0,\"owner\":0,\"tiles\":[[9,4]],\"end\":4,\"public\":true,\"open_double\":false,"
                        + "\"parent\":-1}],\"markers\":[true,false,false],\"step\":\"start\"},"
                        + "\"legal\":[{\"action\":\"play\",\"tile\":[5,1],\"train\":3,\"announce\":true},{\"action\":\"draw\"}],"
                        + "\"clock\":{\"move_ms\":1000,\"bank_ms\":30000}}")) {
            session.handle(line);
        }
        Game game = seen[0];
        assertEquals(2, game.seat());
        assertEquals(4294967295L, game.seed());
        assertEquals(9L, game.rules().get("max_pip"));
        assertEquals(List.of("a", "b", "c"), game.names());
        assertEquals(9, game.engine());
        assertEquals(List.of(new Tile(5, 1)), game.dealt());
        assertEquals(2, game.events().size());
        assertEquals(new Tile(9, 4), game.events().get(0).tile());
        assertNull(game.events().get(1).tile());
        Turn turn = turns[0];
        assertEquals(new Tile(5, 1), turn.view().drawn());
        assertEquals(new Move("play", new Tile(5, 1), 3, true), turn.legal().get(0));
        assertEquals(new Move("draw", null, -1, false), turn.legal().get(1));
        assertEquals(List.of(new Tile(9, 4)), turn.view().trains().get(0).tiles());
        assertTrue(turn.view().trains().get(0).isPublic());
        assertEquals(List.of(true, false, false), turn.view().markers());
        assertEquals(30000L, turn.bankMs());
    }

    /** A turn request with one play (6-1) and a draw. */
    private static String sayTurn(int id) {
        return "{\"type\":\"turn\",\"id\":" + id + ",\"seat\":0,\"view\":{\"hand\":[[6,1]]},"
                + "\"legal\":[{\"action\":\"play\",\"tile\":[6,1],\"train\":3},{\"action\":\"draw\"}]}";
    }

    @Test
    void sayPutsANoteAndInfoOnThisMoveOnly() {
        Session session = new Session(QUIET, (turn, game) -> {
            if (turn.id() == 7) {
                Map<String, Number> info = new LinkedHashMap<>();
                info.put("estimate", -2.5);
                info.put("worlds", 16);
                game.say("heaviest tile \u2615", info);
            }
            return Strategy.choose(turn, game);
        });
        assertEquals(List.of("{\"type\":\"move\",\"id\":7,\"index\":0,\"note\":\"heaviest tile \u2615\","
                + "\"info\":{\"estimate\":-2.5,\"worlds\":16}}"), session.handle(sayTurn(7)));
        // The next turn says nothing: the line is the very one of a bot without say.
        assertEquals(List.of("{\"type\":\"move\",\"id\":8,\"index\":0}"), session.handle(sayTurn(8)));
    }

    @Test
    void sayCutsALongNoteTo280CodePoints() {
        String[] note = {"a".repeat(279) + "\uD83D\uDE00bc"}; // the emoji, two chars, is the 280th character
        Session session = new Session(QUIET, (turn, game) -> {
            game.say(note[0]);
            return 0;
        });
        Map<String, Object> sent = obj(session.handle(sayTurn(7)).get(0));
        String cut = (String) sent.get("note");
        assertEquals("a".repeat(279) + "\uD83D\uDE00", cut);
        assertEquals(280, cut.codePointCount(0, cut.length()));
        assertNull(sent.get("info"));
        note[0] = "\u00e9".repeat(300); // characters, not bytes
        assertEquals("\u00e9".repeat(280), obj(session.handle(sayTurn(7)).get(0)).get("note"));
        note[0] = "x\uD800y"; // a lone surrogate cannot be sent: U+FFFD instead
        assertEquals("x\uFFFDy", obj(session.handle(sayTurn(7)).get(0)).get("note"));
        note[0] = "";
        assertEquals(List.of("{\"type\":\"move\",\"id\":7,\"index\":0}"), session.handle(sayTurn(7)));
    }

    @Test
    void sayDropsAnInfoTheProtocolRefuses() {
        Map<String, Number> bad = new LinkedHashMap<>();
        bad.put("ok", 2);
        bad.put("bad key", 1);
        bad.put("", 3);
        bad.put("k".repeat(33), 4);
        bad.put("\u00e9", 5);
        bad.put("nan", Double.NaN);
        bad.put("inf", Double.NEGATIVE_INFINITY);
        bad.put("big", 1e15 + 2);
        bad.put("none", null);
        bad.put(null, 6);
        bad.put("max", -1e15);
        bad.put("a.b-c_9", 0.5);
        List<Map<String, Number>> said = new ArrayList<>(List.of(bad));
        ByteArrayOutputStream logged = new ByteArrayOutputStream();
        Session session = new Session(new PrintStream(logged, true, StandardCharsets.UTF_8), (turn, game) -> {
            game.say(null, said.get(0));
            return 0;
        });
        assertEquals(List.of("{\"type\":\"move\",\"id\":7,\"index\":0,"
                + "\"info\":{\"ok\":2,\"max\":-1000000000000000,\"a.b-c_9\":0.5}}"), session.handle(sayTurn(7)));
        String log = logged.toString(StandardCharsets.UTF_8);
        assertEquals(9, log.lines().count(), log);
        assertTrue(log.contains("\"bad key\""), log);

        // Of 20 good numbers, the first 16 in the map's order.
        Map<String, Number> many = new TreeMap<>();
        for (int i = 0; i < 20; i++) {
            many.put(String.format("n%02d", i), i);
        }
        said.set(0, many);
        Map<String, Object> info = Json.getObject(obj(session.handle(sayTurn(7)).get(0)), "info");
        assertEquals(new ArrayList<>(many.keySet()).subList(0, 16), new ArrayList<>(info.keySet()));
        said.set(0, Map.of("no good", 1));
        assertEquals(List.of("{\"type\":\"move\",\"id\":7,\"index\":0}"), session.handle(sayTurn(7)));
    }
}
