package io.npulifecycle.upgrade.internal.recovery;

import io.npulifecycle.upgrade.internal.drain.DrainTest;

import io.npulifecycle.upgrade.internal.cluster.UpgradeController;

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
import io.fabric8.kubernetes.client.KubernetesClientException;
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
        return spec(drain, maxUnavailable, null);
    }

    /** As {@link #spec(Map, Object)} with this {@code recoveryPolicy.maintenanceWindow}. */
    static Map<String, Object> spec(Map<String, Object> drain, Object maxUnavailable, Map<String, Object> window) {
        Map<String, Object> d = NodeAgentEmulator.driver(V, false, 1, "100%", null);
        Map<String, Object> rp = new LinkedHashMap<>();
        if (drain != null) {
            rp.put("drain", drain);
        }
        if (maxUnavailable != null) {
            rp.put("maxUnavailable", maxUnavailable);
        }
        if (window != null) {
            rp.put("maintenanceWindow", window);
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
        // the Event follows the grant's patch: listed a moment after the grant is seen
        until("the grant's Event", () -> events("RecoveryRebootGranted").contains("r1: "));
        assertFalse(unschedulable("r2") || tainted("r2"), "a healthy node is not touched");
        reboot("r1", false);
        until("r1 rebooted, waiting for its validation", () -> String.valueOf(c.status().get("recoveringNodes"))
                .contains("waiting for the driver validation"));
        assertTrue(tainted("r1") && unschedulable("r1"), "tainted and cordoned until the new boot validates");
        validate("r1");
        until("r1 uncordoned, untainted, grant removed", () -> !tainted("r1") && !unschedulable("r1")
                && grant("r1") == null && c.annotation("r1", NodeKeys.CORDONED_BY) == null);
        // the Events follow the release's patch (RecoveryWork: the patch, then its Events)
        Waits.untilAsserted("the release's Events", WAIT, () -> {
            assertTrue(events("Uncordoned").contains("r1"), events("Uncordoned"));
            assertTrue(events("NpuHealthy").contains("r1"), events("NpuHealthy"));
        });
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
        // the condition turns True as soon as one node waits, and the status is written at most every status
        // interval: the one naming both waiting nodes may come a write later; the storm's Events follow the status
        // write of the reconcile that found the node waiting
        Waits.untilAsserted("RecoveryStorm naming s2 and s3", WAIT, () -> assertTrue(
                c.condition(NodeKeys.CONDITION_RECOVERY_STORM).contains("s2, s3"),
                c.condition(NodeKeys.CONDITION_RECOVERY_STORM)));
        assertFalse(unschedulable("s2") || unschedulable("s3"), "the waiting nodes are not cordoned");
        assertNull(grant("s2"));
        Waits.untilAsserted("the RecoveryStorm Events of s2 and s3", WAIT, () -> assertTrue(
                events("RecoveryStorm").contains("s2") && events("RecoveryStorm").contains("s3"),
                events("RecoveryStorm")));
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

    String recovering() {
        return String.valueOf(c.status().get("recoveringNodes"));
    }

    /**
     * {@code recoveryPolicy.drain.timeoutSeconds: 60}, {@code onTimeout: fail} (the default): a budget holds the
     * drain; the evictions back off (counted: no hot loop); at the timeout the node is not granted, its cordon is
     * given back, the taint stays and the failure is recorded on the Node and reported (Event {@code DrainFailed}
     * naming the pod and the budget, {@code recoveringNodes}); it stays so while time passes; an administrator's
     * cordon outlives the failure; with a second replica and a longer timeout, removing the record drains it again
     * and the reboot is granted.
     */
    @Test
    void aBudgetThatHoldsTheRecoveryDrainPastItsTimeoutFailsItUncordonedTaintedAndNotGranted() {
        c.setDriver(spec(Map.of("timeoutSeconds", 60), "100%")); // t2, cordoned by the admin, counts as unavailable
        addNodes("t1", "t2", "t3", "t4");
        workload("train-t", "t1", "traint");
        pods.pdb("traint", 1, Map.of("job", "traint"));
        patch("t2", "{\"spec\":{\"unschedulable\":true}}"); // the admin's
        workload("train-u", "t2", "trainu");
        pods.pdb("trainu", 1, Map.of("job", "trainu"));
        String boot = c.annotation("t1", NodeKeys.BOOT_ID);
        wedge("t1", "0");
        wedge("t2", "1");
        until("t1's recovery drain failed", () -> c.annotation("t1", NodeKeys.RECOVERY_DRAIN_FAILED) != null);
        String failed = c.annotation("t1", NodeKeys.RECOVERY_DRAIN_FAILED);
        assertTrue(failed.startsWith(boot + ": drain timed out after ") && failed.contains(
                "(recoveryPolicy.drain.timeoutSeconds 60): pods left: ml/train-t (PodDisruptionBudget ml/traint"),
                failed);
        until("t1 uncordoned", () -> !unschedulable("t1") && c.annotation("t1", NodeKeys.CORDONED_BY) == null);
        assertTrue(tainted("t1"), "the taint stays while the chip is wedged");
        assertNull(grant("t1"), "not rebooted");
        until("DrainFailed names the pod and the budget, Uncordoned", () -> events("DrainFailed").contains("t1: the "
                + "recovery drain of chips 0 failed, the node is not rebooted: drain timed out")
                && events("DrainFailed").contains("PodDisruptionBudget ml/traint")
                && events("Uncordoned").contains("t1: "));
        // the reconcile that fails the drain writes its status before its recovery patch unless the status interval
        // defers the write (or a 409 refuses it): then the status naming the failure comes after the patch and Events
        Waits.untilAsserted("recoveringNodes naming the failure", WAIT, () -> assertTrue(
                recovering().contains("drain failed in boot " + boot + ", not rebooted"), recovering()));
        assertTrue(controller.snapshot().recovering().stream().anyMatch(x -> x.startsWith("t1: drain failed")),
                controller.snapshot().recovering().toString());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("train-t").get(), "the budget kept the pod");
        until("t2's drain failed too, the admin's cordon left", () -> c.annotation("t2",
                NodeKeys.RECOVERY_DRAIN_FAILED) != null && events("DrainFailed").contains("left cordoned (not "
                        + "cordoned by npu-lifecycle)"));
        assertTrue(unschedulable("t2"), "the admin's cordon outlives the failed recovery drain");
        assertNull(c.annotation("t2", NodeKeys.CORDONED_BY));
        assertFalse(events("Uncordoned").contains("t2: "), events("Uncordoned"));
        int calls = evictions.get();
        // 60 s of backoff 5, 10, 20, 30 s: at most 4 attempts or so per pod (two pods), not a loop; at least one each
        assertTrue(calls >= 2 && calls <= 16, "eviction calls: " + calls);
        java.time.Instant later = time.now().plusSeconds(600);
        until("600 simulated s later", () -> time.now().isAfter(later));
        assertFalse(unschedulable("t1"), "not cordoned again in this boot");
        assertNull(grant("t1"));
        assertEquals(calls, evictions.get(), "no eviction after the failure");

        workload("train-t2", "t3", "traint"); // a second replica elsewhere: one may go
        // and a timeout the budget's status (the disruption controller, real time) can meet at 200 simulated s per s
        c.setDriver(spec(Map.of("timeoutSeconds", 3600), "100%"));
        patch("t1", "{\"metadata\":{\"annotations\":{\"" + NodeKeys.RECOVERY_DRAIN_FAILED + "\":null}}}");
        until("t1 drained and granted on the second try", () -> boot.equals(grant("t1")));
        assertNull(c.admin().pods().inNamespace(NS).withName("train-t").get(), "evicted and gone");
        reboot("t1", true);
        until("t1 released", () -> !tainted("t1") && !unschedulable("t1") && grant("t1") == null);
    }

    /** {@code onTimeout: reboot}: a drain a budget holds is granted at its timeout, with the pod on the node. */
    @Test
    void withOnTimeoutRebootABlockedRecoveryDrainIsGrantedAtItsTimeout() {
        c.setDriver(spec(Map.of("timeoutSeconds", 60, "onTimeout", "reboot"), null));
        addNodes("o1", "o2", "o3", "o4");
        workload("train-o", "o1", "traino");
        pods.pdb("traino", 1, Map.of("job", "traino"));
        String boot = c.annotation("o1", NodeKeys.BOOT_ID);
        wedge("o1", "2");
        until("o1 granted at its drain's timeout", () -> boot.equals(grant("o1")));
        assertNotNull(c.admin().pods().inNamespace(NS).withName("train-o").get(), "granted with the pod on the node");
        assertTrue(unschedulable("o1") && tainted("o1"), "cordoned and tainted until the new boot validates");
        until("the grant's Event names the timeout", () -> events("RecoveryRebootGranted").contains("o1: the recovery "
                + "reboot of boot " + boot + " is granted (npu.openfuyao.com/recovery-reboot-granted): drain timed out")
                && events("RecoveryRebootGranted").contains("onTimeout: reboot"));
        assertNull(c.annotation("o1", NodeKeys.RECOVERY_DRAIN_FAILED));
        reboot("o1", true);
        until("o1 released", () -> !tainted("o1") && !unschedulable("o1") && grant("o1") == null);
    }

    /**
     * {@code recoveryPolicy.maintenanceWindow} with {@code enforce: true}, one hour a day starting two hours from
     * now: while closed, the wedged node is tainted but not cordoned, drained or granted (status, Event
     * {@code OutsideMaintenanceWindow}, the UpgradeOrchestrator MBean's view); at the opening it is cordoned, drained
     * and granted; when the window closes before the reboot, the unused grant is withdrawn and our cordon given
     * back; at the next opening it goes again, and after its validated boot it is released.
     */
    @Test
    void anEnforcedMaintenanceWindowHoldsTheRecoveryDrainAndGrantUntilItOpens() {
        java.time.ZonedDateTime open = time.now().atZone(java.time.ZoneOffset.UTC)
                .truncatedTo(java.time.temporal.ChronoUnit.HOURS).plusHours(2);
        java.time.format.DateTimeFormatter hhmm = java.time.format.DateTimeFormatter.ofPattern("HH:mm");
        c.setDriver(spec(null, null, Map.of("startTime", hhmm.format(open), "endTime", hhmm.format(open.plusHours(1)),
                "enforce", true)));
        addNodes("w1", "w2", "w3", "w4");
        workload("train-w", "w1", "trainw");
        String boot = c.annotation("w1", NodeKeys.BOOT_ID);
        wedge("w1", "1");
        String window = "maintenance window every day " + hhmm.format(open) + "-" + hhmm.format(open.plusHours(1))
                + " UTC closed";
        until("w1 tainted, waiting for the window", () -> tainted("w1") && recovering().contains(window
                + " (recoveryPolicy.maintenanceWindow.enforce); opens at " + open.toInstant()));
        assertFalse(unschedulable("w1"), "not cordoned while the window is closed");
        assertNull(grant("w1"));
        assertEquals(0, evictions.get());
        until("OutsideMaintenanceWindow names the window", () -> events("OutsideMaintenanceWindow")
                .contains("w1: the recovery of chips 1 waits: " + window));
        until("the MBean's view names the wait", () -> controller.snapshot().recovering().stream()
                .anyMatch(x -> x.startsWith("w1: waiting: " + window)));

        time.jumpWall(Duration.between(time.now(), open.toInstant()));
        until("w1 cordoned, drained and granted inside the window", () -> boot.equals(grant("w1")));
        assertTrue(unschedulable("w1"));
        assertNull(c.admin().pods().inNamespace(NS).withName("train-w").get(), "drained");

        time.jumpWall(Duration.between(time.now(), open.plusHours(1).toInstant()));
        until("the unused grant withdrawn and our cordon given back", () -> grant("w1") == null
                && !unschedulable("w1") && tainted("w1"));
        until("two waits announced", () -> c.events("default", "OutsideMaintenanceWindow").stream()
                .filter(e -> "w1".equals(e.getInvolvedObject().getName())).mapToInt(e -> e.getCount() == null ? 1
                        : e.getCount()).sum() >= 2);

        time.jumpWall(Duration.between(time.now(), open.plusDays(1).toInstant()));
        until("granted again at the next opening", () -> boot.equals(grant("w1")) && unschedulable("w1"));
        reboot("w1", true);
        until("w1 released", () -> !tainted("w1") && !unschedulable("w1") && grant("w1") == null);
    }

    /**
     * Bad {@code recoveryPolicy.maintenanceWindow} input: what the CRD schema can check it refuses (startTime =
     * endTime by its CEL rule, enforce not a boolean, an unknown day, an unknown time zone by its CEL rule);
     * {@code enforce} without the drain passes the schema and is {@code InvalidSpec} naming the field, with nothing
     * applied (a wedged node is not even tainted).
     */
    @Test
    void aBadRecoveryMaintenanceWindowIsRefusedByTheSchemaOrNamedInInvalidSpec() {
        for (Map<String, Object> bad : List.<Map<String, Object>>of(
                Map.of("startTime", "01:00", "endTime", "01:00", "enforce", true),
                Map.of("startTime", "01:00", "endTime", "05:00", "enforce", "yes"),
                Map.of("days", "mo,funday", "startTime", "01:00", "endTime", "05:00"),
                Map.of("startTime", "01:00", "endTime", "05:00", "timeZone", "Nowhere/Land", "enforce", true))) {
            KubernetesClientException e = org.junit.jupiter.api.Assertions.assertThrows(
                    KubernetesClientException.class, () -> c.setDriver(spec(null, null, bad)), bad.toString());
            assertEquals(422, e.getCode(), e.getMessage());
            assertTrue(e.getMessage().contains("recoveryPolicy.maintenanceWindow"), e.getMessage());
        }
        addNodes("x1", "x2");
        c.setDriver(spec(Map.of("enable", false), null, Map.of("startTime", "01:00", "endTime", "05:00",
                "enforce", true)));
        until("InvalidSpec names enforce without the drain", () -> c.condition("InvalidSpec").contains(
                "spec.driver.recoveryPolicy.maintenanceWindow.enforce: true needs "
                        + "spec.driver.recoveryPolicy.drain.enable: true"));
        wedge("x1", "0");
        java.time.Instant later = time.now().plusSeconds(300);
        until("300 simulated s later", () -> time.now().isAfter(later));
        assertFalse(tainted("x1") || unschedulable("x1"), "nothing applied while the spec is invalid");
    }

    /**
     * {@code recoveryPolicy.blockingPodSelector}: while a matching pod runs on the wedged node it is tainted but not
     * cordoned, drained or granted (named in {@code recoveringNodes}); once the pod is gone it is drained and
     * granted. A pod under two budgets is a misconfiguration the Eviction API refuses with 500: {@code DrainBlocked}
     * names both budgets.
     */
    @Test
    void aBlockingPodHoldsTheRecoveryAndAPodUnderTwoBudgetsIsNamedAsAMisconfiguration() {
        Map<String, Object> d = spec(null, null);
        @SuppressWarnings("unchecked")
        Map<String, Object> rp = (Map<String, Object>) d.get("recoveryPolicy");
        rp.put("blockingPodSelector", "app=critical");
        c.setDriver(d);
        addNodes("b1", "b2", "b3", "b4");
        pods.pod("db-0", "b1", true, Map.of("app", "critical"));
        workload("train-b", "b1", "trainb");
        pods.pdb("trainb", 0, Map.of("job", "trainb"));
        pods.pdb("trainb-too", 0, Map.of("job", "trainb"));
        wedge("b1", "0");
        until("b1 tainted and blocked", () -> tainted("b1") && recovering().contains(
                "blocked: blocking pods (recoveryPolicy.blockingPodSelector app=critical): ml/db-0"));
        assertFalse(unschedulable("b1"), "not cordoned while the blocking pod runs");
        assertNull(grant("b1"));
        assertEquals(0, evictions.get());
        c.admin().apps().replicaSets().inNamespace(NS).withName("db-0").delete();
        c.admin().pods().inNamespace(NS).withName("db-0").withGracePeriod(0).delete();
        until("b1 cordoned, its drain refused for the two budgets", () -> unschedulable("b1")
                && events("DrainBlocked").contains("b1: pod ml/train-b cannot be evicted: misconfiguration: "));
        assertTrue(events("DrainBlocked").contains("PodDisruptionBudget ml/trainb")
                && events("DrainBlocked").contains("PodDisruptionBudget ml/trainb-too"), events("DrainBlocked"));
        assertNull(grant("b1"), "no grant while the pod is there");
        c.admin().policy().v1().podDisruptionBudget().inNamespace(NS).withName("trainb-too").delete();
        until("b1 drained and granted once one budget is left", () -> grant("b1") != null);
        reboot("b1", true);
        until("b1 released", () -> !tainted("b1") && !unschedulable("b1") && grant("b1") == null);
    }
}
