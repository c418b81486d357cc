package io.npulifecycle.itests.monitoring;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.sun.net.httpserver.HttpServer;

import io.npulifecycle.itests.launcher.RuntimeProcess;
import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.simulator.common.LoopbackPorts;
import tools.jackson.databind.JsonNode;

/**
 * A real Alertmanager ({@code prometheus-alertmanager} of the Debian package) on a free loopback port, no cluster
 * (gossip) listener, routing every alert at once to a webhook receiver of the test: a JDK {@link HttpServer} on
 * loopback that keeps every notification's JSON body.
 */
final class AlertmanagerServer implements AutoCloseable {

    private final ChildProcess process;
    private final int port;
    private final HttpServer webhook;
    private final List<JsonNode> notifications;

    private AlertmanagerServer(ChildProcess process, int port, HttpServer webhook, List<JsonNode> notifications) {
        this.process = process;
        this.port = port;
        this.webhook = webhook;
        this.notifications = notifications;
    }

    /**
     * Starts the webhook receiver and Alertmanager, and waits until Alertmanager is ready (at most 30 s).
     *
     * @param binary the prometheus-alertmanager executable
     * @param dir a folder for its configuration, data and log ({@code alertmanager.log})
     * @return the running pair
     * @throws IOException if either cannot be started
     */
    static AlertmanagerServer start(Path binary, Path dir) throws IOException {
        Files.createDirectories(dir);
        HttpServer webhook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        List<JsonNode> received = new CopyOnWriteArrayList<>();
        webhook.createContext("/alerts", exchange -> {
            try (exchange) {
                received.add(PrometheusServer.JSON.readTree(
                        new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        webhook.start();
        // every alert to the webhook at once (group_wait 1 s), grouped by alert name and node
        Path config = Files.writeString(dir.resolve("alertmanager.yml"), String.join("\n",
                "route:",
                "  receiver: test-webhook",
                "  group_by: [alertname, node]",
                "  group_wait: 1s",
                "  group_interval: 1s",
                "  repeat_interval: 1h",
                "receivers:",
                "  - name: test-webhook",
                "    webhook_configs:",
                "      - url: http://127.0.0.1:" + webhook.getAddress().getPort() + "/alerts",
                "        send_resolved: true",
                ""));
        int port = LoopbackPorts.shared().allocate();
        ChildProcess p = ChildProcess.builder(List.of(binary.toString(), "--config.file=" + config,
                "--storage.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
                "--cluster.listen-address=", "--log.level=info"))
                .output(dir.resolve("alertmanager.log"), false).stopGrace(Duration.ofSeconds(10)).start();
        AlertmanagerServer s = new AlertmanagerServer(p, port, webhook, received);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        Waits.until("Alertmanager ready on port " + port, Duration.ofSeconds(30), () -> {
            try {
                return http.send(HttpRequest.newBuilder(URI.create(s.url() + "/-/ready")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }, p::output);
        return s;
    }

    /** @return the base URL, {@code http://127.0.0.1:PORT} (Prometheus sends its alerts there) */
    String url() {
        return "http://127.0.0.1:" + port;
    }

    /** @return {@code 127.0.0.1:PORT}, for Prometheus's {@code alerting.alertmanagers} */
    String address() {
        return "127.0.0.1:" + port;
    }

    /** @return every notification the webhook received so far (Alertmanager's webhook JSON), in arrival order */
    List<JsonNode> notifications() {
        return List.copyOf(notifications);
    }

    /** @return Alertmanager's log so far */
    String log() {
        return process.output();
    }

    @Override
    public void close() {
        try {
            process.stop(Duration.ofSeconds(10));
        } finally {
            webhook.stop(0);
        }
    }
}
