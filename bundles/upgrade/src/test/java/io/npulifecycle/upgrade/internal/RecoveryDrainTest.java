package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.node.NodeKeys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * The recovery flow of the control plane on one real kube-apiserver for all cases (Eviction API, PodDisruptionBudgets
 * and the disruption controller exist only there): a wedge declared on a Node gets the taint, the cordon, the drain
 * and the grant; after the reboot and the validation the node is uncordoned and untainted; with the drain disabled it
 * is only tainted; storm protection; false-positive suppression undoes it; an administrator's cordon stays. The test
 * plays the node agents (the labels and annotations a node agent writes); the rebooter's side of the grant is in
 * the rebooter's RecoveryGrantTest. Each case uses its own nodes, removed after it. Clock: 200 simulated s per s.
 */
class RecoveryDrainTest {

    static final String V = "24.1.0";
    static final String NS = "ml";
    static final Duration WAIT = Duration.ofSeconds(40);

    static ClusterFixture c;
    static ScaledTestClock time;
    static NodeAgentEmulator nodes;
    static UpgradeController controller;
    static final AtomicInteger evictions = new AtomicInteger();
    static final ScheduledExecutorService kubelet = Executors.newSingleThreadScheduledExecutor();
    /** DrainTest's pod and PodDisruptionBudget helpers, on this class's cluster. */
    static final DrainTest pods = new DrainTest();

    @BeforeAll
    static void startCluster() {
        c = ClusterFixture.start(ClusterBackend.REAL);
        pods.c = c;
        time = c.own(new ScaledTestClock(200));
        nodes = NodeAgentEmulator.on(c, time); // not started: it only creates the nodes; the test plays the agents
        c.backend().ensureNamespace(NS);
        DrainTest.runKubelet(kubelet, c);
        controller = DrainTest.startLeader(c, time, evictions);
        c.createDriver(spec(null, null));
    }

    @AfterAll
    static void stop() {
        kubelet.shutdownNow();
        if (c != null) {
            c.close();
        }
    }

    @AfterEach
    void removeNodesAndPods() {
        c.admin().pods().inNamespace(NS).withGracePeriod(0).delete();
        c.admin().policy().v1().podDisruptionBudget().inNamespace(NS).delete();
        c.admin().apps().replicaSets().inNamespace(NS).delete();
        c.admin().nodes().withLabel(NodeKeys.NPU_PRESENT).delete();
        Waits.until("the nodes of the case gone", WAIT, () -> c.admin().nodes().withLabel(NodeKeys.NPU_PRESENT).list()
                .getItems().isEmpty() && c.admin().pods().inNamespace(NS).list().getItems().isEmpty());
        c.setDriver(spec(null, null));
        evictions.set(0);
    }

    /** The CR's {@code spec.driver} at the nodes' version (no upgrade), with this recovery drain and limit. */
    static Map<String, Object> spec(Map<String, Object> drain, Object maxUnavailable) {
        Map<String, Object> d = NodeAgentEmulator.driver(V, false, 1, "100%", null);
        Map<String, Object> rp = new LinkedHashMap<>();
        if (drain != null) {
            rp.put("drain", drain);
        }
        if (maxUnavailable != null) {
            rp.put("maxUnavailable", maxUnavailable);
        }
        d.put("recoveryPolicy", rp);
        return d;
    }

    void addNodes(String... names) {
        for (String n : names) {
            nodes.addNode(n, "910b", "6.6.0-145.0.4.135.oe2403sp3.aarch64", "openEuler 24.03 (LTS-SP3)", V,
                    "6.6.0-145.0.4.135", "oe2403sp3");
        }
    }

    /** What a node agent writes when it declares a wedge of {@code chips}. */
    void wedge(String node, String chips) {
        patch(node, "{\"metadata\":{\"labels\":{\"" + NodeKeys.REBOOT_REQUIRED + "\":\"true\"},\"annotations\":{\""
                + NodeKeys.REBOOT_REASON + "\":\"recovery\",\"" + NodeKeys.REBOOT_CHIPS + "\":\"" + chips + "\"}}}");
    }

    /** What a node agent writes when the chips recover before any reboot (false-positive suppression). */
    void suppress(String node) {
        patch(node, "{\"metadata\":{\"labels\":{\"" + NodeKeys.REBOOT_REQUIRED + "\":null},\"annotations\":{\""
                + NodeKeys.REBOOT_REASON + "\":null,\"" + NodeKeys.REBOOT_CHIPS + "\":null}}}");
    }

    /** What the node agents write across a reboot: a new boot id, no request; validated in it when {@code valid}. */
    String reboot(String node, boolean valid) {
        String boot = "boot-" + node + "-" + System.nanoTime();
        patch(node, "{\"metadata\":{\"labels\":{\"" + NodeKeys.REBOOT_REQUIRED + "\":null},\"annotations\":{\""
                + NodeKeys.REBOOT_REASON + "\":null,\"" + NodeKeys.REBOOT_CHIPS + "\":null,\"" + NodeKeys.BOOT_ID
                + "\":\"" + boot + "\"" + (valid ? ",\"" + NodeKeys.DRIVER_VALIDATED + "\":\"" + V + "@" + boot + "\""
                        : "") + "}}}");
        return boot;
    }

    void validate(String node) {
        patch(node, "{\"metadata\":{\"annotations\":{\"" + NodeKeys.DRIVER_VALIDATED + "\":\"" + V + "@"
                + c.annotation(node, NodeKeys.BOOT_ID) + "\"}}}");
    }

    void patch(String node, String json) {
        c.admin().nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), json);
    }

    boolean unschedulable(String node) {
        return Boolean.TRUE.equals(c.node(node).getSpec().getUnschedulable());
    }

    boolean tainted(String node) {
        List<Taint> t = c.node(node).getSpec().getTaints();
        return t != null && t.stream().anyMatch(x -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(x.getKey())
                && NodeKeys.NPU_UNHEALTHY_VALUE.equals(x.getValue()) && "NoSchedule".equals(x.getEffect()));
    }

    String grant(String node) {
        return c.annotation(node, NodeKeys.RECOVERY_REBOOT_GRANTED);
    }

    String events(String reason) {
        return c.events("default", reason).stream().map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
                .toList().toString();
    }

    void until(String what, java.util.function.BooleanSupplier condition) {
        Waits.until(what, WAIT, condition, () -> "status " + c.status() + "; nodes " + c.admin().nodes()
                .withLabel(NodeKeys.NPU_PRESENT).list().getItems().stream().map(n -> n.getMetadata().getName() + " "
                        + n.getMetadata().getLabels() + " " + n.getMetadata().getAnnotations() + " " + n.getSpec())
                .toList() + "; writes " + controller.writeCounts() + "; evictions " + evictions.get());
    }

    /** A Ready pod of a one-replica ReplicaSet (so the Eviction API guards it) on {@code node}, label job=<job>. */
    Pod workload(String name, String node, String job) {
        return pods.pod(name, node, true, Map.of("job", job));
    }

    @Test
    void aWedgedNodeIsTaintedCordonedDrainedGrantedThenUncordonedAndUntaintedAfterTheValidatedReboot() {
        addNodes("r1", "r2", "r3", "r4");
        workload("train-0", "r1", "train");
        pods.pdb("train", 1, Map.of("job", "train"));
        String boot = c.annotation("r1", NodeKeys.BOOT_ID);
        wedge("r1", "0,3");
        until("r1 tainted, cordoned, its drain blocked by the budget", () -> tainted("r1") && unschedulable("r1")
                && String.valueOf(c.status().get("recoveringNodes")).contains("PodDisruptionBudget ml/train"));
        assertEquals(NodeKeys.CORDONED_BY_VALUE, c.annotation("r1", NodeKeys.CORDONED_BY));
        assertTrue(events("NpuUnhealthy").contains("r1: tainted npu.openfuyao.com/npu-unhealthy=true:NoSchedule: "
                + "wedged of chips 0,3"), events("NpuUnhealthy"));
        assertTrue(events("Cordoned").contains("r1"), events("Cordoned"));
        assertTrue(events("DrainStarted").contains("ml/train"), events("DrainStarted"));
        assertTrue(events("DrainBlocked").contains("PodDisruptionBudget ml/train"), events("DrainBlocked"));
        assertNull(grant("r1"), "no grant while a pod of the drain is on the node");
        int before = evictions.get();
        assertTrue(before >= 1);
        workload("train-1", "r3", "train"); // a second replica elsewhere: one may go
        until("r1 drained and granted", () -> boot.equals(grant("r1")));
        assertTrue(evictions.get() > before);
        assertNull(c.admin().pods().inNamespace(NS).withName("train-0").get(), "evicted and gone");
        assertTrue(events("RecoveryRebootGranted").contains("r1"), events("RecoveryRebootGranted"));
        assertFalse(unschedulable("r2") || tainted("r2"), "a healthy node is not touched");
        reboot("r1", false);
        until("r1 rebooted, waiting for its validation", () -> String.valueOf(c.status().get("recoveringNodes"))
                .contains("waiting for the driver validation"));
        assertTrue(tainted("r1") && unschedulable("r1"), "tainted and cordoned until the new boot validates");
        validate("r1");
        until("r1 uncordoned, untainted, grant removed", () -> !tainted("r1") && !unschedulable("r1")
                && grant("r1") == null && c.annotation("r1", NodeKeys.CORDONED_BY) == null);
        assertTrue(events("Uncordoned").contains("r1"), events("Uncordoned"));
        assertTrue(events("NpuHealthy").contains("r1"), events("NpuHealthy"));
    }

    @Test
    void withTheDrainDisabledTheNodeIsOnlyTaintedAndNotCordonedDrainedOrGranted() {
        c.setDriver(spec(Map.of("enable", false), null));
        addNodes("d1", "d2");
        workload("notebook", "d1", "notebook");
        wedge("d1", "1");
        until("d1 tainted", () -> tainted("d1") && String.valueOf(c.status().get("recoveringNodes"))
                .contains("drain disabled"));
        assertFalse(unschedulable("d1"));
        assertNull(grant("d1"));
        reboot("d1", true);
        until("d1 untainted after its validated boot", () -> !tainted("d1"));
        assertEquals(0, evictions.get(), "nothing evicted");
        assertNotNull(c.admin().pods().inNamespace(NS).withName("notebook").get());
        assertFalse(unschedulable("d1"));
    }

    @Test
    void stormProtectionDrainsAndGrantsOneNodeAtATime() {
        c.setDriver(spec(null, 1));
        addNodes("s1", "s2", "s3", "s4");
        for (String n : List.of("s1", "s2", "s3")) {
            wedge(n, "0");
        }
        until("all three tainted, s1 granted, two waiting", () -> tainted("s1") && tainted("s2") && tainted("s3")
                && grant("s1") != null && c.condition(NodeKeys.CONDITION_RECOVERY_STORM).startsWith("True"));
        assertTrue(c.condition(NodeKeys.CONDITION_RECOVERY_STORM).contains("s2, s3"),
                c.condition(NodeKeys.CONDITION_RECOVERY_STORM));
        assertFalse(unschedulable("s2") || unschedulable("s3"), "the waiting nodes are not cordoned");
        assertNull(grant("s2"));
        assertTrue(events("RecoveryStorm").contains("s2") && events("RecoveryStorm").contains("s3"),
                events("RecoveryStorm"));
        for (String done : List.of("s1", "s2", "s3")) {
            String node = done;
            until(node + " granted", () -> grant(node) != null);
            long cordoned = c.admin().nodes().withLabel(NodeKeys.NPU_PRESENT).list().getItems().stream()
                    .filter(n -> Boolean.TRUE.equals(n.getSpec().getUnschedulable())).count();
            assertEquals(1, cordoned, "one recovery at a time");
            reboot(node, true);
        }
        until("all released, no storm", () -> List.of("s1", "s2", "s3").stream().noneMatch(n -> tainted(n)
                || unschedulable(n)) && c.condition(NodeKeys.CONDITION_RECOVERY_STORM).startsWith("False"));
    }

    @Test
    void suppressionUndoesTaintCordonAndGrantAndLeavesAnAdminCordonAlone() {
        c.setDriver(spec(null, 2)); // f2 (the admin's cordon) and f1 at once
        addNodes("f1", "f2", "f3", "f4");
        patch("f2", "{\"spec\":{\"unschedulable\":true}}"); // the admin's
        workload("job-a", "f1", "a");
        wedge("f1", "2");
        wedge("f2", "5");
        until("both granted", () -> grant("f1") != null && grant("f2") != null);
        assertNull(c.admin().pods().inNamespace(NS).withName("job-a").get(), "drained");
        assertNull(c.annotation("f2", NodeKeys.CORDONED_BY), "the admin's cordon is not recorded as ours");
        suppress("f1");
        suppress("f2");
        until("both untainted, grants removed", () -> !tainted("f1") && !tainted("f2") && grant("f1") == null
                && grant("f2") == null);
        until("f1 uncordoned", () -> !unschedulable("f1"));
        assertTrue(unschedulable("f2"), "the admin's cordon outlives the suppression");
        assertFalse(events("Uncordoned").contains("f2"), events("Uncordoned"));
        assertNull(c.admin().pods().inNamespace(NS).withName("job-a").get(), "an evicted pod is not ours to restore");
    }
}
