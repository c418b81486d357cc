package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.freePort;
import static io.npulifecycle.bench.BenchSupport.log;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.common.ChildProcess;

/**
 * Runs the node-agent benchmarks of {@code docs/benchmarks.md} (its sections 1, 2, 3 and 5) against a built
 * installation and prints their Markdown sections: node-agent footprint against a bare Felix framework, probe cost
 * against a C program on the same DCMI shim, reaction latency, Jolokia latency against the health endpoint of the same
 * server. Every figure is the median of several runs made in this run.
 *
 * <p>Usage: {@code BenchMain --install DIR --work DIR --out FILE [--quick]}; started by {@code bench/run}, which
 * assembles {@code docs/benchmarks.md}. Exit code 0 when every benchmark ran (targets missed are reported, not
 * failures), 1 when a benchmark could not run. Each section is its own class ({@link FootprintSection},
 * {@link ProbeCostSection}, {@link ReactionSection}, {@link JolokiaSection}); this class reads the arguments, runs
 * them in that order (sections 3 and 5 on one agent, Jolokia first) and assembles the file with {@link Report}.
 */
public final class BenchMain {

    private BenchMain() {
    }

    /**
     * @param args {@code --install DIR --work DIR --out FILE [--quick]}
     * @throws Exception when a benchmark cannot run
     */
    public static void main(String[] args) throws Exception {
        Path install = null;
        Path work = null;
        Path out = null;
        boolean quick = false;
        Map<String, String> opt = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--install": install = Path.of(args[++i]).toAbsolutePath(); break;
                case "--work": work = Path.of(args[++i]).toAbsolutePath(); break;
                case "--out": out = Path.of(args[++i]).toAbsolutePath(); break;
                case "--quick": quick = true; break;
                case "--hold-agent": opt.put("--hold-agent", "true"); break;
                case "--command": case "--jmh-json": case "--jmh-command": case "--control-plane-md":
                case "--control-plane-command": case "--control-plane-rc": case "--load-before":
                    opt.put(args[i], args[++i]);
                    break;
                default:
                    System.err.println("BenchMain: unknown argument " + args[i]
                            + "; expected --install DIR --work DIR --out FILE [--quick]");
                    System.exit(2);
            }
        }
        if (install == null || work == null || out == null) {
            System.err.println("BenchMain: --install, --work and --out are required");
            System.exit(2);
        }
        Files.createDirectories(work);
        String loadBefore = opt.getOrDefault("--load-before", Proc.load());
        String footprint1;
        String probeCost2;
        String reaction3;
        String jolokia5;
        try (EmbeddedCluster c = EmbeddedCluster.start()) {
            c.createNpuOperatorCtl("25.2.0", false, true);
            c.addNode(EmbeddedCluster.npuNode("node-0"));
            if (opt.containsKey("--hold-agent")) {
                // for investigations (NMT, JFR): one node agent against the embedded API until killed
                NodeHome h = new NodeHome(work.resolve("hold"), freePort(), 60, 20, "none");
                try (ChildProcess ch = h.process(install, c.masterUrl(), System.getenv("HOLD_JAVA_OPTS"))
                        .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
                    ch.awaitLine(x -> x.contains("health-watch first probe completed"), 0, Duration.ofMillis(120_000), "first probe");
                    log("agent pid " + ch.pid() + " port " + h.port + " user " + NodeHome.USER + " password "
                            + NodeHome.PASSWORD);
                    Thread.sleep(Long.MAX_VALUE);
                }
            }
            FootprintSection footprint = new FootprintSection(install, work, quick, c.masterUrl());
            footprint1 = footprint.run();
            probeCost2 = new ProbeCostSection(work, quick, footprint.nodeJvmOptions()).run();
            Latencies latencies = agentLatencies(install, work, quick, c.masterUrl());
            reaction3 = latencies.reaction3();
            jolokia5 = latencies.jolokia5();
        }
        StringBuilder doc = new StringBuilder();
        doc.append(Report.header(opt.getOrDefault("--command", "bench/run"), quick, loadBefore, Proc.load()));
        doc.append(footprint1).append(probeCost2).append(reaction3);
        doc.append(Report.controlPlane(opt.get("--control-plane-md"), opt.get("--control-plane-command"),
                opt.get("--control-plane-rc")));
        doc.append(jolokia5);
        doc.append(Report.jmh(opt.get("--jmh-json"), opt.get("--jmh-command")));
        doc.append(Report.keptSections(out));
        Files.writeString(out, doc.toString(), StandardCharsets.UTF_8);
        System.out.println("node-agent benchmarks written to " + out);
        System.exit(0);
    }

    /** The Markdown of sections 3 and 5, measured on one agent. */
    private record Latencies(String reaction3, String jolokia5) {
    }

    /**
     * Sections 3 and 5 on one node agent (probe interval 2 s, probe timeout 1 s), which restarts its framework on a
     * simulated reboot: the Jolokia latency first, then the reaction latency, which reboots it.
     */
    private static Latencies agentLatencies(Path install, Path work, boolean quick, String masterUrl) throws Exception {
        NodeHome h = new NodeHome(work.resolve("agent"), freePort(), 2, 1, "framework");
        try (ChildProcess c = h.process(install, masterUrl, null)
                .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
            c.awaitLine(s -> s.contains("marker driver-ready written by"), 0, Duration.ofMillis(120_000), "driver-ready marker");
            String jolokia = new JolokiaSection(quick).run(h);
            String reaction = new ReactionSection(quick).run(c, h);
            return new Latencies(reaction, jolokia);
        }
    }
}
