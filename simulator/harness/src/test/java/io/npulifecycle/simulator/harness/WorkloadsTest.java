package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.ClusterBackends;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/** The scenario's workload and scheduling steps write what they say, on each API server. */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {ClusterBackend.EMBEDDED, ClusterBackend.REAL})
class WorkloadsTest {

    @Parameter
    String kind;
    ClusterBackend api;

    @AfterEach
    void close() {
        if (api != null) {
            api.close();
        }
    }

    Workloads start() {
        api = ClusterBackends.start(kind);
        api.addNode(EmbeddedCluster.npuNode("node-0"));
        return new Workloads(api);
    }

    /**
     * Steps on things that are not there fail, naming them (not the client's dump); a taken name, a pod held
     * Terminating by its finalizer, is named with what holds it; finalizers and readiness reach the pod.
     */
    @Test
    void missingAndTakenPodsAreNamedAndFinalizersHold() {
        Workloads w = start();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> w.deletePod(new Action.DeletePod("nope", "ml", null)));
        assertEquals("there is no pod ml/nope (a name mistyped, or deleted by an earlier step?)", e.getMessage());
        assertThrows(IllegalStateException.class, () -> w.removeFinalizers(new Action.RemoveFinalizers("nope", "ml")));
        assertThrows(IllegalStateException.class, () -> w.setPodReady(new Action.SetPodReady("nope", "ml", true)));
        Action.PodStep held = new Action.PodStep("node-0", "held", "ml", 0, Map.of(), "none", false, false,
                java.util.List.of("example.com/hold"));
        Pod p = w.addPod(held);
        assertEquals(java.util.List.of("example.com/hold"), p.getMetadata().getFinalizers());
        assertEquals("true", p.getMetadata().getAnnotations().get(Workloads.NOT_READY_ANNOTATION));
        w.deletePod(new Action.DeletePod("held", "ml", 0));
        e = assertThrows(IllegalStateException.class, () -> w.addPod(held));
        assertTrue(e.getMessage().contains("pod ml/held exists (Terminating, held by its finalizers "
                + "[example.com/hold]: removeFinalizers first)"), e.getMessage());
        w.removeFinalizers(new Action.RemoveFinalizers("held", "ml"));
        org.awaitility.Awaitility.await("the pod gone once its finalizer is removed")
                .atMost(java.time.Duration.ofSeconds(30)).until(() -> w.pod("ml/held") == null);
        w.label("node-0", "example.com/x", "y");
        assertEquals("y", api.client().nodes().withName("node-0").get().getMetadata().getLabels().get("example.com/x"));
        w.label("node-0", "example.com/x", null);
        assertEquals(null, api.client().nodes().withName("node-0").get().getMetadata().getLabels().get("example.com/x"));
    }

    @Test
    void podsGetTheirOwnerNpuRequestAndVolume() {
        Workloads w = start();
        Pod rs = w.addPod(new Action.PodStep("node-0", "train-0", "ml", 8, Map.of("job", "train"), "ReplicaSet",
                true));
        assertEquals("node-0", rs.getSpec().getNodeName());
        assertEquals("ReplicaSet", rs.getMetadata().getOwnerReferences().get(0).getKind());
        assertEquals(1, api.client().apps().replicaSets().inNamespace("ml").withName("train-0").get().getSpec()
                .getReplicas());
        assertEquals(new Quantity("8"), rs.getSpec().getContainers().get(0).getResources().getRequests()
                .get(Workloads.NPU_RESOURCE));
        assertTrue(rs.getSpec().getVolumes().get(0).getEmptyDir() != null);
        assertEquals("train", rs.getMetadata().getLabels().get("job"));

        Pod ss = w.addPod(new Action.PodStep("node-0", "db-0", "ml", 0, Map.of(), "StatefulSet", false));
        assertEquals("StatefulSet", ss.getMetadata().getOwnerReferences().get(0).getKind());
        Pod ds = w.addPod(new Action.PodStep("node-0", "logs", "ml", 0, Map.of(), "DaemonSet", false));
        assertEquals("DaemonSet", ds.getMetadata().getOwnerReferences().get(0).getKind());
        Pod mirror = w.addPod(new Action.PodStep("node-0", "etcd-node-0", "ml", 0, Map.of(), "mirror", false));
        assertEquals("Node", mirror.getMetadata().getOwnerReferences().get(0).getKind());
        assertTrue(mirror.getMetadata().getAnnotations().containsKey(Workloads.MIRROR_ANNOTATION));
        Pod bare = w.addPod(new Action.PodStep("node-0", "bare", "default", 0, Map.of(), "none", false));
        assertTrue(bare.getMetadata().getOwnerReferences() == null || bare.getMetadata().getOwnerReferences()
                .isEmpty());
        assertEquals("bare", w.pod("default/bare").getMetadata().getName());
        assertNull(w.pod("default/nobody"));
    }

    @Test
    void budgetsAndCordonsAreWrittenAndUndone() {
        Workloads w = start();
        w.applyPdb(new Action.Pdb("train", "ml", Map.of("job", "train"), 2, null));
        PodDisruptionBudget p = api.client().policy().v1().podDisruptionBudget().inNamespace("ml").withName("train")
                .get();
        assertEquals(2, p.getSpec().getMinAvailable().getIntVal());
        w.applyPdb(new Action.Pdb("train", "ml", Map.of("job", "train"), null, "50%"));
        p = api.client().policy().v1().podDisruptionBudget().inNamespace("ml").withName("train").get();
        assertEquals("50%", p.getSpec().getMaxUnavailable().getStrVal());
        assertNull(p.getSpec().getMinAvailable(), "the step's budget replaces the former one");
        w.deletePdb("train", "ml");
        assertNull(api.client().policy().v1().podDisruptionBudget().inNamespace("ml").withName("train").get());

        assertFalse(w.unschedulable("node-0"));
        w.setUnschedulable("node-0", true);
        assertTrue(w.unschedulable("node-0"));
        w.setUnschedulable("node-0", false);
        assertFalse(w.unschedulable("node-0"));
        assertEquals(Map.of(), w.taints("node-0"));
    }
}
