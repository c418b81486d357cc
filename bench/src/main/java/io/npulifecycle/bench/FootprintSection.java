package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.javaBin;
import static io.npulifecycle.bench.BenchSupport.log;
import static io.npulifecycle.bench.Fmt.f0;
import static io.npulifecycle.bench.Fmt.f1;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * Section 1 of {@code docs/benchmarks.md}, the node-agent footprint: starts of {@code bin/npu-lifecycle node} against
 * each API server of the run (the embedded mock, and the real kube-apiserver when {@code bench/run} started one) and
 * of a bare Felix framework with the same JVM options (time to first probe, RSS from {@code /proc/<pid>/status},
 * threads), then one start of each under native memory tracking (NMT categories, classes per class loader, threads by
 * name, live heap after a full GC).
 */
final class FootprintSection {

    private static final Pattern UPTIME = Pattern.compile("JVM uptime (\\d+) ms");
    /** Steady RSS target of a node agent, MiB. */
    static final double TARGET_MIB = 90;
    /** Steady RSS target as a multiple of the bare framework's in the same run. */
    static final double TARGET_RATIO = 2.0;
    /** JVM uptime at the first completed probe, target, ms. */
    static final double TARGET_FIRST_PROBE_MS = 2000;

    /**
     * An API server the agents connect to.
     *
     * @param name as shown in the tables ({@code embedded}, {@code real})
     * @param masterUrl its URL ({@code NPU_LIFECYCLE_KUBE_MASTER})
     * @param kubeconfig credentials for it (PID {@code io.npulifecycle.kube}, key {@code kubeconfig}), or null
     */
    record Api(String name, String masterUrl, Path kubeconfig) {
    }

    private final Path install;
    private final Path work;
    private final int runs;
    private final long settleMs;
    private final boolean previous;
    private final List<Api> apis;
    private final StringBuilder md = new StringBuilder();
    private String nodeJvmOptions = "";
    private String agentOpts;

    /**
     * @param opts the agents' JVM options ({@code NPU_LIFECYCLE_JAVA_OPTS}) instead of the launcher's, or null
     */
    void agentJavaOptions(String opts) {
        this.agentOpts = opts;
    }

    /**
     * @param install the installation ({@code distribution/target/npu-lifecycle})
     * @param work the folder for the agents' homes and logs
     * @param runs starts of each kind (medians over them)
     * @param settleMs time from the first probe to the steady sample, ms
     * @param previous also measure the launcher's previous JVM options (2 starts)
     * @param apis the API servers, the first the one of the NMT start; at least one
     */
    FootprintSection(Path install, Path work, int runs, long settleMs, boolean previous, List<Api> apis) {
        this.install = install;
        this.work = work;
        this.runs = runs;
        this.settleMs = settleMs;
        this.previous = previous;
        this.apis = List.copyOf(apis);
    }

    /**
     * @return the node agent's JVM options read from its {@code /proc/<pid>/cmdline} at the first start of
     *         {@link #run()}; empty before it
     */
    String nodeJvmOptions() {
        return nodeJvmOptions;
    }

    private record Start(double firstProbeMs, double uptimeMs, double rssFirstMib, double rssSteadyMib,
            double anonSteadyMib, double hwmMib, long threads) {
    }

    /**
     * Runs the footprint starts and builds the section.
     *
     * @return the Markdown of section 1, headed {@code ## 1. Node-agent footprint}
     * @throws Exception when a start does not reach its first probe, or jcmd fails
     */
    String run() throws Exception {
        log("1. footprint: " + runs + " starts of the node agent per API server (" + apis.size()
                + ") and of a bare framework, " + settleMs / 1000 + " s each after the first probe");
        List<List<Start>> agent = new ArrayList<>();
        for (Api api : apis) {
            List<Start> l = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                l.add(agentStart(api, i, agentOpts));
            }
            agent.add(l);
        }
        List<Start> bare = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            bare.add(bareStart(i));
        }
        List<Start> prev = new ArrayList<>();
        String previousOpts = "-XX:+UseSerialGC -Xms16m -Xmx192m -XX:MaxMetaspaceSize=96m -Xss512k "
                + "-XX:+ExitOnOutOfMemoryError";
        if (previous) {
            for (int i = 0; i < 2; i++) {
                prev.add(agentStart(apis.get(0), 10 + i, previousOpts));
            }
        }
        StringBuilder servers = new StringBuilder();
        for (Api api : apis) {
            servers.append(servers.length() == 0 ? "" : " and ").append(api.name().equals("real")
                    ? "the real kube-apiserver of `simulator/cluster` (`RealApiServer`, with etcd, admin kubeconfig)"
                    : "the embedded Kubernetes API (`EmbeddedCluster`)");
        }
        md.append("## 1. Node-agent footprint\n\n");
        md.append("What is measured: `bin/npu-lifecycle node` with the simulator (8 chips of 910B, npu-smi probe), "
                + "connected to " + servers + " (its Node and NPUOperatorCtl informers running), started " + runs
                + " times per API server with a clean home; the bare framework is Felix 7.0.5 started with no bundle ("
                + "`io.npulifecycle.bench.BareFelix`) with the **same JVM options**, read from the agent's "
                + "`/proc/<pid>/cmdline`:\n\n```\n" + nodeJvmOptions + "\n```\n\n");
        md.append("Time to first probe = from the benchmark's `ProcessBuilder.start()` (bash launcher included) to "
                + "the line `health-watch first probe completed` on the agent's stdout (bare framework: to its "
                + "`started` line); JVM uptime is what the JVM itself reports at that line. RSS = `VmRSS` of "
                + "`/proc/<pid>/status` at that line and " + settleMs / 1000 + " s later (steady); peak = `VmHWM`. "
                + "Medians of " + runs + " starts; load average at the end of the starts: " + Proc.load()
                + " (2 cores shared with other builds: timings vary with it, memory hardly).\n\n");
        md.append("| figure |");
        for (Api api : apis) {
            md.append(" node agent, ").append(api.name()).append(" API |");
        }
        md.append(" bare Felix (floor) |");
        for (Api api : apis) {
            md.append(" ratio ").append(api.name()).append(" |");
        }
        md.append(" target |\n|---|").append("---|".repeat(2 * apis.size() + 2)).append('\n');
        row("time to first probe (ms)", agent, bare, Start::firstProbeMs, "", 0, true);
        row("JVM uptime at first probe (ms)", agent, bare, Start::uptimeMs,
                "≤ " + f0(TARGET_FIRST_PROBE_MS), TARGET_FIRST_PROBE_MS, true);
        row("RSS at first probe (MiB)", agent, bare, Start::rssFirstMib, "", 0, false);
        double floor = med(bare, Start::rssSteadyMib);
        double limit = Math.min(TARGET_MIB, TARGET_RATIO * floor);
        row("RSS steady, " + settleMs / 1000 + " s later (MiB)", agent, bare, Start::rssSteadyMib,
                "≤ " + f0(TARGET_MIB) + " and ≤ " + TARGET_RATIO + "x the floor (" + f1(limit) + ")", limit, false);
        row("of which anonymous, RssAnon (MiB)", agent, bare, Start::anonSteadyMib, "", 0, false);
        row("peak RSS, VmHWM (MiB)", agent, bare, Start::hwmMib, "", 0, false);
        row("threads", agent, bare, s -> (double) s.threads(), "", 0, true);
        md.append('\n');
        nmt();
        if (!prev.isEmpty()) {
            md.append("The launcher's previous options (`" + previousOpts + "`, C2 compiler on), same agent, "
                    + prev.size() + " starts: steady RSS " + f1(med(prev, Start::rssSteadyMib))
                    + " MiB, time to first probe " + f0(med(prev, Start::firstProbeMs)) + " ms.\n\n");
        }
        md.append("The changes measured for this footprint, kept or not, are listed under *Node-agent footprint: "
                + "changes measured* below.\n\n");
        return md.toString();
    }

    /**
     * @return one line per figure of the table: steady RSS and first probe per API server, the floor and the
     *         verdicts, for the console of {@code bench/run --footprint-only}
     */
    String summary() {
        return summaryText;
    }

    private String summaryText = "";

    /** One more start of each with -XX:NativeMemoryTracking=summary: where the agent's memory goes. */
    private void nmt() throws Exception {
        String opts = nodeJvmOptions + " -XX:NativeMemoryTracking=summary -XX:-DisableAttachMechanism";
        Map<String, Long> agent;
        Map<String, Long> bare;
        List<JvmInspect.Loader> loaders;
        Map<String, Integer> threads;
        long liveKib;
        Api api = apis.get(0);
        NodeHome h = new NodeHome(work.resolve("footprint-nmt"), LoopbackPorts.shared().allocate(), 60, 20, "none");
        try (ChildProcess c = h.process(install, api.masterUrl(), api.kubeconfig(), opts)
                .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
            c.awaitLine(x -> x.contains("health-watch first probe completed"), 0, Duration.ofMillis(120_000), "first completed probe");
            awaitConnected(c);
            Thread.sleep(settleMs);
            agent = JvmInspect.nmtSummary(c.pid());
            loaders = JvmInspect.classLoaders(c.pid());
            threads = JvmInspect.threads(c.pid());
            liveKib = JvmInspect.liveHeapKib(c.pid());
        }
        Path cache = work.resolve("bare-nmt");
        NodeHome.deleteTree(cache);
        try (ChildProcess c = ChildProcess.builder(bareCommand(opts, cache))
                .recordLines(work.resolve("bare-nmt.log")).stopOnJvmExit(true).start()) {
            c.awaitLine(x -> x.contains(BareFelix.STARTED), 0, Duration.ofMillis(60_000), "bare framework start");
            Thread.sleep(settleMs);
            bare = JvmInspect.nmtSummary(c.pid());
        }
        md.append("Where the memory goes (one more start of each with `-XX:NativeMemoryTracking=summary`, " + api.name()
                + " API, `jcmd <pid> VM.native_memory summary`, committed MiB, categories of at least 0.5 MiB; NMT "
                + "itself adds its own category):\n\n| NMT category | node agent | bare Felix | difference |\n"
                + "|---|---|---|---|\n");
        for (Map.Entry<String, Long> e : agent.entrySet()) {
            long b = bare.getOrDefault(e.getKey(), 0L);
            if (e.getValue() < 512 && b < 512) {
                continue;
            }
            md.append("| ").append(e.getKey()).append(" | ").append(f1(e.getValue() / 1024.0)).append(" | ")
                    .append(f1(b / 1024.0)).append(" | ").append(f1((e.getValue() - b) / 1024.0)).append(" |\n");
        }
        md.append("\nLive heap of the agent after a full GC (`jcmd GC.run`, then `GC.heap_info`): ")
                .append(f1(liveKib / 1024.0)).append(" MiB.\n\n");
        int total = 0;
        for (JvmInspect.Loader l : loaders) {
            total += l.classes();
        }
        md.append("Classes loaded by the agent per class loader (`jcmd <pid> VM.classloaders show-classes`; a bundle "
                + "loader is named by the package of the first class it defined; array classes not counted), "
                + total + " in all, loaders of at least 30 classes:\n\n| class loader | classes | largest "
                + "packages |\n|---|---|---|\n");
        for (JvmInspect.Loader l : loaders) {
            if (l.classes() >= 30) {
                md.append("| ").append(l.label()).append(" | ").append(l.classes()).append(" | ")
                        .append(l.packages()).append(" |\n");
            }
        }
        int n = 0;
        StringBuilder t = new StringBuilder();
        for (Map.Entry<String, Integer> e : threads.entrySet()) {
            n += e.getValue();
            t.append(t.length() == 0 ? "" : "; ").append('`').append(e.getKey()).append('`')
                    .append(e.getValue() > 1 ? " ×" + e.getValue() : "");
        }
        md.append("\nThreads of the agent (`jcmd <pid> Thread.print`, digits shown as N), ").append(n)
                .append(" in all: ").append(t).append(".\n\n");
    }

    private void row(String name, List<List<Start>> a, List<Start> b, java.util.function.ToDoubleFunction<Start> f,
            String target, double limit, boolean integer) {
        double y = med(b, f);
        md.append("| ").append(name).append(" |");
        StringBuilder verdicts = new StringBuilder();
        for (int i = 0; i < a.size(); i++) {
            double x = med(a.get(i), f);
            md.append(' ').append(integer ? f0(x) : f1(x)).append(" |");
            if (limit > 0) {
                verdicts.append(verdicts.length() == 0 ? "" : ", ").append(apis.get(i).name()).append(' ')
                        .append(x <= limit ? "met" : "**missed**");
                summaryText += String.format(Locale.ROOT, "%-34s %-8s %8s  floor %8s  ratio %.2f  target %s: %s%n",
                        name, apis.get(i).name(), integer ? f0(x) : f1(x), integer ? f0(y) : f1(y), x / y, target,
                        x <= limit ? "met" : "MISSED");
            }
        }
        md.append(' ').append(integer ? f0(y) : f1(y)).append(" |");
        for (List<Start> l : a) {
            md.append(' ').append(String.format(Locale.ROOT, "%.2f", med(l, f) / y)).append(" |");
        }
        md.append(' ').append(target).append(verdicts.length() > 0 ? " (" + verdicts + ")" : "").append(" |\n");
    }

    private static double med(List<Start> l, java.util.function.ToDoubleFunction<Start> f) {
        List<Double> v = new ArrayList<>();
        for (Start s : l) {
            v.add(f.applyAsDouble(s));
        }
        return Stats.median(v);
    }

    private Start agentStart(Api api, int i, String javaOpts) throws Exception {
        NodeHome h = new NodeHome(work.resolve("footprint-" + api.name() + "-" + i), LoopbackPorts.shared().allocate(), 60, 20, "none");
        try (ChildProcess c = h.process(install, api.masterUrl(), api.kubeconfig(), javaOpts)
                .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
            ChildProcess.Line first = c.awaitLine(s -> s.contains("health-watch first probe completed"), 0,
                    Duration.ofMillis(120_000), "first completed probe");
            double rssFirst = Proc.rssKib(c.pid()) / 1024.0;
            double ms = (first.arrivedNanos() - c.startNanos()) / 1e6;
            if ((javaOpts == null || javaOpts.equals(agentOpts)) && nodeJvmOptions.isEmpty()) {
                nodeJvmOptions = jvmOptions(c.pid());
            }
            awaitConnected(c);
            Thread.sleep(settleMs);
            Start s = new Start(ms, number(UPTIME, first.text()), rssFirst, Proc.rssKib(c.pid()) / 1024.0,
                    Proc.anonKib(c.pid()) / 1024.0, Proc.hwmKib(c.pid()) / 1024.0, Proc.threads(c.pid()));
            boolean previousOptions = javaOpts != null && !javaOpts.equals(agentOpts);
            log("  agent start " + i + ", " + api.name() + " API" + (previousOptions ? " (previous options)" : "")
                    + ": " + s);
            return s;
        }
    }

    /**
     * Waits until the agent's Node and NPUOperatorCtl informers have synced: the footprint is the one of an agent
     * connected to the API server, never of one whose client could not be built.
     *
     * @throws IllegalStateException when the agent logs that it has no Kubernetes client, or does not sync in 60 s
     */
    private static void awaitConnected(ChildProcess c) throws InterruptedException {
        for (String what : List.of("informer on Node ", "informer on NPUOperatorCtl ")) {
            ChildProcess.Line l = c.awaitLine(x -> (x.contains(what) && x.contains(" synced"))
                    || x.contains("no KubernetesClient registered"), 0, Duration.ofMillis(60_000), what + "synced");
            if (l.text().contains("no KubernetesClient registered")) {
                throw new IllegalStateException("the node agent has no Kubernetes client: " + l.text());
            }
        }
    }

    private List<String> bareCommand(String opts, Path cache) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBin());
        cmd.addAll(List.of(opts.trim().split("\\s+")));
        cmd.addAll(List.of("-cp", felixJar() + ":" + benchJar(), BareFelix.class.getName(), cache.toString()));
        return cmd;
    }

    private Start bareStart(int i) throws Exception {
        Path cache = work.resolve("bare-" + i);
        NodeHome.deleteTree(cache);
        try (ChildProcess c = ChildProcess.builder(bareCommand(nodeJvmOptions, cache))
                .recordLines(work.resolve("bare-" + i + ".log")).stopOnJvmExit(true).start()) {
            ChildProcess.Line first = c.awaitLine(s -> s.contains(BareFelix.STARTED), 0, Duration.ofMillis(60_000),
                    "bare framework start");
            double rssFirst = Proc.rssKib(c.pid()) / 1024.0;
            double ms = (first.arrivedNanos() - c.startNanos()) / 1e6;
            Thread.sleep(settleMs);
            Start s = new Start(ms, number(UPTIME, first.text()), rssFirst, Proc.rssKib(c.pid()) / 1024.0,
                    Proc.anonKib(c.pid()) / 1024.0, Proc.hwmKib(c.pid()) / 1024.0, Proc.threads(c.pid()));
            log("  bare start " + i + ": " + s);
            return s;
        }
    }

    /** @return the JVM options of a running node agent: its command line between {@code java} and the class path */
    private static String jvmOptions(long pid) throws IOException {
        String[] args = new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
                .split("\0");
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("-cp") || args[i].startsWith("-Dnpu.lifecycle.install")) {
                break;
            }
            sb.append(sb.length() == 0 ? "" : " ").append(args[i]);
        }
        return sb.toString();
    }

    private static double number(Pattern p, String s) {
        Matcher m = p.matcher(s);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    private Path felixJar() throws IOException {
        try (var s = Files.list(install.resolve("lib"))) {
            return s.filter(p -> p.getFileName().toString().startsWith("org.apache.felix.framework")).findFirst()
                    .orElseThrow(() -> new IOException("no Felix framework jar in " + install.resolve("lib")));
        }
    }

    private static String benchJar() {
        for (String e : System.getProperty("java.class.path").split(":")) {
            if (e.contains("io.npulifecycle.bench")) {
                return e;
            }
        }
        throw new IllegalStateException("the bench jar is not on the class path");
    }
}
