package io.npulifecycle.management.internal;

import java.io.IOException;

import org.osgi.service.component.annotations.Component;
import org.osgi.service.servlet.whiteboard.HttpWhiteboardConstants;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Caps request bodies on every servlet context of the runtime's HTTP server (Jolokia included) at
 * {@value #MAX_BODY_BYTES} bytes: a larger {@code Content-Length} gets 413 at once, and a chunked body is cut with an
 * error when it passes the limit. Jolokia reads a POST body whole, so without a cap one authenticated 40 MB request
 * exhausts the node agent's heap. No Jolokia request of this product needs more than a few KiB.
 */
@Component(service = Filter.class, property = {
    HttpWhiteboardConstants.HTTP_WHITEBOARD_FILTER_PATTERN + "=/*",
    HttpWhiteboardConstants.HTTP_WHITEBOARD_FILTER_NAME + "=npu-lifecycle-request-size",
    HttpWhiteboardConstants.HTTP_WHITEBOARD_CONTEXT_SELECT + "=(" + HttpWhiteboardConstants.HTTP_WHITEBOARD_CONTEXT_NAME
            + "=*)"
})
public class RequestSizeFilter implements Filter {

    /** Largest request body accepted: 1 MiB. */
    public static final long MAX_BODY_BYTES = 1024 * 1024;

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        long length = request.getContentLengthLong();
        if (length > MAX_BODY_BYTES) {
            ((HttpServletResponse) response).sendError(413, "request body of " + length + " bytes is larger than "
                    + MAX_BODY_BYTES + " bytes");
            return;
        }
        // A known length within the limit passes untouched; only a body of unknown length (chunked) is counted.
        chain.doFilter(length >= 0 ? request : new Capped((HttpServletRequest) request), response);
    }

    /** A request whose body stream fails once more than the limit was read. */
    static final class Capped extends HttpServletRequestWrapper {
        Capped(HttpServletRequest request) {
            super(request);
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            ServletInputStream in = super.getInputStream();
            return new ServletInputStream() {
                private long read;

                private void count(long n) throws IOException {
                    read += n;
                    if (read > MAX_BODY_BYTES) {
                        throw new IOException("request body larger than " + MAX_BODY_BYTES + " bytes");
                    }
                }

                @Override
                public int read() throws IOException {
                    int b = in.read();
                    if (b >= 0) {
                        count(1);
                    }
                    return b;
                }

                @Override
                public int read(byte[] buf, int off, int len) throws IOException {
                    int n = in.read(buf, off, len);
                    if (n > 0) {
                        count(n);
                    }
                    return n;
                }

                @Override
                public boolean isFinished() {
                    return in.isFinished();
                }

                @Override
                public boolean isReady() {
                    return in.isReady();
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    in.setReadListener(listener);
                }
            };
        }

        @Override
        public java.io.BufferedReader getReader() throws IOException {
            String enc = getCharacterEncoding() == null ? "UTF-8" : getCharacterEncoding();
            return new java.io.BufferedReader(new java.io.InputStreamReader(getInputStream(), enc));
        }
    }
}
