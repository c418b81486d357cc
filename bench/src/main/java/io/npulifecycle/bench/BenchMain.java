package io.npulifecycle.bench;

import static io.npulifecycle.bench.BenchSupport.log;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.ClusterBackends;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.simulator.common.LoopbackPorts;

/**
 * Runs the node-agent benchmarks of {@code docs/benchmarks.md} (its sections 1, 2, 3, 5 and "Metrics scrape")
 * against a built installation and prints their Markdown sections: node-agent footprint against a bare Felix
 * framework, probe cost against a C program on the same DCMI shim, reaction latency, Jolokia latency against the
 * health endpoint of the same server, the metrics scrape against the same runtime without the metrics bundle. Every
 * figure is the median of several runs made in this run.
 *
 * <p>Usage: {@code BenchMain --install DIR --work DIR --out FILE [--quick] [--footprint-only] [--api
 * embedded|real|both]}; started by {@code bench/run}, which
 * assembles {@code docs/benchmarks.md}. Exit code 0 when every benchmark ran (targets missed are reported, not
 * failures), 1 when a benchmark could not run. Each section is its own class ({@link FootprintSection},
 * {@link ProbeCostSection}, {@link ReactionSection}, {@link JolokiaSection}, {@link MetricsSection}); this class reads
 * the arguments, runs them in that order (sections 3 and 5 on one agent, Jolokia first) and assembles the file with
 * {@link Report}.
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
                case "--footprint-only": opt.put("--footprint-only", "true"); break;
                case "--api": opt.put("--api", args[++i]); break;
                case "--java-opts": opt.put("--java-opts", args[++i]); break;
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
        String apiChoice = opt.getOrDefault("--api", "both");
        if (!List.of("embedded", "real", "both").contains(apiChoice)) {
            System.err.println("BenchMain: --api " + apiChoice + ": expected embedded, real or both");
            System.exit(2);
        }
        if (opt.containsKey("--footprint-only")) {
            footprintOnly(install, work, out, apiChoice, loadBefore, opt.get("--java-opts"));
            return;
        }
        try (EmbeddedCluster c = EmbeddedCluster.start();
                ClusterBackend real = apiChoice.equals("embedded") || opt.containsKey("--hold-agent") ? null
                        : realServer(work)) {
            prepare(c);
            if (opt.containsKey("--hold-agent")) {
                // for investigations (NMT, JFR): one node agent against the embedded API until killed
                NodeHome h = new NodeHome(work.resolve("hold"), LoopbackPorts.shared().allocate(), 60, 20, "none");
                try (ChildProcess ch = h.process(install, c.masterUrl(), System.getenv("HOLD_JAVA_OPTS"))
                        .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
                    ch.awaitLine(x -> x.contains("health-watch first probe completed"), 0, Duration.ofMillis(120_000), "first probe");
                    log("agent pid " + ch.pid() + " port " + h.port + " user " + NodeHome.USER + " password "
                            + NodeHome.PASSWORD);
                    Thread.sleep(Long.MAX_VALUE);
                }
            }
            FootprintSection footprint = new FootprintSection(install, work, quick ? 2 : 5, quick ? 8_000 : 20_000,
                    !quick, apis(c, real, work));
            footprint1 = footprint.run();
            probeCost2 = new ProbeCostSection(work, quick, footprint.nodeJvmOptions()).run();
            Latencies latencies = agentLatencies(install, work, quick, c.masterUrl());
            reaction3 = latencies.reaction3();
            jolokia5 = latencies.jolokia5();
        }
        // its own embedded API server: the agents with and without the metrics bundle are its only clients
        String metrics = new MetricsSection(install, work.resolve("metrics"), quick).run();
        StringBuilder doc = new StringBuilder();
        doc.append(Report.header(opt.getOrDefault("--command", "bench/run"), quick, loadBefore, Proc.load()));
        doc.append(footprint1).append(probeCost2).append(reaction3);
        doc.append(Report.controlPlane(opt.get("--control-plane-md"), opt.get("--control-plane-command"),
                opt.get("--control-plane-rc")));
        doc.append(jolokia5);
        doc.append(metrics);
        doc.append(Report.jmh(opt.get("--jmh-json"), opt.get("--jmh-command")));
        doc.append(Report.keptSections(out));
        Files.writeString(out, doc.toString(), StandardCharsets.UTF_8);
        System.out.println("node-agent benchmarks written to " + out);
        System.exit(0);
    }

    /**
     * {@code --footprint-only}: section 1 alone (3 starts per API server, 12 s to the steady sample), printed and
     * written to {@code out}; exits 0 when every target is met, 3 when one is missed. {@code --java-opts OPTS}: the
     * agents' JVM options instead of the launcher's (to measure a candidate; the bare framework gets the same).
     */
    private static void footprintOnly(Path install, Path work, Path out, String apiChoice, String loadBefore,
            String javaOpts) throws Exception {
        String md;
        String summary;
        try (EmbeddedCluster c = apiChoice.equals("real") ? null : EmbeddedCluster.start();
                ClusterBackend real = apiChoice.equals("embedded") ? null : realServer(work)) {
            if (c != null) {
                prepare(c);
            }
            FootprintSection footprint = new FootprintSection(install, work, 3, 12_000, false, apis(c, real, work));
            footprint.agentJavaOptions(javaOpts);
            md = footprint.run();
            summary = footprint.summary();
        }
        String doc = Report.header("bench/run --footprint-only", false, loadBefore, Proc.load()) + md;
        Files.writeString(out, doc, StandardCharsets.UTF_8);
        System.out.println(md);
        System.out.println("footprint (medians):\n" + summary + "written to " + out);
        System.exit(summary.contains("MISSED") ? 3 : 0);
    }

    /**
     * The NPUOperatorCtl and the Node {@code node-0} the agents of every section find. No control plane runs in these
     * benchmarks, so the recovery drain is off ({@code recoveryPolicy.drain.enable: false}): with it on, the agent of
     * the reaction latency would wait for a drain grant that nobody gives.
     */
    @SuppressWarnings("unchecked")
    private static void prepare(ClusterBackend c) {
        c.createNpuOperatorCtl("25.2.0", false, true);
        c.npuOperatorCtls().inNamespace(EmbeddedCluster.NPU_NAMESPACE).withName(EmbeddedCluster.NPU_OPERATOR_CTL_NAME)
                .edit(cr -> {
                    Map<String, Object> spec = (Map<String, Object>) cr.getAdditionalProperties().get("spec");
                    Map<String, Object> driver = (Map<String, Object>) spec.get("driver");
                    Map<String, Object> recovery = (Map<String, Object>) driver.get("recoveryPolicy");
                    recovery.put("drain", Map.of("enable", false));
                    return cr;
                });
        c.addNode(EmbeddedCluster.npuNode("node-0"));
        // the driver DaemonSet template the control plane reads at run time (the chart's ConfigMap)
        try {
            io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate.install(c.client(), EmbeddedCluster.NPU_NAMESPACE,
                    io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate.locate());
        } catch (IllegalStateException e) {
            log("no driver DaemonSet template ConfigMap: " + e.getMessage());
        }
    }

    /**
     * A real kube-apiserver with the CRD, the NPUOperatorCtl and the node, or null (with the reason on stderr) when
     * none can start here (no binaries and no Go to build them).
     */
    private static ClusterBackend realServer(Path work) {
        ClusterBackend real;
        try {
            real = ClusterBackends.start(ClusterBackend.REAL);
        } catch (RuntimeException e) {
            System.err.println("BenchMain: no real API server, measuring the embedded one only: " + e.getMessage());
            return null;
        }
        prepare(real);
        real.writeKubeconfig(work.resolve("kubeconfig-real"));
        return real;
    }

    private static List<FootprintSection.Api> apis(ClusterBackend embedded, ClusterBackend real, Path work) {
        List<FootprintSection.Api> l = new ArrayList<>();
        if (embedded != null) {
            l.add(new FootprintSection.Api("embedded", embedded.masterUrl(), null));
        }
        if (real != null) {
            l.add(new FootprintSection.Api("real", real.masterUrl(), work.resolve("kubeconfig-real")));
        }
        if (l.isEmpty()) {
            throw new IllegalStateException("no API server to measure against (--api real, and no real one here)");
        }
        return l;
    }

    /** The Markdown of sections 3 and 5, measured on one agent. */
    private record Latencies(String reaction3, String jolokia5) {
    }

    /**
     * Sections 3 and 5 on one node agent (probe interval 2 s, probe timeout 1 s), which restarts its framework on a
     * simulated reboot: the Jolokia latency first, then the reaction latency, which reboots it.
     */
    private static Latencies agentLatencies(Path install, Path work, boolean quick, String masterUrl) throws Exception {
        NodeHome h = new NodeHome(work.resolve("agent"), LoopbackPorts.shared().allocate(), 2, 1, "framework");
        try (ChildProcess c = h.process(install, masterUrl, null)
                .recordLines(h.root.resolve("console.log")).stopOnJvmExit(true).start()) {
            c.awaitLine(s -> s.contains("marker driver-ready written by"), 0, Duration.ofMillis(120_000), "driver-ready marker");
            String jolokia = new JolokiaSection(quick).run(h);
            String reaction = new ReactionSection(quick).run(c, h);
            return new Latencies(reaction, jolokia);
        }
    }
}
