package io.npulifecycle.security.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Pattern;

import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.whiteboard.Preprocessor;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

/**
 * Makes every error answer of the Jolokia agent ({@code /jolokia} and below) a Jolokia JSON error entry,
 * {@code {"status":<n>,"error_type":"<class>","error":"<message>"}} with {@code Content-Type: application/json}
 * and the same HTTP status, so jolokia.js and {@code curl | jq} read them as they read Jolokia's own JSON errors.
 *
 * <p>Jolokia 2.6 answers a request it cannot parse (malformed MBean name, unknown or missing type, an invalid
 * {@code callback}) with HTTP 400 and a {@code text/plain} body {@code "400 (Bad Request)\n<message>"}; the container
 * answers {@code sendError} (405 for PUT or DELETE, 413 of the request-size filter) and an exception escaping a servlet
 * with an HTML or text page. This whiteboard {@link Preprocessor} (it runs before any servlet context) wraps the
 * response of each request under the agent context (framework property {@value #AGENT_CONTEXT_PROPERTY}): an answer
 * with a status of 400 or more that is not already JSON is held and rewritten with its message, a {@code sendError}
 * is answered with the entry at once, and an exception becomes a 500 entry (the exception is logged, not sent).
 * 401 is left to {@link JsonUnauthorized}; successful answers and other paths pass untouched.
 */
@Component(service = Preprocessor.class)
public class JolokiaJsonErrors implements Preprocessor {

    /** Framework property: Jolokia's context path (the launcher sets {@code /jolokia}). */
    static final String AGENT_CONTEXT_PROPERTY = "org.jolokia.agentContext";

    private static final Logger LOG = System.getLogger(JolokiaJsonErrors.class.getName());
    /** Jolokia's first line of a text error, e.g. {@code 400 (Bad Request)}. */
    private static final Pattern STATUS_LINE = Pattern.compile("^\\s*\\d{3} \\([^)\\n]*\\)\\s*");

    private volatile String context = "/jolokia";

    @Activate
    void activate(BundleContext bundleContext) {
        String c = bundleContext.getProperty(AGENT_CONTEXT_PROPERTY);
        if (c != null && !c.isBlank()) {
            context = c.endsWith("/") ? c.substring(0, c.length() - 1) : c;
        }
    }

    @Override
    public void init(jakarta.servlet.FilterConfig config) {
        // nothing to configure
    }

    @Override
    public void destroy() {
        // nothing held
    }

    /** @return whether {@code uri} is the agent context or below it */
    boolean underAgent(String uri) {
        return uri != null && (uri.equals(context) || uri.startsWith(context + "/"));
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)
                || !underAgent(((HttpServletRequest) request).getRequestURI())) {
            chain.doFilter(request, response);
            return;
        }
        Wrapper w = new Wrapper(request, (HttpServletResponse) response);
        try {
            chain.doFilter(request, w);
        } catch (ServletException | RuntimeException e) {
            if (w.isCommitted()) {
                throw e;
            }
            LOG.log(Level.ERROR, "Jolokia request " + ((HttpServletRequest) request).getRequestURI() + " failed", e);
            w.answer(500, "internal error (" + e.getClass().getName() + "; the runtime's log has the details)");
            return;
        }
        w.finish();
    }

    /** @return the message of a container or Jolokia error text: its first status line removed, trimmed */
    static String message(String text, int status) {
        String m = STATUS_LINE.matcher(text == null ? "" : text).replaceFirst("").strip();
        return m.isEmpty() ? reason(status) : m;
    }

    static String reason(int status) {
        switch (status) {
            case 400:
                return "bad request";
            case 404:
                return "not found";
            case 405:
                return "method not allowed";
            case 413:
                return "request body too large";
            case 500:
                return "internal error";
            default:
                return "HTTP status " + status;
        }
    }

    /** Holds an error answer (status of 400 or more, except 401) and writes it as a JSON entry. */
    static final class Wrapper extends HttpServletResponseWrapper {
        private final ServletRequest request;
        private int status = HttpServletResponse.SC_OK;
        private ByteArrayOutputStream held;
        private ServletOutputStream heldStream;
        private PrintWriter heldWriter;
        private boolean answered;

        Wrapper(ServletRequest request, HttpServletResponse response) {
            super(response);
            this.request = request;
        }

        private boolean holding() {
            return !answered && status >= 400 && status != HttpServletResponse.SC_UNAUTHORIZED;
        }

        @Override
        public void setStatus(int sc) {
            status = sc;
            super.setStatus(sc);
        }

        @Override
        public void sendError(int sc) throws IOException {
            sendError(sc, null);
        }

        @Override
        public void sendError(int sc, String msg) throws IOException {
            if (sc == HttpServletResponse.SC_UNAUTHORIZED || isCommitted()) {
                super.sendError(sc, msg);
                return;
            }
            UnreadBody.discard(request, this);
            answer(sc, msg == null || msg.isBlank() ? reason(sc) : msg);
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (!holding()) {
                return super.getOutputStream();
            }
            hold();
            return heldStream;
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (!holding()) {
                return super.getWriter();
            }
            hold();
            if (heldWriter == null) {
                heldWriter = new PrintWriter(new OutputStreamWriter(held, StandardCharsets.UTF_8));
            }
            return heldWriter;
        }

        @Override
        public void flushBuffer() throws IOException {
            if (held == null || answered) {
                super.flushBuffer();
            }
        }

        private void hold() {
            if (held != null) {
                return;
            }
            held = new ByteArrayOutputStream();
            heldStream = new MemoryOutputStream(held);
        }

        /** Writes the held error answer: as it is when it is JSON already, else as a JSON entry. */
        void finish() throws IOException {
            if (held == null || answered) {
                return;
            }
            if (heldWriter != null) {
                heldWriter.flush();
            }
            String type = getContentType();
            if (type != null && type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
                answered = true;
                byte[] b = held.toByteArray();
                super.setContentLength(b.length);
                super.getOutputStream().write(b);
                return;
            }
            answer(status, message(held.toString(StandardCharsets.UTF_8), status));
        }

        /**
         * Answers {@code sc} with a JSON entry whose message is {@code msg}. A 404 is a 503 saying to retry, as
         * {@link AccessFilter} answers until Jolokia can serve: Jolokia's servlet never answers HTTP 404 (an unknown
         * MBean is a {@code "status":404} entry under HTTP 200), so a 404 under its context is the container's, for a
         * request that found no Jolokia servlet yet (the runtime is starting, or restarting after a reboot).
         */
        void answer(int sc, String msg) throws IOException {
            if (sc == HttpServletResponse.SC_NOT_FOUND) {
                sc = HttpServletResponse.SC_SERVICE_UNAVAILABLE;
                msg = JolokiaServletGuard.NOT_SERVING;
                super.setHeader("Retry-After", "1");
            }
            answered = true;
            super.resetBuffer();
            super.setStatus(sc);
            super.setContentType("application/json");
            super.setCharacterEncoding("UTF-8");
            byte[] b = PartialBulk.json(JsonError.entry(sc, null, msg, null)).getBytes(StandardCharsets.UTF_8);
            super.setContentLength(b.length);
            super.getOutputStream().write(b);
        }
    }
}
