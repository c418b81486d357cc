package io.npulifecycle.simulator.harness;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * {@code demo --prometheus}: a real Prometheus (the {@code prometheus} executable on {@code PATH}, e.g. Debian's
 * package) on a free loopback port, scraping every runtime of the demo's cluster every 2 s through the file_sd files
 * of {@link PrometheusTargets}, with the shipped alert rules ({@code conf/monitoring/npu-lifecycle.rules.yaml} of the
 * installation) loaded, so a person can watch the metrics and alerts of the run. Its configuration, data and log are
 * in {@code <work>/prometheus/}. Stopped with the demo.
 */
final class DemoPrometheus implements AutoCloseable {

    private final ChildProcess process;
    private final int port;

    private DemoPrometheus(ChildProcess process, int port) {
        this.process = process;
        this.port = port;
    }

    /** @return the prometheus executable on {@code PATH}, or null */
    static Path find() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir, "prometheus");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * The configuration: both jobs on the file_sd files, the rules file when the installation has it.
     *
     * @param targets the folder of the file_sd files
     * @param rules the rules file, or null
     * @return the text of prometheus.yml
     */
    static String config(Path targets, Path rules) {
        List<String> lines = new ArrayList<>(List.of(
                "global:",
                "  scrape_interval: 2s",
                "  scrape_timeout: 2s",
                "  evaluation_interval: 2s"));
        if (rules != null) {
            lines.addAll(List.of("rule_files:", "  - '" + rules + "'"));
        }
        lines.add("scrape_configs:");
        for (String[] job : new String[][] {{"npu-lifecycle-node-agent", PrometheusTargets.NODE_AGENTS},
                {"npu-lifecycle-control-plane", PrometheusTargets.CONTROL_PLANE}}) {
            lines.addAll(List.of(
                    "  - job_name: " + job[0],
                    "    file_sd_configs:",
                    "      - files: ['" + targets.resolve(job[1]) + "']",
                    "        refresh_interval: 2s"));
        }
        return String.join("\n", lines) + "\n";
    }

    /**
     * Starts Prometheus and waits (at most 30 s) until it is ready.
     *
     * @param binary the prometheus executable
     * @param install the installation (for {@code conf/monitoring/npu-lifecycle.rules.yaml})
     * @param work the demo's work folder
     * @param out where to print its URL
     * @return the running Prometheus
     * @throws IOException if it cannot be started, or is not ready within 30 s (the message names its log)
     */
    static DemoPrometheus start(Path binary, Path install, Path work, PrintStream out) throws IOException {
        Path dir = Files.createDirectories(PrometheusTargets.folder(work));
        Path rules = install.resolve("conf/monitoring/npu-lifecycle.rules.yaml");
        Path config = Files.writeString(dir.resolve("prometheus.yml"),
                config(dir, Files.exists(rules) ? rules : null));
        int port = LoopbackPorts.shared().allocate();
        Path log = dir.resolve("prometheus.log");
        ChildProcess p = ChildProcess.builder(List.of(binary.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port))
                .output(log, false).stopGrace(Duration.ofSeconds(10)).start();
        DemoPrometheus prometheus = new DemoPrometheus(p, port);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        try {
            new Waiter(() -> { }).until("Prometheus ready on port " + port, Duration.ofSeconds(30), () -> {
                if (!p.alive()) {
                    return true; // exited: reported below
                }
                try {
                    return http.send(HttpRequest.newBuilder(URI.create(prometheus.url() + "/-/ready")).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException notYet) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return true;
                }
            }, () -> "its log " + log);
        } catch (Waiter.Timeout e) {
            prometheus.close();
            throw new IOException(e.getMessage(), e);
        }
        if (!p.alive()) {
            throw new IOException("Prometheus exited at start with code " + p.exitValue() + " (log " + log + ")");
        }
        out.println("   Prometheus " + prometheus.url() + "/graph (targets: " + prometheus.url() + "/targets, alerts: "
                + prometheus.url() + "/alerts" + (rules != null && Files.exists(rules) ? "" : ", no rules file in "
                + install.resolve("conf/monitoring")) + "), scraping every runtime every 2 s; config " + config);
        return prometheus;
    }

    /**
     * {@link #start} when {@code prometheus} is on {@code PATH}; otherwise, or when it does not start, says why and
     * lets the demo run without it.
     *
     * @return the running Prometheus, or null
     */
    static DemoPrometheus startIfInstalled(Path install, Path work, PrintStream out) {
        Path binary = find();
        if (binary == null) {
            out.println("   --prometheus: no prometheus on PATH (Debian package prometheus); the demo runs without it");
            return null;
        }
        try {
            return start(binary, install, work, out);
        } catch (IOException e) {
            out.println("   --prometheus: " + e.getMessage() + "; the demo runs without it");
            return null;
        }
    }

    /** @return the base URL, {@code http://127.0.0.1:PORT} */
    String url() {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        process.stop(Duration.ofSeconds(10));
    }
}
