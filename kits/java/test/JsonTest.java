import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tests of the JSON reader and writer in Json.java. */
class JsonTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> obj(String text) {
        return (Map<String, Object>) Json.parse(text);
    }

    @Test
    void parsesEveryKindOfValue() {
        Map<String, Object> o = obj(" {\"a\": [1, -2, 3.5, 1e3, true, false, null], \"b\": {\"c\": \"d\"}, \"e\": {}, \"f\": []} ");
        assertEquals(Arrays.asList(1L, -2L, 3.5, 1000.0, true, false, null), o.get("a"));
        assertEquals(Map.of("c", "d"), o.get("b"));
        assertEquals(Map.of(), o.get("e"));
        assertEquals(List.of(), o.get("f"));
        assertEquals(List.of("a", "b", "e", "f"), List.copyOf(o.keySet()), "keys keep their order");
    }

    @Test
    void keepsLargeIntegersExact() {
        assertEquals(9007199254740991L, Json.parse("9007199254740991"));
        assertEquals(4294967295L, Json.parse("4294967295"));
        assertEquals(Long.MIN_VALUE, Json.parse("-9223372036854775808"));
        assertEquals(1e19, Json.parse("10000000000000000000"), "beyond a long: a double");
        assertEquals(0L, Json.parse("-0"));
    }

    @Test
    void decodesEscapes() {
        assertEquals("q\" b\\ s/ \b\f\n\r\t", Json.parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\""));
        assertEquals("é€", Json.parse("\"\\u00e9\\u20AC\""));
        assertEquals("😀", Json.parse("\"\\ud83d\\ude00\""), "a surrogate pair is one character");
        assertEquals("dé😀", Json.parse("\"dé😀\""), "UTF-8 text passes through");
    }

    @Test
    void refusesWhatIsNotJson() {
        for (String bad : List.of("", "   ", "{", "[1,]", "{\"a\":1,}", "{'a':1}", "{a:1}", "01", "1.", ".5", "-",
                "1e", "+1", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"tab\there\"",
                "{} {}", "[1 2]", "{\"a\" 1}", "NaN")) {
            assertThrows(Json.JsonException.class, () -> Json.parse(bad), bad);
        }
        assertThrows(Json.JsonException.class, () -> Json.parse("[".repeat(10000)), "deep nesting");
    }

    @Test
    void writesCompactJson() {
        Map<String, Object> o = Json.object("type", "move", "id", 9007199254740991L, "index", 2,
                "list", List.of(1, true), "none", null, "ints", new int[] {6, 4}, "x", 0.5);
        assertEquals("{\"type\":\"move\",\"id\":9007199254740991,\"index\":2,\"list\":[1,true],"
                + "\"none\":null,\"ints\":[6,4],\"x\":0.5}", Json.write(o));
        assertEquals("\"a\\\"b\\\\c\\nd\\u0001é\"", Json.write("a\"b\\c\nd\u0001é"));
        assertThrows(IllegalArgumentException.class, () -> Json.write(Double.NaN));
    }

    @Test
    void writtenTextReadsBack() {
        String text = "{\"s\":\"\\u0000\\t\\\"x\\\\ \\u2028 😀\",\"n\":[-1,0,12345678901,2.5E-7],\"o\":{\"t\":true,\"z\":null}}";
        Object value = Json.parse(text);
        assertEquals(value, Json.parse(Json.write(value)));
    }

    @Test
    void fieldHelpersFallBack() {
        Map<String, Object> o = obj("{\"n\":5,\"s\":\"x\",\"b\":true,\"l\":[1,2],\"o\":{\"k\":1},\"z\":null}");
        assertEquals(5L, Json.getLong(o, "n", 0));
        assertEquals(5, Json.getInt(o, "n", 0));
        assertEquals(7, Json.getInt(o, "missing", 7));
        assertEquals(7, Json.getInt(o, "s", 7), "wrong type");
        assertEquals("x", Json.getString(o, "s", ""));
        assertEquals("d", Json.getString(o, "z", "d"), "null");
        assertEquals(true, Json.getBool(o, "b", false));
        assertEquals(List.of(1, 2), Json.getInts(o, "l"));
        assertEquals(List.of(), Json.getList(o, "missing"));
        assertEquals(Map.of("k", 1L), Json.getObject(o, "o"));
        assertEquals(Map.of(), Json.getObject(o, "z"));
        assertNull(o.get("z"));
    }
}
