package io.npulifecycle.security.internal;

import java.io.IOException;

import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Keeps a connection usable when a request is refused before its body was read.
 *
 * <p>Jetty closes a connection whose request body is left unread when the response completes. A keep-alive client
 * (jolokia.js, Hawtio's proxy, the JDK HTTP client) that sends its next request on that connection then fails with
 * no answer at all (the JDK client: "HTTP/1.1 header parser received no bytes"). So every refusal first reads and
 * discards the rest of the body, at most {@value #MAX_DISCARDED_BYTES} bytes from a client that may not even be
 * authenticated; a longer body gets {@code Connection: close}, so the client opens a new connection.
 *
 * <p>Only what has already arrived is read ({@link ServletInputStream#available()}), never waited for: a client that
 * sends its headers and then stalls in the body would otherwise hold one of the HTTP server's few threads (8 on a node
 * agent) until the idle timeout, and a handful of such connections would leave none for {@code /health/live}. A body
 * that has not fully arrived gets {@code Connection: close} too.
 */
final class UnreadBody {

    /** The most bytes of a refused request's body read and discarded to keep the connection open. */
    static final int MAX_DISCARDED_BYTES = 64 * 1024;

    private UnreadBody() {
    }

    /**
     * Reads what is left of {@code request}'s body without waiting for any of it, or marks {@code response}
     * {@code Connection: close} when that is more than {@link #MAX_DISCARDED_BYTES} bytes, has not fully arrived or
     * cannot be read. Call before the response is committed.
     */
    static void discard(ServletRequest request, HttpServletResponse response) {
        if (!readToEnd(request)) {
            response.setHeader("Connection", "close");
        }
    }

    private static boolean readToEnd(ServletRequest request) {
        try {
            long length = request.getContentLengthLong();
            if (length < 0 && request instanceof HttpServletRequest
                    && ((HttpServletRequest) request).getHeader("Transfer-Encoding") == null) {
                // neither Content-Length nor Transfer-Encoding: an HTTP/1.1 request without a body (a GET)
                return true;
            }
            ServletInputStream in = request.getInputStream();
            byte[] chunk = new byte[8192];
            long read = 0;
            while (!in.isFinished()) {
                int available = in.available();
                if (available <= 0) {
                    // a body of known length read whole is done (the container may report its end only on the next
                    // read); otherwise the rest has not arrived and a read would block
                    return length >= 0 && read == length;
                }
                int n = in.read(chunk, 0, Math.min(chunk.length, available));
                if (n < 0) {
                    return true;
                }
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
