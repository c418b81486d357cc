package io.npulifecycle.simulator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The runbook's kubectl commands (DESIGN.md), run with the REAL kubectl against each {@link ClusterBackend}: the
 * embedded mock and a real kube-apiserver; their effects checked through fabric8 and their output. Written once: a
 * case that one backend cannot run says why in its skip. Skipped only when /usr/bin/kubectl is absent; the real
 * backend fails when its binaries are missing (the message says what to install).
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {ClusterBackend.EMBEDDED, ClusterBackend.REAL})
class KubectlRunbookTest {

    static final Path KUBECTL = Paths.get("/usr/bin/kubectl");
    static final String STATE = "npu.openfuyao.com/driver-upgrade-state";
    static final Duration WATCH_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;
    static ClusterBackend cluster;
    static Path kubeconfig;
    static Path cache;
    static Path crd;

    @Parameter
    String kind;

    @BeforeParameterizedClassInvocation
    static void startCluster(String kind) {
        Assumptions.assumeTrue(Files.isExecutable(KUBECTL), "kubectl is not installed at " + KUBECTL
                + ": the runbook commands cannot be checked here (CI machines have it)");
        cluster = ClusterBackends.start(kind);
        crd = cluster.installCrd(); // charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml when the repository has it
        for (int i = 0; i < 3; i++) {
            cluster.addNode(EmbeddedCluster.npuNode("node-" + i));
        }
        cluster.addNode(new NodeBuilder(EmbeddedCluster.npuNode("cpu-0")).editMetadata()
                .removeFromLabels(EmbeddedCluster.NPU_PRESENT_LABEL).removeFromLabels(EmbeddedCluster.CHIP_LABEL)
                .endMetadata().build());
        cluster.createNpuOperatorCtl("24.1.0", false, false);
        for (int i = 0; i < 3; i++) {
            cluster.addDriverPod("node-" + i, EmbeddedCluster.driverImage(i == 1 ? "25.5.0" : "24.1.0", "910b"));
        }
        cluster.ensureNamespace("default");
        // created newest first, so that --sort-by=.lastTimestamp has something to reorder
        Instant last = Instant.parse("2025-06-01T10:00:00Z");
        event("node-0.reboot-required", "node-0", "RebootRequired", "reboot required: reason=recovery chips 0:0", last);
        event("node-2.reboot-required", "node-2", "RebootRequired", "reboot required: reason=upgrade",
                last.minusSeconds(600));
        event("node-1.validated", "node-1", "DriverValidated", "driver 24.1.0 validated", last);
        kubeconfig = cluster.writeKubeconfig(dir.resolve(kind + "-kubeconfig"));
        cache = dir.resolve(kind + "-kube-cache");
    }

    static void event(String name, String node, String reason, String message, Instant last) {
        cluster.client().v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                .withName(name).withNamespace("default").endMetadata()
                .withNewInvolvedObject().withKind("Node").withName(node).endInvolvedObject()
                .withReason(reason).withType("Normal").withMessage(message).withCount(1)
                .withFirstTimestamp(last.toString()).withLastTimestamp(last.toString()).build()).create();
    }

    @AfterParameterizedClassInvocation
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }

    static final class Run {
        final int exit;
        final String out;
        final String err;

        Run(int exit, String out, String err) {
            this.exit = exit;
            this.out = out;
            this.err = err;
        }

        @Override
        public String toString() {
            return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(KUBECTL.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", cache.toString(), "--request-timeout", "20s"));
        cmd.addAll(Arrays.asList(args));
        return cmd;
    }

    static ProcessBuilder processBuilder(List<String> cmd, Path out, Path err) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HOME", dir.toString());
        pb.environment().remove("KUBECONFIG");
        return pb.redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    }

    /** Runs kubectl with the cluster's kubeconfig and a private discovery cache. */
    static Run kubectl(String... args) throws IOException, InterruptedException {
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = processBuilder(command(args), out, err).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kubectl " + String.join(" ", args) + " did not finish in 60 s");
        }
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    static Run ok(String... args) throws IOException, InterruptedException {
        Run r = kubectl(args);
        assertEquals(0, r.exit, "kubectl " + String.join(" ", args) + "\n" + r);
        return r;
    }

    static List<String> columns(String out) {
        return out.lines().map(l -> l.strip().replaceAll("\\s+", " ")).toList();
    }

    @Test
    void getNpuNodesWithTheirUpgradeState() throws Exception {
        cluster.client().nodes().withName("node-1").edit(n -> new NodeBuilder(n).editMetadata()
                .addToLabels(STATE, "upgrade-required").endMetadata().build());
        Run r = ok("get", "nodes", "-l", "openfuyao.com/npu.present",
                "-o", "custom-columns=NAME:.metadata.name,DRIVER-UPGRADE-STATE:.metadata.labels.npu\\.openfuyao\\.com/driver-upgrade-state");
        assertEquals(List.of("NAME DRIVER-UPGRADE-STATE", "node-0 <none>", "node-1 upgrade-required", "node-2 <none>"),
                columns(r.out), r.toString());
    }

    @Test
    void annotateApprovesAReboot() throws Exception {
        Run r = ok("annotate", "node", "node-0", "npu.openfuyao.com/approve-reboot=true", "--overwrite");
        assertTrue(r.out.contains("node/node-0 annotated"), r.toString());
        Node n = cluster.client().nodes().withName("node-0").get();
        assertEquals("true", n.getMetadata().getAnnotations().get("npu.openfuyao.com/approve-reboot"));
        assertEquals("910b", n.getMetadata().getLabels().get(EmbeddedCluster.CHIP_LABEL), "labels kept");
        assertEquals(EmbeddedCluster.DEFAULT_KERNEL, n.getStatus().getNodeInfo().getKernelVersion(), "status kept");

        ok("annotate", "node", "node-0", "npu.openfuyao.com/approve-reboot-");
        assertNull(cluster.client().nodes().withName("node-0").get().getMetadata().getAnnotations()
                .get("npu.openfuyao.com/approve-reboot"), "kubectl annotate key- removes it");
    }

    @Test
    void labelMarksARebootRequired() throws Exception {
        Run r = ok("label", "node", "node-2", "npu.openfuyao.com/reboot-required=true");
        assertTrue(r.out.contains("node/node-2 labeled"), r.toString());
        Map<String, String> labels = cluster.client().nodes().withName("node-2").get().getMetadata().getLabels();
        assertEquals("true", labels.get("npu.openfuyao.com/reboot-required"));
        assertEquals("true", labels.get(EmbeddedCluster.NPU_PRESENT_LABEL), "other labels kept");

        Run again = kubectl("label", "node", "node-2", "npu.openfuyao.com/reboot-required=false");
        assertTrue(again.exit != 0 && again.err.contains("already has a value"),
                "kubectl refuses to change a label without --overwrite: " + again);
    }

    @Test
    void patchTriggersTheUpgradeInOneSave() throws Exception {
        Run r = ok("-n", "npu-operator", "patch", "npuoperatorctl", "npuoperatorctl-sample", "--type=merge",
                "-p", "{\"spec\":{\"driver\":{\"version\":\"25.5.0\",\"upgradePolicy\":{\"autoUpgrade\":false}}}}");
        assertTrue(r.out.contains("npuoperatorctl.npu.openfuyao.com/npuoperatorctl-sample patched"), r.toString());
        GenericKubernetesResource cr = cluster.npuOperatorCtls().inNamespace("npu-operator")
                .withName("npuoperatorctl-sample").get();
        assertEquals("25.5.0", cr.get("spec", "driver", "version"));
        assertEquals(Boolean.FALSE, cr.get("spec", "driver", "upgradePolicy", "autoUpgrade"));
        assertEquals(Boolean.FALSE, cr.get("spec", "driver", "recoveryPolicy", "autoRecover"), "merge keeps the rest");

        Run plural = ok("-n", "npu-operator", "get", "npuoperatorctls", "-o", "jsonpath={.items[0].spec.driver.version}");
        assertEquals("25.5.0", plural.out.strip());
        if (crd != null) { // the CRD's additionalPrinterColumns, printed by the server
            Run table = ok("-n", "npu-operator", "get", "npuoperatorctl");
            List<String> lines = columns(table.out);
            assertTrue(lines.get(0).startsWith("NAME TARGET AUTOUPGRADE AUTORECOVER"), table.toString());
            assertTrue(lines.get(1).startsWith("npuoperatorctl-sample 25.5.0 false false"), table.toString());
        }
    }

    @Test
    void eventsAreFilteredByReasonOnTheServer() throws Exception {
        Run r = ok("get", "events", "-A", "--field-selector", "reason=RebootRequired");
        List<String> lines = columns(r.out);
        assertEquals(3, lines.size(), r.toString());
        assertTrue(lines.get(0).startsWith("NAMESPACE LAST SEEN TYPE REASON OBJECT MESSAGE"), r.toString());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("default ") && l.contains(
                " Normal RebootRequired node/node-0 reboot required: reason=recovery chips 0:0")), r.toString());
        assertFalse(r.out.contains("DriverValidated"), r.toString());

        Run both = ok("get", "events", "-A", "--field-selector", "reason=RebootRequired,involvedObject.name=node-1");
        assertFalse(both.out.contains("RebootRequired"), both.toString());
        if (cluster instanceof EmbeddedCluster embedded) { // a real server has no other way to filter
            assertTrue(embedded.requestLog().requests().stream().anyMatch(q -> q.startsWith("GET /api/v1/events")
                    && q.contains("fieldSelector=reason%3DRebootRequired")), "the selector reached the server");
        }
    }

    /** The runbook's command verbatim: the oldest first, whatever order the events were created in. */
    @Test
    void rebootRequiredEventsSortedByTheirLastTimestamp() throws Exception {
        Run r = ok("get", "events", "-A", "--field-selector", "reason=RebootRequired", "--sort-by=.lastTimestamp");
        List<String> lines = columns(r.out);
        assertEquals(3, lines.size(), r.toString());
        assertTrue(lines.get(0).startsWith("NAMESPACE LAST SEEN TYPE REASON OBJECT MESSAGE"), r.toString());
        assertTrue(lines.get(1).contains(" RebootRequired node/node-2 reboot required: reason=upgrade"), r.toString());
        assertTrue(lines.get(2).contains(" RebootRequired node/node-0 reboot required: reason=recovery chips 0:0"),
                r.toString());
    }

    @Test
    void driverPodsShowTheirNodeAndImage() throws Exception {
        Run r = ok("get", "pod", "-n", "npu-operator", "-l", "app=npu-driver-daemonset", "-o",
                "jsonpath={range .items[*]}{.spec.nodeName}{\"\\t\"}{.spec.containers[0].image}{\"\\n\"}{end}");
        List<String> lines = r.out.lines().sorted().toList();
        assertEquals(List.of("node-0\t" + EmbeddedCluster.driverImage("24.1.0", "910b"),
                "node-1\t" + EmbeddedCluster.driverImage("25.5.0", "910b"),
                "node-2\t" + EmbeddedCluster.driverImage("24.1.0", "910b")), lines, r.toString());

        Run onNode = ok("get", "pod", "-n", "npu-operator", "--field-selector", "spec.nodeName=node-1", "-o", "name");
        assertEquals("pod/npu-driver-node-1", onNode.out.strip());
    }

    @Test
    void versionAndApiResources() throws Exception {
        String expected = cluster instanceof EmbeddedCluster ? EmbeddedCluster.KUBERNETES_VERSION
                : cluster.client().getKubernetesVersion().getGitVersion();
        assertTrue(expected.startsWith("v1."), expected);
        Run v = ok("version", "-o", "json");
        assertTrue(v.out.contains("\"gitVersion\": \"" + expected + "\""), v.toString());
        Run res = ok("api-resources", "--api-group", "npu.openfuyao.com");
        assertTrue(res.out.contains("npuoperatorctls") && res.out.contains("NPUOperatorCtl"), res.toString());
    }

    /** {@code kubectl get nodes -w} prints the list, then a line for each change (here a label). */
    @Test
    void watchingNodesShowsALabelChange() throws Exception {
        Assumptions.assumeTrue(ClusterBackend.REAL.equals(kind), "kubectl get -w cannot run on the embedded mock: it "
                + "serves watches only over WebSocket, and kubectl watches over a streamed HTTP response (the mock "
                + "answers 400 BadRequest)");
        String label = "npu.openfuyao.com/watched";
        Path out = dir.resolve(kind + "-watch.txt");
        Process watch = processBuilder(command("get", "nodes", "-w", "-L", label), out, dir.resolve(kind
                + "-watch.err")).start();
        try {
            awaitOutput(out, watch, "the node list", text -> text.lines().anyMatch(l -> l.startsWith("node-0 ")));
            ok("label", "node", "node-0", label + "=seen");
            awaitOutput(out, watch, "the label change", text -> text.lines()
                    .anyMatch(l -> l.startsWith("node-0 ") && l.strip().endsWith(" seen")));
            assertTrue(watch.isAlive(), "kubectl get -w keeps watching");
        } finally {
            watch.destroy();
            watch.waitFor(10, TimeUnit.SECONDS);
        }
    }

    static void awaitOutput(Path out, Process p, String what, java.util.function.Predicate<String> seen)
            throws IOException {
        try {
            org.awaitility.Awaitility.await("kubectl get -w: " + what).atMost(WATCH_TIMEOUT)
                    .pollInterval(java.time.Duration.ofMillis(100))
                    .failFast("kubectl get -w exited", () -> !p.isAlive() && !seen.test(Files.readString(out)))
                    .until(() -> seen.test(Files.readString(out, StandardCharsets.UTF_8)));
        } catch (org.awaitility.core.ConditionTimeoutException | org.awaitility.core.TerminalFailureException e) {
            throw new AssertionError("kubectl get -w: no " + what + " within " + WATCH_TIMEOUT.toSeconds()
                    + " s (alive " + p.isAlive() + "); output:\n" + Files.readString(out, StandardCharsets.UTF_8), e);
        }
    }
}
