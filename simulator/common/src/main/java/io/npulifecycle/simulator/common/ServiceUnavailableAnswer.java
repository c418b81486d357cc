package io.npulifecycle.simulator.common;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * The HTTP/1.1 answer of a {@link TcpProxy} that makes its server unavailable: for each request on the connection
 * (read up to the end of its head, a {@code Content-Length} body read and dropped so the client sees the answer and
 * not a reset), {@code 503 Service Unavailable} with {@code Retry-After}, {@code Connection: close} and the
 * {@code Status} body kube-apiserver itself sends with a 503:
 * {@code {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":...,
 * "reason":"ServiceUnavailable","code":503}}. Then the connection is closed.
 */
final class ServiceUnavailableAnswer {

    /** Longest request head read (bytes); a longer one is answered without reading the rest. */
    static final int MAX_HEAD = 64 * 1024;
    /** How long a connection may take to send its request head before it is closed unanswered. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    private ServiceUnavailableAnswer() {
    }

    /**
     * Reads one request from {@code client} and answers it 503; the caller closes the socket.
     *
     * @param client an accepted connection (for TLS, the handshake happens on the first read)
     * @param retryAfter the {@code Retry-After} header, in whole seconds (at least 1)
     * @return whether a request was answered (false: the client went away first)
     */
    static boolean answer(Socket client, Duration retryAfter) {
        try {
            client.setSoTimeout((int) READ_TIMEOUT.toMillis());
            InputStream in = client.getInputStream();
            String head = readHead(in);
            if (head == null) {
                return false; // closed before a whole request head, or not TLS the proxy accepts
            }
            long length = contentLength(head);
            for (long left = length; left > 0;) {
                long skipped = in.skip(left);
                if (skipped <= 0) {
                    if (in.read() < 0) {
                        break;
                    }
                    skipped = 1;
                }
                left -= skipped;
            }
            String requestLine = head.substring(0, Math.max(head.indexOf('\r'), 0));
            byte[] body = status(requestLine).getBytes(StandardCharsets.UTF_8);
            String response = "HTTP/1.1 503 Service Unavailable\r\n"
                    + "Content-Type: application/json\r\n"
                    + "Retry-After: " + seconds(retryAfter) + "\r\n"
                    + "Content-Length: " + body.length + "\r\n"
                    + "Connection: close\r\n\r\n";
            OutputStream out = client.getOutputStream();
            out.write(response.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return true;
        } catch (IOException e) {
            return false; // the client went away (or the outage ended and closed it): nothing to answer
        }
    }

    /** @return {@code retryAfter} in whole seconds, rounded up, at least 1 */
    static long seconds(Duration retryAfter) {
        long s = (retryAfter.toMillis() + 999) / 1000;
        return Math.max(1, s);
    }

    /** @return the request head up to and without the blank line (ISO-8859-1), or null when the stream ended first */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (head.size() < MAX_HEAD) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == end.length) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** @return the {@code Content-Length} of a request head, 0 when it has none or an unreadable one */
    static long contentLength(String head) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("content-length")) {
                try {
                    return Math.max(0, Long.parseLong(line.substring(colon + 1).trim()));
                } catch (NumberFormatException e) {
                    return 0;
                }
            }
        }
        return 0;
    }

    /** @return the Status body for a request, e.g. {@code GET /api/v1/nodes?watch=true HTTP/1.1} */
    static String status(String requestLine) {
        String message = "the API server is unavailable (fault injected by the test proxy); request: " + requestLine;
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\""
                + message.replace("\\", "\\\\").replace("\"", "\\\"") + "\",\"reason\":\"ServiceUnavailable\","
                + "\"code\":503}";
    }
}
