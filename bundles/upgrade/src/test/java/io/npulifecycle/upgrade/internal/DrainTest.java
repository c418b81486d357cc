package io.npulifecycle.upgrade.internal;

import io.npulifecycle.api.node.NodeKeys;

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
 * The controller runs under its ServiceAccount (config/kubernetes RBAC); its eviction requests are counted at its
 * HTTP client. A small kubelet ends workload pods deleted with a grace period; the emulator plays the node agents.
 * Clock: 200 simulated seconds per wall second.
 */
class DrainTest {

    static final String OLD = "24.1.0";
    static final String NEW = "25.5.0";
    static final String NS = "ml";
    static final Duration WAIT = Duration.ofSeconds(40);

    ClusterFixture c;
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
        // the kubelet of the workload pods: a pod deleted with a grace period (an eviction) ends at once
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
        emulator.start();
        ControllerConfig d = ControllerConfig.defaults();
        ControllerConfig cfg = new ControllerConfig(d.namespace(), d.resourceName(), false, "http", "",
                d.reconcileDelay(), d.resync(), d.statusInterval(), false, d.leaseName(), d.leaseDuration(),
                d.renewDeadline(), d.retryPeriod(), "t");
        String token = c.serviceAccountToken(RolloutTest.CONTROL_PLANE_SA, null);
        KubernetesClient client = c.own(c.real().newTokenClient(token, k -> k.setUserAgent("npu-controller"),
                h -> h.addOrReplaceInterceptor("count-evictions", new Interceptor() {
                    @Override
                    public void before(io.fabric8.kubernetes.client.http.BasicBuilder b,
                            io.fabric8.kubernetes.client.http.HttpRequest r, Interceptor.RequestTags t) {
                        if ("POST".equals(r.method()) && r.uri().getPath().endsWith("/eviction")) {
                            evictions.incrementAndGet();
                        }
                    }
                })));
        controller = c.own(new UpgradeController(client, time, cfg, null));
        controller.start();
        controller.setLeader(true);
        Map<String, Object> spec = driver(NEW, true, 1, "100%", null);
        @SuppressWarnings("unchecked")
        Map<String, Object> up = (Map<String, Object>) spec.get("upgradePolicy");
        up.put("drain", drain);
        c.createDriver(spec);
    }

    static Map<String, Object> drain(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /** A Ready pod on {@code node}; {@code owner}: a ReplicaSet of one replica owns it, else a bare pod. */
    Pod pod(String name, String node, boolean owner, Map<String, String> labels) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withLabels(labels)
                .endMetadata().withNewSpec().withNodeName(node).withTerminationGracePeriodSeconds(30L)
                .addNewContainer().withName("main").withImage("registry.local/train:1").endContainer().endSpec();
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

    void pdb(String name, int minAvailable, Map<String, String> selector) {
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
        start(drain("timeoutSeconds", 120));
        until("n1 upgrade-failed", () -> "upgrade-failed".equals(c.label("n1", NodeKeys.DRIVER_UPGRADE_STATE)));
        String failure = c.annotation("n1", NodeKeys.DRIVER_UPGRADE_FAILURE);
        assertTrue(failure.contains("drain-required") && failure.contains("ml/train-0")
                && failure.contains("PodDisruptionBudget ml/train"), failure);
        // 120 s of backoff 5, 10, 20, 30, 30, ... s: about 6 attempts, not a loop
        assertTrue(evictions.get() >= 3 && evictions.get() <= 12, "eviction calls: " + evictions.get());
        until("n1 uncordoned", () -> !unschedulable("n1")
                && c.annotation("n1", NodeKeys.CORDONED_BY) == null);
        assertEquals(0, emulator.reboots.get(), "a node whose drain failed is not rebooted");
        assertEquals(OLD, c.label("n1", NodeKeys.DRIVER_VERSION));
        assertNotNull(c.admin().pods().inNamespace(NS).withName("train-0").get(), "the budget kept the pod");
        assertTrue(events("Cordoned").toString().contains("n1"), events("Cordoned").toString());
        assertTrue(events("DrainStarted").toString().contains("ml/train-0"), events("DrainStarted").toString());
        assertTrue(events("DrainBlocked").toString().contains("PodDisruptionBudget ml/train"),
                events("DrainBlocked").toString());
        assertTrue(events("DrainFailed").toString().contains("ml/train-0"), events("DrainFailed").toString());
        assertTrue(events("Uncordoned").toString().contains("n1"), events("Uncordoned").toString());
        assertTrue(String.valueOf(c.status().get("failedNodes")).contains("PodDisruptionBudget ml/train"));
    }

    @Test
    void aBudgetThatAllowsOnceAReplicaIsAddedLetsTheUpgradeComplete() {
        cluster(1);
        pod("train-0", "n1", true, Map.of("job", "train"));
        pdb("train", 1, Map.of("job", "train"));
        start(drain("timeoutSeconds", 3600));
        until("the drain blocked and named in the status", () -> String.valueOf(c.status().get("drainingNodes"))
                .contains("PodDisruptionBudget ml/train"));
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

    @Test
    void aPodWithoutAControllerIsDeletedWithForce() {
        cluster(1);
        pod("notebook", "n1", false, Map.of("app", "notebook"));
        start(drain("force", true));
        until("n1 upgraded", () -> emulator.allDone(NEW));
        assertNull(c.admin().pods().inNamespace(NS).withName("notebook").get());
        assertEquals(1, emulator.reboots.get());
        until("n1 uncordoned", () -> !unschedulable("n1"));
    }

    @Test
    void daemonSetAndMirrorPodsAreNeverEvicted() {
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
        start(drain());
        until("n1 upgraded", () -> emulator.allDone(NEW));
        assertEquals(0, evictions.get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("logs-n1").get());
        assertNotNull(c.admin().pods().inNamespace(NS).withName("etcd-n1").get());
        assertTrue(events("Cordoned").toString().contains("n1"));
        until("n1 uncordoned", () -> !unschedulable("n1"));
    }
}
