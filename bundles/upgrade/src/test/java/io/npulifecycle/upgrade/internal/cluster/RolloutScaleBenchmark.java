package io.npulifecycle.upgrade.internal.cluster;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * Control plane at scale (docs/benchmarks.md, item 4; not in the default test run): 1,000 and 5,000 emulated NPU nodes,
 * rolled from 24.1.0 to 25.5.0 with {@code maxParallelUpgrades} unlimited (0), 50 and 1, instant emulated reboots.
 *
 * <pre>
 * mvn -B -o -q -pl bundles/upgrade -am -Prollout-bench verify [-Dbench.quick=true]
 * </pre>
 *
 * <p>Writes the Markdown fragment {@code target/bench/control-plane.md} (section {@code ## Control plane at scale})
 * and the raw figures {@code target/bench/control-plane.txt}. Setup: the simulator's EmbeddedCluster
 * (kubernetes-server-mock 8.0.0 in CRUD mode) in this JVM (requests counted at the server by User-Agent), the
 * emulated node agents and DaemonSet controller ({@code NodeAgentEmulator}) in this JVM, the controller in a JVM of
 * its own ({@link BenchController}: its process CPU and heap are the controller's alone).
 *
 * <p>System properties: {@code bench.quick} (1,000 nodes; unlimited and 50 in full, 1 as a prefix),
 * {@code bench.nodes} (comma-separated node counts, default {@code 1000,5000}), {@code bench.prefix} (nodes measured
 * with maxParallelUpgrades 1, default 40, quick 20), {@code bench.wavePrefix} (nodes measured with maxParallelUpgrades
 * above 1 from 5,000 nodes on, default 500), {@code bench.jfr} (a JFR recording of each controller JVM), {@code bench.parallel} (maxParallelUpgrades values, default
 * {@code 0,50,1}, without 0 at 5,000 nodes: the whole unlimited 5,000-node rollout takes ~12 min here), {@code bench.out} (default {@code target/bench}).
 */
class RolloutScaleBenchmark {

    private static final String FROM = "24.1.0";
    private static final String TO = "25.5.0";
    private static final Duration VARIANT_TIMEOUT = Duration.ofMinutes(30);

    /** One rollout to measure: all nodes, or (maxParallel 1) the first {@code measured} upgrades. */
    record Variant(int nodes, int maxParallel, int measured) {
        boolean prefix() {
            return measured < nodes;
        }

        String parallelText() {
            return maxParallel == 0 ? "unlimited" : String.valueOf(maxParallel);
        }
    }

    /** Counters at one instant. */
    record Point(long nanos, Map<String, Long> requests, Map<String, String> stat, long serverCpuNs,
            Map<String, Integer> states) {
        /**
         * Controller writes already spent on the nodes in flight at this instant, on the design path (the
         * {@code upgrade-required} label excluded: phase A writes it for every waiting node): pod-restart-required =
         * patch + pod DELETE, reboot-required +1 patch, rebooting +1, validation-required +1. Method: null = all.
         */
        double inFlightWrites(String method) {
            double w = 0;
            for (Map.Entry<String, Integer> e : states.entrySet()) {
                int patches = switch (e.getKey()) {
                    case "pod-restart-required" -> 1;
                    case "reboot-required" -> 2;
                    case "rebooting" -> 3;
                    case "validation-required" -> 4;
                    default -> -1;
                };
                if (patches < 0) {
                    continue;
                }
                int x = method == null ? patches + 1 : "PATCH".equals(method) ? patches : "DELETE".equals(method) ? 1 : 0;
                w += (double) x * e.getValue();
            }
            return w;
        }

        long cpuNs() {
            return Long.parseLong(stat.get("cpuNs")) - Long.parseLong(stat.get("gcForcedNs"));
        }

        long req(String ua, boolean write) {
            long n = 0;
            for (Map.Entry<String, Long> e : requests.entrySet()) {
                if (e.getKey().startsWith(ua + " ") && e.getKey().endsWith(" GET") != write) {
                    n += e.getValue();
                }
            }
            return n;
        }

        long req(String key) {
            return requests.getOrDefault(key, 0L);
        }
    }

    /** Figures of one variant, extrapolated to every node for a prefix run. */
    record Result(Variant v, double wallS, double completeS, double ctlReads, double ctlWrites, double agentReads,
            double agentWrites, Map<String, Double> ctlWritesByMethod, double cpuS, double serverCpuS, long heapReady,
            long heapMax, String writeCounts, double firstNodeS, double perNodeS) {
    }

    @Test
    void controlPlaneAtScale() throws Exception {
        boolean quick = Boolean.getBoolean("bench.quick");
        int prefix = Integer.getInteger("bench.prefix", quick ? 20 : 40);
        int wavePrefix = Integer.getInteger("bench.wavePrefix", 500);
        List<Variant> variants = new ArrayList<>();
        for (String n : System.getProperty("bench.nodes", quick ? "1000" : "1000,5000").split(",")) {
            int nodes = Integer.parseInt(n.trim());
            for (String mp : System.getProperty("bench.parallel", "0,50,1").split(",")) {
                int m = Integer.parseInt(mp.trim());
                if (m == 0 && nodes >= 5000 && System.getProperty("bench.parallel") == null) {
                    // a whole unlimited rollout of 5,000 nodes takes 12 min here (the mock API server, ~10 ms a
                    // request): only when asked for with -Dbench.parallel=0,...; the default run stays near 15 min
                    continue;
                }
                // maxParallelUpgrades 1 always, 50 from 5,000 nodes on: a prefix (steady waves), extrapolated
                int measured = m == 1 ? prefix : m > 1 && nodes >= 5000 ? wavePrefix : nodes;
                variants.add(new Variant(nodes, m, Math.min(nodes, measured)));
            }
        }
        Path out = Paths.get(System.getProperty("bench.out", "target/bench"));
        Files.createDirectories(out);
        List<Result> results = new ArrayList<>();
        try (PrintWriter raw = new PrintWriter(Files.newBufferedWriter(out.resolve("control-plane.txt")), true)) {
            for (Variant v : variants) {
                Result r = run(v, out, raw);
                results.add(r);
                System.out.println("BENCH " + r);
            }
        }
        Files.writeString(out.resolve("control-plane.md"), markdown(results, quick, prefix));
    }

    private Result run(Variant v, Path out, PrintWriter raw) throws Exception {
        raw.println("== " + v);
        ClusterFixture c = ClusterFixture.startEmbedded();
        ScaledTestClock time = c.own(new ScaledTestClock(1));
        NodeAgentEmulator emulator = NodeAgentEmulator.on(c, time);
        try {
            emulator.rebootDuration = Duration.ZERO;
            long s0 = System.nanoTime();
            emulator.addNodes(v.nodes(), FROM);
            emulator.start();
            raw.printf("setup %d nodes: %d ms%n", v.nodes(), (System.nanoTime() - s0) / 1_000_000);
            Path log = out.resolve("controller-" + v.nodes() + "-" + v.parallelText() + ".log");
            String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
            String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-XX:+UseSerialGC",
                    "-Djava.util.logging.config.file=" + Paths.get("src/test/resources/logging-bench.properties").toAbsolutePath()));
            if (Boolean.getBoolean("bench.jfr")) { // profile the controller: target/bench/controller-<nodes>-<parallel>.jfr
                command.add("-XX:StartFlightRecording=settings=profile,filename="
                        + log.toAbsolutePath().toString().replace(".log", ".jfr"));
            }
            command.addAll(List.of("-cp", cp, BenchController.class.getName(), c.masterUrl()));
            Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
            try {
                BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter cmd = new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8);
                Map<String, String> ready = parse(expect(in, "READY "));
                Point start = point(c, emulator, in, cmd);
                c.createDriver(driver(TO, true, v.maxParallel(), "100%", Map.of("podRestartSeconds", 0,
                        "rebootRequiredSeconds", 0, "rebootingSeconds", 0, "validationSeconds", 0)));
                Point first = null;
                if (v.prefix()) {
                    Waits.until("first node upgraded", VARIANT_TIMEOUT, () -> emulator.upgraded(TO) >= 1);
                    first = point(c, emulator, in, cmd);
                }
                Waits.until(v.measured() + " nodes upgraded", VARIANT_TIMEOUT, () -> emulator.upgraded(TO) >= v.measured());
                Point done = point(c, emulator, in, cmd);
                Point end = done;
                double completeS = Double.NaN;
                if (!v.prefix()) {
                    Waits.until("status Complete=True", Duration.ofMinutes(1), () -> c.condition("Complete").startsWith("True"));
                    end = point(c, emulator, in, cmd);
                    completeS = (end.nanos() - start.nanos()) / 1e9;
                }
                cmd.println("STOP");
                Map<String, String> last = parse(expect(in, "STAT "));
                raw.println("ready " + ready);
                raw.println("start " + start);
                raw.println("first " + first);
                raw.println("done " + done);
                raw.println("end " + end);
                raw.println("last " + last);
                Result r = v.prefix() ? extrapolate(v, start, first, done, ready, last)
                        : whole(v, start, done, end, completeS, ready, last);
                raw.println("result " + r);
                return r;
            } finally {
                if (!p.waitFor(30, TimeUnit.SECONDS)) { // STOP sent: it exits (JFR dump) by itself
                    p.destroyForcibly();
                    p.waitFor();
                }
            }
        } finally {
            try {
                c.close();
            } catch (RuntimeException e) {
                // a prefix run stops mid-rollout: the mock may refuse to close with requests in flight
                raw.println("closing the mock API server: " + e);
            }
        }
    }

    private static Result whole(Variant v, Point start, Point done, Point end, double completeS,
            Map<String, String> ready, Map<String, String> last) {
        double n = v.nodes();
        double wall = (done.nanos() - start.nanos()) / 1e9;
        double cpu = (end.cpuNs() - start.cpuNs()) / 1e9;
        return new Result(v, wall, completeS, (end.req("npu-controller", false) - start.req("npu-controller", false)) / n,
                (end.req("npu-controller", true) - start.req("npu-controller", true)) / n,
                (end.req("npu-emulator", false) - start.req("npu-emulator", false)) / n,
                (end.req("npu-emulator", true) - start.req("npu-emulator", true)) / n, byMethod(start, end, 1, null, n),
                cpu, (end.serverCpuNs() - start.serverCpuNs()) / 1e9, Long.parseLong(ready.get("heapNow")), Long.parseLong(last.get("heapMax")),
                last.get("writes"), Double.NaN, wall / n);
    }

    /**
     * maxParallelUpgrades 1 on a prefix: phase A = start → first node upgraded (includes the one-off labelling of every
     * waiting node), phase B = first → k-th; total for N nodes = A + B / (k - 1) × (N - 1).
     */
    private static Result extrapolate(Variant v, Point start, Point first, Point done,
            Map<String, String> ready, Map<String, String> last) {
        double n = v.nodes();
        double f = (n - 1) / (v.measured() - 1);
        double wall = (first.nanos() - start.nanos()) / 1e9 + f * (done.nanos() - first.nanos()) / 1e9;
        double cpu = (first.cpuNs() - start.cpuNs()) / 1e9 + f * (done.cpuNs() - first.cpuNs()) / 1e9;
        // work in progress: the writes already spent on the nodes in flight at "first" and at "done" belong to
        // nodes not counted as upgraded yet; phase B's cost per upgraded node leaves them out, and the nodes in flight
        // at "first" were paid for in phase A
        double wipWrites = -first.inFlightWrites(null) + f * (first.inFlightWrites(null) - done.inFlightWrites(null));
        return new Result(v, wall, Double.NaN, ext(start, first, done, "npu-controller", false, f) / n,
                (ext(start, first, done, "npu-controller", true, f) + wipWrites) / n, ext(start, first, done, "npu-emulator", false, f) / n,
                ext(start, first, done, "npu-emulator", true, f) / n, byMethod(start, first, f, done, n),
                cpu, (first.serverCpuNs() - start.serverCpuNs()) / 1e9 + f * (done.serverCpuNs() - first.serverCpuNs()) / 1e9, Long.parseLong(ready.get("heapNow")), Long.parseLong(last.get("heapMax")),
                last.get("writes"), (first.nanos() - start.nanos()) / 1e9, (done.nanos() - first.nanos()) / 1e9 / (v.measured() - 1));
    }

    private static double ext(Point a, Point b, Point c, String ua, boolean write, double f) {
        return (b.req(ua, write) - a.req(ua, write)) + f * (c.req(ua, write) - b.req(ua, write));
    }

    /** Controller writes by HTTP method per node: whole run (f = 1, c = null) or extrapolated prefix. */
    private static Map<String, Double> byMethod(Point a, Point b, double f, Point c, double n) {
        Map<String, Double> m = new TreeMap<>();
        for (String method : List.of("PATCH", "DELETE", "PUT", "POST")) {
            String k = "npu-controller " + method;
            double x = b.req(k) - a.req(k);
            if (c != null) {
                x += f * (c.req(k) - b.req(k));
                x += -b.inFlightWrites(method) + f * (b.inFlightWrites(method) - c.inFlightWrites(method));
            }
            m.put(method, x / n);
        }
        return m;
    }

    private static Point point(ClusterFixture c, NodeAgentEmulator emulator, BufferedReader in, PrintWriter cmd) throws IOException {
        Map<String, String> s = stat(in, cmd);
        Map<String, Long> req = new HashMap<>();
        for (Map.Entry<String, AtomicLong> e : c.requests().entrySet()) {
            req.put(e.getKey(), e.getValue().get());
        }
        return new Point(System.nanoTime(), req, s,
                ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                        .getProcessCpuTime(), emulator.states());
    }

    private static Map<String, String> stat(BufferedReader in, PrintWriter cmd) throws IOException {
        cmd.println("STAT");
        return parse(expect(in, "STAT "));
    }

    private static long cpu(Map<String, String> s) {
        return Long.parseLong(s.get("cpuNs")) - Long.parseLong(s.get("gcForcedNs"));
    }

    private static String expect(BufferedReader in, String prefix) throws IOException {
        for (String line; (line = in.readLine()) != null;) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length());
            }
        }
        throw new IOException("the controller process ended before printing " + prefix.trim() + " (see its log)");
    }

    private static Map<String, String> parse(String stat) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String kv : stat.trim().split(" ")) {
            int i = kv.indexOf('=');
            m.put(kv.substring(0, i), kv.substring(i + 1));
        }
        return m;
    }

    // ---------------------------------------------------------------- Markdown

    private static String markdown(List<Result> rs, boolean quick, int prefix) {
        StringBuilder b = new StringBuilder();
        b.append("## Control plane at scale\n\n");
        b.append("Machine: ").append(machine()).append(", ").append(LocalDate.now()).append(".\n\n");
        b.append("Command").append(quick ? " (quick variant: 1,000 nodes only)" : "").append(":\n\n```\n")
                .append("mvn -B -o -q -pl bundles/upgrade -am -Prollout-bench verify -Dtest=RolloutScaleBenchmark "
                        + "-Dsurefire.failIfNoSpecifiedTests=false").append(quick ? " -Dbench.quick=true" : "")
                .append(System.getProperty("bench.parallel") != null
                        ? " -Dbench.parallel=" + System.getProperty("bench.parallel") : "")
                .append("\n```\n\n");
        b.append("Load average (1/5/15 min) at the end of the run: ").append(loadAverage())
                .append(" (the machine is shared with other builds).\n\n");
        if (rs.stream().noneMatch(r -> r.v().nodes() >= 5000 && r.v().maxParallel() == 0)
                && rs.stream().anyMatch(r -> r.v().nodes() >= 5000)) {
            b.append("5,000 nodes with unlimited parallelism is not in the default run (a whole rollout: ~12 min on this "
                    + "machine, bound by the mock API server at ~10 ms a request); add `-Dbench.nodes=5000 "
                    + "-Dbench.parallel=0` to measure it.\n\n");
        }
        b.append("Setup: the simulator's `EmbeddedCluster` (kubernetes-server-mock 8.0.0 in CRUD mode; its request "
                + "listener counts requests by User-Agent and HTTP method; a watch counts as one GET) and the "
                + "emulated node agents (`NodeAgentEmulator`: the DaemonSet controller and one agent per node at the "
                + "Kubernetes level, the node-agent contract of docs/architecture.md, reboots instant, validation reported "
                + "with the new boot id) in one JVM; the controller (`UpgradeController`, leader, defaults: debounce "
                + "200 ms, status every 2 s at most, registry preflight off) in a JVM of its own (`-Xmx512m "
                + "-XX:+UseSerialGC`), real-time clock. One NPU combination, autoUpgrade, `maxUnavailable: 100%` (so "
                + "`maxParallelUpgrades` is the only limit), deadlines off. maxParallelUpgrades 1 (and 50 at 5,000 nodes) runs "
                + "the first k node upgrades (column *measured*) and is **extrapolated** to every node (marked "
                + "*extrapolated*): phase A = CR created → first node upgraded (includes labelling every waiting node "
                + "`upgrade-required`), phase B = the next k − 1 nodes; total = A + B / (k − 1) × (N − 1). Controller writes of a prefix are corrected for "
                + "the work in progress: the writes already spent (on the design path) on the nodes in flight at the end of "
                + "phase A and of phase B are moved to the nodes they belong to, so that phase B counts whole node "
                + "upgrades only (without it, 50 nodes in flight at different steps add ±0.1 write per node after the "
                + "× (N − 1) / (k − 1) scaling).\n\n");

        b.append("### Wall time (reboots instant, so all of it is orchestration)\n\n");
        b.append("| nodes | maxParallelUpgrades | measured | rollout wall time | status Complete | per node upgrade | target / baseline | ratio |\n");
        b.append("|---:|---:|---:|---:|---:|---:|---|---:|\n");
        for (Result r : rs) {
            String per = fmt(r.wallS() / r.v().nodes() * 1000, 1) + " ms";
            String base;
            String ratio;
            if (r.v().maxParallel() == 0) {
                base = "target < 1 s per node";
                ratio = fmt(r.wallS() / r.v().nodes(), 4);
            } else if (r.v().maxParallel() == 1) {
                per = fmt(r.perNodeS() * 1000, 0) + " ms (phase B)";
                base = "design floor 200 ms: one debounced reconcile per node";
                ratio = fmt(r.perNodeS() / 0.2, 2);
            } else {
                base = "unlimited at the same size";
                Result u = find(rs, r.v().nodes(), 0);
                ratio = u == null ? "–" : fmt(r.wallS() / u.wallS(), 2);
            }
            b.append("| ").append(String.format(Locale.ROOT, "%,d", r.v().nodes())).append(" | ").append(r.v().parallelText())
                    .append(" | ").append(String.format(Locale.ROOT, "%,d", r.v().measured()))
                    .append(" | ").append(fmt(r.wallS(), 1)).append(" s").append(r.v().prefix() ? " *extrapolated*" : "")
                    .append(" | ").append(Double.isNaN(r.completeS()) ? "–" : fmt(r.completeS(), 1) + " s")
                    .append(" | ").append(per).append(" | ").append(base).append(" | ").append(ratio).append(" |\n");
        }
        b.append("\n### API requests per node upgrade (counted at the API server)\n\n");
        b.append("| nodes | maxParallelUpgrades | controller writes | target ≤ 6 (ratio) | design minimum | controller writes by method "
                + "| controller reads | agents writes | agents reads |\n");
        b.append("|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
        for (Result r : rs) {
            int min = r.v().maxParallel() == 0 ? 5 : 6;
            StringBuilder by = new StringBuilder();
            r.ctlWritesByMethod().forEach((k, x) -> {
                if (x > 0) {
                    by.append(by.length() == 0 ? "" : ", ").append(k).append(' ').append(fmt(x, 2));
                }
            });
            b.append("| ").append(String.format(Locale.ROOT, "%,d", r.v().nodes())).append(" | ").append(r.v().parallelText())
                    .append(r.v().prefix() ? " *extrapolated*" : "").append(" | **").append(fmt(r.ctlWrites(), 2)).append("** | ")
                    .append(fmt(r.ctlWrites() / 6, 2)).append(" | ").append(min).append(" (ratio ").append(fmt(r.ctlWrites() / min, 2))
                    .append(") | ").append(by).append(" | ").append(fmt(r.ctlReads(), 3)).append(" | ").append(fmt(r.agentWrites(), 2))
                    .append(" | ").append(fmt(r.agentReads(), 2)).append(" |\n");
        }
        b.append("\nDesign minimum (docs/upgrade.md, \"Writes per node upgrade\"): a node that gets its slot at once: "
                + "`pod-restart-required` patch + driver pod DELETE + `reboot-required` + `rebooting` + done = 5; a node "
                + "that waits for a slot: + `upgrade-required` = 6. Controller reads by design: none per node (informers: "
                + "4 lists + 4 watches per rollout). Agents (emulated, for comparison; not a target): per node the "
                + "DaemonSet controller's pod POST, the agent's staging patch + RebootRequired Event, the "
                + "`rebooting-from-boot-id` patch and the new boot's patch = 5 writes; no reads beyond their informers (the "
                + "emulator patches a name-only stub, as the controller does, to spare the mock API server; the real "
                + "NodeSync reads before each PUT).\n\n");
        b.append("### Controller CPU and heap (the controller's own JVM)\n\n");
        b.append("| nodes | maxParallelUpgrades | CPU | CPU per node upgrade | API server + emulated agents, same window (comparison) | ratio "
                + "| heap after GC, caches loaded, before the rollout | max heap after GC during the rollout | target ≤ 512 MiB (ratio) |\n");
        b.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Result r : rs) {
            b.append("| ").append(String.format(Locale.ROOT, "%,d", r.v().nodes())).append(" | ").append(r.v().parallelText())
                    .append(r.v().prefix() ? " *extrapolated*" : "").append(" | ").append(fmt(r.cpuS(), 1)).append(" s | ")
                    .append(fmt(r.cpuS() / r.v().nodes() * 1000, 2)).append(" ms | ").append(fmt(r.serverCpuS(), 1)).append(" s | ")
                    .append(r.serverCpuS() > 0 ? fmt(r.cpuS() / r.serverCpuS(), 2) : "–").append(" | ").append(mib(r.heapReady()))
                    .append(" | **").append(mib(r.heapMax())).append("** | ").append(fmt(r.heapMax() / (512.0 * 1048576), 2))
                    .append(" |\n");
        }
        b.append("\nCPU = the controller process's CPU time (`OperatingSystemMXBean.getProcessCpuTime`: every thread "
                + "including its HTTP client, informers, JIT and GC) from the CR's creation to status Complete (prefix: "
                + "extrapolated like the wall time), minus the CPU time of the benchmark's own forced collections (the serial "
                + "collector's VM Thread, read from /proc around each). The comparison column is the benchmark JVM's CPU "
                + "in the same window: the mock API server serving every request plus the emulated agents. Heap = used "
                + "heap right after a `System.gc()` sampled every " + BenchController.SAMPLE_MS / 1000 + " s (the live set: "
                + "informer caches of every NPU node, every pod, the DaemonSets and the CR, plus the reconcile's "
                + "working set).\n\n");
        b.append(reading(rs));
        return b.toString();
    }

    private static String reading(List<Result> rs) {
        StringBuilder b = new StringBuilder("### Reading\n\n");
        double maxWrites = rs.stream().mapToDouble(Result::ctlWrites).max().orElse(0);
        long maxHeap = rs.stream().mapToLong(Result::heapMax).max().orElse(0);
        Result u = rs.stream().filter(r -> r.v().maxParallel() == 0).reduce((a, c) -> c).orElse(null);
        b.append("- Writes: at most ").append(fmt(maxWrites, 2)).append(" controller writes per node upgrade (target 6): ")
                .append(maxWrites <= 6 ? "met" : "**missed**").append(". Reads per node upgrade are informer traffic only.\n");
        b.append("- Heap: at most ").append(mib(maxHeap)).append(" live after GC (target 512 MiB): ")
                .append(maxHeap <= 512L * 1048576 ? "met" : "**missed**").append(".\n");
        if (u != null) {
            b.append("- Unlimited parallelism at ").append(String.format(Locale.ROOT, "%,d", u.v().nodes())).append(" nodes: ")
                    .append(fmt(u.wallS(), 1)).append(" s for the rollout = ").append(fmt(u.wallS() / u.v().nodes() * 1000, 1))
                    .append(" ms per node (target 1 s): ").append(u.wallS() / u.v().nodes() < 1 ? "met" : "**missed**").append(".\n");
        }
        b.append("- maxParallelUpgrades 1 is bounded by the debounced reconcile per state change, not by the API: each node "
                + "needs a grant and the agent's report to be seen, each after a 200 ms debounce, plus one reconcile over "
                + "every node (the plan is a pure function of all nodes).\n");
        return b.toString();
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Paths.get("/proc/loadavg")).trim().split(" ");
            return f[0] + " / " + f[1] + " / " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown (no /proc/loadavg)";
        }
    }

    private static Result find(List<Result> rs, int nodes, int mp) {
        return rs.stream().filter(r -> r.v().nodes() == nodes && r.v().maxParallel() == mp).findFirst().orElse(null);
    }

    private static String mib(long bytes) {
        return fmt(bytes / 1048576.0, 1) + " MiB";
    }

    private static String fmt(double d, int decimals) {
        return Double.isNaN(d) ? "–" : String.format(Locale.ROOT, "%,." + decimals + "f", d);
    }

    private static String machine() {
        String cpu = "";
        long memKb = 0;
        try {
            for (String l : Files.readAllLines(Paths.get("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) {
                    cpu = l.substring(l.indexOf(':') + 1).trim();
                    break;
                }
            }
            for (String l : Files.readAllLines(Paths.get("/proc/meminfo"))) {
                if (l.startsWith("MemTotal:")) {
                    memKb = Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | UncheckedIOException | NumberFormatException e) {
            // not Linux: leave it out
        }
        return Runtime.getRuntime().availableProcessors() + " cores" + (cpu.isEmpty() ? "" : " (" + cpu + ")")
                + (memKb > 0 ? ", " + (memKb / 1048576) + " GiB RAM" : "") + ", " + System.getProperty("os.name") + " "
                + System.getProperty("os.version") + ", JDK " + System.getProperty("java.version") + " ("
                + System.getProperty("java.vm.name") + "), shared with other builds (one run per figure)";
    }
}
