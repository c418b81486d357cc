package io.npulifecycle.itests.monitoring;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.npulifecycle.itests.launcher.RuntimeProcess;
import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.simulator.common.LoopbackPorts;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real Prometheus ({@code prometheus} of the Debian package) as a child process on a free loopback port, its data
 * in a folder of the test, and a client of its HTTP API ({@code /api/v1/query}, {@code /api/v1/query_range}).
 */
final class PrometheusServer implements AutoCloseable {

    static final ObjectMapper JSON = JsonMapper.builder().build();

    private final ChildProcess process;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private PrometheusServer(ChildProcess process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts Prometheus with a configuration and waits until it is ready ({@code /-/ready}, at most 30 s).
     *
     * @param binary the prometheus executable
     * @param dir a folder for its configuration, data and log ({@code prometheus.log})
     * @param config the text of prometheus.yml
     * @return the running server
     * @throws IOException if it cannot be started
     * @throws AssertionError if it is not ready within 30 s (with its log)
     */
    static PrometheusServer start(Path binary, Path dir, String config) throws IOException {
        Files.createDirectories(dir);
        Path file = Files.writeString(dir.resolve("prometheus.yml"), config);
        int port = LoopbackPorts.shared().allocate();
        ChildProcess p = ChildProcess.builder(List.of(binary.toString(), "--config.file=" + file,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
                "--storage.tsdb.retention.time=1d", "--log.level=info"))
                .output(dir.resolve("prometheus.log"), false).stopGrace(Duration.ofSeconds(10)).start();
        PrometheusServer s = new PrometheusServer(p, port);
        Waits.until("Prometheus ready on port " + port + " (log " + dir.resolve("prometheus.log") + ")",
                Duration.ofSeconds(30), () -> s.status("/-/ready") == 200, p::output);
        return s;
    }

    /** @return the base URL, {@code http://127.0.0.1:PORT} */
    String url() {
        return "http://127.0.0.1:" + port;
    }

    /** @return the server's log so far */
    String log() {
        return process.output();
    }

    int status(String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /**
     * @param path an API path with its query string
     * @return the {@code data} of a successful answer
     * @throws AssertionError if the answer is not {@code status: success} (with the answer)
     */
    JsonNode api(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url() + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = JSON.readTree(r.body());
        if (r.statusCode() != 200 || !"success".equals(body.path("status").asString())) {
            throw new AssertionError("Prometheus " + path + ": HTTP " + r.statusCode() + " " + r.body());
        }
        return body.path("data");
    }

    /**
     * An instant query.
     *
     * @param expr PromQL
     * @param at evaluation time
     * @return the result vector (or scalar) of {@code /api/v1/query}
     */
    JsonNode query(String expr, Instant at) throws IOException, InterruptedException {
        return api("/api/v1/query?query=" + enc(expr) + "&time=" + at.getEpochSecond()).path("result");
    }

    /**
     * A range query.
     *
     * @param expr PromQL
     * @param from start
     * @param to end
     * @param stepSeconds resolution, seconds
     * @return the result matrix of {@code /api/v1/query_range}: one element per series, each with its values
     */
    JsonNode queryRange(String expr, Instant from, Instant to, int stepSeconds) throws IOException,
            InterruptedException {
        return api("/api/v1/query_range?query=" + enc(expr) + "&start=" + from.getEpochSecond() + "&end="
                + to.getEpochSecond() + "&step=" + stepSeconds).path("result");
    }

    /**
     * @param expr PromQL
     * @param from start
     * @param to end
     * @return the largest value any series of the expression had in the range (1 s steps), or NaN without data
     */
    double maxOver(String expr, Instant from, Instant to) throws IOException, InterruptedException {
        double max = Double.NaN;
        for (JsonNode series : queryRange(expr, from, to, 1)) {
            for (JsonNode v : series.path("values")) {
                double d = Double.parseDouble(v.path(1).asString());
                if (!Double.isNaN(d) && (Double.isNaN(max) || d > max)) {
                    max = d;
                }
            }
        }
        return max;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        process.stop(Duration.ofSeconds(10));
    }
}
