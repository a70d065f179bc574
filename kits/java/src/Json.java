import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer (RFC 8259), enough for the bot protocol and
 * no more, so that the kit needs nothing beyond the JDK.
 *
 * <p>{@link #parse} turns text into plain Java values: an object becomes a
 * {@code Map<String, Object>} (keys in their order), an array a {@code
 * List<Object>}, a string a {@code String}, a number a {@code Long} when it is
 * an integer that fits (ids and nonces go up to 2^53 - 1) and a {@code Double}
 * otherwise, {@code true}/{@code false} a {@code Boolean}, {@code null} Java's
 * null. {@link #write} does the reverse, writing compact JSON. The {@code get*}
 * helpers read one field of an object with a fallback for a field that is
 * absent or null, which is how a bot ignores fields it does not know and
 * tolerates fields it does not get.
 */
public final class Json {
    /** Deeper nesting than this is refused rather than overflowing the stack. */
    private static final int MAX_DEPTH = 512;

    /** Text that is not JSON, with where it went wrong. */
    public static final class JsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        JsonException(String message, int position) {
            super(message + " at character " + position);
        }
    }

    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    // ---------------------------------------------------------------- reading

    /** The value that {@code text} holds; whitespace may surround it, nothing else. */
    public static Object parse(String text) {
        Json reader = new Json(text);
        Object value = reader.value(0);
        reader.skipWhitespace();
        if (reader.pos != text.length()) {
            throw reader.error("unexpected text after the value");
        }
        return value;
    }

    private JsonException error(String message) {
        return new JsonException(message, pos);
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested too deeply");
        }
        skipWhitespace();
        if (pos >= text.length()) {
            throw error("a value is missing");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("expected " + word);
        }
        pos += word.length();
        return value;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> object = new LinkedHashMap<>();
        pos++; // {
        skipWhitespace();
        if (pos < text.length() && text.charAt(pos) == '}') {
            pos++;
            return object;
        }
        while (true) {
            skipWhitespace();
            if (pos >= text.length() || text.charAt(pos) != '"') {
                throw error("expected a string key");
            }
            String key = string();
            skipWhitespace();
            expect(':');
            object.put(key, value(depth + 1));
            skipWhitespace();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect('}');
            return object;
        }
    }

    private List<Object> array(int depth) {
        List<Object> array = new ArrayList<>();
        pos++; // [
        skipWhitespace();
        if (pos < text.length() && text.charAt(pos) == ']') {
            pos++;
            return array;
        }
        while (true) {
            array.add(value(depth + 1));
            skipWhitespace();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect(']');
            return array;
        }
    }

    private void expect(char c) {
        if (pos >= text.length() || text.charAt(pos) != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private String string() {
        pos++; // opening quote
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw error("control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u':
                    // Four hex digits: one UTF-16 unit. A character beyond the
                    // BMP comes as two escapes (a surrogate pair), which Java
                    // strings, UTF-16 themselves, hold as they are.
                    if (pos + 4 > text.length()) {
                        throw error("short \\u escape");
                    }
                    int code = 0;
                    for (int i = 0; i < 4; i++) {
                        int digit = hexDigit(text.charAt(pos++));
                        if (digit < 0) {
                            throw error("bad hex digit in a \\u escape");
                        }
                        code = code * 16 + digit;
                    }
                    out.append((char) code);
                    break;
                default:
                    throw error("unknown escape \\" + e);
            }
        }
    }

    /** The value of an ASCII hex digit, or -1. */
    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    private Object number() {
        int start = pos;
        if (text.charAt(pos) == '-') {
            pos++;
        }
        if (pos < text.length() && text.charAt(pos) == '0') {
            pos++; // a leading zero stands alone
        } else if (!digits()) {
            throw error("a number needs digits");
        }
        boolean integer = true;
        if (pos < text.length() && text.charAt(pos) == '.') {
            pos++;
            integer = false;
            if (!digits()) {
                throw error("a fraction needs digits");
            }
        }
        if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            pos++;
            integer = false;
            if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                pos++;
            }
            if (!digits()) {
                throw error("an exponent needs digits");
            }
        }
        String number = text.substring(start, pos);
        if (integer) {
            try {
                return Long.parseLong(number);
            } catch (NumberFormatException tooLarge) {
                // beyond a long: fall through to a double, like JavaScript
            }
        }
        return Double.parseDouble(number);
    }

    /** Skips one or more digits; false if there was none. */
    private boolean digits() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        return pos > start;
    }

    // ---------------------------------------------------------------- writing

    /**
     * {@code value} as compact JSON: a Map (keys as strings), a List or array
     * of Objects or ints, a String, a Number, a Boolean or null.
     */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            writeString((String) value, out);
        } else if (value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("JSON has no " + d);
            }
            out.append(d);
        } else if (value instanceof Number) {
            out.append(((Number) value).longValue());
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString(String.valueOf(entry.getKey()), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List) {
            writeArray(((List<?>) value).toArray(), out);
        } else if (value instanceof Object[]) {
            writeArray((Object[]) value, out);
        } else if (value instanceof int[]) {
            writeArray(java.util.Arrays.stream((int[]) value).boxed().toArray(), out);
        } else {
            throw new IllegalArgumentException("cannot write a " + value.getClass().getName() + " as JSON");
        }
    }

    private static void writeArray(Object[] items, StringBuilder out) {
        out.append('[');
        for (int i = 0; i < items.length; i++) {
            if (i > 0) {
                out.append(',');
            }
            write(items[i], out);
        }
        out.append(']');
    }

    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /** An object with these keys and values, in this order: {@code object("type", "pong", "nonce", 3L)}. */
    public static Map<String, Object> object(Object... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("object() needs keys and values in pairs");
        }
        Map<String, Object> object = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            object.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return object;
    }

    // ------------------------------------------------- reading fields of objects

    /** The field as a long, or {@code fallback} when it is absent, null or not a number. */
    public static long getLong(Map<String, Object> object, String key, long fallback) {
        Object value = object.get(key);
        return value instanceof Number ? ((Number) value).longValue() : fallback;
    }

    /** The field as an int, or {@code fallback} when it is absent, null or not a number. */
    public static int getInt(Map<String, Object> object, String key, int fallback) {
        Object value = object.get(key);
        return value instanceof Number ? ((Number) value).intValue() : fallback;
    }

    /** The field as a boolean, or {@code fallback} when it is absent, null or not a boolean. */
    public static boolean getBool(Map<String, Object> object, String key, boolean fallback) {
        Object value = object.get(key);
        return value instanceof Boolean ? (Boolean) value : fallback;
    }

    /** The field as a string, or {@code fallback} when it is absent, null or not a string. */
    public static String getString(Map<String, Object> object, String key, String fallback) {
        Object value = object.get(key);
        return value instanceof String ? (String) value : fallback;
    }

    /** The field as a list, or an empty list when it is absent, null or not an array. */
    @SuppressWarnings("unchecked")
    public static List<Object> getList(Map<String, Object> object, String key) {
        Object value = object.get(key);
        return value instanceof List ? (List<Object>) value : List.of();
    }

    /** The field as an object, or an empty one when it is absent, null or not an object. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> getObject(Map<String, Object> object, String key) {
        Object value = object.get(key);
        return value instanceof Map ? (Map<String, Object>) value : Map.of();
    }

    /** Each number of the field's array as an int (an empty list when absent). */
    public static List<Integer> getInts(Map<String, Object> object, String key) {
        List<Integer> ints = new ArrayList<>();
        for (Object item : getList(object, key)) {
            ints.add(item instanceof Number ? ((Number) item).intValue() : 0);
        }
        return ints;
    }
}
