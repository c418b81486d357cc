package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.log;
import static io.npulifecycle.bench.Fmt.f1;
import static io.npulifecycle.bench.Fmt.f2;

import java.io.ByteArrayOutputStream;
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
 * The "Metrics scrape" section of {@code docs/benchmarks.md}. A node agent with {@value #CHIPS} emulated chips and
 * the same runtime without the metrics bundle and the Prometheus client (a copy of the installation whose
 * {@code conf/bundles.list} leaves them out) are started together against one embedded API server, {@code pairs}
 * times. In each pair the agent with metrics is scraped back to back over loopback: {@value #WARM_UP} warm-up
 * scrapes, then {@value #MEASURED} measured "cold" (the C1-only agent still interprets much of the scrape path),
 * scrapes up to number {@value #STEADY_FROM}, then {@value #MEASURED} measured "steady" (compiled), then
 * {@value #MEASURED} more as Prometheus asks (its {@code Accept} header, so OpenMetrics, and gzip). Per phase: latency
 * of each request (p50, p99) and the agent's CPU from {@code /proc/<pid>/stat} minus its own idle CPU over a quiet
 * window just before the phases. After the steady phase, the RSS of both. Every figure is the median over the pairs. Then
 * the control plane's registry at 5,000 nodes in this JVM (the collectors over the orchestrator MBean as its bundle
 * publishes it, and the client's text writer), as many times as there are pairs.
 */
final class MetricsSection {

    static final int CHIPS = 16;
    static final int WARM_UP = 50;
    static final int MEASURED = 300;
    static final int STEADY_FROM = 1000;
    static final int CONTROL_PLANE_NODES = 5000;
    /** What Prometheus 2.x/3.x sends when it scrapes (it asks for OpenMetrics first) and accepts gzip. */
    static final String PROMETHEUS_ACCEPT = "application/openmetrics-text;version=1.0.0;q=0.5,"
            + "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";

    private final Path install;
    private final Path work;
    private final int pairs;
    private final long quietMillis;
    private String javaOpts;

    /**
     * @param install the installation
     * @param work a work folder (emptied)
     * @param quick one pair and a 5 s quiet window instead of three pairs and 10 s
     */
    MetricsSection(Path install, Path work, boolean quick) {
        this.install = install;
        this.work = work;
        this.pairs = quick ? 1 : 3;
        this.quietMillis = quick ? 5_000 : 10_000;
    }

    /**
     * @param opts the JVM options of both runtimes instead of the launcher's ({@code NPU_LIFECYCLE_JAVA_OPTS}), to
     *        measure a candidate; {@code null}: the launcher's
     * @return this
     */
    MetricsSection javaOptions(String opts) {
        this.javaOpts = opts;
        return this;
    }

    /** One phase of scrapes: latencies in ms and CPU per scrape in ms. */
    private record Phase(List<Double> ms, double cpuMs) {
        double p50() {
            return Stats.median(ms);
        }

        double p99() {
            return Stats.percentile(ms, 99);
        }
    }

    /** One pair's figures. */
    private record Pair(Phase cold, Phase steady, Phase prometheus, long rssWithKib, long rssWithoutKib, int bytes,
            long chipSeries) {
    }

    /**
     * @return the Markdown of the section, headed {@code ## Metrics scrape}
     * @throws Exception when a runtime does not start or a scrape does not answer HTTP 200
     */
    String run() throws Exception {
        String loadBefore = Proc.load();
        NodeHome.deleteTree(work);
        Files.createDirectories(work);
        Path baseline = baselineInstall(install, work.resolve("install-without-metrics"));
        List<Pair> results = new ArrayList<>();
        try (EmbeddedCluster cluster = EmbeddedCluster.start()) {
            cluster.addNode(EmbeddedCluster.npuNode("node-0"));
            for (int i = 0; i < pairs; i++) {
                log("metrics scrape: pair " + (i + 1) + " of " + pairs);
                results.add(pair(cluster.masterUrl(), baseline, work.resolve("pair-" + i)));
            }
        }
        log("metrics scrape: control plane at " + CONTROL_PLANE_NODES + " nodes, " + pairs + " times");
        List<List<Double>> cp = new ArrayList<>();
        int cpBytes = 0;
        for (int i = 0; i < pairs; i++) {
            List<Double> ms = new ArrayList<>();
            cpBytes = controlPlane(CONTROL_PLANE_NODES, ms);
            cp.add(ms);
        }
        return markdown(results, cp, cpBytes, loadBefore, Proc.load());
    }

    private Pair pair(String masterUrl, Path baseline, Path dir) throws Exception {
        int metrics = BenchSupport.freePort();
        NodeHome with = new NodeHome(dir.resolve("with"), BenchSupport.freePort(), 15, 10, "framework", CHIPS, metrics);
        NodeHome without = new NodeHome(dir.resolve("without"), BenchSupport.freePort(), 15, 10, "framework", CHIPS, 0);
        try (ChildProcess a = with.process(install, masterUrl, javaOpts).recordLines(dir.resolve("with.log"))
                .stopOnJvmExit(true).start();
                ChildProcess b = without.process(baseline, masterUrl, javaOpts).recordLines(dir.resolve("without.log"))
                        .stopOnJvmExit(true).start()) {
            for (ChildProcess p : List.of(a, b)) {
                p.awaitLine(l -> l.contains("health-watch first probe completed"), 0, Duration.ofSeconds(180),
                        "the first probe");
            }
            a.awaitLine(l -> l.contains("Metrics on http://"), 0, Duration.ofSeconds(120), "/metrics listening");
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpRequest text = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics + "/metrics")).build();
            HttpRequest prometheus = HttpRequest.newBuilder(text.uri()).header("Accept", PROMETHEUS_ACCEPT)
                    .header("Accept-Encoding", "gzip").build();
            String body = "";
            for (int i = 0; i < WARM_UP; i++) {
                body = get(http, text);
            }
            long chipSeries = body.lines().filter(l -> l.startsWith("npu_lifecycle_chip_health{")).count();
            long quietStart = System.nanoTime();
            long cpu0 = cpuTicks(a.pid());
            Thread.sleep(quietMillis); // the agent's own CPU (probes, informers) without scrapes
            double idleTicksPerNano = (cpuTicks(a.pid()) - cpu0) / (double) (System.nanoTime() - quietStart);
            Phase cold = phase(http, text, a.pid(), idleTicksPerNano);
            for (int i = WARM_UP + MEASURED; i < STEADY_FROM; i++) {
                get(http, text);
            }
            Phase steady = phase(http, text, a.pid(), idleTicksPerNano);
            // before the OpenMetrics and gzip scrapes: a runtime compiles the code of the one format its Prometheus
            // asks for, not of both
            long rssWith = Proc.rssKib(a.pid());
            long rssWithout = Proc.rssKib(b.pid());
            Phase asPrometheus = phase(http, prometheus, a.pid(), idleTicksPerNano);
            return new Pair(cold, steady, asPrometheus, rssWith, rssWithout, body.length(), chipSeries);
        }
    }

    private static Phase phase(HttpClient http, HttpRequest r, long pid, double idleTicksPerNano) throws Exception {
        List<Double> ms = new ArrayList<>();
        long cpu = cpuTicks(pid);
        long t = System.nanoTime();
        for (int i = 0; i < MEASURED; i++) {
            long s = System.nanoTime();
            get(http, r);
            ms.add((System.nanoTime() - s) / 1e6);
        }
        double ticks = cpuTicks(pid) - cpu - idleTicksPerNano * (System.nanoTime() - t);
        return new Phase(ms, Math.max(0, ticks) * 1000.0 / ticksPerSecond() / MEASURED);
    }

    private String markdown(List<Pair> r, List<List<Double>> cp, int cpBytes, String loadBefore, String loadAfter) {
        double rssAdded = Stats.median(r.stream().map(p -> (p.rssWithKib() - p.rssWithoutKib()) / 1024.0).toList());
        double steadyCpu = Stats.median(r.stream().map(p -> p.steady().cpuMs()).toList());
        double steadyP99 = Stats.median(r.stream().map(p -> p.steady().p99()).toList());
        double cpP50 = Stats.median(cp.stream().map(Stats::median).toList());
        double cpP99 = Stats.median(cp.stream().map(ms -> Stats.percentile(ms, 99)).toList());
        Pair first = r.get(0);
        StringBuilder sb = new StringBuilder("## Metrics scrape\n\n");
        sb.append("What is measured (`MetricsSection`, alone: `java -cp \"bench/target/").append(benchJar())
                .append(":bench/target/lib/*\" io.npulifecycle.bench.MetricsScrapeBench "
                + "distribution/target/npu-lifecycle bench/target/metrics-bench`): a node agent with ").append(CHIPS).append(" emulated 910B chips "
                + "(simulator, embedded API server) and the same runtime without the metrics bundle and the "
                + "Prometheus client (a copy of the installation whose `conf/bundles.list` leaves them out), started "
                + "together, ").append(r.size()).append(r.size() == 1 ? " pair" : " pairs")
                .append("; figures are medians over the pairs. The agent is scraped back to back over loopback "
                + "(`GET /metrics`, text format): ").append(WARM_UP).append(" warm-up scrapes, ").append(MEASURED)
                .append(" measured *cold* (the agent runs C1 only and still interprets much of the scrape path), "
                + "scrapes up to number ").append(STEADY_FROM).append(", ").append(MEASURED).append(" measured "
                + "*steady* (compiled: at a 15 s interval, after the first hours), then ").append(MEASURED)
                .append(" as Prometheus asks (its `Accept` header, so OpenMetrics, and `Accept-Encoding: gzip`). "
                + "Latency per request; CPU of the agent from `/proc/<pid>/stat` over the phase minus its own idle "
                + "CPU over a ").append(quietMillis / 1000).append(" s quiet window just before; RSS of both after "
                + "the steady phase (before the OpenMetrics and gzip scrapes, whose code a runtime scraped in one "
                + "format only does not compile). The control plane's scrape at ").append(String.format("%,d", CONTROL_PLANE_NODES))
                .append(" nodes: the collectors over the UpgradeOrchestrator MBean (as its bundle publishes it) and "
                + "the client's text writer in one JVM, JVM metrics included; 20 warm-up scrapes, then 200, as many times as "
                + "there are pairs (medians of their p50 and p99).\n\n");
        if (javaOpts != null) {
            sb.append("JVM options of both runtimes (not the launcher's): `").append(javaOpts).append("`.\n\n");
        }
        sb.append("Load average (1/5/15 min) before: ").append(loadBefore).append("; after: ").append(loadAfter)
                .append(" (the cores are shared with other builds: CPU and latency are upper bounds).\n\n");
        sb.append("| what | latency p50 / p99 | CPU per scrape | target |\n|---|---|---|---|\n");
        sb.append(row("node agent, cold (scrapes " + (WARM_UP + 1) + "-" + (WARM_UP + MEASURED) + ")", r,
                Pair::cold, ""));
        sb.append(row("node agent, steady (scrapes " + (STEADY_FROM + 1) + "-" + (STEADY_FROM + MEASURED) + ")", r,
                Pair::steady, "p99 < 20 ms: " + verdict(steadyP99 < 20) + "; CPU < 1 ms: "
                        + verdict(steadyCpu < 1)));
        sb.append(row("node agent, steady, as Prometheus asks (OpenMetrics, gzip)", r, Pair::prometheus, ""));
        sb.append("| control plane, ").append(String.format("%,d", CONTROL_PLANE_NODES)).append(" nodes (")
                .append(String.format("%,d", cpBytes)).append(" bytes) | ").append(f2(cpP50))
                .append(" / ").append(f2(cpP99)).append(" ms | | p99 < 100 ms: ").append(verdict(cpP99 < 100))
                .append(" |\n\n");
        sb.append("| node agent RSS | with the metrics bundle | without | added | target |\n|---|---|---|---|---|\n");
        sb.append("| after ").append(STEADY_FROM + MEASURED).append(" scrapes (").append(first.chipSeries()).append(" chip_health series, ")
                .append(String.format("%,d", first.bytes())).append(" bytes of text) | ")
                .append(f1(Stats.median(r.stream().map(p -> p.rssWithKib() / 1024.0).toList()))).append(" MiB | ")
                .append(f1(Stats.median(r.stream().map(p -> p.rssWithoutKib() / 1024.0).toList()))).append(" MiB | ")
                .append(f2(rssAdded)).append(" MiB (pairs: ")
                .append(r.stream().map(p -> f2((p.rssWithKib() - p.rssWithoutKib()) / 1024.0))
                        .collect(Collectors.joining(", ")))
                .append(") | < 4 MiB: ").append(verdict(rssAdded < 4)).append(" |\n\n");
        return sb.toString();
    }

    private static String row(String what, List<Pair> r, java.util.function.Function<Pair, Phase> phase,
            String target) {
        return "| " + what + " | " + f2(Stats.median(r.stream().map(p -> phase.apply(p).p50()).toList())) + " / "
                + f2(Stats.median(r.stream().map(p -> phase.apply(p).p99()).toList())) + " ms | "
                + f2(Stats.median(r.stream().map(p -> phase.apply(p).cpuMs()).toList())) + " ms | " + target + " |\n";
    }

    /** @return the file name of the jar this class runs from, e.g. {@code io.npulifecycle.bench-0.1.0-SNAPSHOT.jar} */
    private static String benchJar() {
        try {
            Path p = Path.of(MetricsSection.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (p.getFileName().toString().endsWith(".jar")) {
                return p.getFileName().toString();
            }
        } catch (java.net.URISyntaxException | RuntimeException e) {
            // not from a jar: the name bench/run builds
        }
        return "io.npulifecycle.bench-*.jar";
    }

    private static String verdict(boolean met) {
        return met ? "met" : "**missed**";
    }

    /**
     * The control plane's scrape at {@code nodes} nodes: collectors over the orchestrator MBean, the text writer.
     *
     * @param nodes node states the orchestrator holds
     * @param ms receives the duration of each measured scrape, ms
     * @return the size of the text, bytes
     * @throws IOException never (in-memory output)
     */
    static int controlPlane(int nodes, List<Double> ms) throws IOException {
        Map<String, String> states = new TreeMap<>();
        String[] cycle = {"upgrade-required", "drain-required", "rebooting", "validation-required", "upgraded"};
        for (int i = 0; i < nodes; i++) {
            states.put(String.format("npu-node-%05d", i), cycle[i % cycle.length]);
        }
        MBeans mbeans = new MBeans();
        mbeans.add(UpgradeOrchestratorMXBean.OBJECT_NAME,
                new StandardMBean(new Orchestrator(states), UpgradeOrchestratorMXBean.class, true));
        PrometheusRegistry r = MetricsEndpoint.registry("control-plane", mbeans, List::of, true);
        PrometheusTextFormatWriter w = PrometheusTextFormatWriter.create();
        int size = 0;
        for (int i = 0; i < 220; i++) {
            long s = System.nanoTime();
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            w.write(b, r.scrape());
            size = b.size();
            if (i >= 20) {
                ms.add((System.nanoTime() - s) / 1e6);
            }
        }
        return size;
    }

    static String get(HttpClient http, HttpRequest r) throws IOException, InterruptedException {
        HttpResponse<byte[]> res = http.send(r, HttpResponse.BodyHandlers.ofByteArray());
        if (res.statusCode() != 200) {
            throw new IOException(r.uri() + ": HTTP " + res.statusCode());
        }
        return new String(res.body(), java.nio.charset.StandardCharsets.UTF_8);
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
    static final class Orchestrator implements UpgradeOrchestratorMXBean {
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
