package io.npulifecycle.security.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.whiteboard.Preprocessor;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

/**
 * Answers every 401 of the HTTP service with a Jolokia-style JSON body instead of Jetty's HTML error page.
 *
 * <p>Jolokia's authentication helper refuses a login with {@code sendError(401)} in {@code handleSecurity}, which
 * runs before any filter of its context; a whiteboard {@link Preprocessor} runs before that, so it wraps the response
 * and turns {@code sendError(401)} into a 401 with the JSON body {@value #BODY}. The body says only what a client must
 * do, never why the login failed (the audit log says that), and no {@code WWW-Authenticate} header is added, so a
 * browser shows no login dialog. Other statuses are left to the container.
 *
 * <p>The refused request's body is read and discarded (up to {@value #MAX_DISCARDED_BODY} bytes) before the answer is
 * written, so the connection stays usable: a keep-alive client (jolokia.js, Hawtio's proxy, the JDK HTTP client) that
 * sends its next request on the same connection is not met by a connection Jetty closed because a request body was
 * left unread. A longer body gets {@code Connection: close}, so the client opens a new connection instead.
 */
@Component(service = Preprocessor.class)
public class JsonUnauthorized implements Preprocessor {

    /** The body of every 401 answer. */
    static final String BODY = "{\"status\":401,\"error_type\":\"java.lang.SecurityException\",\"error\":"
            + "\"authentication required: send HTTP Basic credentials (Authorization header) of a Jolokia user\"}";

    /** The most bytes of a refused request's body that are read and discarded to keep the connection open. */
    static final int MAX_DISCARDED_BODY = 64 * 1024;

    @Override
    public void init(jakarta.servlet.FilterConfig config) {
        // nothing to configure
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        chain.doFilter(request, response instanceof HttpServletResponse
                ? new Wrapper(request, (HttpServletResponse) response) : response);
    }

    @Override
    public void destroy() {
        // nothing held
    }

    /** Writes {@link #BODY} on {@code sendError(401)}. */
    static final class Wrapper extends HttpServletResponseWrapper {
        private final ServletRequest request;

        Wrapper(ServletRequest request, HttpServletResponse response) {
            super(response);
            this.request = request;
        }

        @Override
        public void sendError(int sc) throws IOException {
            sendError(sc, null);
        }

        @Override
        public void sendError(int sc, String msg) throws IOException {
            if (sc != HttpServletResponse.SC_UNAUTHORIZED || isCommitted()) {
                super.sendError(sc, msg);
                return;
            }
            if (!discardBody()) {
                setHeader("Connection", "close");
            }
            resetBuffer();
            setStatus(sc);
            setContentType("application/json");
            setCharacterEncoding("UTF-8");
            byte[] b = BODY.getBytes(StandardCharsets.UTF_8);
            setContentLength(b.length);
            getOutputStream().write(b);
            flushBuffer();
        }

        /**
         * Reads the request body to its end, at most {@link #MAX_DISCARDED_BODY} bytes.
         *
         * @return true when the whole body was read (or there was none), false when it is longer or cannot be read
         */
        private boolean discardBody() {
            try {
                var in = request.getInputStream();
                byte[] chunk = new byte[8192];
                long read = 0;
                for (int n; (n = in.read(chunk)) != -1;) {
                    read += n;
                    if (read > MAX_DISCARDED_BODY) {
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
}
