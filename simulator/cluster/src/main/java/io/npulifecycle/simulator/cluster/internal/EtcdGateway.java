package io.npulifecycle.simulator.cluster.internal;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * etcd's gRPC-gateway (JSON over plain HTTP on its client URL): the current revision ({@code POST /v3/kv/range}) and
 * a compaction ({@code POST /v3/kv/compaction}), so that a test can make the API server answer a watch from an old
 * resourceVersion with {@code 410 Gone} without an {@code etcdctl} binary.
 */
public final class EtcdGateway {

    private static final Pattern REVISION = Pattern.compile("\"revision\"\\s*:\\s*\"?(\\d+)\"?");
    /** The key {@code "\0"} in base64: a one-key range whose answer carries the store's revision in its header. */
    private static final String ANY_KEY = "AA==";

    private final String clientUrl;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** @param clientUrl etcd's client URL, e.g. {@code http://127.0.0.1:2379} */
    public EtcdGateway(String clientUrl) {
        this.clientUrl = clientUrl;
    }

    /**
     * @return etcd's current revision (the {@code header.revision} of a range request)
     * @throws IllegalStateException when etcd does not answer 200 or the answer has no revision
     */
    public long revision() {
        String body = post("/v3/kv/range", "{\"key\":\"" + ANY_KEY + "\",\"limit\":1,\"keys_only\":true}");
        Matcher m = REVISION.matcher(body);
        if (!m.find()) {
            throw new IllegalStateException("etcd's range answer at " + clientUrl + " has no revision: " + body);
        }
        return Long.parseLong(m.group(1));
    }

    /**
     * Compacts etcd to its current revision (physical: returns once the old revisions are gone).
     *
     * @return the revision compacted to
     * @throws IllegalStateException when etcd refuses
     */
    public long compactToCurrent() {
        long rev = revision();
        post("/v3/kv/compaction", "{\"revision\":\"" + rev + "\",\"physical\":true}");
        return rev;
    }

    private String post(String path, String json) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(clientUrl + path))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("etcd at " + clientUrl + path + " answered HTTP " + r.statusCode()
                        + ": " + r.body());
            }
            return r.body();
        } catch (IOException e) {
            throw new IllegalStateException("etcd at " + clientUrl + path + " did not answer: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calling etcd at " + clientUrl + path, e);
        }
    }
}
