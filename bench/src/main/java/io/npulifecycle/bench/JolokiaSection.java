package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.log;
import static io.npulifecycle.bench.Fmt.f1;
import static io.npulifecycle.bench.Fmt.f2;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.jolokia.json.JSONArray;
import org.jolokia.json.JSONObject;
import org.jolokia.json.parser.JSONParser;

/**
 * Section 5 of {@code docs/benchmarks.md}, the Jolokia latency: round-trip times of authenticated single and bulk
 * reads of a running node agent's Jolokia against the unauthenticated health endpoint of the same server.
 */
final class JolokiaSection {

    private final boolean quick;
    private final StringBuilder md = new StringBuilder();

    /** @param quick fewer requests */
    JolokiaSection(boolean quick) {
        this.quick = quick;
    }

    /**
     * @param h the home of the running node agent (its Jolokia port)
     * @return the Markdown of section 5, headed {@code ## 5. Jolokia latency}
     * @throws Exception when a request fails or answers other than HTTP 200
     */
    String run(NodeHome h) throws Exception {
        int warm = quick ? 30 : 100;
        int nSingle = quick ? 200 : 1000;
        int nBulk = quick ? 60 : 300;
        log("5. Jolokia: " + nSingle + " single reads, " + nBulk + " bulk reads");
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        String base = "http://127.0.0.1:" + h.port;
        String auth = "Basic " + Base64.getEncoder().encodeToString((NodeHome.USER + ":" + NodeHome.PASSWORD)
                .getBytes(StandardCharsets.UTF_8));
        HttpRequest health = HttpRequest.newBuilder(URI.create(base + "/health/live")).GET().build();
        HttpRequest single = HttpRequest.newBuilder(URI.create(base + "/jolokia/read/io.npulifecycle:type=Runtime/Role"))
                .header("Authorization", auth).GET().build();
        // every io.npulifecycle MBean, found with a search
        HttpResponse<String> sr = http.send(HttpRequest.newBuilder(URI.create(base + "/jolokia/"))
                .header("Authorization", auth).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"type\":\"search\",\"mbean\":\"io.npulifecycle:*\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        JSONObject search = (JSONObject) new JSONParser().parse(sr.body());
        if (sr.statusCode() != 200 || !(search.get("value") instanceof JSONArray)) {
            throw new IllegalStateException("Jolokia search failed: HTTP " + sr.statusCode() + " " + sr.body());
        }
        JSONArray names = (JSONArray) search.get("value");
        JSONArray bulkBody = new JSONArray();
        for (Object n : names) {
            JSONObject r = new JSONObject();
            r.put("type", "read");
            r.put("mbean", String.valueOf(n));
            bulkBody.add(r);
        }
        HttpRequest bulk = HttpRequest.newBuilder(URI.create(base + "/jolokia/")).header("Authorization", auth)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(bulkBody.toJSONString())).build();
        String bulkAnswer = http.send(bulk, HttpResponse.BodyHandlers.ofString()).body();
        int bulkOk = 0;
        for (Object o : (JSONArray) new JSONParser().parse(bulkAnswer)) {
            if (o instanceof JSONObject && Long.valueOf(200).equals(((Number) ((JSONObject) o).get("status")).longValue())) {
                bulkOk++;
            }
        }
        List<Double> tHealth = times(http, health, warm, nSingle, "/health/live");
        List<Double> tSingle = times(http, single, warm, nSingle, "single read");
        List<Double> tBulk = times(http, bulk, warm / 2, nBulk, "bulk read");
        md.append("## 5. Jolokia latency\n\n");
        md.append("What is measured: round-trip time (`java.net.http.HttpClient`, HTTP/1.1 keep-alive, one request at "
                + "a time) over loopback to the node agent's Jolokia with basic authentication (the user and password "
                + "of `NPU_LIFECYCLE_JOLOKIA_USER`/`_PASSWORD`): one attribute (`GET /jolokia/read/"
                + "io.npulifecycle:type=Runtime/Role`), and one bulk `POST` reading every attribute of every "
                + "`io.npulifecycle` MBean (" + names.size() + " MBeans found by a search; " + bulkOk + " answered "
                + "200; answer " + bulkAnswer.length() / 1024 + " KiB). Baseline: `GET /health/live` of the same "
                + "Jetty (no authentication, runs the live health checks). " + warm + " warm-up requests, then "
                + nSingle + " (bulk: " + nBulk + ").\n\n");
        md.append("| request | p50 (ms) | p99 (ms) | ratio p50 to baseline |\n|---|---|---|---|\n");
        double b50 = Stats.percentile(tHealth, 50);
        md.append("| baseline: GET /health/live | ").append(f2(b50)).append(" | ")
                .append(f2(Stats.percentile(tHealth, 99))).append(" | 1 |\n");
        md.append("| read one attribute, authenticated | ").append(f2(Stats.percentile(tSingle, 50))).append(" | ")
                .append(f2(Stats.percentile(tSingle, 99))).append(" | ")
                .append(f1(Stats.percentile(tSingle, 50) / b50)).append(" |\n");
        md.append("| bulk read of every io.npulifecycle MBean, authenticated | ")
                .append(f2(Stats.percentile(tBulk, 50))).append(" | ").append(f2(Stats.percentile(tBulk, 99)))
                .append(" | ").append(f1(Stats.percentile(tBulk, 50) / b50)).append(" |\n\n");
        double singleP50 = Stats.percentile(tSingle, 50);
        md.append("Reading: an authenticated single read costs ").append(f2(singleP50)).append(" ms at the median, ")
                .append(singleP50 < 3 * b50 ? "about the same as" : f1(singleP50 / b50) + " times")
                .append(" the unauthenticated health endpoint of the same server: the password is verified with PBKDF2 "
                + "(210,000 iterations, tens of ms) only at a client's first request; later requests are checked "
                + "against a keyed fingerprint of the verified credentials (security bundle, `UserStore`), compared "
                + "in constant time. The p99 values mostly reflect the "
                + "scheduling of the shared 2-core machine.\n\n");
        return md.toString();
    }

    private static List<Double> times(HttpClient http, HttpRequest req, int warm, int n, String what)
            throws Exception {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < warm + n; i++) {
            long t0 = System.nanoTime();
            HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
            long t1 = System.nanoTime();
            if (r.statusCode() != 200) {
                throw new IllegalStateException(what + ": HTTP " + r.statusCode() + " "
                        + new String(r.body(), StandardCharsets.UTF_8));
            }
            if (i >= warm) {
                out.add((t1 - t0) / 1e6);
            }
        }
        return out;
    }
}
