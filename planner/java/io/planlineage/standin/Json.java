package io.planlineage.standin;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON the compile server and the session exchange: requests in, answers out. Our own
 * because Flink's Jackson is shaded under a different package per version.
 */
final class Json {
    private Json() {}

    /** JSON's one-letter escapes and the characters they stand for, read and written alike. */
    private static final String ESCAPES = "\"\\/bfnrt";
    private static final String ESCAPED = "\"\\/\b\f\n\r\t";

    /** Objects as LinkedHashMap (order kept), arrays as ArrayList, numbers as Double or Long. */
    static Object read(String text) {
        Reader reader = new Reader(text);
        Object value = reader.value();
        reader.skipSpace();
        if (reader.at < text.length()) {
            throw reader.error("unexpected text after the value");
        }
        return value;
    }

    private static final class Reader {
        private final String text;
        private int at;

        Reader(String text) {
            this.text = text;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("bad JSON at offset " + at + ": " + what);
        }

        void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        Object value() {
            skipSpace();
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            char c = text.charAt(at);
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                at++;
                skipSpace();
                if (peek('}')) {
                    return map;
                }
                do {
                    skipSpace();
                    if (text.charAt(at) != '"') {
                        throw error("expected a key");
                    }
                    String key = string();
                    skipSpace();
                    expect(':');
                    map.put(key, value());
                    skipSpace();
                } while (peek(','));
                expect('}');
                return map;
            }
            if (c == '[') {
                List<Object> list = new ArrayList<>();
                at++;
                skipSpace();
                if (peek(']')) {
                    return list;
                }
                do {
                    list.add(value());
                    skipSpace();
                } while (peek(','));
                expect(']');
                return list;
            }
            if (c == '"') {
                return string();
            }
            if (text.startsWith("true", at)) {
                at += 4;
                return Boolean.TRUE;
            }
            if (text.startsWith("false", at)) {
                at += 5;
                return Boolean.FALSE;
            }
            if (text.startsWith("null", at)) {
                at += 4;
                return null;
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            String number = text.substring(start, at);
            if (number.isEmpty()) {
                throw error("unexpected character '" + c + "'");
            }
            if (number.indexOf('.') < 0 && number.indexOf('e') < 0 && number.indexOf('E') < 0) {
                return Long.parseLong(number);
            }
            return Double.parseDouble(number);
        }

        private boolean peek(char c) {
            if (at < text.length() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private String string() {
            at++; // the opening quote
            StringBuilder out = null;
            int start = at;
            while (true) {
                if (at >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(at);
                if (c == '"') {
                    String tail = text.substring(start, at++);
                    return out == null ? tail : out.append(tail).toString();
                }
                if (c != '\\') {
                    at++;
                    continue;
                }
                if (out == null) {
                    out = new StringBuilder();
                }
                out.append(text, start, at);
                char escaped = text.charAt(at + 1);
                at += 2;
                if (escaped == 'u') {
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                } else {
                    int known = ESCAPES.indexOf(escaped);
                    out.append(known >= 0 ? ESCAPED.charAt(known) : escaped);
                }
                start = at;
            }
        }
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        append(out, value);
        return out.toString();
    }

    private static void append(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean || value instanceof Number) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) out.append(',');
                first = false;
                append(out, String.valueOf(entry.getKey()));
                out.append(':');
                append(out, entry.getValue());
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (Object item : (Collection<?>) value) {
                if (!first) out.append(',');
                first = false;
                append(out, item);
            }
            out.append(']');
        } else {
            String s = value.toString();
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                int known = c == '/' ? -1 : ESCAPED.indexOf(c); // '/' needs no escape
                if (known >= 0) {
                    out.append('\\').append(ESCAPES.charAt(known));
                } else if (c < 0x20) {
                    out.append(String.format("\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
            out.append('"');
        }
    }
}
