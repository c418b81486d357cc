package io.npulifecycle.security.internal;

import java.io.IOException;
import java.io.InputStream;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Keeps a connection usable when a request is refused before its body was read.
 *
 * <p>Jetty closes a connection whose request body is left unread when the response completes. A keep-alive client
 * (jolokia.js, Hawtio's proxy, the JDK HTTP client) that sends its next request on that connection then fails with
 * no answer at all (the JDK client: "HTTP/1.1 header parser received no bytes"). So every refusal first reads and
 * discards the rest of the body, at most {@value #MAX_DISCARDED_BYTES} bytes from a client that may not even be
 * authenticated; a longer body gets {@code Connection: close}, so the client opens a new connection.
 */
final class UnreadBody {

    /** The most bytes of a refused request's body read and discarded to keep the connection open. */
    static final int MAX_DISCARDED_BYTES = 64 * 1024;

    private UnreadBody() {
    }

    /**
     * Reads what is left of {@code request}'s body, or marks {@code response} {@code Connection: close} when that is
     * more than {@link #MAX_DISCARDED_BYTES} bytes or cannot be read. Call before the response is committed.
     */
    static void discard(ServletRequest request, HttpServletResponse response) {
        if (!readToEnd(request)) {
            response.setHeader("Connection", "close");
        }
    }

    private static boolean readToEnd(ServletRequest request) {
        try {
            InputStream in = request.getInputStream();
            byte[] chunk = new byte[8192];
            long read = 0;
            for (int n; (n = in.read(chunk)) != -1;) {
                read += n;
                if (read > MAX_DISCARDED_BYTES) {
                    return false;
                }
            }
            return true;
        } catch (IOException | IllegalStateException e) {
            // IllegalStateException: the body was already taken as a reader; the container decides
            return false;
        }
    }
}
