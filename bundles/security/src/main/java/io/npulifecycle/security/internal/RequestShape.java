package io.npulifecycle.security.internal;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Checks the JSON types of the fields of a Jolokia POST request before Jolokia reads them. Jolokia 2.6 casts each
 * field to the type it expects, so a field of another JSON type ({@code "arguments":{...}}, {@code "mbean":5},
 * {@code "path":[...]}) made it answer a {@code ClassCastException} whose text names the JVM's class loaders
 * ({@code ... is in unnamed module of loader org.apache.felix.framework.BundleWiringImpl$BundleClassLoader @1a2b})
 * instead of the field and what was expected.
 *
 * <p>The fields: {@code type}, {@code mbean}, {@code operation}, {@code path}, {@code command}: a string;
 * {@code attribute}: a string, or for {@code read} an array of strings; {@code arguments}: an array;
 * {@code config}, {@code target}: an object; {@code type} and {@code mbean} present must not be {@code null}. Any other
 * field, and {@code value}, may be of any type.
 *
 * <p>The processing parameters Jolokia reads as a number ({@link #WHOLE_NUMBER_PARAMETERS}: {@code maxDepth},
 * {@code maxCollectionSize}, {@code maxObjects}, {@code ifModifiedSince}), in a request's {@code config} or as a query
 * parameter, must be a whole number from 0 to {@value Integer#MAX_VALUE} (a JSON number or a string of digits): Jolokia
 * parses them with {@code Integer.parseInt} while it serves the request, and answered any other value
 * ({@code "abc"}, {@code 1.5}, {@code true}) with a 500 {@code NumberFormatException}. The other parameters are read
 * as text or as a boolean (any text that is not {@code true} is false) and fail no request.
 */
final class RequestShape {

    /** A class loader's part of a JDK {@code ClassCastException} message: {@code (... of loader ...)}. */
    private static final Pattern LOADER_DETAILS = Pattern.compile("\\s*\\([^()]*\\bloader\\b[^()]*\\)");
    /** An identity hash as the JDK prints it after a loader's name. */
    private static final Pattern IDENTITY = Pattern.compile("\\s*@[0-9a-f]{4,}\\b");

    private RequestShape() {
    }

    /**
     * @param request one request object of a POST body (a single request or an item of a bulk)
     * @return what is wrong with the JSON type of one of its fields, naming the field, the JSON type it has and the
     *         one expected; or {@code null} when every field has the type Jolokia reads
     */
    static String problem(Map<?, ?> request) {
        for (String field : new String[] {"type", "mbean"}) {
            // Jolokia reads a null MBean name as the pattern *:* (every MBean of the JVM), not as a missing field
            if (request.containsKey(field) && request.get(field) == null) {
                return "field \"" + field + "\" is null: expected a string";
            }
        }
        for (String field : new String[] {"type", "mbean", "operation", "path", "command"}) {
            String p = expect(request, field, "a string", String.class);
            if (p != null) {
                return p;
            }
        }
        Object attribute = request.get("attribute");
        if (attribute != null && !(attribute instanceof String)) {
            boolean read = "read".equals(request.get("type"));
            boolean names = attribute instanceof List<?> list && list.stream().allMatch(String.class::isInstance);
            if (!read || !names) {
                return "field \"attribute\" is " + jsonType(attribute) + ": expected a string"
                        + (read ? " or an array of strings (the attribute names to read)" : " (the attribute's name)");
            }
        }
        String p = expect(request, "arguments", "an array (the operation's arguments, in order)", List.class);
        if (p == null) {
            p = expect(request, "config", "an object (processing options by name)", Map.class);
        }
        if (p == null && request.get("config") instanceof Map<?, ?> config) {
            for (Map.Entry<?, ?> e : config.entrySet()) {
                p = p != null ? p : parameterProblem("config", String.valueOf(e.getKey()), e.getValue());
            }
        }
        if (p == null) {
            p = expect(request, "target", "an object", Map.class);
        }
        return p;
    }

    /** Jolokia's processing parameters that it parses as an {@code int} ({@code Integer.parseInt}). */
    static final List<String> WHOLE_NUMBER_PARAMETERS = List.of("maxDepth", "maxCollectionSize", "maxObjects",
            "ifModifiedSince");

    /**
     * @param where where the parameter was given: {@code config} (a POST request's field) or {@code query} (a query
     *        parameter)
     * @param name the parameter's name
     * @param value its value as parsed: a JSON value of a {@code config}, or a query parameter's text
     * @return what is wrong with it, naming the parameter, the value and what was expected; or {@code null} when it is
     *         not a {@link #WHOLE_NUMBER_PARAMETERS whole-number parameter} or is a whole number from 0 to
     *         {@value Integer#MAX_VALUE} (or {@code null}, which Jolokia reads as not given)
     */
    static String parameterProblem(String where, String name, Object value) {
        if (value == null || !WHOLE_NUMBER_PARAMETERS.contains(name)) {
            return null;
        }
        String text = value.toString();
        boolean ok = (value instanceof String || value instanceof Number) && text.matches("\\+?[0-9]{1,10}");
        if (ok) {
            try {
                Integer.parseInt(text);
            } catch (NumberFormatException tooLarge) {
                ok = false;
            }
        }
        if (ok) {
            return null;
        }
        String shown = text.length() > 40 ? text.substring(0, 40) + "..." : text;
        String what = value instanceof String ? "\"" + shown + "\"" : jsonType(value) + " " + shown;
        return ("config".equals(where) ? "processing parameter \"" + name + "\" of field \"config\""
                : "query parameter \"" + name + "\"") + " is " + what + ": expected a whole number from 0 to "
                + Integer.MAX_VALUE;
    }

    private static String expect(Map<?, ?> request, String field, String expected, Class<?> type) {
        Object v = request.get(field);
        if (v == null || type.isInstance(v)) {
            return null;
        }
        return "field \"" + field + "\" is " + jsonType(v) + ": expected " + expected;
    }

    /** @return the JSON type of a parsed value, with an article: {@code a string}, {@code an object}, ... */
    static String jsonType(Object v) {
        if (v instanceof Map) {
            return "an object";
        }
        if (v instanceof List) {
            return "an array";
        }
        if (v instanceof String) {
            return "a string";
        }
        if (v instanceof Number) {
            return "a number";
        }
        if (v instanceof Boolean) {
            return "a boolean";
        }
        return "null";
    }

    /**
     * @param message an exception's message
     * @return it without the class loader details the JDK puts in a {@code ClassCastException} (loader names,
     *         identity hashes), which tell a client nothing about its input; {@code null} stays {@code null}
     */
    static String withoutLoaders(String message) {
        if (message == null) {
            return null;
        }
        return IDENTITY.matcher(LOADER_DETAILS.matcher(message).replaceAll("")).replaceAll("");
    }
}
