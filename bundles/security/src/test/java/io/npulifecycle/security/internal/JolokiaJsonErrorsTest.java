package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;

class JolokiaJsonErrorsTest {

    /** What the container response was told. */
    static final class Container {
        int status = 200;
        String contentType;
        Integer sentError;
        final Map<String, String> headers = new HashMap<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();

        String text() {
            return body.toString(StandardCharsets.UTF_8);
        }
    }

    static HttpServletResponse response(Container c) {
        ServletOutputStream out = new ServletOutputStream() {
            @Override
            public void write(int b) {
                c.body.write(b);
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {
                throw new UnsupportedOperationException();
            }
        };
        java.io.PrintWriter writer = new java.io.PrintWriter(new java.io.OutputStreamWriter(c.body,
                StandardCharsets.UTF_8), true);
        return (HttpServletResponse) Proxy.newProxyInstance(JolokiaJsonErrorsTest.class.getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "isCommitted":
                            return false;
                        case "setStatus":
                            c.status = (Integer) a[0];
                            return null;
                        case "sendError":
                            c.sentError = (Integer) a[0];
                            return null;
                        case "setHeader": case "addHeader":
                            if ("Content-Type".equalsIgnoreCase((String) a[0])) {
                                c.contentType = (String) a[1];
                            } else {
                                c.headers.put((String) a[0], (String) a[1]);
                            }
                            return null;
                        case "setContentType":
                            c.contentType = (String) a[0];
                            return null;
                        case "getContentType":
                            return c.contentType;
                        case "getOutputStream":
                            return out;
                        case "getWriter":
                            return writer;
                        case "resetBuffer": case "flushBuffer": case "setCharacterEncoding": case "setContentLength":
                            return null;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    static JolokiaJsonErrors.Wrapper wrapper(Container c) {
        return new JolokiaJsonErrors.Wrapper(JsonUnauthorizedTest.request(new JsonUnauthorizedTest.Body(new byte[0])),
                response(c));
    }

    static Object json(String text) throws Exception {
        return new org.jolokia.json.parser.JSONParser().parse(text);
    }

    @Test
    void jolokiasPlainTextBadRequestBecomesItsJsonErrorEntry() throws Exception {
        Container c = new Container();
        JolokiaJsonErrors.Wrapper w = wrapper(c);
        // as Jolokia 2.6's AgentServlet answers a BadRequestException
        w.addHeader("Content-Type", "text/plain; charset=utf-8");
        w.setStatus(400);
        w.getOutputStream().write("400 (Bad Request)\nNo type with name 'bogus' exists"
                .getBytes(StandardCharsets.UTF_8));
        w.getOutputStream().close();
        w.finish();
        assertEquals(400, c.status);
        assertEquals("application/json", c.contentType);
        assertEquals(json("{\"status\":400,\"error_type\":\"java.lang.IllegalArgumentException\","
                + "\"error\":\"No type with name 'bogus' exists\"}"), json(c.text()));
    }

    @Test
    void aContainerErrorIsAJsonEntryAndA401IsLeftToJsonUnauthorized() throws Exception {
        Container c = new Container();
        wrapper(c).sendError(405, "HTTP method PUT is not supported by this URL");
        assertEquals(405, c.status);
        assertEquals("application/json", c.contentType);
        assertEquals(json("{\"status\":405,\"error_type\":\"java.lang.UnsupportedOperationException\","
                + "\"error\":\"HTTP method PUT is not supported by this URL\"}"), json(c.text()));

        Container big = new Container();
        wrapper(big).sendError(413);
        assertEquals(json("{\"status\":413,\"error_type\":\"java.lang.IllegalArgumentException\","
                + "\"error\":\"request body too large\"}"), json(big.text()));

        Container unauthorized = new Container();
        wrapper(unauthorized).sendError(401);
        assertEquals(Integer.valueOf(401), unauthorized.sentError);
        assertEquals("", unauthorized.text());
    }

    @Test
    void aContainers404UnderTheAgentContextIsA503ThatSaysToRetry() throws Exception {
        // no JolokiaServletGuard is active here: no Jolokia servlet, as while the runtime starts
        Container c = new Container();
        wrapper(c).sendError(404);
        assertEquals(503, c.status);
        assertEquals("1", c.headers.get("Retry-After"));
        assertEquals(json("{\"status\":503,\"error_type\":\"java.lang.IllegalStateException\",\"error\":\""
                + JolokiaServletGuard.NOT_SERVING + "\"}"), json(c.text()));
        assertFalse(JolokiaServletGuard.requestHandler());
    }

    @Test
    void jsonErrorsAndSuccessfulAnswersPassUnchanged() throws Exception {
        Container refused = new Container();
        JolokiaJsonErrors.Wrapper w = wrapper(refused);
        String entry = "{\"status\":403,\"error_type\":\"java.lang.SecurityException\",\"error\":\"origin refused\"}";
        w.setStatus(403);
        w.setContentType("application/json");
        w.getOutputStream().write(entry.getBytes(StandardCharsets.UTF_8));
        w.finish();
        assertEquals(403, refused.status);
        assertEquals(entry, refused.text());

        Container ok = new Container();
        JolokiaJsonErrors.Wrapper served = wrapper(ok);
        served.setStatus(200);
        served.getWriter().print("{\"status\":200}");
        served.getWriter().flush();
        assertEquals("{\"status\":200}", ok.text(), "a successful answer is written through, not held");
        served.finish();
        assertEquals("{\"status\":200}", ok.text());
    }

    @Test
    void onlyTheAgentContextIsCovered() {
        JolokiaJsonErrors f = new JolokiaJsonErrors();
        assertTrue(f.underAgent("/jolokia"));
        assertTrue(f.underAgent("/jolokia/read/io.npulifecycle:type=Runtime"));
        assertFalse(f.underAgent("/jolokiax"));
        assertFalse(f.underAgent("/health/live"));
        assertFalse(f.underAgent(null));
    }

    @Test
    void theMessageOfAnErrorTextIsItsTextWithoutTheStatusLine() {
        assertEquals("Key properties cannot be empty",
                JolokiaJsonErrors.message("400 (Bad Request)\nKey properties cannot be empty", 400));
        assertEquals("bad request", JolokiaJsonErrors.message("400 (Bad Request)\n", 400));
        assertEquals("plain", JolokiaJsonErrors.message(" plain ", 500));
    }
}
