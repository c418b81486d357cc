package io.npulifecycle.bench;

import java.io.IOException;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import javax.management.StandardMBean;

import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;
import io.npulifecycle.metrics.internal.MBeans;
import io.npulifecycle.metrics.internal.MetricsEndpoint;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.common.ChildProcess;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The scrape benchmark of docs/benchmarks.md ("Metrics scrape"): a node agent with 16 emulated chips scraped
 * {@value #SCRAPES} times back to back (latency p50/p99, CPU of the agent per scrape, its idle CPU over an equal quiet
 * window subtracted), its resident memory against the same runtime without the metrics bundle and the Prometheus
 * client (a copy of the installation whose {@code conf/bundles.list} leaves them out), both started in this run; then
 * the control plane's registry at 5,000 nodes in this JVM (the collectors over the orchestrator MBean as its bundle publishes it, and the client's
 * text writer).
 *
 * <p>Usage: {@code java -cp bench/target/io.npulifecycle.bench-*.jar:bench/target/lib/* io.npulifecycle.bench.MetricsScrapeBench
 * <installation> <work folder>}; prints a Markdown table.
 */
public final class MetricsScrapeBench {

    static final int SCRAPES = 300;
    static final int CHIPS = 16;

    private MetricsScrapeBench() {
    }

    /**
     * @param args installation folder, work folder
     * @throws Exception when a runtime does not start
     */
    public static void main(String[] args) throws Exception {
        Path install = Path.of(args.length > 0 ? args[0] : "distribution/target/npu-lifecycle").toAbsolutePath();
        Path work = Path.of(args.length > 1 ? args[1] : "bench/target/metrics-bench").toAbsolutePath();
        NodeHome.deleteTree(work);
        Files.createDirectories(work);
        Path baseline = baselineInstall(install, work.resolve("install-without-metrics"));
        List<String> out = new ArrayList<>();
        try (EmbeddedCluster cluster = EmbeddedCluster.start()) {
            cluster.addNode(EmbeddedCluster.npuNode("node-0"));
            int metrics = BenchSupport.freePort();
            NodeHome with = new NodeHome(work.resolve("with"), BenchSupport.freePort(), 15, 10, "framework", CHIPS,
                    metrics);
            NodeHome without = new NodeHome(work.resolve("without"), BenchSupport.freePort(), 15, 10, "framework",
                    CHIPS, 0);
            try (ChildProcess a = with.process(install, cluster.masterUrl(), null)
                    .recordLines(work.resolve("with.log")).start();
                    ChildProcess b = without.process(baseline, cluster.masterUrl(), null)
                            .recordLines(work.resolve("without.log")).start()) {
                for (ChildProcess p : List.of(a, b)) {
                    p.awaitLine(l -> l.contains("health-watch first probe completed"), 0, Duration.ofSeconds(180),
                            "the first probe");
                }
                a.awaitLine(l -> l.contains("Metrics on http://"), 0, Duration.ofSeconds(120), "/metrics listening");
                HttpClient http = HttpClient.newHttpClient();
                URI u = URI.create("http://127.0.0.1:" + metrics + "/metrics");
                String body = "";
                for (int i = 0; i < 50; i++) { // warm-up: JIT, first class loading
                    body = get(http, u);
                }
                long series = body.lines().filter(l -> l.startsWith("npu_lifecycle_chip_health{")).count();
                long quietStart = System.nanoTime();
                long cpu0 = cpuTicks(a.pid());
                Thread.sleep(10_000); // the agent's own idle CPU (probes, informers) over a quiet window
                long idleTicks = cpuTicks(a.pid()) - cpu0;
                double idleTicksPerNano = idleTicks / (double) (System.nanoTime() - quietStart);
                List<Double> ms = new ArrayList<>();
                long cpu1 = cpuTicks(a.pid());
                long t1 = System.nanoTime();
                for (int i = 0; i < SCRAPES; i++) {
                    long s = System.nanoTime();
                    get(http, u);
                    ms.add((System.nanoTime() - s) / 1e6);
                }
                long elapsed = System.nanoTime() - t1;
                double ticks = cpuTicks(a.pid()) - cpu1 - idleTicksPerNano * elapsed;
                double cpuMsPerScrape = Math.max(0, ticks) * 1000.0 / ticksPerSecond() / SCRAPES;
                long rssWith = Proc.rssKib(a.pid());
                long rssWithout = Proc.rssKib(b.pid());
                out.add("| node agent, " + CHIPS + " chips (" + series + " chip_health series, " + body.length()
                        + " bytes) | " + SCRAPES + " scrapes back to back | p50 " + fmt(Stats.median(ms)) + " ms, p99 "
                        + fmt(Stats.percentile(ms, 99)) + " ms | " + fmt(cpuMsPerScrape) + " ms CPU per scrape |");
                out.add("| node agent RSS | same runtime with and without the metrics bundle and the Prometheus "
                        + "client, both started in this run, after the scrapes | " + rssWith / 1024 + " MiB with, "
                        + rssWithout / 1024 + " MiB without | " + fmt((rssWith - rssWithout) / 1024.0)
                        + " MiB added |");
            }
        }
        out.add(controlPlane(5000));
        System.out.println("| what | how | latency / size | cost |");
        System.out.println("|---|---|---|---|");
        out.forEach(System.out::println);
        System.out.println();
        System.out.println("machine: " + Proc.machine() + "; load " + Proc.load());
    }

    /** The control plane's scrape at {@code nodes} nodes: collectors over the orchestrator MBean as its bundle publishes it, the text writer. */
    static String controlPlane(int nodes) throws Exception {
        MBeans mbeans = new MBeans();
        Map<String, String> states = new TreeMap<>();
        String[] cycle = {"upgrade-required", "drain-required", "rebooting", "validation-required", "upgraded"};
        for (int i = 0; i < nodes; i++) {
            states.put(String.format("npu-node-%05d", i), cycle[i % cycle.length]);
        }
        mbeans.add(UpgradeOrchestratorMXBean.OBJECT_NAME,
                new StandardMBean(new Orchestrator(states), UpgradeOrchestratorMXBean.class, true));
        PrometheusRegistry r = MetricsEndpoint.registry("control-plane", mbeans, List::of, true);
        PrometheusTextFormatWriter w = PrometheusTextFormatWriter.create();
        List<Double> ms = new ArrayList<>();
        int size = 0;
        for (int i = 0; i < 220; i++) {
            long s = System.nanoTime();
            java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
            w.write(b, r.scrape());
            size = b.size();
            if (i >= 20) {
                ms.add((System.nanoTime() - s) / 1e6);
            }
        }
        return "| control plane, " + nodes + " nodes | registry scrape and text writer in one JVM (200 after 20 "
                + "warm-up), the orchestrator MBean as its bundle publishes it (a StandardMBean) | p50 " + fmt(Stats.median(ms))
                + " ms, p99 " + fmt(Stats.percentile(ms, 99)) + " ms, " + size + " bytes | |";
    }

    static String get(HttpClient http, URI u) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(u).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(u + ": HTTP " + r.statusCode());
        }
        return r.body();
    }

    /** @return utime + stime of the process, clock ticks ({@code /proc/<pid>/stat} fields 14 and 15) */
    static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    static long ticksPerSecond() {
        return 100; // USER_HZ on Linux
    }

    static String fmt(double v) {
        return String.format(java.util.Locale.ROOT, "%.2f", v);
    }

    /** A copy of the installation whose bundle list leaves out the metrics bundle and the Prometheus client. */
    static Path baselineInstall(Path install, Path copy) throws IOException {
        try (var s = Files.walk(install)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path t = copy.resolve(install.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        Path list = copy.resolve("conf/bundles.list");
        Files.writeString(list, Files.readAllLines(list).stream()
                .filter(l -> !l.contains("prometheus-metrics") && !l.contains("jsr305")
                        && !l.contains("io.npulifecycle.metrics"))
                .collect(Collectors.joining("\n", "", "\n")));
        return copy;
    }

    /** The orchestrator MBean with fixed node states. */
    public static final class Orchestrator implements UpgradeOrchestratorMXBean {
        private final Map<String, String> states;

        Orchestrator(Map<String, String> states) {
            this.states = states;
        }

        @Override public String getTargetVersion() { return "25.5.0"; }
        @Override public Map<String, Integer> getCountsPerState() { return Map.of(); }
        @Override public Map<String, String> getNodeStates() { return states; }
        @Override public List<String> getAwaitingApproval() { return List.of(); }
        @Override public List<String> getSlotHolders() { return List.of(); }
        @Override public List<String> getFailedNodes() { return List.of(); }
        @Override public List<String> getConditions() { return List.of(); }
        @Override public boolean isLeader() { return true; }
        @Override public String getIdentity() { return "bench"; }
        @Override public boolean isPaused() { return false; }
        @Override public Map<String, Long> getWriteCounts() { return Map.of(); }
        @Override public boolean pause() { return false; }
        @Override public boolean resume() { return false; }
    }

}
