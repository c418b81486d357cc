package io.npulifecycle.itests.security;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import javax.net.ssl.SSLContext;

/** A small HTTP client for the Jolokia security tests: any method, body and extra headers, the status and headers. */
final class JolokiaClient {

    /** An answer. */
    static final class Reply {
        final int status;
        final String body;
        final HttpResponse<String> response;

        Reply(int status, String body, HttpResponse<String> response) {
            this.status = status;
            this.body = body;
            this.response = response;
        }

        String header(String name) {
            return response == null ? null : response.headers().firstValue(name).orElse(null);
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    private final String base;
    private final HttpClient client;

    JolokiaClient(String base, SSLContext ssl) {
        this.base = base;
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5));
        if (ssl != null) {
            b.sslContext(ssl);
        }
        this.client = b.build();
    }

    Reply send(String method, String path, String user, String password, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20));
        if (user != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        try {
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body(), r);
        } catch (IOException e) {
            return new Reply(-1, e.toString(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Reply(-1, e.toString(), null);
        }
    }

    Reply get(String path, String user, String password, String... headers) {
        return send("GET", path, user, password, null, headers);
    }

    Reply post(String body, String user, String password) {
        return send("POST", "", user, password, body);
    }
}
