package io.npulifecycle.simulator.harness;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLParser;

/**
 * A YAML document read into maps, lists and scalars that remember their line, so every error in a scenario file can
 * name the line (Jackson's YAML parser, read token by token). An alias ({@code *name}) stands for the mapping or list
 * anchored as {@code &name} earlier in the document (the same node, with the anchor's line); an alias of a single
 * value is refused naming it, because Jackson's parser does not report anchors on scalars; merge keys ({@code <<})
 * are not YAML 1.2 and stay plain keys (refused as unknown keys).
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
        /** The other errors of the same document, in the order found (this one first); never empty. */
        private final List<Invalid> all = new ArrayList<>();

        Invalid(int line, String message) {
            this(null, line, message);
        }

        private Invalid(String file, int line, String message) {
            super("line " + line + ": " + message);
            this.file = file;
            this.line = line;
            this.detail = message;
            all.add(this);
        }

        /**
         * @param errors every error of one document, in the order found (at least one)
         * @return the first, carrying the others ({@link #all()})
         */
        static Invalid of(List<Invalid> errors) {
            Invalid first = errors.get(0);
            for (Invalid e : errors.subList(1, errors.size())) {
                for (Invalid x : e.all) {
                    // an error carried already (an aggregate's own errors listed again) is listed once
                    if (!first.all.contains(x)) {
                        first.all.add(x);
                    }
                }
            }
            return first;
        }

        /**
         * @param fileName the file the document came from
         * @return the same error and the others it carries, each naming the file
         */
        Invalid in(String fileName) {
            List<Invalid> named = new ArrayList<>();
            for (Invalid x : all) {
                Invalid e = new Invalid(fileName, x.line, x.detail);
                e.setStackTrace(x.getStackTrace());
                named.add(e);
            }
            return of(named);
        }

        /** @return this error and every other one found in the same document, in the order found */
        List<Invalid> all() {
            return List.copyOf(all);
        }

        /** @return the file, or null when not known */
        String file() {
            return file;
        }

        /** @return what is wrong, without the file and line */
        String detail() {
            return detail;
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
            Node root = read(p, t, new HashMap<>());
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

    private static Node read(JsonParser p, JsonToken t, Map<String, Node> anchors) throws Invalid {
        int line = p.currentTokenLocation().getLineNr();
        if (p instanceof YAMLParser y && y.isCurrentAlias()) {
            String alias = p.getString();
            Node anchored = anchors.get(alias);
            if (anchored == null) {
                throw new Invalid(line, "alias *" + alias + " names no mapping or list anchored &" + alias
                        + " before it (an alias may stand for a mapping or a list; anchors on single values are not "
                        + "read: write the value out)");
            }
            return anchored;
        }
        Object anchor = p.getObjectId();
        Node n = readValue(p, t, anchors, line);
        if (anchor != null) {
            anchors.put(String.valueOf(anchor), n);
        }
        return n;
    }

    private static Node readValue(JsonParser p, JsonToken t, Map<String, Node> anchors, int line) throws Invalid {
        switch (t) {
            case START_OBJECT: {
                Map<String, Node> m = new LinkedHashMap<>();
                while ((t = p.nextToken()) != JsonToken.END_OBJECT) {
                    String key = p.currentName();
                    int keyLine = p.currentTokenLocation().getLineNr();
                    Node v = read(p, p.nextToken(), anchors);
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
                    l.add(read(p, t, anchors));
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

    /** Plain scalars that read back as the same text. */
    private static final java.util.regex.Pattern PLAIN =
            java.util.regex.Pattern.compile("[A-Za-z0-9_./][-A-Za-z0-9_./+@%=~]*( [-A-Za-z0-9_./+@%=~]+)*");
    /** Plain scalars that YAML 1.2 would read as something else than text. */
    private static final java.util.regex.Pattern NOT_TEXT = java.util.regex.Pattern.compile(
            "(?i)true|false|null|~|yes|no|on|off|[-+]?[0-9][0-9_]*(\\.[0-9_]*)?([eE][-+]?[0-9]+)?|[-+]?\\.[0-9]+"
                    + "|0x[0-9a-f]+|0o[0-7]+|[-+]?\\.inf|\\.nan");

    /**
     * Writes a value back as one line of flow-style YAML, keys in the order of the file: {@code {node: node-0, npu:
     * 4, chip: 0}}. Texts that would read back as another type or need quoting ({@code "4"}, {@code "true"},
     * {@code "a: b"}) are double-quoted, so the line parses to the same value.
     *
     * @param n a value read by {@link #parse}
     * @return its YAML text
     */
    static String flow(Node n) {
        StringBuilder sb = new StringBuilder();
        flow(n.value(), sb);
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    private static void flow(Object v, StringBuilder sb) {
        if (v instanceof Map<?, ?> m) {
            sb.append('{');
            String sep = "";
            for (Map.Entry<String, Node> e : ((Map<String, Node>) m).entrySet()) {
                sb.append(sep);
                scalar(e.getKey(), sb);
                sb.append(": ");
                flow(e.getValue().value(), sb);
                sep = ", ";
            }
            sb.append('}');
        } else if (v instanceof List<?> l) {
            sb.append('[');
            String sep = "";
            for (Node e : (List<Node>) l) {
                sb.append(sep);
                flow(e.value(), sb);
                sep = ", ";
            }
            sb.append(']');
        } else if (v == null) {
            sb.append("null");
        } else if (v instanceof String text) {
            scalar(text, sb);
        } else {
            sb.append(v);
        }
    }

    private static void scalar(String text, StringBuilder sb) {
        if (PLAIN.matcher(text).matches() && !NOT_TEXT.matcher(text).matches()) {
            sb.append(text);
            return;
        }
        sb.append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\t': sb.append("\\t"); break;
                default: sb.append(c);
            }
        }
        sb.append('"');
    }
}
