package io.npulifecycle.simulator.harness;

import io.npulifecycle.api.node.NodeKeys;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.ImageWhiteLists;

/**
 * {@code npu-lifecycle demo}: the specification's runbook, end to end, on a simulated cluster with a compressed clock.
 * (1) install at 25.2.0, (2) preflight (image missing from the registry, tag missing from the ImageWhiteList, NPU
 * workload), (3) upgrade to 25.5.0 in manual mode approving nodes one by one, (4) verify
 * as the runbook does, (5) self-healing with autoRecover=true, (6) autoRecover=false: RebootRequired reason=recovery,
 * approve, recovered, (7) false-positive suppression, (8) no violation, (9) with {@code --api real} only: the upgrade
 * drain of an NPU job guarded by a PodDisruptionBudget ({@link DemoDrainStep}). Prints a live progress table and a
 * PASS/FAIL summary.
 */
public final class Demo {

    /**
     * The upgrade's {@code deadlines.podRestartSeconds}, simulated seconds: a replaced driver pod's node agent starts
     * in wall-clock seconds (a JVM, 5 to 25 s on a loaded 2-core machine), each worth the scale's simulated seconds
     * (x30: up to 750), so the CRD's default of 900 s is missed on a busy machine though nothing is wrong.
     */
    static final int POD_RESTART_SECONDS = 3600;

    static final String FROM = "25.2.0";
    static final String TO = "25.5.0";

    private final SimCluster sim;
    private final PrintStream out;
    private final Waiter wait;
    private String lastTable = "";
    private long lastTableAt;

    /** One step's outcome. */
    record StepResult(String name, boolean passed, long millis, String detail) {
    }

    Demo(SimCluster sim, PrintStream out) {
        this.sim = sim;
        this.out = out;
        this.wait = new Waiter(this::maybePrintTable, sim::checkRuntimes); // a runtime that keeps exiting fails a step now
    }

    /**
     * Runs the demo.
     *
     * @param nodes number of nodes
     * @param chips chips per node (NPU ids, one chip each on 910B)
     * @param work working folder
     * @param install the installation
     * @param api {@value io.npulifecycle.simulator.cluster.ClusterBackend#EMBEDDED} or
     *        {@value io.npulifecycle.simulator.cluster.ClusterBackend#REAL}
     * @param prometheus whether to run a Prometheus scraping the cluster ({@link DemoPrometheus}), if installed
     * @param out where to print
     * @return 0 when every step passed, 1 otherwise
     */
    public static int run(int nodes, int chips, double scale, Path work, Path install, String api,
            boolean prometheus, PrintStream out) {
        SimSettings s = new SimSettings(nodes, chips, 1, "910b", FROM, scale, System.currentTimeMillis(),
                System.getProperty("npu.sim.logLevel", "WARN"));
        List<StepResult> results = new ArrayList<>();
        long start = System.nanoTime();
        out.println("npu-lifecycle demo: " + nodes + " simulated 910B nodes x " + chips + " chips, clock x"
                + (int) scale + " (1 s = " + (int) scale + " simulated s), " + api + " API server, work folder " + work);
        try (SimCluster sim = new SimCluster(s, work, install, api, line -> out.println("  . " + line));
                DemoPrometheus prom = prometheus ? DemoPrometheus.startIfInstalled(install, work, out) : null) {
            Demo demo = new Demo(sim, out);
            results.add(demo.step("1 install driver " + FROM, () -> demo.install(sim)));
            if (results.get(0).passed()) {
                results.add(demo.step("2 preflight", demo::preflight));
                results.add(demo.step("3 upgrade to " + TO + " (manual, approve one by one)", demo::upgrade));
                results.add(demo.step("4 verify as the runbook", demo::verify));
                results.add(demo.step("5 self-healing, autoRecover=true", demo::autoRecover));
                results.add(demo.step("6 autoRecover=false: approve the recovery", demo::manualRecover));
                results.add(demo.step("7 false-positive suppression", demo::suppression));
                results.add(demo.step("8 no violation (no driver unloaded in a running kernel)", demo::noViolation));
                String drain = "9 upgrade drain: a PodDisruptionBudget blocks an NPU job's drain";
                if (io.npulifecycle.simulator.cluster.ClusterBackend.REAL.equals(api)) {
                    results.add(demo.step(drain, new DemoDrainStep(sim, out, demo.wait, demo::table)::run));
                } else {
                    out.println();
                    out.println("== step " + drain);
                    out.println("   SKIP: runs only with --api real (PodDisruptionBudgets and the Eviction API exist "
                            + "only on a real kube-apiserver; the embedded API server has neither)");
                }
            }
            demo.printTable(true);
        } catch (Exception e) {
            results.add(new StepResult("harness", false, 0, e.toString()));
        }
        out.println();
        out.println("Summary");
        boolean all = true;
        for (StepResult r : results) {
            out.printf("  %-4s %-58s %6.1f s  %s%n", r.passed() ? "PASS" : "FAIL", r.name(), r.millis() / 1000.0,
                    r.passed() ? "" : r.detail());
            all &= r.passed();
        }
        out.printf("%s in %.1f s%n", all ? "PASS" : "FAIL", (System.nanoTime() - start) / 1e9);
        return all ? 0 : 1;
    }

    interface Body {
        String run() throws Exception;
    }

    StepResult step(String name, Body body) {
        out.println();
        out.println("== step " + name);
        long t0 = System.nanoTime();
        try {
            String detail = body.run();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            out.println("   PASS " + (detail == null ? "" : detail));
            printTable(true);
            return new StepResult(name, true, ms, detail);
        } catch (Exception e) {
            long ms = (System.nanoTime() - t0) / 1_000_000;
            out.println("   FAIL " + e.getMessage());
            printTable(true);
            return new StepResult(name, false, ms, e.getMessage());
        }
    }

    // ---- the runbook ----

    String install(SimCluster c) throws Exception {
        c.start(List.of(TO, DemoDrainStep.TARGET));
        for (SimNode n : c.nodes().values()) {
            Path credentials = c.writeJolokiaCredentials(n);
            out.println("   " + n.name() + ": Jolokia " + n.jolokia().url() + ", credentials in " + credentials);
            out.println("   " + n.name() + ": metrics " + n.metricsUrl());
        }
        out.println("   control plane: metrics " + c.controlPlaneMetricsUrl());
        wait.until("every node validated at " + FROM, Duration.ofSeconds(120), () -> allNodes(n ->
                FROM.equals(label(n, "driver-version")) && annotation(n, "driver-validated").startsWith(FROM + "@")
                        && "healthy".equals(label(n, "npu-health"))), this::table);
        return sim.nodes().size() + " nodes at " + FROM + ", every chip healthy";
    }

    String preflight() throws Exception {
        String missing = SimCluster.repositoryAndTag(EmbeddedCluster.driverImage(TO, "910b"));
        String tag = SimCluster.imageTag(EmbeddedCluster.driverImage(TO, "910b"));
        sim.registry().remove(missing);
        List<String> listed = new ArrayList<>();
        for (Object t : ImageWhiteLists.repoList(sim.client())) {
            if (!tag.equals(t)) {
                listed.add(String.valueOf(t));
            }
        }
        ImageWhiteLists.seed(sim.cluster(), listed);
        Pod workload = new PodBuilder().withNewMetadata().withName("llama-trainer-0").withNamespace("training")
                .endMetadata().withNewSpec().withNodeName("node-0").addNewContainer().withName("trainer")
                .withImage("registry.local/llama:1").withNewResources()
                .addToRequests("huawei.com/Ascend910", new Quantity("8")).addToLimits("huawei.com/Ascend910",
                        new Quantity("8")).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus().build();
        sim.cluster().ensureNamespace("training");
        sim.client().pods().inNamespace("training").resource(workload).create();
        out.println("   trigger: spec.driver.version=" + TO + ", upgradePolicy: {autoUpgrade: false, deadlines: "
                + "{podRestartSeconds: " + POD_RESTART_SECONDS + "}} (one save); image "
                + missing + " removed from the registry; tag " + tag + " not in ImageWhiteList "
                + ImageWhiteLists.NAMESPACE + "/" + ImageWhiteLists.NAME + " (spec.repoList " + listed
                + "); NPU workload training/llama-trainer-0 runs on node-0");
        sim.patchDriver(Map.of("version", TO, "upgradePolicy", Map.of("autoUpgrade", false, "deadlines",
                Map.of("podRestartSeconds", POD_RESTART_SECONDS))));
        wait.until("preflight names the missing image", Duration.ofSeconds(60),
                () -> condition("PreflightPassed", "False").contains("missing from the registry: ")
                        && condition("PreflightPassed", "False").contains(TO), () -> conditionsText());
        out.println("   preflight: " + condition("PreflightPassed", "False"));
        assertNoPodDeleted();
        sim.registry().add(missing);
        wait.until("preflight names the tag missing from the ImageWhiteList and the command", Duration.ofSeconds(60),
                () -> !condition("PreflightPassed", "False").contains("missing from the registry")
                        && condition("PreflightPassed", "False").contains("not in ImageWhiteList "
                        + ImageWhiteLists.NAMESPACE + "/" + ImageWhiteLists.NAME + " spec.repoList: " + tag)
                        && condition("PreflightPassed", "False").contains("kubectl edit imagewhitelist "
                                + ImageWhiteLists.NAME + " -n " + ImageWhiteLists.NAMESPACE), this::conditionsText);
        out.println("   preflight: " + condition("PreflightPassed", "False"));
        assertNoPodDeleted();
        out.println("   kubectl patch imagewhitelist " + ImageWhiteLists.NAME + " -n " + ImageWhiteLists.NAMESPACE
                + " --type=json -p '[{\"op\":\"add\",\"path\":\"/spec/repoList/-\",\"value\":\"" + tag + "\"}]'");
        ImageWhiteLists.addTags(sim.client(), List.of(tag));
        wait.until("preflight names the NPU workload on node-0", Duration.ofSeconds(60),
                () -> conditionsText().contains("llama-trainer-0")
                        && !condition("PreflightPassed", "False").contains("ImageWhiteList"), this::conditionsText);
        out.println("   preflight: " + conditionsText());
        sim.client().pods().inNamespace("training").withName("llama-trainer-0").delete();
        wait.until("preflight passes once the workload is scaled to zero", Duration.ofSeconds(60),
                () -> !condition("PreflightPassed", "True").isEmpty(), this::conditionsText);
        out.println("   preflight: " + condition("PreflightPassed", "True"));
        if (!condition("PreflightPassed", "True").contains("every driver image tag listed in ImageWhiteList")) {
            throw new IllegalStateException("the passed preflight does not say the ImageWhiteList was checked: "
                    + conditionsText());
        }
        return "missing image, tag missing from the ImageWhiteList and NPU workload reported before any node was "
                + "touched; passes after each fix";
    }

    private void assertNoPodDeleted() {
        for (SimNode n : sim.nodes().values()) {
            if (n.runtime().starts() != 1) {
                throw new IllegalStateException(n.name() + "'s driver pod was restarted before preflight passed");
            }
        }
    }

    String upgrade() throws Exception {
        List<String> order = new ArrayList<>();
        for (int done = 0; done < sim.nodes().size(); done++) {
            String[] next = new String[1];
            wait.until("a node waiting for approval", Duration.ofSeconds(90), () -> {
                for (SimNode n : sim.nodes().values()) {
                    if (!order.contains(n.name()) && "true".equals(label(n, "reboot-required"))
                            && "upgrade".equals(annotation(n, "reboot-reason")) && hasEvent(n.name(), "reason=upgrade")) {
                        next[0] = n.name();
                        return true;
                    }
                }
                return false;
            }, this::table);
            String name = next[0];
            SimNode n = sim.nodes().get(name);
            int reboots = n.reboots();
            out.println("   kubectl annotate node " + name + " " + NodeKeys.APPROVE_REBOOT + "=true");
            sim.approve(name);
            order.add(name);
            wait.until(name + " rebooted into " + TO + " and validated", Duration.ofSeconds(120),
                    () -> n.reboots() == reboots + 1 && TO.equals(label(n, "driver-version"))
                            && annotation(n, "driver-validated").startsWith(TO + "@")
                            && label(n, "driver-upgrade-state").isEmpty(), this::table);
            if (annotations(name).containsKey(NodeKeys.APPROVE_REBOOT)) {
                throw new IllegalStateException(name + ": the approval was not consumed");
            }
        }
        wait.until("rollout complete", Duration.ofSeconds(60),
                () -> !condition("Complete", "True").isEmpty(), this::conditionsText);
        return "approved in order " + order + "; each approval consumed once, one reboot per node";
    }

    String verify() {
        StringBuilder sb = new StringBuilder();
        for (SimNode n : sim.nodes().values()) {
            if (!label(n, "driver-upgrade-state").isEmpty()) {
                throw new IllegalStateException(n.name() + " still has driver-upgrade-state "
                        + label(n, "driver-upgrade-state"));
            }
        }
        out.println("   kubectl get nodes -l openfuyao.com/npu.present -o custom-columns=NAME:...,DRIVER-UPGRADE-STATE:...");
        for (SimNode n : sim.nodes().values()) {
            out.printf("     %-8s %s%n", n.name(), "<empty>");
        }
        out.println("   kubectl get pod -n npu-operator -l app=npu-driver-daemonset -o jsonpath=...");
        for (Pod p : sim.client().pods().inNamespace(NodeKeys.DRIVER_NAMESPACE).withLabel(NodeKeys.DRIVER_APP_LABEL, NodeKeys.DRIVER_APP).list()
                .getItems()) {
            String image = DaemonSetController.image(p);
            out.printf("     %-8s %s%n", p.getSpec().getNodeName(), image);
            if (!TO.equals(DaemonSetController.versionOf(image))) {
                throw new IllegalStateException(p.getSpec().getNodeName() + "'s driver pod runs " + image);
            }
        }
        for (SimNode n : sim.nodes().values()) {
            String head = n.npuSmiHead();
            out.println("   " + n.name() + "$ npu-smi info | head -2\n     " + head.replace("\n", "\n     "));
            if (!head.contains("Version: " + TO)) {
                throw new IllegalStateException(n.name() + ": npu-smi does not report " + TO + ": " + head);
            }
        }
        sb.append("labels empty, every pod on ").append(TO).append(", npu-smi reports ").append(TO)
                .append(" on every host");
        return sb.toString();
    }

    String autoRecover() throws Exception {
        sim.patchDriver(Map.of("recoveryPolicy", Map.of("autoRecover", true)));
        SimNode n = node(0);
        int chip = Math.min(4, sim.settings().npus() - 1);
        int reboots = n.reboots();
        out.println("   wedge " + n.name() + " chip " + chip + ":0 (dev_num=0) through Jolokia: " + n.simulator("wedge",
                chip, 0));
        wait.until(n.name() + " detected, rebooted and recovered", Duration.ofSeconds(120),
                () -> n.reboots() == reboots + 1 && n.marker("driver-ready") != null
                        && !"true".equals(label(n, "reboot-required")) && "healthy".equals(label(n, "npu-health")),
                this::table);
        requireEvent(n.name(), "reason=recovery");
        // the recovery drain (docs/upgrade.md "Recovery drain"): the control plane's Events on the Node, in order
        List<String> drain = List.of(NodeKeys.EVENT_NPU_UNHEALTHY, NodeKeys.EVENT_CORDONED,
                NodeKeys.EVENT_RECOVERY_REBOOT_GRANTED, NodeKeys.EVENT_NPU_HEALTHY);
        wait.until(n.name() + " tainted, cordoned, drained and granted before the reboot, then untainted",
                Duration.ofSeconds(60), () -> drain.stream().allMatch(r -> sim.events(n.name()).stream()
                        .anyMatch(e -> r.equals(e.getReason()))), this::table);
        out.println("   " + n.name() + ": taint " + NodeKeys.NPU_UNHEALTHY_TAINT + ", cordon, drain, "
                + NodeKeys.RECOVERY_REBOOT_GRANTED + " -> reboot -> validated -> untaint, uncordon");
        return n.name() + ": wedge -> RebootRequired reason=recovery -> taint, cordon, drain, grant -> reboot (no "
                + "approval) -> healthy, untainted";
    }

    String manualRecover() throws Exception {
        sim.patchDriver(Map.of("recoveryPolicy", Map.of("autoRecover", false)));
        SimNode n = node(Math.min(1, sim.nodes().size() - 1));
        int reboots = n.reboots();
        out.println("   wedge " + n.name() + " chip 0:0: " + n.simulator("wedge", 0, 0));
        wait.until(n.name() + " reboot-required=true with an Event reason=recovery", Duration.ofSeconds(90),
                () -> "true".equals(label(n, "reboot-required")) && hasEvent(n.name(), "reason=recovery"),
                this::table);
        out.println("   kubectl get nodes -l " + NodeKeys.REBOOT_REQUIRED + "=true  ->  " + n.name());
        Properties rr = n.marker("reboot-required");
        if (n.reboots() != reboots) {
            throw new IllegalStateException(n.name() + " rebooted without approval");
        }
        out.println("   kubectl annotate node " + n.name() + " " + NodeKeys.APPROVE_REBOOT + "=true");
        sim.approve(n.name());
        wait.until(n.name() + " rebooted and recovered", Duration.ofSeconds(120),
                () -> n.reboots() == reboots + 1 && n.marker("driver-ready") != null
                        && !"true".equals(label(n, "reboot-required")), this::table);
        return n.name() + ": waited for approval (marker " + (rr == null ? "?" : rr.getProperty("chips"))
                + "), approved, rebooted once, healthy";
    }

    String suppression() throws Exception {
        SimNode n = node(Math.min(2, sim.nodes().size() - 1));
        int reboots = n.reboots();
        out.println("   wedge " + n.name() + " chip 0:0, then recover it before anyone approves");
        n.simulator("wedge", 0, 0);
        wait.until(n.name() + " wedge detected", Duration.ofSeconds(90),
                () -> "true".equals(label(n, "reboot-required")), this::table);
        n.simulator("recover", 0, 0);
        wait.until(n.name() + " marker cleared, no reboot", Duration.ofSeconds(90),
                () -> !"true".equals(label(n, "reboot-required")) && n.marker("reboot-required") == null
                        && n.marker("driver-ready") != null, this::table);
        if (n.reboots() != reboots) {
            throw new IllegalStateException(n.name() + " was rebooted");
        }
        return n.name() + ": recovered by itself, marker cleared, not rebooted";
    }

    String noViolation() {
        int total = 0;
        for (SimNode n : sim.nodes().values()) {
            total += n.violations();
        }
        if (total != 0) {
            throw new IllegalStateException(total + " violation(s) recorded by the simulator");
        }
        return "0 violations on " + sim.nodes().size() + " nodes";
    }

    // ---- helpers ----

    SimNode node(int i) {
        return new ArrayList<>(sim.nodes().values()).get(i);
    }

    interface NodePredicate {
        boolean test(SimNode n);
    }

    boolean allNodes(NodePredicate p) {
        for (SimNode n : sim.nodes().values()) {
            if (!p.test(n)) {
                return false;
            }
        }
        return true;
    }

    String label(SimNode n, String key) {
        return Objects.toString(sim.labels(n.name()).get(NodeKeys.PREFIX + key), "");
    }

    String annotation(SimNode n, String key) {
        return Objects.toString(sim.annotations(n.name()).get(NodeKeys.PREFIX + key), "");
    }

    Map<String, String> annotations(String node) {
        return sim.annotations(node);
    }

    boolean hasEvent(String node, String text) {
        return sim.events(node).stream().anyMatch(e -> "RebootRequired".equals(e.getReason())
                && e.getMessage() != null && e.getMessage().contains(text));
    }

    void requireEvent(String node, String text) {
        if (!hasEvent(node, text)) {
            throw new IllegalStateException(node + ": no RebootRequired Event containing " + text);
        }
    }

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> conditions() {
        GenericKubernetesResource cr = sim.npuOperatorCtl();
        Object st = cr == null ? null : cr.getAdditionalProperties().get("status");
        if (!(st instanceof Map)) {
            return List.of();
        }
        Object c = ((Map<String, Object>) st).get("conditions");
        return c instanceof List ? (List<Map<String, Object>>) c : List.of();
    }

    /** @return the message of condition {@code type} when its status is {@code status}, else "" */
    String condition(String type, String status) {
        for (Map<String, Object> c : conditions()) {
            if (type.equals(c.get("type")) && status.equals(c.get("status"))) {
                return String.valueOf(c.get("message"));
            }
        }
        return "";
    }

    String conditionsText() {
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> c : conditions()) {
            sb.append(c.get("type")).append('=').append(c.get("status")).append(" (").append(c.get("message"))
                    .append(") ");
        }
        return sb.toString();
    }

    String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("   %-8s %-22s %-8s %-14s %-16s %-7s%n", "NODE", "UPGRADE-STATE", "DRIVER",
                "CHIPS-HEALTHY", "PENDING-REBOOT", "REBOOTS"));
        for (SimNode n : sim.nodes().values()) {
            String state = label(n, "driver-upgrade-state");
            String pending = "true".equals(label(n, "reboot-required")) ? "yes (" + annotation(n, "reboot-reason")
                    + ")" : "";
            String chips;
            List<String> simChips = n.simChips();
            if (simChips.isEmpty()) {
                chips = n.runtime().alive() ? "starting" : "down";
            } else {
                long healthy = simChips.stream().filter(l -> l.contains(" healthy")).count();
                chips = healthy + "/" + simChips.size();
            }
            sb.append(String.format("   %-8s %-22s %-8s %-14s %-16s %-7d%n", n.name(),
                    state.isEmpty() ? "-" : state, label(n, "driver-version"), chips, pending, n.reboots()));
        }
        return sb.toString();
    }

    void maybePrintTable() {
        if (System.nanoTime() - lastTableAt > 2_000_000_000L) {
            printTable(false);
        }
    }

    void printTable(boolean force) {
        String t;
        try {
            t = table();
        } catch (RuntimeException e) {
            return;
        }
        lastTableAt = System.nanoTime();
        if (force || !t.equals(lastTable)) {
            out.print(t);
            out.flush();
            lastTable = t;
        }
    }
}
