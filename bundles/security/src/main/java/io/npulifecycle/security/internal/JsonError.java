package io.npulifecycle.security.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Jolokia's error entry, {@code {"status":<n>,"error_type":"<class>","error":"<message>"}} (and {@code "request"}
 * echoing the request when known), for the answers this bundle writes itself, so that jolokia.js and {@code jq} read
 * every error of {@code /jolokia} the same way as Jolokia's own.
 */
final class JsonError {

    /** Longest message put in an entry, characters (a container's error text can be a whole HTML page). */
    static final int MAX_MESSAGE = 1000;

    private JsonError() {
    }

    /**
     * @param status the HTTP-like status of the entry (400, 403, 405, 413, 500, ...)
     * @return the {@code error_type} Jolokia would give for that status: {@code java.lang.SecurityException} for 401
     *         and 403, {@code java.lang.UnsupportedOperationException} for 405, {@code java.lang.IllegalStateException}
     *         for 5xx, {@code java.lang.IllegalArgumentException} for the other client errors
     */
    static String type(int status) {
        if (status == 401 || status == 403) {
            return "java.lang.SecurityException";
        }
        if (status == 405) {
            return "java.lang.UnsupportedOperationException";
        }
        if (status >= 500) {
            return "java.lang.IllegalStateException";
        }
        return "java.lang.IllegalArgumentException";
    }

    /**
     * @param status the status of the entry
     * @param errorType the {@code error_type}, or {@code null} for {@link #type(int)}
     * @param message what went wrong (cut at {@value #MAX_MESSAGE} characters)
     * @param request the request as sent, echoed as Jolokia does, or {@code null}
     * @return a new, mutable entry in Jolokia's key order
     */
    static Map<String, Object> entry(int status, String errorType, String message, Object request) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("status", status);
        e.put("error_type", errorType == null ? type(status) : errorType);
        String m = message == null ? "" : message;
        e.put("error", m.length() > MAX_MESSAGE ? m.substring(0, MAX_MESSAGE) + "..." : m);
        if (request != null) {
            e.put("request", request);
        }
        return e;
    }
}
