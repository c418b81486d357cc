package io.npulifecycle.upgrade.internal.drain;

import io.npulifecycle.upgrade.internal.cluster.RolloutCases;

import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;
import io.npulifecycle.upgrade.internal.plan.EventSpec;
import io.npulifecycle.upgrade.internal.plan.NodeWrites;
import io.npulifecycle.upgrade.internal.cluster.UpgradeController;
import io.npulifecycle.upgrade.internal.plan.NodeFacts;

import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.upgrade.spec.DrainSettings;

import static io.npulifecycle.upgrade.testing.NodeAgentEmulator.driver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.testing.support.ClusterFixture;
import io.npulifecycle.testing.support.ScaledTestClock;
import io.npulifecycle.testing.support.Waits;
import io.npulifecycle.upgrade.testing.NodeAgentEmulator;

/**
 * The upgrade drain on a real kube-apiserver (the Eviction API and PodDisruptionBudgets exist only there; its
 * kube-controller-manager runs the disruption controller): cordon, evictions with backoff, the PDB named when it
 * blocks, the timeout, uncordon only of what the controller cordoned, controller-less pods, DaemonSet and mirror pods.
 * The controller runs under its ServiceAccount (the chart's RBAC); its eviction requests are counted at its
 * HTTP client. A small kubelet ends workload pods deleted with a grace period; the emulator plays the node agents.
 * Clock: 200 simulated seconds per wall second.
 */
public class DrainTest {

    static final String OLD = "24.1.0";
    static final String NEW = "25.5.0";
    static final String NS = "ml";
    static final Duration WAIT = Duration.ofSeconds(40);

    public ClusterFixture c;
    ScaledTestClock time;
    NodeAgentEmulator emulator;
    UpgradeController controller;
    final AtomicInteger evictions = new AtomicInteger();
    final ScheduledExecutorService kubelet = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void close() {
        kubelet.shutdownNow();
        if (c != null) {
            c.close();
        }
    }

    void cluster(int nodes) {
        c = ClusterFixture.start(ClusterBackend.REAL);
        time = c.own(new ScaledTestClock(200));
        emulator = NodeAgentEmulator.on(c, time);
        emulator.addNodes(nodes, OLD);
        c.backend().ensureNamespace(NS);
        runKubelet(kubelet, c);
    }

    /**
     * The kubelet of the workload pods, every 100 ms on {@code kubelet}: a pod of {@value #NS} deleted with a grace
     * period (an eviction) ends at once.
     */
    public static void runKubelet(ScheduledExecutorService kubelet, ClusterFixture c) {
        kubelet.scheduleWithFixedDelay(() -> {
            try {
                for (Pod p : c.admin().pods().inNamespace(NS).list().getItems()) {
                    if (p.getMetadata().getDeletionTimestamp() != null) {
                        c.admin().pods().inNamespace(NS).withName(p.getMetadata().getName()).withGracePeriod(0)
                                .delete();
                    }
                }
            } catch (KubernetesClientException e) {
                // the server closes with the test
            }
        }, 0, 100, TimeUnit.MILLISECONDS);
    }

    void start(Map<String, Object> drain) {
        start(drain, true, Map.of());
    }

    /**
     * @param drain {@code upgradePolicy.drain}
     * @param auto {@code autoUpgrade}
     * @param more further {@code upgradePolicy} fields (maintenanceWindow, blockingPodSelector, ...)
     */
    void start(Map<String, Object> drain, boolean auto, Map<String, Object> more) {
        emulator.start();
        controller = startLeader(c, time, evictions);
        Map<String, Object> spec = driver(NEW, auto, 1, "100%", null);
        @SuppressWarnings("unchecked")
        Map<String, Object> up = (Map<String, Object>) spec.get("upgradePolicy");
        up.put("drain", drain);
        up.putAll(more);
        c.createDriver(spec);
    }

    /**
     * A started, leading controller under its ServiceAccount (the chart's RBAC), without leader election or
     * registry checks, closed with {@code c}.
     *
     * @param evictions counts the controller's eviction requests, at its HTTP client
     */
    public static UpgradeController startLeader(ClusterFixture c, ScaledTestClock time, AtomicInteger evictions) {
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "",
                d.reconcileDelay(), d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(),
                d.renewDeadline(), d.retryPeriod(), "t");
        KubernetesClient client = controlPlaneClient(c, evictions);
        UpgradeController controller = c.own(new UpgradeController(client, time, cfg, null));
        controller.start();
        controller.setLeader(true);
        return controller;
    }

    /**
     * A client under the control plane's ServiceAccount (the chart's RBAC), closed with {@code c}.
     *
     * @param evictions counts its eviction requests ({@code POST …/eviction})
     */
    static KubernetesClient controlPlaneClient(ClusterFixture c, AtomicInteger evictions) {
        String token = c.serviceAccountToken(RolloutCases.CONTROL_PLANE_SA, null);
        return c.own(c.real().newTokenClient(token, k -> k.setUserAgent("npu-controller"),
                h -> h.addOrReplaceInterceptor("count-evictions", new Interceptor() {
                    @Override
                    public void before(io.fabric8.kubernetes.client.http.BasicBuilder b,
                            io.fabric8.kubernetes.client.http.HttpRequest r, Interceptor.RequestTags t) {
                        if ("POST".equals(r.method()) && r.uri().getPath().endsWith("/eviction")) {
                            evictions.incrementAndGet();
                        }
                    }
                })));
    }

    static Map<String, Object> drain(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /** A Ready pod on {@code node}; {@code owner}: a ReplicaSet of one replica owns it, else a bare pod. */
    public Pod pod(String name, String node, boolean owner, Map<String, String> labels) {
        return pod(name, node, owner, labels, 0);
    }

    /** The same, requesting (and limited to) {@code npus} {@code huawei.com/Ascend910} chips when above 0. */
    public Pod pod(String name, String node, boolean owner, Map<String, String> labels, int npus) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withLabels(labels)
                .endMetadata().withNewSpec().withNodeName(node).withTerminationGracePeriodSeconds(30L)
                .addNewContainer().withName("main").withImage("registry.local/train:1").endContainer().endSpec();
        if (npus > 0) {
            Map<String, io.fabric8.kubernetes.api.model.Quantity> q = Map.of("huawei.com/Ascend910",
                    new io.fabric8.kubernetes.api.model.Quantity(String.valueOf(npus)));
            b.editSpec().editFirstContainer().withNewResources().withRequests(q).withLimits(q).endResources()
                    .endContainer().endSpec();
        }
        if (owner) {
            ReplicaSet rs = c.admin().apps().replicaSets().inNamespace(NS).resource(new ReplicaSetBuilder()
                    .withNewMetadata().withName(name).withNamespace(NS).endMetadata().withNewSpec().withReplicas(1)
                    .withNewSelector().withMatchLabels(labels).endSelector().withNewTemplate().withNewMetadata()
                    .withLabels(labels).endMetadata().withNewSpec().addNewContainer().withName("main")
                    .withImage("registry.local/train:1").endContainer().endSpec().endTemplate().endSpec().build())
                    .create();
            b.editMetadata().withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1")
                    .withKind("ReplicaSet").withName(name).withUid(rs.getMetadata().getUid()).withController(true)
                    .build()).endMetadata();
        }
        return ready(c.admin().pods().inNamespace(NS).resource(b.build()).create());
    }

    Pod ready(Pod created) {
        created.setStatus(new PodStatusBuilder().withPhase("Running").addNewCondition().withType("Ready")
                .withStatus("True").endCondition().build());
        return c.admin().pods().inNamespace(created.getMetadata().getNamespace()).resource(created).updateStatus();
    }

    public void pdb(String name, int minAvailable, Map<String, String> selector) {
        c.admin().policy().v1().podDisruptionBudget().inNamespace(NS).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName(name).withNamespace(NS).endMetadata().withNewSpec()
                .withMinAvailable(new IntOrString(minAvailable)).withNewSelector().withMatchLabels(selector)
                .endSelector().endSpec().build()).create();
        Waits.until("the disruption controller computes " + name, WAIT, () -> {
            var p = c.admin().policy().v1().podDisruptionBudget().inNamespace(NS).withName(name).get();
            return p.getStatus() != null && p.getStatus().getObservedGeneration() != null;
        });
    }

    boolean unschedulable(String node) {
        return Boolean.TRUE.equals(c.node(node).getSpec().getUnschedulable());
    }

    void cordonAsAdmin(String node) {
        c.admin().nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"unschedulable\":true}}");
    }

    List<String> events(String reason) {
        return c.events("default", reason).stream().map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
                .toList();
    }

    void until(String what, java.util.function.BooleanSupplier condition) {
        Waits.until(what, WAIT, condition, () -> "status " + c.status() + "; n1 " + c.node("n1").getMetadata()
                .getLabels() + " " + c.node("n1").getMetadata().getAnnotations() + " unschedulable "
                + c.node("n1").getSpec().getUnschedulable() + "; writes " + controller.writeCounts()
                + "; evictions " + evictions.get());
    }

    @Test
    void aBlockingBudgetBacksOffTimesOutAndFailsTheNodeUncordonedNotRebooted() {
        cluster(1);
        pod("train-0", "n1", true, Map.of("job", "train"));
        pdb("train", 1, Map.of("job", "train"));
        start(drain("timeoutSeconds", 600));
        until("n1 upgrade-failed", () -> "upgrade-failed".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        String failure = c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(failure.contains("drain-required") && failure.contains("ml/train-0")
                && failure.contains("PodDisruptionBudget ml/train"), failure);
        // 600 s of backoff 5, 10, 20, 30, 30, ... s: at most 23 attempts, not a loop; at least 3 however slow the
        // machine (at x200 the 600 s are 3 s of wall clock; a loaded machine's slow reconciles fit fewer attempts
        // into a drain of a fraction of a second)
        assertTrue(evictions.get() >= 3 && evictions.get() <= 24, "eviction calls: " + evictions.get());
        until("n1 uncordoned", () -> !unschedulable("n1")
                && c.annotation("n1", NodeKeys.CORDONED_BY) == null);
        assertEquals(0, emulator.reboots.get(), "a node whose drain failed is not rebooted");
        assertEquals(OLD, c.label("n1", NodeKeys.DRIVER_VERSION));
        assertNotNull(c.admin().pods().inNamespace(NS).withName("train-0").get(), "the budget kept the pod");
        assertTrue(events("Cordoned").toString().contains("n1"), events("Cordoned").toString());
        assertTrue(events("DrainStarted").toString().contains("ml/train-0"), events("DrainStarted").toString());
        assertTrue(events("DrainBlocked").toString().contains("PodDisruptionBudget ml/train"),
                events("DrainBlocked").toString());
        // each Event follows the patch it announces (PlanWriter.patchNode, CordonGuard.uncordon), and the status of
        // the failing reconcile may be deferred by the status interval: the uncordon waited for can be the last
        // patch while its Event, and the status naming the failure, are still to come
        Waits.untilAsserted("DrainFailed, Uncordoned and failedNodes naming the budget", WAIT, () -> {
            assertTrue(events("DrainFailed").toString().contains("ml/train-0"), events("DrainFailed").toString());
            assertTrue(events("Uncordoned").toString().contains("n1"), events("Uncordoned").toString());
            assertTrue(String.valueOf(c.status().get("failedNodes")).contains("PodDisruptionBudget ml/train"));
        });
    }

    @Test
    void aBudgetThatAllowsOnceAReplicaIsAddedLetsTheUpgradeComplete() {
        cluster(1);
        pod("train-0", "n1", true, Map.of("job", "train"));
        pdb("train", 1, Map.of("job", "train"));
        start(drain("timeoutSeconds", 3600));
        until("the drain blocked and named in the status", () -> String.valueOf(c.status().get("drainingNodes"))
                .contains("PodDisruptionBudget ml/train"));
        until("and in the UpgradeOrchestrator MBean's view", () -> controller.snapshot().draining().stream()
                .anyMatch(x -> x.startsWith("n1: ") && x.contains("PodDisruptionBudget ml/train")));
        assertTrue(unschedulable("n1"));
        assertEquals(NodeKeys.CORDONED_BY_VALUE, c.annotation("n1", NodeKeys.CORDONED_BY));
        int before = evictions.get();
        pod("train-1", "cpu-0", true, Map.of("job", "train")); // a second replica elsewhere: one may go
        until("n1 upgraded", () -> emulator.allDone(NEW));
        assertTrue(evictions.get() > before);
        assertNull(c.admin().pods().inNamespace(NS).withName("train-0").get(), "evicted and gone");
        until("n1 uncordoned", () -> !unschedulable("n1") && c.annotation("n1", NodeKeys.CORDONED_BY) == null);
        assertEquals(1, emulator.reboots.get());
    }

    @Test
    void aNodeTheAdminCordonedStaysCordonedThroughUpgradeAndFailure() {
        cluster(2);
        cordonAsAdmin("n1");
        cordonAsAdmin("n2");
        pod("train-0", "n2", true, Map.of("job", "train"));
        pdb("train", 1, Map.of("job", "train"));
        start(drain("timeoutSeconds", 120));
        until("n1 upgraded, n2 failed", () -> NEW.equals(c.label("n1", NodeKeys.DRIVER_VERSION))
                && c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE) == null
                && "upgrade-failed".equals(c.label("n2", NodeKeys.DRIVER_UPGRADE_STATE)));
        assertTrue(unschedulable("n1"), "the admin's cordon outlives the upgrade");
        assertTrue(unschedulable("n2"), "and the failure");
        assertNull(c.annotation("n1", NodeKeys.CORDONED_BY));
        assertNull(c.annotation("n2", NodeKeys.CORDONED_BY));
        assertEquals(List.of(), events("Cordoned"));
        assertEquals(List.of(), events("Uncordoned"));
    }

    @Test
    void aPodWithoutAControllerBlocksTheDrainWithoutForce() {
        cluster(1);
        pod("notebook", "n1", false, Map.of("app", "notebook"));
        start(drain("timeoutSeconds", 60));
        until("n1 upgrade-failed", () -> "upgrade-failed".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        assertTrue(c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE).contains("ml/notebook (no controller"),
                c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE));
        assertNotNull(c.admin().pods().inNamespace(NS).withName("notebook").get());
        assertEquals(0, evictions.get(), "a bare pod is not evicted: the Eviction API does not guard it");
        assertEquals(0, emulator.reboots.get());
        until("n1 uncordoned", () -> !unschedulable("n1"));
    }

    /** {@code force} admits a pod without a controller, and evicts it through the Eviction API like any other. */
    @Test
    void aPodWithoutAControllerIsEvictedWithForce() {
        cluster(1);
        pod("notebook", "n1", false, Map.of("app", "notebook"));
        start(drain("force", true));
        until("n1 upgraded", () -> emulator.allDone(NEW));
        assertNull(c.admin().pods().inNamespace(NS).withName("notebook").get());
        assertEquals(1, evictions.get(), "evicted, not deleted: the Eviction API decided");
        assertEquals(1, emulator.reboots.get());
        until("n1 uncordoned", () -> !unschedulable("n1"));
    }

    /**
     * {@code force} as {@code kubectl drain --force}: a bare pod that a PodDisruptionBudget protects is evicted
     * through the Eviction API, which refuses; the budget is named, the pod stays, the drain times out and the node
     * is not rebooted.
     */
    @Test
    void forceStillLetsTheBudgetOfABarePodHold() {
        cluster(1);
        pod("notebook", "n1", false, Map.of("app", "notebook"));
        pdb("notebook", 1, Map.of("app", "notebook"));
        start(drain("force", true, "timeoutSeconds", 120));
        until("n1 upgrade-failed", () -> "upgrade-failed".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        String failure = c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(failure.contains("ml/notebook (PodDisruptionBudget ml/notebook allows no disruption now)"),
                failure);
        assertTrue(evictions.get() >= 2, "evicted (and refused), never deleted: " + evictions.get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("notebook").get(), "the budget kept the bare pod");
        assertEquals(0, emulator.reboots.get());
        assertTrue(events("DrainBlocked").toString().contains("PodDisruptionBudget ml/notebook"),
                events("DrainBlocked").toString());
    }

    /**
     * An accepted eviction is not sent again while the informer's copy of the pod still shows it running (the copy is
     * late: the API server answers an eviction only once the pod is deleted or terminating); a pod recreated under the
     * same name (a new UID) is evicted. This is the order of a reconcile that runs before the pod's deletion reaches
     * the informer, which sent a second eviction for one pod.
     */
    @Test
    void anAcceptedEvictionIsNotSentAgainForALateInformerCopy() {
        cluster(1);
        Pod running = pod("notebook", "n1", true, Map.of("app", "notebook"));
        KubernetesClient client = controlPlaneClient(c, evictions);
        Drainer drainer = new Drainer(client, time, new NodeWrites() {
            @Override
            public void nodeEvent(EventSpec e) {
            }

            @Override
            public void count(String kind) {
            }

            @Override
            public void patchedElsewhere(String node, String fromVersion, Node after) {
            }
        }, () -> true);
        DrainSettings settings = DrainSettings.DEFAULT;
        assertNull(drainer.drain("n1", List.of(running), settings));
        assertEquals(1, evictions.get());
        assertNull(drainer.drain("n1", List.of(running), settings), "nothing waits on a backoff");
        assertEquals(1, evictions.get(), "the late copy of an evicted pod is not evicted again");
        assertEquals(List.of("ml/notebook (terminating)"), drainer.describe(List.of(running)));
        until("the evicted pod is gone", () -> c.admin().pods().inNamespace(NS).withName("notebook").get() == null);
        Pod again = ready(c.admin().pods().inNamespace(NS).resource(new PodBuilder(running).editMetadata()
                .withUid(null).withResourceVersion(null).withCreationTimestamp(null).endMetadata().withStatus(null)
                .build()).create());
        drainer.drain("n1", List.of(again), settings);
        assertEquals(2, evictions.get(), "a pod recreated under the name is another pod");
    }

    /** {@code disableEviction} deletes instead of evicting: the budget of the bare pod is not consulted. */
    @Test
    void disableEvictionDeletesTheBarePodWithoutAskingItsBudget() {
        cluster(1);
        pod("notebook", "n1", false, Map.of("app", "notebook"));
        pdb("notebook", 1, Map.of("app", "notebook"));
        start(drain("force", true, "disableEviction", true));
        until("n1 upgraded", () -> emulator.allDone(NEW));
        assertNull(c.admin().pods().inNamespace(NS).withName("notebook").get());
        assertEquals(0, evictions.get(), "deleted, no eviction sent");
        assertTrue(controller.writeCounts().get("pod-delete-no-eviction") >= 1, controller.writeCounts().toString());
        assertEquals(1, emulator.reboots.get());
    }

    /**
     * Every version of a Node the API server had, as its watch delivered them: the state label, whether it was
     * unschedulable and whether it carried our cordon record. A watch delivers each change in order, so a write order
     * that showed the label without our cordon's release first would be seen here.
     */
    static final class NodeHistory implements AutoCloseable {
        record Seen(String state, boolean unschedulable, boolean record, boolean tainted) {
        }

        final List<Seen> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final io.fabric8.kubernetes.client.Watch watch;

        NodeHistory(ClusterFixture c, String node) {
            watch = c.admin().nodes().withName(node).watch(new io.fabric8.kubernetes.client.Watcher<>() {
                @Override
                public void eventReceived(Action action, io.fabric8.kubernetes.api.model.Node n) {
                    Map<String, String> l = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
                    Map<String, String> a = n.getMetadata().getAnnotations() == null ? Map.of()
                            : n.getMetadata().getAnnotations();
                    seen.add(new Seen(l.get(NodeKeys.DRIVER_UPGRADE_STATE), n.getSpec() != null
                            && Boolean.TRUE.equals(n.getSpec().getUnschedulable()),
                            NodeKeys.CORDONED_BY_VALUE.equals(a.get(NodeKeys.CORDONED_BY)),
                            NodeFacts.tainted(n)));
                }

                @Override
                public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
                }
            });
        }

        /** @return the versions that showed no state label, or upgrade-failed, while our cordon was on the node */
        List<Seen> cordonedByUsWhenEmptyOrFailed() {
            return seen.stream().filter(x -> x.unschedulable() && x.record()
                    && (x.state() == null || "upgrade-failed".equals(x.state()))).toList();
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    /**
     * Empty means done: through the whole upgrade (cordon, drain, reboot, validation), no version of the Node shows
     * an empty state label while our cordon is on it; the cordon is released first, then the label goes.
     */
    @Test
    void theStateLabelIsEmptyOnlyOnceOurCordonIsReleased() {
        cluster(1);
        NodeHistory history = c.own(new NodeHistory(c, "n1"));
        pod("train-0", "n1", true, Map.of("job", "train"));
        start(drain());
        until("n1 upgraded and uncordoned", () -> emulator.allDone(NEW) && !unschedulable("n1"));
        Waits.until("the watch saw the last version", WAIT, () -> !history.seen.isEmpty()
                && history.seen.get(history.seen.size() - 1).state() == null);
        assertTrue(history.seen.stream().anyMatch(x -> "drain-required".equals(x.state()) && x.unschedulable()
                && x.record()), "cordoned by us for the drain: " + history.seen);
        assertEquals(List.of(), history.cordonedByUsWhenEmptyOrFailed(), "seen: " + history.seen);
        int lastCordoned = -1;
        for (int i = 0; i < history.seen.size(); i++) {
            lastCordoned = history.seen.get(i).unschedulable() ? i : lastCordoned;
        }
        // the agent's validation may come in the write that ends the reboot (rebooting -> done): the label held is
        // whichever in-flight state the node was in
        assertNotNull(history.seen.get(lastCordoned + 1).state(), "uncordoned first, the label still set: "
                + history.seen);
        Waits.untilAsserted("one Uncordoned Event", WAIT, () -> assertEquals(1, events("Uncordoned").size(),
                events("Uncordoned").toString()));
    }

    /**
     * The recovery's taint holds the label too: a node whose boot had not validated when a wedge was suppressed keeps
     * the taint until it validates. Here that boot is the upgrade's: once it validates, the recovery's release
     * removes the taint and gives our cordon back in one patch (the upgrade waits for it), and only then the label
     * goes.
     */
    @Test
    void theStateLabelIsEmptyOnlyOnceTheRecoveryTaintIsGoneToo() {
        cluster(1);
        emulator.setValidates("n1", false);
        NodeHistory history = c.own(new NodeHistory(c, "n1"));
        start(drain(), true, Map.of("deadlines", Map.of("validationSeconds", 0)));
        until("n1 rebooted, not validated yet", () -> "validation-required".equals(c.label("n1",
                NodeKeys.DRIVER_UPGRADE_STATE)) && unschedulable("n1"));
        c.admin().nodes().withName("n1").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"taints\":[{"
                + "\"key\":\"" + NodeKeys.NPU_UNHEALTHY_TAINT + "\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]}}");
        until("the recovery waits for the validation", () -> String.valueOf(c.status().get("recoveringNodes"))
                .contains("waiting for the driver validation"));
        emulator.setValidates("n1", true);
        until("n1 done, uncordoned, untainted", () -> c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE) == null
                && !unschedulable("n1") && !tainted("n1"));
        Waits.until("the watch saw the last version", WAIT, () -> !history.seen.isEmpty()
                && history.seen.get(history.seen.size() - 1).state() == null);
        assertTrue(history.seen.stream().noneMatch(x -> x.state() == null && (x.tainted() || x.unschedulable()
                && x.record())), "seen: " + history.seen);
        boolean released = false;
        for (int i = 1; i < history.seen.size(); i++) {
            DrainTest.NodeHistory.Seen before = history.seen.get(i - 1);
            DrainTest.NodeHistory.Seen after = history.seen.get(i);
            released |= before.tainted() && before.unschedulable() && !after.tainted() && !after.unschedulable()
                    && after.state() != null;
        }
        assertTrue(released, "taint and cordon released in one write, the label still set: " + history.seen);
    }

    boolean tainted(String node) {
        return NodeFacts.tainted(c.node(node));
    }

    /** Likewise a node reads upgrade-failed only once our cordon is released (a budget fails its drain). */
    @Test
    void upgradeFailedIsWrittenOnlyOnceOurCordonIsReleased() {
        cluster(1);
        NodeHistory history = c.own(new NodeHistory(c, "n1"));
        pod("train-0", "n1", true, Map.of("job", "train"));
        pdb("train", 1, Map.of("job", "train"));
        start(drain("timeoutSeconds", 60));
        until("n1 upgrade-failed and uncordoned", () -> "upgrade-failed".equals(c.label("n1",
                NodeKeys.DRIVER_UPGRADE_STATE)) && !unschedulable("n1"));
        Waits.until("the watch saw upgrade-failed", WAIT, () -> history.seen.stream()
                .anyMatch(x -> "upgrade-failed".equals(x.state())));
        assertEquals(List.of(), history.cordonedByUsWhenEmptyOrFailed(), "seen: " + history.seen);
        assertTrue(c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE).contains("missed the drain-required deadline"),
                c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE));
    }

    /**
     * Someone uncordons the node while its drain is blocked by a budget: the person is respected. The node is not
     * cordoned again and no pod is evicted from it any more; it is upgrade-failed (its slot given back), the reason
     * says what happened and how to retry, Events DrainFailed and DriverUpgradeFailed, our record removed, no reboot.
     */
    @Test
    void aNodeUncordonedDuringItsDrainFailsAndIsNeitherDrainedNorCordonedAgain() {
        cluster(1);
        pod("train-0", "n1", true, Map.of("job", "train"));
        pdb("train", 1, Map.of("job", "train"));
        start(drain("timeoutSeconds", 3600));
        until("the drain blocked by the budget", () -> events("DrainBlocked").toString()
                .contains("PodDisruptionBudget ml/train") && unschedulable("n1"));
        c.admin().nodes().withName("n1").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"unschedulable\":null}}"); // as kubectl uncordon
        until("n1 upgrade-failed", () -> "upgrade-failed".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        String failure = c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(failure.startsWith("uncordoned during its drain: spec.unschedulable was cleared by someone other "
                + "than npu-lifecycle") && failure.contains("kubectl label node n1 "
                        + "npu.openfuyao.com/driver-upgrade-state=upgrade-required --overwrite"), failure);
        assertNull(c.annotation("n1", NodeKeys.CORDONED_BY), "our stale record removed");
        int after = evictions.get();
        long reconciles = controller.writeCounts().get("reconciles");
        // 20 reconciles later (resyncs every 10 simulated seconds: beyond the 30 s eviction backoff)
        Waits.until("20 reconciles more", WAIT, () -> controller.writeCounts().get("reconciles") >= reconciles + 20);
        assertEquals(after, evictions.get(), "nothing evicted from a schedulable node");
        assertTrue(!unschedulable("n1"), "not cordoned again");
        assertEquals("upgrade-failed", c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        assertEquals(0, emulator.reboots.get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("train-0").get());
        assertEquals(1, events("Cordoned").size(), "cordoned once: " + events("Cordoned"));
        Waits.untilAsserted("DrainFailed and DriverUpgradeFailed say it", WAIT, () -> {
            assertTrue(events("DrainFailed").toString().contains("n1: drain stopped for the driver upgrade to " + NEW
                    + ": the node was uncordoned by someone else"), events("DrainFailed").toString());
            assertTrue(events("DriverUpgradeFailed").toString().contains("uncordoned during its drain"),
                    events("DriverUpgradeFailed").toString());
            assertTrue(String.valueOf(c.status().get("failedNodes")).contains("uncordoned during its drain"));
        });
    }

    @Test
    void daemonSetMirrorAndControlPlanePodsAreNeverEvicted() {
        cluster(1);
        Pod ds = new PodBuilder().withNewMetadata().withName("logs-n1").withNamespace(NS).withOwnerReferences(
                new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("DaemonSet").withName("logs")
                        .withUid("00000000-0000-0000-0000-000000000001").withController(true).build())
                .endMetadata().withNewSpec().withNodeName("n1").addNewContainer().withName("c").withImage("logs:1")
                .endContainer().endSpec().build();
        ready(c.admin().pods().inNamespace(NS).resource(ds).create());
        Pod mirror = new PodBuilder().withNewMetadata().withName("etcd-n1").withNamespace(NS)
                .withAnnotations(Map.of(DrainScope.MIRROR_ANNOTATION, "abc")).endMetadata().withNewSpec()
                .withNodeName("n1").addNewContainer().withName("c").withImage("etcd:1").endContainer().endSpec()
                .build();
        ready(c.admin().pods().inNamespace(NS).resource(mirror).create());
        // a replica of npu-lifecycle's own control plane (the chart's labels), with emptyDir volumes as the chart's:
        // never evicted (nor does its emptyDir block the drain), else nobody would be left to uncordon the node
        Pod controlPlane = new PodBuilder().withNewMetadata().withName("npu-lifecycle-control-plane-x").withNamespace(NS)
                .withLabels(Map.of("app", "npu-lifecycle-control-plane", "app.kubernetes.io/part-of", "npu-lifecycle"))
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("ReplicaSet")
                        .withName("npu-lifecycle-control-plane").withUid("00000000-0000-0000-0000-000000000002")
                        .withController(true).build()).endMetadata().withNewSpec().withNodeName("n1")
                .addNewVolume().withName("home").withNewEmptyDir().endEmptyDir().endVolume()
                .addNewContainer().withName("c").withImage("control-plane:1").endContainer().endSpec().build();
        ready(c.admin().pods().inNamespace(NS).resource(controlPlane).create());
        start(drain());
        until("n1 upgraded", () -> emulator.allDone(NEW));
        assertEquals(0, evictions.get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("logs-n1").get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("etcd-n1").get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("npu-lifecycle-control-plane-x").get());
        assertTrue(events("Cordoned").toString().contains("n1"));
        until("n1 uncordoned", () -> !unschedulable("n1"));
    }

    /** Steps the wall clock (not the monotonic one) forward to {@code t}, as an operator setting the date would. */
    void jumpTo(String t) {
        time.jumpWall(Duration.between(time.now(), java.time.Instant.parse(t)));
    }

    /**
     * {@code maintenanceWindow} (every day 06:00-07:00 UTC; the clock starts at 2026-12-01T00:00Z and is stepped to
     * each edge): closed at the start, so no slot and the node is listed as waiting; at the opening it is cordoned,
     * drained, its driver pod restarted and it stages, carrying the window's close; the window closes before anyone
     * approved its reboot: the slot is released ({@code reboot-deferred}, Event {@code OutsideMaintenanceWindow}) and
     * it is uncordoned; an approval then reboots nothing while the window is closed; at the next day's opening it is
     * cordoned and drained again and the approval reboots it, uncordoned at the end.
     */
    @Test
    void aClosedMaintenanceWindowHoldsTheRebootUntilItOpensAgain() {
        cluster(1);
        start(drain(), false, Map.of("maintenanceWindow", Map.of("startTime", "06:00", "endTime", "07:00")));
        until("n1 waits for the window", () -> String.valueOf(c.status().get("waitingForWindow")).contains(
                "maintenance window every day 06:00-07:00 UTC closed; opens at 2026-12-01T06:00:00Z"));
        // the status comes from the plan whose patch sets the label; a patch made stale by the node agent's newer
        // write is sent again by the next reconcile, while that status is written: the label may follow it
        Waits.untilAsserted("n1 upgrade-required", WAIT,
                () -> assertEquals("upgrade-required", c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        assertTrue(!unschedulable("n1") && events("Cordoned").isEmpty(), "no slot outside the window");
        until("the UpgradeOrchestrator MBean's view names the wait", () -> controller.snapshot().waitingForWindow()
                .contains("n1: maintenance window every day 06:00-07:00 UTC closed; opens at 2026-12-01T06:00:00Z"));

        jumpTo("2026-12-01T06:00:00Z");
        until("n1 staged inside the window", () -> "reboot-required".equals(c.label("n1",
                NodeKeys.DRIVER_UPGRADE_STATE)));
        assertTrue(unschedulable("n1"));
        assertEquals("2026-12-01T07:00:00Z", c.annotation("n1", NodeKeys.UPGRADE_REBOOT_BEFORE));

        jumpTo("2026-12-01T07:00:00Z");
        until("the slot released when the window closed", () -> "reboot-deferred".equals(c.label("n1",
                NodeKeys.DRIVER_UPGRADE_STATE)) && !unschedulable("n1"));
        assertNull(c.annotation("n1", NodeKeys.UPGRADE_REBOOT_BEFORE));
        // the Events follow the patches waited for: OutsideMaintenanceWindow the reboot-deferred patch, Uncordoned
        // the uncordon, which is the reconcile's last write
        Waits.untilAsserted("OutsideMaintenanceWindow and Uncordoned", WAIT, () -> {
            assertTrue(events("OutsideMaintenanceWindow").toString().contains("n1: the maintenance window every day "
                    + "06:00-07:00 UTC closed before the upgrade reboot started (reboot-required): slot released, "
                    + "uncordoned"), events("OutsideMaintenanceWindow").toString());
            assertTrue(events("Uncordoned").toString().contains("n1"));
        });

        c.annotate("n1", NodeKeys.APPROVE_REBOOT, "true");
        until("approved, waiting for the window", () -> String.valueOf(c.status().get("waitingForWindow"))
                .contains("opens at 2026-12-02T06:00:00Z") && !String.valueOf(c.status().get("awaitingApproval"))
                        .contains("n1"));
        assertEquals(0, emulator.reboots.get(), "no reboot while the window is closed");
        assertEquals("true", c.annotation("n1", NodeKeys.APPROVE_REBOOT), "the approval is kept for the window");

        jumpTo("2026-12-02T06:00:00Z");
        until("n1 upgraded in the next window", () -> emulator.allDone(NEW));
        assertEquals(1, emulator.reboots.get());
        until("n1 uncordoned", () -> !unschedulable("n1") && c.annotation("n1", NodeKeys.CORDONED_BY) == null);
        assertEquals(2, events("Cordoned").size(), "cordoned and drained again: " + events("Cordoned"));
    }

    /**
     * {@code blockingPodSelector} and {@code holdNodesWithNpuWorkloads: false} on one rollout: n1 runs a pod the
     * selector matches, so it gets no slot (named in {@code blockedNodes}) and is never cordoned; n2 runs an NPU
     * training pod, which does not hold it: the drain evicts it (through the Eviction API, its budget allows one) and
     * n2 upgrades. Once the blocking pod is gone, n1 gets its slot and upgrades.
     */
    @Test
    void aBlockingPodHoldsItsNodesSlotAndNpuWorkloadsAreDrainedWhenNotHeld() {
        cluster(2);
        pod("db-0", "n1", true, Map.of("app", "critical"));
        pod("train-0", "n2", true, Map.of("job", "train"), 1);
        pod("train-1", "cpu-0", true, Map.of("job", "train"), 1);
        pdb("train", 1, Map.of("job", "train"));
        start(drain(), true, Map.of("blockingPodSelector", "app=critical", "holdNodesWithNpuWorkloads", false));
        until("n2 upgraded while n1 is blocked", () -> NEW.equals(c.label("n2", NodeKeys.DRIVER_VERSION))
                && c.label("n2", NodeKeys.DRIVER_UPGRADE_STATE) == null);
        assertEquals("upgrade-required", c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE));
        assertTrue(String.valueOf(c.status().get("blockedNodes")).contains(
                "blocking pods (blockingPodSelector app=critical): ml/db-0"), String.valueOf(c.status()));
        assertTrue(controller.snapshot().blocked().contains("n1: blocking pods (blockingPodSelector app=critical): "
                + "ml/db-0"), "the UpgradeOrchestrator MBean's view: " + controller.snapshot().blocked());
        assertTrue(!unschedulable("n1") && !events("Cordoned").toString().contains("n1:"), "n1 never cordoned");
        assertNull(c.admin().pods().inNamespace(NS).withName("train-0").get(), "the NPU pod was evicted");
        assertTrue(evictions.get() >= 1);
        assertTrue(String.valueOf(c.status().get("heldNodes")).equals("[]")
                || c.status().get("heldNodes") == null, "no NPU workload hold: " + c.status().get("heldNodes"));

        c.admin().apps().replicaSets().inNamespace(NS).withName("db-0").delete();
        c.admin().pods().inNamespace(NS).withName("db-0").withGracePeriod(0).delete();
        until("n1 upgraded once the blocking pod is gone", () -> emulator.allDone(NEW));
        until("both uncordoned", () -> !unschedulable("n1") && !unschedulable("n2"));
    }
}
