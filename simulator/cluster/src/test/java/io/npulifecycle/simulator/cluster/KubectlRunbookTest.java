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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The runbook's kubectl commands (DESIGN.md), run with the REAL kubectl against an {@link EmbeddedCluster}, their
 * effects checked through fabric8 and their output. Skipped only when /usr/bin/kubectl is absent.
 */
class KubectlRunbookTest {

    static final Path KUBECTL = Paths.get("/usr/bin/kubectl");
    static final String STATE = "npu.openfuyao.com/driver-upgrade-state";

    @TempDir
    static Path dir;
    static EmbeddedCluster cluster;
    static Path kubeconfig;
    static Path crd;

    @BeforeAll
    static void startCluster() {
        Assumptions.assumeTrue(Files.isExecutable(KUBECTL), "kubectl is not installed at " + KUBECTL
                + ": the runbook commands cannot be checked here (CI machines have it)");
        cluster = EmbeddedCluster.start();
        crd = cluster.installCrd(); // config/kubernetes/crd-npuoperatorctl.yaml when the repository has it
        cluster.addNpuNodes("node-", 3);
        cluster.addNode(new NodeBuilder(EmbeddedCluster.npuNode("cpu-0")).editMetadata()
                .removeFromLabels(EmbeddedCluster.NPU_PRESENT_LABEL).removeFromLabels(EmbeddedCluster.CHIP_LABEL)
                .endMetadata().build());
        cluster.createNpuOperatorCtl("24.1.0", false, false);
        for (int i = 0; i < 3; i++) {
            cluster.addDriverPod("node-" + i, EmbeddedCluster.driverImage(i == 1 ? "25.5.0" : "24.1.0", "910b"));
        }
        KubernetesClient k = cluster.client();
        k.v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                .withName("node-0.reboot-required").withNamespace("default").endMetadata()
                .withNewInvolvedObject().withKind("Node").withName("node-0").endInvolvedObject()
                .withReason("RebootRequired").withType("Normal").withMessage("reboot required: reason=recovery chips 0:0")
                .withCount(1).build()).create();
        k.v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                .withName("node-1.validated").withNamespace("default").endMetadata()
                .withNewInvolvedObject().withKind("Node").withName("node-1").endInvolvedObject()
                .withReason("DriverValidated").withType("Normal").withMessage("driver 24.1.0 validated")
                .withCount(1).build()).create();
        kubeconfig = cluster.writeKubeconfig(dir.resolve("kubeconfig"));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
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

    /** Runs kubectl with the cluster's kubeconfig and a private discovery cache. */
    static Run kubectl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(KUBECTL.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", dir.resolve("kube-cache").toString(), "--request-timeout", "20s"));
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HOME", dir.toString());
        pb.environment().remove("KUBECONFIG");
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(
                new java.io.File("/dev/null")));
        Process p = pb.start();
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

    @Test
    void getNpuNodesWithTheirUpgradeState() throws Exception {
        cluster.client().nodes().withName("node-1").edit(n -> new NodeBuilder(n).editMetadata()
                .addToLabels(STATE, "upgrade-required").endMetadata().build());
        Run r = ok("get", "nodes", "-l", "openfuyao.com/npu.present",
                "-o", "custom-columns=NAME:.metadata.name,DRIVER-UPGRADE-STATE:.metadata.labels.npu\\.openfuyao\\.com/driver-upgrade-state");
        List<String> lines = r.out.lines().map(l -> l.strip().replaceAll("\\s+", " ")).toList();
        assertEquals(List.of("NAME DRIVER-UPGRADE-STATE", "node-0 <none>", "node-1 upgrade-required", "node-2 <none>"),
                lines, r.toString());
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
            List<String> lines = table.out.lines().map(l -> l.strip().replaceAll("\\s+", " ")).toList();
            assertTrue(lines.get(0).startsWith("NAME TARGET AUTOUPGRADE AUTORECOVER"), table.toString());
            assertTrue(lines.get(1).startsWith("npuoperatorctl-sample 25.5.0 false false"), table.toString());
        }
    }

    @Test
    void eventsAreFilteredByReasonOnTheServer() throws Exception {
        Run r = ok("get", "events", "-A", "--field-selector", "reason=RebootRequired");
        List<String> lines = r.out.lines().map(l -> l.strip().replaceAll("\\s+", " ")).toList();
        assertEquals(2, lines.size(), r.toString());
        assertTrue(lines.get(0).startsWith("NAMESPACE LAST SEEN TYPE REASON OBJECT MESSAGE"), r.toString());
        assertTrue(lines.get(1).startsWith("default ") && lines.get(1).contains(
                " Normal RebootRequired node/node-0 reboot required: reason=recovery chips 0:0"), r.toString());
        assertFalse(r.out.contains("DriverValidated"), r.toString());

        Run both = ok("get", "events", "-A", "--field-selector", "reason=RebootRequired,involvedObject.name=node-1");
        assertFalse(both.out.contains("RebootRequired"), both.toString());
        assertTrue(cluster.requests().stream().anyMatch(q -> q.startsWith("GET /api/v1/events")
                && q.contains("fieldSelector=reason%3DRebootRequired")), "the selector reached the server");
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
        Run v = ok("version", "-o", "json");
        assertTrue(v.out.contains("\"gitVersion\": \"" + EmbeddedCluster.KUBERNETES_VERSION + "\""), v.toString());
        Run res = ok("api-resources", "--api-group", "npu.openfuyao.com");
        assertTrue(res.out.contains("npuoperatorctls") && res.out.contains("NPUOperatorCtl"), res.toString());
    }
}
