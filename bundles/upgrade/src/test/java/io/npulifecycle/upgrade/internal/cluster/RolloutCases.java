package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.node.NodeKeys;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedFaults;
import io.npulifecycle.simulator.cluster.ImageWhiteLists;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * Rollouts with node agents emulated at the Kubernetes level, against each {@link ClusterBackend}: the embedded
 * mock (CRUD) and a real kube-apiserver with etcd, where the controller authenticates with a token of its
 * ServiceAccount {@value #CONTROL_PLANE_SA} (the chart's RBAC applied) and the emulator, which plays the
 * DaemonSet controller, the kubelet and the node agents, as admin. Clock: 200 simulated seconds per wall second (a
 * 60 s reboot takes 0.3 s). One concrete class per backend ({@link RolloutTest}, {@link RolloutOnRealServerTest}), so
 * that the module's test JVMs run the two halves side by side.
 */
public abstract class RolloutCases {

    public static final String CONTROL_PLANE_SA = "npu-lifecycle-control-plane";

    static final String OLD = "24.1.0";
    static final String NEW = "25.5.0";
    static final Duration WAIT = Duration.ofSeconds(30);
    /** {@link ClusterBackend#EMBEDDED} or {@link ClusterBackend#REAL}. */
    final String kind;
    ClusterFixture c;
    ScaledTestClock time;
    NodeAgentEmulator emulator;

    /** @param kind {@link ClusterBackend#EMBEDDED} or {@link ClusterBackend#REAL} */
    RolloutCases(String kind) {
        this.kind = kind;
    }

    /** Starts the cluster, the clock (200x) and the node agent emulator. @return the emulator */
    NodeAgentEmulator cluster() {
        return cluster(200);
    }

    /**
     * @param scale simulated seconds per wall second
     * @return the emulator
     */
    NodeAgentEmulator cluster(double scale) {
        c = ClusterFixture.start(kind);
        time = c.own(new ScaledTestClock(scale));
        emulator = NodeAgentEmulator.on(c, time);
        return emulator;
    }

    @AfterEach
    void close() {
        if (c != null) {
            c.close();
        }
    }

    UpgradeController controller(boolean leader) {
        UpgradeController uc = unstarted(cfg());
        uc.start();
        uc.setLeader(leader);
        return uc;
    }

    /** @return the configuration of {@link #controller(boolean)}: no registry check, no leader election */
    static ControllerConfig cfg() {
        ControllerConfig d = ControllerConfig.defaults();
        return new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "", d.reconcileDelay(),
                d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(), d.renewDeadline(), d.retryPeriod(), "t");
    }

    /**
     * @param cfg the configuration
     * @return a controller on the control plane's ServiceAccount, not started (it sends no request yet)
     */
    UpgradeController unstarted(ControllerConfig cfg) {
        return c.own(new UpgradeController(c.serviceAccountClient(CONTROL_PLANE_SA, null, k -> {
            k.setUserAgent("npu-controller");
            k.setRequestRetryBackoffLimit(3);
        }), time, cfg, null));
    }

    void approve(String node) {
        c.admin().nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"npu.openfuyao.com/approve-reboot\":\"true\"}}}");
    }

    void setLabel(String node, String key, String value) {
        c.admin().nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"" + key + "\":" + (value == null ? "null" : "\"" + value + "\"") + "}}}");
    }

    void awaitComplete(String version) {
        until("all nodes on " + version + " with empty driver-upgrade-state and Complete=True",
                () -> emulator.allDone(version) && c.condition("Complete").startsWith("True"));
    }

    /** Waits {@link #WAIT} for {@code condition}; a timeout names the status, the nodes' labels and the pods. */
    void until(String what, java.util.function.BooleanSupplier condition) {
        try {
            Waits.until(what, WAIT, condition);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; status " + c.status() + "; nodes "
                    + c.admin().nodes().list().getItems().stream().map(n -> n.getMetadata().getName() + n.getMetadata().getLabels()).toList()
                    + "; pods " + c.admin().pods().inAnyNamespace().list().getItems().stream().map(p -> p.getMetadata().getNamespace()
                    + "/" + p.getMetadata().getName() + " on " + p.getSpec().getNodeName() + " " + p.getStatus().getPhase()
                    + (p.getMetadata().getDeletionTimestamp() != null ? " Terminating" : "")).toList(), e);
        }
    }

    @Test
    void manualRolloutApprovalsInAdvanceMaxParallel1() {
        cluster().addNodes(5, OLD);
        for (int i = 1; i <= 5; i++) {
            approve("n" + i);
        }
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, false, 1, "100%", null));
        awaitComplete(NEW);
        assertEquals(1, emulator.maxInFlight.get(), "maxParallelUpgrades=1");
        assertEquals(5, emulator.reboots.get(), "one reboot per node");
        assertEquals("5/5", c.status().get("progress"));
        assertTrue(c.status().get("completionTime") != null);
        List<String> reasons = c.admin().v1().events().inNamespace(NodeAgentEmulator.NS).list().getItems().stream()
                .map(e -> e.getReason()).toList();
        assertTrue(reasons.contains("RolloutStarted") && reasons.contains("RolloutComplete"), reasons.toString());
    }

    @Test
    @SuppressWarnings("unchecked")
    void manualRolloutApprovalsOneByOneInRandomOrder() {
        cluster().addNodes(5, OLD);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, false, 0, "100%", null));
        Random rnd = new Random(42);
        List<String> approved = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            List<String>[] waiting = new List[1];
            // a status written before the controller saw the last approval may still list that node
            Waits.until("a node awaiting approval in the status", WAIT, () -> {
                Object a = c.status().get("awaitingApproval");
                waiting[0] = new ArrayList<>(a instanceof List<?> l ? (List<String>) l : List.of());
                waiting[0].removeAll(approved);
                return !waiting[0].isEmpty();
            });
            List<String> w = new ArrayList<>(waiting[0]);
            Collections.shuffle(w, rnd);
            String pick = w.get(0);
            // the status comes from the plan whose patch sets the label; a patch made stale by the node agent's
            // newer write is sent again by the next reconcile, while that status is written: the label may follow it
            Waits.untilAsserted(pick + " reboot-required", WAIT,
                    () -> assertEquals("reboot-required", c.label(pick, NodeKeys.DRIVER_UPGRADE_STATE)));
            approve(pick);
            approved.add(pick);
            Waits.until(pick + " done", WAIT, () -> c.label(pick, NodeKeys.DRIVER_UPGRADE_STATE) == null);
        }
        awaitComplete(NEW);
        assertEquals(5, emulator.reboots.get());
    }

    /**
     * maxParallelUpgrades 1, manual mode: n1 gets the slot before anyone approved it and waits in reboot-required;
     * approving n2 makes n1 give the slot up (reboot-deferred, its driver staged), n2 upgrades first, then n1 once
     * approved, straight from its staged driver (no second pod restart), under a new controller (the yield is
     * decided from the Node alone). Never two nodes in a slot, never two rebooting at once, one reboot each.
     */
    @Test
    @SuppressWarnings("unchecked")
    void anApprovedNodeNeverWaitsBehindAnUnapprovedSlotHolder() {
        cluster().addNodes(2, OLD);
        emulator.start();
        UpgradeController uc = controller(true);
        c.createDriver(driver(NEW, false, 1, "100%", null));
        until("n1 slotted unapproved, reboot-required", () -> "reboot-required".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        List<String> n1Pods = driverPodsOf("n1");
        until("the MBean and the status name n1 as the slot holder, not approved", () -> uc.snapshot().slotHolders().equals(
                List.of("n1: reboot-required, not approved: staged, waiting for " + NodeKeys.APPROVE_REBOOT
                        + "=true (gives the slot up to an approved node that waits)"))
                && String.valueOf(c.status().get("slotHolders")).contains("n1"));
        approve("n2");
        until("n1 yields: reboot-deferred; n2 upgraded", () -> "reboot-deferred".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE))
                && c.label("n2", NodeKeys.DRIVER_UPGRADE_STATE) == null && NEW.equals(c.label("n2", NodeKeys.DRIVER_VERSION)));
        assertEquals(OLD, c.label("n1", NodeKeys.DRIVER_VERSION), "n1 waits, staged");
        assertEquals("true", c.label("n1", NodeKeys.REBOOT_REQUIRED), "what n1 staged stays staged");
        until("status lists n1 awaiting approval, no slot holder", () -> {
            Object a = c.status().get("awaitingApproval");
            Object h = c.status().get("slotHolders");
            return a instanceof List<?> l && l.equals(List.of("n1")) && (h == null || h instanceof List<?> hl && hl.isEmpty());
        });
        assertEquals(List.of("n1"), uc.snapshot().awaitingApproval());
        assertEquals(List.of(), uc.snapshot().slotHolders());
        uc.close();
        UpgradeController next = controller(true);
        approve("n1");
        awaitComplete(NEW);
        assertEquals(List.of(), next.snapshot().slotHolders(), "no slot held at the end");
        assertEquals(1, emulator.maxInFlight.get(), "maxParallelUpgrades=1 at every observed instant");
        assertEquals(1, emulator.maxRebootingAtOnce.get(), "never two nodes rebooting at once");
        assertEquals(2, emulator.reboots.get(), "one reboot per node");
        assertEquals(n1Pods, driverPodsOf("n1"), "n1's driver pod was not restarted again");
        assertEquals(0L, next.writeCounts().getOrDefault("pod-delete", 0L), "no pod deleted after the yield");
    }

    /** @return the names of the node's driver pods that are not being deleted, sorted */
    List<String> driverPodsOf(String node) {
        return c.admin().pods().inNamespace(NodeAgentEmulator.NS).list().getItems().stream()
                .filter(p -> node.equals(p.getSpec().getNodeName()) && p.getMetadata().getDeletionTimestamp() == null)
                .map(p -> p.getMetadata().getName()).sorted().toList();
    }

    @Test
    void autoUpgradeMaxParallel3() {
        cluster().addNodes(7, OLD);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 3, "100%", null));
        awaitComplete(NEW);
        assertEquals(3, emulator.maxInFlight.get(), "maxParallelUpgrades=3 reached and held");
        assertEquals(7, emulator.reboots.get());
    }

    @Test
    void maxUnavailableCountsAnAlreadyFailedNodeThenRetry() {
        cluster().addNodes(5, OLD);
        setLabel("n5", NodeKeys.DRIVER_UPGRADE_STATE, "upgrade-failed");
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 0, 2, null)); // 2 unavailable: n5 (failed) + 1 in flight
        Waits.until("n1..n4 done", WAIT, () -> {
            for (int i = 1; i <= 4; i++) {
                if (c.label("n" + i, NodeKeys.DRIVER_UPGRADE_STATE) != null || !NEW.equals(c.label("n" + i, NodeKeys.DRIVER_VERSION))) {
                    return false;
                }
            }
            return true;
        });
        assertEquals(1, emulator.maxInFlight.get(), "one failed node + one in flight = maxUnavailable 2");
        assertEquals("upgrade-failed", c.label("n5", NodeKeys.DRIVER_UPGRADE_STATE), "a failed node stays failed until retried");
        assertTrue(c.condition("Degraded").startsWith("True"), c.condition("Degraded"));
        setLabel("n5", NodeKeys.DRIVER_UPGRADE_STATE, "upgrade-required"); // the documented retry
        awaitComplete(NEW);
        assertTrue(c.condition("Degraded").startsWith("False"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void neverApprovedAndNeverValidatedFailAtTheirDeadlinesOthersGoOnThenRetry() {
        cluster().addNodes(5, OLD);
        for (String n : List.of("n1", "n3", "n4", "n5")) {
            approve(n);
        }
        emulator.setValidates("n3", false);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, false, 0, "100%", Map.of("rebootRequiredSeconds", 600, "validationSeconds", 300)));
        Waits.until("n2 and n3 upgrade-failed, the others done", WAIT, () -> "upgrade-failed".equals(c.label("n2", NodeKeys.DRIVER_UPGRADE_STATE))
                && "upgrade-failed".equals(c.label("n3", NodeKeys.DRIVER_UPGRADE_STATE)) && c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE) == null
                && c.label("n4", NodeKeys.DRIVER_UPGRADE_STATE) == null && c.label("n5", NodeKeys.DRIVER_UPGRADE_STATE) == null);
        String f2 = c.node("n2").getMetadata().getAnnotations().get(NodeKeys.DRIVER_UPGRADE_FAILURE);
        String f3 = c.node("n3").getMetadata().getAnnotations().get(NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(f2.contains("reboot-required deadline") && f2.contains("not approved"), f2);
        assertTrue(f3.contains("validation-required deadline") && f3.contains("wedged"), f3);
        Waits.until("status lists the failed nodes", WAIT, () -> String.valueOf(c.status().get("failedNodes")).contains("n2")
                && String.valueOf(c.status().get("failedNodes")).contains("n3") && c.condition("Degraded").startsWith("True"));
        // each Event is created after the patch that fails its node (PlanWriter.patchNode), which the waits above
        // saw; a status listing a failed node may come from a plan whose patch was made stale and sent again later
        Waits.untilAsserted("a DriverUpgradeFailed Event per failed node", WAIT, () -> {
            List<String> nodeEvents = c.admin().v1().events().inNamespace("default").list().getItems().stream()
                    .filter(e -> "DriverUpgradeFailed".equals(e.getReason())).map(e -> e.getInvolvedObject().getName())
                    .sorted().toList();
            assertEquals(List.of("n2", "n3"), nodeEvents, "one Warning Event per failed node");
        });
        assertEquals(NEW, c.label("n3", NodeKeys.DRIVER_VERSION));
        // never marked done without a validation result: n3 stays failed while it does not validate
        assertEquals("upgrade-failed", c.label("n3", NodeKeys.DRIVER_UPGRADE_STATE));
        // retry: n2 relabelled upgrade-required and approved; n3's chips validate again
        approve("n2");
        setLabel("n2", NodeKeys.DRIVER_UPGRADE_STATE, "upgrade-required");
        emulator.setValidates("n3", true);
        awaitComplete(NEW);
    }

    /**
     * The control plane's wall clock jumps forward by an hour while a node reboots (the scenario of
     * itests/scenarios/reliability/clock.yaml): the rebooting deadline (1800 s) is measured with the monotonic clock,
     * so the node is not failed; no DriverUpgradeFailed Event, one reboot per node.
     */
    @Test
    void controlPlaneClockForwardWhileRebootingFailsNothing() {
        cluster().addNodes(2, OLD);
        emulator.rebootDuration = Duration.ofSeconds(600);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 1, "100%", null));
        Waits.until("a node rebooting", WAIT, () -> c.admin().nodes().list().getItems().stream().anyMatch(
                n -> "rebooting".equals(n.getMetadata().getLabels().get(NodeKeys.DRIVER_UPGRADE_STATE))));
        time.jumpWall(Duration.ofHours(1));
        awaitComplete(NEW);
        List<String> failed = c.admin().v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> "DriverUpgradeFailed".equals(e.getReason()) || "NodeUpgradeFailed".equals(e.getReason()))
                .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage()).toList();
        assertEquals(List.of(), failed, "a wall-clock step is not a missed deadline");
        assertEquals(2, emulator.reboots.get());
    }

    /**
     * The control plane's wall clock jumps back by an hour while a node waits for an approval that never comes: the
     * reboot-required deadline (600 s) still fires after 600 s of monotonic time, not 4200 s.
     */
    @Test
    void controlPlaneClockBackDoesNotStretchADeadline() {
        cluster().addNodes(1, OLD);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, false, 0, "100%", Map.of("rebootRequiredSeconds", 600)));
        Waits.until("n1 reboot-required", WAIT, () -> "reboot-required".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        time.jumpWall(Duration.ofHours(-1));
        // 600 s after the state was entered (3 s of wall time at x200); without the monotonic age, 4200 s (21 s)
        Waits.until("n1 upgrade-failed within 2000 simulated seconds of the step", Duration.ofSeconds(10),
                () -> "upgrade-failed".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        String f = c.node("n1").getMetadata().getAnnotations().get(NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(f.contains("reboot-required deadline of 600s"), f);
    }

    @Test
    void npuWorkloadHoldsItsNodeAndIsNamed() {
        cluster().addNodes(3, OLD);
        c.backend().ensureNamespace("team-a");
        c.admin().pods().inNamespace("team-a").resource(new PodBuilder().withNewMetadata().withName("train-0").endMetadata()
                .withNewSpec().withNodeName("n2").addNewContainer().withName("m").withImage("x").withNewResources()
                .addToLimits("huawei.com/Ascend910B", new Quantity("8")).endResources().endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus().build()).create();
        NodeAgentEmulator.ensureRunning(c.admin(), c.admin().pods().inNamespace("team-a").withName("train-0").get());
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 0, "100%", null));
        until("n1, n3 done, n2 held", () -> c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE) == null && NEW.equals(c.label("n1", NodeKeys.DRIVER_VERSION))
                && c.label("n3", NodeKeys.DRIVER_UPGRADE_STATE) == null && NEW.equals(c.label("n3", NodeKeys.DRIVER_VERSION))
                && c.condition("PreflightPassed").contains("team-a/train-0"));
        assertEquals("upgrade-required", c.label("n2", NodeKeys.DRIVER_UPGRADE_STATE));
        assertEquals(OLD, c.label("n2", NodeKeys.DRIVER_VERSION));
        assertTrue(c.condition("PreflightPassed").startsWith("False NpuWorkloadsPresent"), c.condition("PreflightPassed"));
        assertTrue(String.valueOf(c.status().get("heldNodes")).contains("n2"));
        // grace period 0, as the kubelet ends it: a real API server keeps a gracefully deleted pod (Terminating)
        // until the kubelet confirms, and no kubelet runs here
        c.admin().pods().inNamespace("team-a").withName("train-0").withGracePeriod(0).delete();
        awaitComplete(NEW);
        assertTrue(c.condition("PreflightPassed").startsWith("True"));
    }

    /** The tag of the 910B driver image of {@code version} on the emulator's nodes. */
    static String tag(String version) {
        return version + "-910b-6.6.0-145.0.4.135-oe2403sp3";
    }

    /** No node has an upgrade state and every driver pod is the first one (nothing deleted). */
    void assertNoNodeTouched() {
        for (var n : c.admin().nodes().list().getItems()) {
            assertNull(n.getMetadata().getLabels().get(NodeKeys.DRIVER_UPGRADE_STATE), n.getMetadata().getName());
            assertEquals(OLD, n.getMetadata().getLabels().get(NodeKeys.DRIVER_VERSION), n.getMetadata().getName());
        }
        assertEquals(0, emulator.reboots.get(), "no reboot");
        assertTrue(c.admin().apps().daemonSets().inNamespace(NodeAgentEmulator.NS).list().getItems().stream()
                .noneMatch(ds -> ds.getSpec().getTemplate().getSpec().getContainers().get(0).getImage().contains(NEW)),
                "no DaemonSet on the new target");
    }

    @Test
    void imageWhiteListWithoutTheNewTagHoldsTheRolloutUntilTheTagIsAdded() {
        cluster().addNodes(3, OLD);
        ImageWhiteLists.installCrd(c.backend());
        ImageWhiteLists.seed(c.backend(), List.of(tag(OLD)));
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 0, "100%", null));
        until("PreflightPassed=False ImageNotWhitelisted naming the tag and the command",
                () -> c.condition("PreflightPassed").startsWith("False ImageNotWhitelisted"));
        String pf = c.condition("PreflightPassed");
        assertTrue(pf.contains("driver image tags not in ImageWhiteList cpaas-system/ascend-driver spec.repoList: "
                + tag(NEW) + ";") && pf.contains("kubectl edit imagewhitelist ascend-driver -n cpaas-system"), pf);
        assertTrue(c.condition("Progressing").startsWith("False PreflightFailed"), c.condition("Progressing"));
        assertNoNodeTouched();
        ImageWhiteLists.addTags(c.admin(), List.of(tag(NEW)));
        awaitComplete(NEW);
        assertTrue(c.condition("PreflightPassed").startsWith("True"), c.condition("PreflightPassed"));
        assertEquals(List.of(tag(OLD), tag(NEW)), ImageWhiteLists.repoList(c.admin()));
    }

    @Test
    void aMalformedImageWhiteListIsAPreflightFailureAndTouchesNoNode() {
        cluster().addNodes(2, OLD);
        ImageWhiteLists.installCrd(c.backend());
        ImageWhiteLists.put(c.backend(), ImageWhiteLists.NAMESPACE, ImageWhiteLists.NAME, Map.of("repoList", tag(NEW)));
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 0, "100%", null));
        until("PreflightPassed=False ImageWhiteListInvalid naming spec.repoList",
                () -> c.condition("PreflightPassed").startsWith("False ImageWhiteListInvalid"));
        assertTrue(c.condition("PreflightPassed").contains("spec.repoList is a string"), c.condition("PreflightPassed"));
        assertNoNodeTouched();
        ImageWhiteLists.seed(c.backend(), List.of(tag(NEW)));
        awaitComplete(NEW);
    }

    @Test
    void withoutTheImageWhiteListKindTheStatusSaysTheCheckDoesNotApply() {
        cluster().addNodes(2, OLD);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 0, "100%", null));
        until("PreflightPassed=True saying the check does not apply", () -> c.condition("PreflightPassed")
                .contains("ImageWhiteList check does not apply: the cluster serves no ImageWhiteList kind"));
        awaitComplete(NEW);
    }

    @Test
    void targetChangedMidRolloutIncludingADowngradeNothingLeftHalfWay() {
        cluster().addNodes(6, OLD);
        emulator.rebootDuration = Duration.ofSeconds(300);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 2, "100%", null));
        Waits.until("two nodes rebooting", WAIT, () -> emulator.maxInFlight.get() >= 2 && c.admin().nodes().list().getItems().stream()
                .filter(n -> "rebooting".equals(n.getMetadata().getLabels().get(NodeKeys.DRIVER_UPGRADE_STATE))).count() >= 1);
        c.setDriver(driver("24.0.0", true, 2, "100%", null)); // downgrade below the loaded version
        emulator.rebootDuration = Duration.ofSeconds(60);
        awaitComplete("24.0.0");
        assertNull(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        // the DaemonSet was created from the ConfigMap's template and its whole pod template patched at the new target:
        // containers[0] the driver image, containers[1] the node agent (privileged, DRIVER_VERSION)
        var dss = c.admin().apps().daemonSets().inNamespace(NodeAgentEmulator.NS).list().getItems();
        assertEquals(1, dss.size());
        var pod = dss.get(0).getSpec().getTemplate().getSpec();
        assertTrue(pod.getContainers().get(0).getImage().contains(":24.0.0-"), pod.getContainers().get(0).getImage());
        assertEquals("node-agent", pod.getContainers().get(1).getName());
        assertTrue(pod.getContainers().get(1).getEnv().stream()
                .anyMatch(e -> "DRIVER_VERSION".equals(e.getName()) && "24.0.0".equals(e.getValue())), "DRIVER_VERSION follows the image");
        // containers[1] is the node agent beside the vendor's driver container (the chart's template)
        assertTrue(Boolean.TRUE.equals(pod.getHostPID()) && Boolean.TRUE.equals(pod.getContainers().get(1).getSecurityContext().getPrivileged()));
        assertEquals("npu-lifecycle-node-agent", pod.getServiceAccountName());
        assertEquals(8, pod.getVolumes().size(), "the template's volumes");
    }

    @Test
    void invalidSpecTouchesNothingAndNamesTheField() {
        cluster().addNodes(2, OLD);
        emulator.start();
        controller(true);
        if (ClusterBackend.REAL.equals(kind)) {
            // a real API server validates against the CRD's schema: the spec never reaches the controller
            KubernetesClientException e = assertThrows(KubernetesClientException.class,
                    () -> c.createDriver(driver("abc", true, -1, "200%", null)));
            assertEquals(422, e.getCode());
            assertTrue(e.getMessage().contains("spec.driver.version") && e.getMessage().contains(
                    "spec.driver.upgradePolicy.maxParallelUpgrades") && e.getMessage().contains(
                    "spec.driver.upgradePolicy.maxUnavailable"), e.getMessage());
        } else {
            c.createDriver(driver("abc", true, -1, "200%", null));
            Waits.until("InvalidSpec=True", WAIT, () -> c.condition("InvalidSpec").startsWith("True"));
            String m = c.condition("InvalidSpec");
            assertTrue(m.contains("spec.driver.version: 'abc'") && m.contains("spec.driver.upgradePolicy.maxParallelUpgrades: -1")
                    && m.contains("spec.driver.upgradePolicy.maxUnavailable: '200%'"), m);
        }
        assertNull(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        assertNull(c.label("n1", NodeKeys.DRIVER_COMBINATION), "nothing touched");
        assertTrue(c.admin().apps().daemonSets().inNamespace(NodeAgentEmulator.NS).list().getItems().isEmpty());
        c.putDriver(driver(NEW, true, 0, "100%", null));
        awaitComplete(NEW);
        assertTrue(c.condition("InvalidSpec").startsWith("False"));
    }

    @Test
    void pauseHoldsNewSlotsAndResumeContinues() {
        cluster().addNodes(4, OLD);
        emulator.start();
        UpgradeController uc = controller(true);
        c.createDriver(driver(NEW, true, 1, "100%", null));
        Waits.until("one node upgraded", WAIT, () -> NEW.equals(c.label("n1", NodeKeys.DRIVER_VERSION)));
        uc.setPaused(true);
        assertTrue(uc.snapshot().paused(), "the new state at once, before any reconcile");
        Waits.until("Progressing=False Paused, status.paused", WAIT, () -> c.condition("Progressing").startsWith("False Paused")
                && Boolean.TRUE.equals(c.status().get("paused")));
        Waits.until("in-flight nodes finish", WAIT, () -> c.admin().nodes().list().getItems().stream()
                .noneMatch(n -> { String s = n.getMetadata().getLabels().get(NodeKeys.DRIVER_UPGRADE_STATE);
                    return s != null && !"upgrade-required".equals(s); }));
        int reboots = emulator.reboots.get();
        assertTrue(reboots < 4, "paused before the end");
        assertTrue(uc.snapshot().paused());
        uc.setPaused(false);
        assertTrue(!uc.snapshot().paused(), "resumed at once");
        awaitComplete(NEW);
    }

    /**
     * Informers lost mid-rollout: the controller is restarted (as the component does on a new configuration) while the
     * API server answers every request 503, so its informers' first lists fail and fabric8 stops them; at each resync
     * the controller rebuilds them, and once the API server answers again the rollout completes. Mock only: a real
     * kube-apiserver has no outage switch (its restart, which fabric8's watches ride through:
     * {@link #apiServerRestartedMidRolloutTheControllerGoesOnAndTheRolloutCompletes}).
     */
    @Test
    void informerLossMidRolloutCompletes() {
        org.junit.jupiter.api.Assumptions.assumeTrue(ClusterBackend.EMBEDDED.equals(kind),
                "the outage switch of the mock");
        cluster().addNodes(4, OLD);
        emulator.start();
        UpgradeController first = controller(true);
        c.createDriver(driver(NEW, true, 1, "100%", null));
        Waits.until("first node upgraded", WAIT, () -> NEW.equals(c.label("n1", NodeKeys.DRIVER_VERSION)));
        UpgradeController uc = unstarted(cfg());
        c.embedded().faults().startOutage(EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
        first.close();
        uc.start();
        uc.setLeader(true);
        Waits.until("the stopped informers rebuilt during the outage", WAIT,
                () -> uc.writeCounts().get("informer-rebuilds") >= 1);
        c.embedded().faults().endOutage();
        awaitComplete(NEW);
        assertEquals(4, emulator.reboots.get(), "one reboot per node");
    }

    @Test
    void aNonLeaderNeverWrites() {
        cluster().addNodes(2, OLD);
        emulator.start();
        UpgradeController follower = controller(false);
        c.createDriver(driver(NEW, true, 0, "100%", null));
        Waits.until("follower computed the view", WAIT, () -> "25.5.0".equals(follower.snapshot().target()));
        assertNull(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        assertTrue(c.status().isEmpty());
        if (ClusterBackend.EMBEDDED.equals(kind)) {
            // the mock counts the requests of each client; a real server has no such counter (no audit log here)
            assertEquals(0, c.requestsOf("npu-controller")[1], "no write request from a follower");
        }
    }
    void assumeReal(String why) {
        org.junit.jupiter.api.Assumptions.assumeTrue(ClusterBackend.REAL.equals(kind), why);
    }

    /**
     * kube-apiserver killed and started again (etcd kept) after the first node upgraded: the controller's and the
     * emulator's informers recover, nothing is left stuck, every node reboots once and the rollout completes.
     */
    @Test
    void apiServerRestartedMidRolloutTheControllerGoesOnAndTheRolloutCompletes() {
        assumeReal("a kube-apiserver restart needs the real server (the mock has no process to restart)");
        // 100x: the restart (1 to 6 s of wall time on a loaded machine) stays inside the 900 s deadline of the
        // state a node is in meanwhile (cordon-required), which is not what this test is about
        cluster(100).addNodes(4, OLD);
        emulator.start();
        controller(true);
        c.createDriver(driver(NEW, true, 1, "100%", null));
        Waits.until("first node upgraded", WAIT, () -> NEW.equals(c.label("n1", NodeKeys.DRIVER_VERSION)));
        c.real().restartApiServer();
        awaitComplete(NEW);
        assertEquals(4, emulator.reboots.get(), "one reboot per node");
        List<String> failed = c.admin().v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> "DriverUpgradeFailed".equals(e.getReason())).map(e -> e.getInvolvedObject().getName()).toList();
        assertEquals(List.of(), failed);
    }

    /**
     * Another client patches every Node all through the rollout, so the controller's writes (merge patches guarded
     * by the resourceVersion its informer holds) meet real {@code 409 Conflict}s between its read and its write:
     * it retries from the fresher object, the rollout completes, and the other writer's values are all kept.
     */
    @Test
    void aConcurrentWriterMakesRealConflictsTheControllerRetriesNothingLost() throws Exception {
        assumeReal("a 409 from a real concurrent writer needs the real server's resourceVersion checks");
        cluster().addNodes(3, OLD);
        emulator.start();
        UpgradeController uc = controller(true);
        io.fabric8.kubernetes.client.KubernetesClient other = c.client("npu-test-writer");
        java.util.concurrent.atomic.AtomicInteger round = new java.util.concurrent.atomic.AtomicInteger();
        Map<String, String> lastWritten = new java.util.concurrent.ConcurrentHashMap<>();
        // one writer per node, back to back (a few ms apart): nearly every write of the controller races one, so
        // 409s are met in every run (at one write per node every 20 ms, a run without any was 1 in 3)
        java.util.concurrent.ScheduledExecutorService writer = java.util.concurrent.Executors.newScheduledThreadPool(3);
        try {
            for (int n = 1; n <= 3; n++) {
                String node = "n" + n;
                writer.scheduleWithFixedDelay(() -> {
                    String v = String.valueOf(round.incrementAndGet());
                    other.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                            "{\"metadata\":{\"annotations\":{\"example.com/touched\":\"" + v + "\"}}}");
                    lastWritten.put(node, v);
                }, 0, 1, java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            c.createDriver(driver(NEW, true, 1, "100%", null));
            awaitComplete(NEW);
        } finally {
            writer.shutdown();
            assertTrue(writer.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS));
        }
        assertTrue(uc.writeCounts().get("conflicts(409)") > 0, "real conflicts met: " + uc.writeCounts());
        for (int i = 1; i <= 3; i++) {
            assertEquals(lastWritten.get("n" + i), c.annotation("n" + i, "example.com/touched"),
                    "the other writer's last value on n" + i);
        }
        assertEquals(3, emulator.reboots.get(), "one reboot per node");
    }
}
