package io.npulifecycle.security.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;

class JsonUnauthorizedTest {

    /** What the wrapped container response was told. */
    static final class Recorded {
        int status;
        final Map<String, String> headers = new HashMap<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
    }

    static class Body extends ServletInputStream {
        final ByteArrayInputStream in;
        /** The request's Content-Length. */
        long declared;

        Body(byte[] bytes) {
            in = new ByteArrayInputStream(bytes);
            declared = bytes.length;
        }

        int left() {
            return in.available();
        }

        @Override
        public int available() {
            return in.available();
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public boolean isFinished() {
            return in.available() == 0;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
            throw new UnsupportedOperationException();
        }
    }

    static ServletRequest request(Body body) {
        return (ServletRequest) Proxy.newProxyInstance(JsonUnauthorizedTest.class.getClassLoader(),
                new Class<?>[] {ServletRequest.class}, (p, m, a) -> {
                    if (m.getName().equals("getInputStream")) {
                        return body;
                    }
                    if (m.getName().equals("getContentLengthLong")) {
                        return body.declared;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    static HttpServletResponse response(Recorded r) {
        ServletOutputStream out = new ServletOutputStream() {
            @Override
            public void write(int b) {
                r.body.write(b);
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
        return (HttpServletResponse) Proxy.newProxyInstance(JsonUnauthorizedTest.class.getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "isCommitted":
                            return false;
                        case "setStatus":
                            r.status = (Integer) a[0];
                            return null;
                        case "setHeader":
                            r.headers.put((String) a[0], (String) a[1]);
                            return null;
                        case "setContentType":
                            r.headers.put("Content-Type", (String) a[0]);
                            return null;
                        case "getOutputStream":
                            return out;
                        case "resetBuffer": case "flushBuffer": case "setCharacterEncoding": case "setContentLength":
                            return null;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    @Test
    void a401ReadsTheRefusedBodySoTheConnectionStaysUsable() throws Exception {
        Body body = new Body("{\"type\":\"exec\",\"mbean\":\"io.npulifecycle:type=Rebooter\"}"
                .getBytes(StandardCharsets.UTF_8));
        Recorded r = new Recorded();
        new JsonUnauthorized.Wrapper(request(body), response(r)).sendError(401);
        assertEquals(401, r.status);
        assertEquals(0, body.left(), "the whole request body is read before the answer");
        assertNull(r.headers.get("Connection"), "a short body keeps the connection open");
        assertEquals(JsonUnauthorized.BODY, r.body.toString(StandardCharsets.UTF_8));
        assertEquals("application/json", r.headers.get("Content-Type"));
    }

    @Test
    void a401ForALongBodyClosesTheConnection() throws Exception {
        Body body = new Body(new byte[UnreadBody.MAX_DISCARDED_BYTES + 10_000]);
        Recorded r = new Recorded();
        new JsonUnauthorized.Wrapper(request(body), response(r)).sendError(401, "no");
        assertEquals(401, r.status);
        assertTrue(body.left() > 0, "no more than the limit is read from an unauthenticated client");
        assertEquals("close", r.headers.get("Connection"));
        assertEquals(JsonUnauthorized.BODY, r.body.toString(StandardCharsets.UTF_8));
    }

    /** A body whose first bytes arrived and whose rest never comes: a read beyond what arrived would block. */
    static final class Stalled extends Body {
        Stalled(byte[] arrived) {
            super(arrived);
            declared = arrived.length + 100;
        }

        @Override
        public int read() {
            if (in.available() == 0) {
                throw new AssertionError("read waits for bytes that have not arrived (a blocked server thread)");
            }
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (in.available() == 0) {
                throw new AssertionError("read waits for bytes that have not arrived (a blocked server thread)");
            }
            return in.read(b, off, Math.min(len, in.available()));
        }

        @Override
        public boolean isFinished() {
            return false;
        }
    }

    @Test
    void a401ForABodyThatStallsNeverWaitsForItAndClosesTheConnection() throws Exception {
        Stalled body = new Stalled("{\"type\":".getBytes(StandardCharsets.UTF_8));
        Recorded r = new Recorded();
        new JsonUnauthorized.Wrapper(request(body), response(r)).sendError(401);
        assertEquals(401, r.status);
        assertEquals(0, body.left(), "what arrived is read");
        assertEquals("close", r.headers.get("Connection"));
        assertEquals(JsonUnauthorized.BODY, r.body.toString(StandardCharsets.UTF_8));
    }

    @Test
    void a401WithoutABodyKeepsTheConnectionWithoutReading() throws Exception {
        // as Jetty reports a GET: no Content-Length, nothing available, the end of the (empty) body not seen yet
        Stalled nothing = new Stalled(new byte[0]);
        jakarta.servlet.http.HttpServletRequest get = (jakarta.servlet.http.HttpServletRequest) Proxy.newProxyInstance(
                JsonUnauthorizedTest.class.getClassLoader(),
                new Class<?>[] {jakarta.servlet.http.HttpServletRequest.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "getInputStream":
                            return nothing;
                        case "getContentLengthLong":
                            return -1L;
                        case "getHeader":
                            return null;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
        Recorded r = new Recorded();
        new JsonUnauthorized.Wrapper(get, response(r)).sendError(401);
        assertEquals(401, r.status);
        assertNull(r.headers.get("Connection"), "a request without a body keeps the connection open");
        assertEquals(JsonUnauthorized.BODY, r.body.toString(StandardCharsets.UTF_8));
    }
}
