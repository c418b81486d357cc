package io.npulifecycle.security.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;
import org.jolokia.json.parser.ParseException;
import org.jolokia.server.core.request.BadRequestException;
import org.jolokia.server.core.request.JolokiaRequestFactory;
import org.jolokia.server.core.request.ProcessingParameters;

/**
 * Finds what a Jolokia HTTP request asks for, before Jolokia sees it: the type, MBean and member of each request, and
 * whether one carries a JSR-160 proxy {@code target}.
 *
 * <p>GET: the path after the agent context ({@code /exec/<mbean>/<operation>/...}, Jolokia's escaping: {@code !/}
 * is a {@code /} inside a part, {@code !!} a {@code !}) or the {@code p} query parameter; an empty path is
 * {@code version}. POST: one JSON object or a bulk array of objects with keys {@code type}, {@code mbean},
 * {@code operation}/{@code attribute} and {@code target}.
 */
final class RequestClassifier {

    /** One Jolokia request. */
    static final class Op {
        final String type;
        final String mbean;
        final String member;
        final boolean proxy;
        /** Why this element of a bulk is no request at all (not a JSON object), or {@code null}. */
        final String invalid;

        Op(String type, String mbean, String member, boolean proxy) {
            this(type, mbean, member, proxy, null);
        }

        private Op(String type, String mbean, String member, boolean proxy, String invalid) {
            this.type = type;
            this.mbean = mbean;
            this.member = member;
            this.proxy = proxy;
            this.invalid = invalid;
        }

        /** @return whether this request changes something (exec or write) */
        boolean changes() {
            return "exec".equals(type) || "write".equals(type);
        }

        @Override
        public String toString() {
            return type + " " + mbean + " " + member + (proxy ? " (proxy)" : "");
        }
    }

    /** A body that is not a Jolokia request; the message says why. */
    static final class BadRequest extends Exception {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }

    private RequestClassifier() {
    }

    /**
     * @param path the path after the agent context, or {@code null}
     * @return the single request it denotes
     */
    static Op fromPath(String path) {
        List<String> parts = split(path == null ? "" : path);
        if (parts.isEmpty()) {
            return new Op("version", null, null, false);
        }
        String type = parts.get(0).toLowerCase(Locale.ROOT);
        String mbean = parts.size() > 1 ? parts.get(1) : null;
        String member = parts.size() > 2 ? parts.get(2) : null;
        return new Op(type, mbean, member, false);
    }

    /** Splits a Jolokia GET path into its parts, unescaping {@code !/} and {@code !!}; empty parts are dropped. */
    static List<String> split(String path) {
        List<String> parts = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == '!' && i + 1 < path.length()) {
                cur.append(path.charAt(++i));
            } else if (c == '/') {
                if (cur.length() > 0) {
                    parts.add(cur.toString());
                }
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (cur.length() > 0) {
            parts.add(cur.toString());
        }
        return parts;
    }

    /**
     * A parsed POST body.
     *
     * @param bulk whether it is an array (a bulk request), possibly empty
     * @param items its elements as parsed, in order: request objects, or anything else a bulk holds
     * @param ops what each asks for, in the same order ({@link Op#invalid} set for an element that is not an object)
     */
    record Parsed(boolean bulk, List<Object> items, List<Op> ops) {
    }

    /**
     * @param body a POST body
     * @return its requests, in order (one for an object, one per element for a bulk array)
     * @throws BadRequest when it is not JSON, not an object or array of objects, or an empty array
     */
    static List<Op> fromBody(String body) throws BadRequest {
        Parsed p = parse(body);
        if (p.items().isEmpty()) {
            throw new BadRequest("the bulk request is an empty array");
        }
        for (Op op : p.ops()) {
            if (op.invalid != null) {
                throw new BadRequest(op.invalid);
            }
        }
        return p.ops();
    }

    /**
     * @param body a POST body
     * @return its requests; an empty array is an empty bulk; an element of a bulk that is not an object is kept, its
     *         {@link Op#invalid} saying so (Jolokia's protocol answers each element of a bulk on its own)
     * @throws BadRequest when it is not JSON, nested deeper than {@value #MAX_DEPTH}, or neither an object nor an
     *         array
     */
    static Parsed parse(String body) throws BadRequest {
        int depth = depth(body);
        if (depth > MAX_DEPTH) {
            throw new BadRequest("the request body nests arrays and objects " + depth + " levels deep: at most "
                    + MAX_DEPTH);
        }
        Object json;
        try {
            json = new JSONParser().parse(body);
        } catch (ParseException | IOException | RuntimeException e) {
            throw new BadRequest("the request body is not valid JSON: " + e.getMessage());
        }
        List<Object> items = new ArrayList<>();
        List<Op> ops = new ArrayList<>();
        if (json instanceof Map) {
            items.add(json);
            ops.add(fromObject((Map<?, ?>) json));
        } else if (json instanceof List) {
            List<?> list = (List<?>) json;
            for (int i = 0; i < list.size(); i++) {
                Object e = list.get(i);
                items.add(e);
                ops.add(e instanceof Map ? fromObject((Map<?, ?>) e) : new Op(null, null, null, false,
                        "element " + i + " of the bulk request is not a JSON object"));
            }
        } else {
            throw new BadRequest("the request body is neither a JSON object nor an array of objects");
        }
        return new Parsed(json instanceof List, items, ops);
    }

    /**
     * How deep a request body may nest arrays and objects. Jolokia's parser (and Jolokia's servlet after it) recurses
     * once per level, and a node agent's threads have small stacks ({@code -Xss512k}, interpreted frames while C1 has
     * not compiled the parser yet): a body of some thousand {@code [} overflowed the stack. A Jolokia request needs a
     * few levels (a bulk, a request, an argument that is a map of lists).
     */
    static final int MAX_DEPTH = 64;

    /**
     * @param body JSON text, well-formed or not
     * @return the deepest nesting of {@code [} and {@code {} outside strings, counted without recursion
     */
    static int depth(String body) {
        int depth = 0;
        int max = 0;
        boolean inString = false;
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '[' || c == '{') {
                max = Math.max(max, ++depth);
            } else if (c == ']' || c == '}') {
                depth--;
            }
        }
        return max;
    }

    private static Op fromObject(Map<?, ?> o) {
        Object type = o.get("type");
        String t = type == null ? null : String.valueOf(type).toLowerCase(Locale.ROOT);
        Object member = "exec".equals(t) ? o.get("operation") : o.get("attribute");
        return new Op(t, o.get("mbean") == null ? null : String.valueOf(o.get("mbean")),
                member == null ? null : String.valueOf(member), o.containsKey("target") && o.get("target") != null);
    }

    /** Jolokia's request parameters for {@link #jolokiaProblem}: none beyond a request's own {@code config}. */
    private static final ProcessingParameters NO_PARAMETERS = new ProcessingParameters(Map.of());

    /**
     * Whether Jolokia can build a request from {@code item}, asked of Jolokia's own request factory (the one its
     * servlet uses): Jolokia 2.6 builds every request of a bulk before it runs any, so one item it cannot build (no or
     * an unknown {@code type}, a malformed MBean name, an exec without an operation, a write without a value, ...)
     * would fail the whole bulk with HTTP 400.
     *
     * @param item a request object of a bulk
     * @return a Jolokia error entry with status 400 echoing {@code item}: a field of the wrong JSON type named by
     *         {@link RequestShape#problem}, else the exception's class as {@code error_type} and its message without
     *         class loader details; or {@code null} when Jolokia can build it
     */
    static Map<String, Object> jolokiaProblem(Object item) {
        if (!(item instanceof JSONObject)) {
            return null;
        }
        String shape = RequestShape.problem((JSONObject) item);
        if (shape != null) {
            return JsonError.entry(400, null, shape, item);
        }
        try {
            JolokiaRequestFactory.createPostRequest((JSONObject) item, NO_PARAMETERS);
            return null;
        } catch (BadRequestException | RuntimeException e) {
            return JsonError.entry(400, e.getClass().getName(), RequestShape.withoutLoaders(e.getMessage()), item);
        }
    }
}
