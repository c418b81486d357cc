package io.npulifecycle.simulator.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * A YAML document read into maps, lists and scalars that remember their line, so every error in a scenario file can
 * name the line (Jackson's YAML parser, read token by token).
 */
final class YamlTree {

    /** A value and the line it starts on. */
    record Node(Object value, int line) {

        boolean isMap() {
            return value instanceof Map;
        }

        @SuppressWarnings("unchecked")
        Map<String, Node> map() {
            return (Map<String, Node>) value;
        }

        @SuppressWarnings("unchecked")
        List<Node> list() {
            return (List<Node>) value;
        }
    }

    /**
     * A malformed document or a value of the wrong shape: the message is {@code line N: what is wrong and what was
     * expected}; {@link #where()} puts the file in front.
     */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        private final String file;
        private final int line;
        private final String detail;

        Invalid(int line, String message) {
            this(null, line, message);
        }

        private Invalid(String file, int line, String message) {
            super("line " + line + ": " + message);
            this.file = file;
            this.line = line;
            this.detail = message;
        }

        /**
         * @param fileName the file the document came from
         * @return the same error, naming the file
         */
        Invalid in(String fileName) {
            Invalid e = new Invalid(fileName, line, detail);
            e.setStackTrace(getStackTrace());
            return e;
        }

        /** @return the file, or null when not known */
        String file() {
            return file;
        }

        /** @return the line, 1-based (0 when not known) */
        int line() {
            return line;
        }

        /** @return {@code <file>:line N: <message>}, or the message when the file is not known */
        String where() {
            return file == null ? getMessage() : file + ":" + getMessage();
        }
    }

    private YamlTree() {
    }

    /**
     * @param text the document
     * @return its root
     * @throws Invalid naming the line of a syntax error, a duplicate key, or an empty document
     */
    static Node parse(String text) throws Invalid {
        YAMLMapper mapper = new YAMLMapper();
        try (JsonParser p = mapper.createParser(text)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new Invalid(1, "the file is empty");
            }
            Node root = read(p, t);
            if (p.nextToken() != null) {
                throw new Invalid(p.currentTokenLocation().getLineNr(), "more than one YAML document");
            }
            return root;
        } catch (JacksonException e) {
            int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
            String msg = e.getOriginalMessage() == null ? e.getMessage() : e.getOriginalMessage();
            throw new Invalid(line, "not valid YAML: " + msg.split("\n")[0]);
        }
    }

    private static Node read(JsonParser p, JsonToken t) throws Invalid {
        int line = p.currentTokenLocation().getLineNr();
        switch (t) {
            case START_OBJECT: {
                Map<String, Node> m = new LinkedHashMap<>();
                while ((t = p.nextToken()) != JsonToken.END_OBJECT) {
                    String key = p.currentName();
                    int keyLine = p.currentTokenLocation().getLineNr();
                    Node v = read(p, p.nextToken());
                    if (m.containsKey(key)) {
                        throw new Invalid(keyLine, "key '" + key + "' appears twice");
                    }
                    m.put(key, v);
                }
                return new Node(m, line);
            }
            case START_ARRAY: {
                List<Node> l = new ArrayList<>();
                while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                    l.add(read(p, t));
                }
                return new Node(l, line);
            }
            case VALUE_NULL:
                return new Node(null, line);
            case VALUE_TRUE:
                return new Node(Boolean.TRUE, line);
            case VALUE_FALSE:
                return new Node(Boolean.FALSE, line);
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return new Node(p.getNumberValue(), line);
            default:
                return new Node(p.getString(), line);
        }
    }
}
