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
 * <p>The refused request's body is discarded first ({@link UnreadBody}), so a keep-alive client's connection stays
 * usable.
 */
@Component(service = Preprocessor.class)
public class JsonUnauthorized implements Preprocessor {

    /** The body of every 401 answer. */
    static final String BODY = "{\"status\":401,\"error_type\":\"java.lang.SecurityException\",\"error\":"
            + "\"authentication required: send HTTP Basic credentials (Authorization header) of a Jolokia user\"}";

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
            UnreadBody.discard(request, this);
            resetBuffer();
            setStatus(sc);
            setContentType("application/json");
            setCharacterEncoding("UTF-8");
            byte[] b = BODY.getBytes(StandardCharsets.UTF_8);
            setContentLength(b.length);
            getOutputStream().write(b);
            flushBuffer();
        }
    }
}
