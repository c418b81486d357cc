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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import javax.management.StandardMBean;

import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;
import io.npulifecycle.metrics.internal.MBeans;
import io.npulifecycle.metrics.internal.RuntimeRegistry;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.simulator.common.LoopbackPorts;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The "Metrics scrape" section of {@code docs/benchmarks.md}. A node agent with {@value #CHIPS} emulated chips and
 * the same runtime without the metrics bundle and the Prometheus client (a copy of the installation whose
 * {@code conf/bundles.list} leaves them out) are started together against one embedded API server, {@code pairs}
 * times, both sent the kubelet's probes a deployed agent serves ({@link #kubeletProbes}). In each pair the agent with metrics is scraped back to back over loopback: {@value #WARM_UP} warm-up
 * scrapes, then {@value #MEASURED} measured "cold" (the C1-only agent still interprets much of the scrape path),
 * scrapes up to number {@value #STEADY_FROM}, a quiet window, then {@value #MEASURED_STEADY} measured "steady"
 * (compiled), then {@value #MEASURED_STEADY} more as Prometheus asks (its {@code Accept} header, so OpenMetrics, and
 * gzip). Per phase: latency of each request (p50, p99) and the agent's CPU from {@code /proc/<pid>/task/<tid>/stat}
 * (its threads but the {@link #BACKGROUND} ones) minus their idle CPU at the rate of the quiet window. After the
 * steady phase, the RSS of both right away ("after the burst") and {@value #SETTLE_MILLIS} ms later ("settled": what
 * a runtime scraped every 15 s holds between two scrapes, once the JVM has given back the compiler's arenas and glibc
 * the freed heap, both on a 5 s period in the launcher's options). Every figure is the median over the pairs. Then
 * the control plane's registry at 5,000 nodes in this JVM (the collectors over the orchestrator MBean as its bundle
 * publishes it, and the client's text writer), as many times as there are pairs.
 */
final class MetricsSection {

    static final int CHIPS = 16;
    static final int WARM_UP = 50;
    /** Scrapes of the cold phase. */
    static final int MEASURED = 300;
    /**
     * Scrapes of the steady phase and of the one as Prometheus asks: about 100 clock ticks of CPU each at 1 ms per
     * scrape, so the 10 ms tick of {@code /proc/<pid>/stat} is a 2 % error at most, and a probe of the agent that
     * falls into the phase (one each probe interval, also in the quiet window) weighs little per scrape.
     */
    static final int MEASURED_STEADY = 1000;
    static final int STEADY_FROM = 1000;
    static final int CONTROL_PLANE_NODES = 5000;
    /**
     * Wait after the steady phase before the settled RSS, in ms: longer than a 15 s scrape interval and than the
     * 5 s periods of the JVM's arena chunk pool cleaner and of {@code -XX:TrimNativeHeapInterval=5000}.
     */
    static final long SETTLE_MILLIS = 20_000;
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
     * @param quick one pair and a 5 s quiet window instead of three pairs and 20 s (more than one probe interval)
     */
    MetricsSection(Path install, Path work, boolean quick) {
        this.install = install;
        this.work = work;
        this.pairs = quick ? 1 : 3;
        this.quietMillis = quick ? 5_000 : 20_000;
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

    /**
     * One phase of scrapes: latencies in ms, the agent's CPU over the phase in clock ticks (its threads but the
     * {@link #BACKGROUND} ones), the phase's duration in ns, the ticks of that duration those threads spend idle
     * (subtracted), and the ticks of every thread (a diagnostic).
     */
    private record Phase(List<Double> ms, long ticks, long nanos, double idleTicks, String threads) {
        Phase lessIdle(double idleTicksPerNano) {
            return new Phase(ms, ticks, nanos, idleTicksPerNano * nanos, threads);
        }

        /** @return CPU per scrape, ms: the phase's ticks less the idle ones, over its scrapes */
        double cpuMs() {
            return Math.max(0, ticks - idleTicks) * 1000.0 / ticksPerSecond() / ms.size();
        }

        double p50() {
            return Stats.median(ms);
        }

        double p99() {
            return Stats.percentile(ms, 99);
        }
    }

    /** One pair's figures. */
    private record Pair(Phase cold, Phase steady, Phase prometheus, long rssWithKib, long rssWithoutKib,
            long settledWithKib, long settledWithoutKib, int bytes, long chipSeries) {
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

    /**
     * The kubelet's probes of the driver DaemonSet's node agent (charts/npu-lifecycle/files/driver-daemonset.yaml:
     * {@code /health/ready} every 10 s, {@code /health/live} every 30 s, on the Jetty of Jolokia), sent to both
     * runtimes of a pair alike: a deployed agent serves them, so the Jetty request path they load is not counted as
     * the metrics bundle's.
     *
     * @param http the client
     * @param ports the HTTP ports of the runtimes
     * @return the scheduler sending them (shut it down after the pair)
     */
    private static ScheduledExecutorService kubeletProbes(HttpClient http, List<Integer> ports) {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(
                r -> {
                    Thread t = new Thread(r, "bench-kubelet-probes");
                    t.setDaemon(true);
                    return t;
                });
        for (String[] probe : new String[][] {{"/health/ready", "10"}, {"/health/live", "30"}}) {
            s.scheduleAtFixedRate(() -> {
                for (int port : ports) {
                    try {
                        http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + probe[0]))
                                .timeout(Duration.ofSeconds(4)).build(), HttpResponse.BodyHandlers.discarding());
                    } catch (IOException e) {
                        log("metrics scrape: kubelet probe " + probe[0] + " of port " + port + ": " + e);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }, 0, Long.parseLong(probe[1]), TimeUnit.SECONDS);
        }
        return s;
    }

    private Pair pair(String masterUrl, Path baseline, Path dir) throws Exception {
        ScheduledExecutorService kubeletProbes = null;
        int metrics = LoopbackPorts.shared().allocate();
        NodeHome with = new NodeHome(dir.resolve("with"), LoopbackPorts.shared().allocate(), 15, 10, "framework", CHIPS, metrics);
        NodeHome without = new NodeHome(dir.resolve("without"), LoopbackPorts.shared().allocate(), 15, 10, "framework", CHIPS, 0);
        try {
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
                kubeletProbes = kubeletProbes(http, List.of(with.port, without.port));
                HttpRequest text = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics + "/metrics")).build();
                HttpRequest prometheus = HttpRequest.newBuilder(text.uri()).header("Accept", PROMETHEUS_ACCEPT)
                        .header("Accept-Encoding", "gzip").build();
                String body = "";
                for (int i = 0; i < WARM_UP; i++) {
                    body = get(http, text);
                }
                long chipSeries = body.lines().filter(l -> l.startsWith("npu_lifecycle_chip_health{")).count();
                Phase cold = phase(http, text, a.pid(), MEASURED);
                for (int i = WARM_UP + MEASURED; i < STEADY_FROM; i++) {
                    get(http, text);
                }
                // the agent's own CPU (the compiler finishing what the scrapes queued, timers) without scrapes
                long quietStart = System.nanoTime();
                Map<String, Long> quiet = threadTicks(a.pid());
                Thread.sleep(quietMillis);
                Map<String, Long> quietEnd = threadTicks(a.pid());
                double idleTicksPerNano = scrapeTicks(quiet, quietEnd) / (double) (System.nanoTime() - quietStart);
                cold = cold.lessIdle(idleTicksPerNano);
                Phase steady = phase(http, text, a.pid(), MEASURED_STEADY).lessIdle(idleTicksPerNano);
                if (Boolean.getBoolean("metrics.bench.threads")) {
                    log("metrics scrape: CPU ticks of the agent's threads over the quiet window: " + diff(quiet, quietEnd)
                            + "; over the steady phase: " + steady.threads() + "; counted " + steady.ticks() + " in "
                            + steady.nanos() / 1_000_000 + " ms, idle " + f2(steady.idleTicks()));
                }
                // before the OpenMetrics and gzip scrapes: a runtime compiles the code of the one format its Prometheus
                // asks for, not of both
                long rssWith = Proc.rssKib(a.pid());
                long rssWithout = Proc.rssKib(b.pid());
                Thread.sleep(SETTLE_MILLIS);
                long settledWith = Proc.rssKib(a.pid());
                long settledWithout = Proc.rssKib(b.pid());
                if (Boolean.getBoolean("metrics.bench.nmt")) { // both runtimes with -XX:NativeMemoryTracking=summary
                    for (ChildProcess p : List.of(a, b)) {
                        new ProcessBuilder("jcmd", String.valueOf(p.pid()), "VM.native_memory", "summary")
                                .redirectOutput(dir.resolve((p == a ? "with" : "without") + ".nmt").toFile())
                                .start().waitFor();
                    }
                }
                Phase asPrometheus = phase(http, prometheus, a.pid(), MEASURED_STEADY).lessIdle(idleTicksPerNano);
                return new Pair(cold, steady, asPrometheus, rssWith, rssWithout, settledWith, settledWithout, body.length(),
                        chipSeries);
            }
        } finally {
            if (kubeletProbes != null) {
                kubeletProbes.shutdownNow();
            }
        }
    }

    private static Phase phase(HttpClient http, HttpRequest r, long pid, int scrapes) throws Exception {
        List<Double> ms = new ArrayList<>();
        Map<String, Long> before = threadTicks(pid);
        long t = System.nanoTime();
        for (int i = 0; i < scrapes; i++) {
            long s = System.nanoTime();
            get(http, r);
            ms.add((System.nanoTime() - s) / 1e6);
        }
        Map<String, Long> after = threadTicks(pid);
        return new Phase(ms, scrapeTicks(before, after), System.nanoTime() - t, 0, diff(before, after));
    }

    /**
     * The threads of a node agent whose work does not depend on scrapes: the Kubernetes client's (fabric8 and the
     * JDK HTTP client it uses: informers, watches, node sync), health-watch's probes and FileInstall's folder poll.
     * Their CPU comes in bursts (a resync, a probe) of several ticks, which a phase of a second or two may or may not
     * hold; every other thread, the JVM's included (GC, compiler), is counted.
     */
    private static final java.util.regex.Pattern BACKGROUND = java.util.regex.Pattern.compile(
            "JdkHttpClientFa.*|HttpClient-.*|-?\\d+-pool-.*|npu-kube-.*|npu-health-watc.*|fileinstall-.*|OkHttp.*");

    /**
     * @return the ticks from {@code before} to {@code after} of the threads that are not {@link #BACKGROUND} (a
     *         thread started in between counts from 0; one that ended, not at all)
     */
    static long scrapeTicks(Map<String, Long> before, Map<String, Long> after) {
        return after.entrySet().stream().filter(e -> !BACKGROUND.matcher(name(e.getKey())).matches())
                .mapToLong(e -> e.getValue() - before.getOrDefault(e.getKey(), 0L)).sum();
    }

    private String markdown(List<Pair> r, List<List<Double>> cp, int cpBytes, String loadBefore, String loadAfter) {
        double rssAdded = Stats.median(r.stream().map(p -> (p.settledWithKib() - p.settledWithoutKib()) / 1024.0)
                .toList());
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
                + "together and both sent the kubelet's probes of the driver DaemonSet (`/health/ready` every 10 s, "
                + "`/health/live` every 30 s, on Jolokia's Jetty), ").append(r.size()).append(r.size() == 1 ? " pair" : " pairs")
                .append("; figures are medians over the pairs. The agent is scraped back to back over loopback "
                + "(`GET /metrics`, text format): ").append(WARM_UP).append(" warm-up scrapes, ").append(MEASURED)
                .append(" measured *cold* (the agent runs C1 only and still interprets much of the scrape path), "
                + "scrapes up to number ").append(STEADY_FROM).append(", a quiet window, ").append(MEASURED_STEADY)
                .append(" measured *steady* (compiled: at a 15 s interval, after the first hours), then ")
                .append(MEASURED_STEADY)
                .append(" as Prometheus asks (its `Accept` header, so OpenMetrics, and `Accept-Encoding: gzip`). "
                + "Latency per request; CPU of the agent from `/proc/<pid>/task/*/stat` (10 ms ticks) over the "
                + "phase, all its threads but those whose work does not depend on scrapes (the Kubernetes client's, "
                + "health-watch's, FileInstall's: bursts of several ticks a phase may or may not hold), minus those "
                + "threads' idle CPU at the rate of a ").append(quietMillis / 1000).append(" s quiet window (no "
                + "scrapes) after scrape ").append(STEADY_FROM).append("; RSS of both after the steady phase (before the OpenMetrics and gzip scrapes, whose code a "
                + "runtime scraped in one format only does not compile), right away and ").append(SETTLE_MILLIS / 1000)
                .append(" s later (*settled*: what a runtime scraped every 15 s holds between scrapes, once the JVM "
                + "has given back the compiler's arenas and glibc the freed heap, each on a 5 s period; the target is "
                + "judged on it). The control plane's scrape at ").append(String.format("%,d", CONTROL_PLANE_NODES))
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
        sb.append(row("node agent, steady (scrapes " + (STEADY_FROM + 1) + "-" + (STEADY_FROM + MEASURED_STEADY) + ")", r,
                Pair::steady, "p99 < 20 ms: " + verdict(steadyP99 < 20) + "; CPU < 1 ms: "
                        + verdict(steadyCpu < 1)));
        sb.append(row("node agent, steady, as Prometheus asks (OpenMetrics, gzip)", r, Pair::prometheus, ""));
        sb.append("| control plane, ").append(String.format("%,d", CONTROL_PLANE_NODES)).append(" nodes (")
                .append(String.format("%,d", cpBytes)).append(" bytes) | ").append(f2(cpP50))
                .append(" / ").append(f2(cpP99)).append(" ms | | p99 < 100 ms: ").append(verdict(cpP99 < 100))
                .append(" |\n\n");
        sb.append("| node agent RSS | with the metrics bundle | without | added | target |\n|---|---|---|---|---|\n");
        sb.append(rssRow("settled, " + SETTLE_MILLIS / 1000 + " s after " + (STEADY_FROM + MEASURED_STEADY)
                + " scrapes (" + first.chipSeries() + " chip_health series, " + String.format("%,d", first.bytes())
                + " bytes of text)", r, Pair::settledWithKib, Pair::settledWithoutKib, "< 4 MiB: "
                + verdict(rssAdded < 4)));
        sb.append(rssRow("right after the steady phase's burst", r, Pair::rssWithKib, Pair::rssWithoutKib, ""));
        sb.append("\n");
        return sb.toString();
    }

    private static String rssRow(String what, List<Pair> r, java.util.function.ToLongFunction<Pair> with,
            java.util.function.ToLongFunction<Pair> without, String target) {
        List<Double> added = r.stream().map(p -> (with.applyAsLong(p) - without.applyAsLong(p)) / 1024.0).toList();
        return "| " + what + " | " + f1(Stats.median(r.stream().map(p -> with.applyAsLong(p) / 1024.0).toList()))
                + " MiB | " + f1(Stats.median(r.stream().map(p -> without.applyAsLong(p) / 1024.0).toList()))
                + " MiB | " + f2(Stats.median(added)) + " MiB (pairs: "
                + added.stream().map(Fmt::f2).collect(Collectors.joining(", ")) + ") | " + target + " |\n";
    }

    private static String row(String what, List<Pair> r, java.util.function.Function<Pair, Phase> phase,
            String target) {
        return "| " + what + " | " + f2(Stats.median(r.stream().map(p -> phase.apply(p).p50()).toList())) + " / "
                + f2(Stats.median(r.stream().map(p -> phase.apply(p).p99()).toList())) + " ms | "
                + f2(Stats.median(r.stream().map(p -> phase.apply(p).cpuMs()).toList())) + " ms"
                + (r.size() > 1 ? " (pairs: " + r.stream().map(p -> f2(phase.apply(p).cpuMs()))
                        .collect(Collectors.joining(", ")) + ")" : "")
                + " | " + target + " |\n";
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
        PrometheusRegistry r = RuntimeRegistry.of("control-plane", mbeans, List::of, true);
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

    /**
     * @return utime + stime of each thread of the process, clock ticks, by {@code <tid> <name>} (the name as the
     *         kernel keeps it, 15 characters at most)
     */
    static Map<String, Long> threadTicks(long pid) throws IOException {
        Map<String, Long> out = new TreeMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    out.put(t.getFileName() + " " + name, Long.parseLong(f[11]) + Long.parseLong(f[12]));
                } catch (IOException e) {
                    // the thread ended
                }
            }
        }
        return out;
    }

    private static String name(String tidAndName) {
        return tidAndName.substring(tidAndName.indexOf(' ') + 1);
    }

    /** @return the ticks of each thread name from {@code before} to {@code after}, most first (a diagnostic) */
    private static String diff(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> byName = new TreeMap<>();
        after.forEach((k, v) -> byName.merge(name(k), v - before.getOrDefault(k, 0L), Long::sum));
        return byName.entrySet().stream().filter(e -> e.getValue() > 0)
                .sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
                .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
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
