package io.npulifecycle.itests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.ops4j.pax.exam.Option;


/**
 * Pax Exam configuration of a real npu-lifecycle runtime: the bundles of the assembled distribution's
 * {@code conf/bundles.list} for a role, a runtime home prepared by the launcher's own code, and exactly the
 * framework properties {@code bin/npu-lifecycle} computes (see {@link RuntimeOptions}, which builds the
 * configuration outside the framework). Product bundles go through the home's {@code deploy/} folder, as in
 * production.
 */
public abstract class NodeRuntimeSupport extends FelixTestSupport {

    /** Jolokia user of the test runtimes. */
    public static final String USER = "itest-operator";
    /** Jolokia password of the test runtimes. */
    public static final String PASSWORD = "itest-password-0123456789";

    /** @return the runtime home (framework property {@code npu.lifecycle.home}) */
    protected Path home() {
        return Path.of(property("npu.lifecycle.home"));
    }

    /** A minimal HTTP answer. */
    public static final class Answer {
        /** HTTP status. */
        public final int status;
        /** The body. */
        public final String body;

        Answer(int status, String body) {
            this.status = status;
            this.body = body;
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    /**
     * GETs a path of the runtime's HTTP server.
     *
     * @param user basic-auth user, or {@code null} for none
     */
    protected Answer get(String path, String user, String password) {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + property("org.osgi.service.http.port") + path)).timeout(Duration.ofSeconds(10));
        if (user != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        try {
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(r.statusCode(), r.body());
        } catch (IOException e) {
            return new Answer(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(-1, e.toString());
        }
    }

    /** GETs with the test credentials. */
    protected Answer jolokia(String path) {
        return get("/jolokia" + path, USER, PASSWORD);
    }
}
