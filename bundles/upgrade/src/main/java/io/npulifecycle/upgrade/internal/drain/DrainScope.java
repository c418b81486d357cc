package io.npulifecycle.upgrade.internal.drain;

import io.npulifecycle.upgrade.internal.plan.PodFacts;

import io.npulifecycle.api.upgrade.spec.DrainSettings;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * Which pods of a node its drain evicts (docs/upgrade.md "Drain"): every pod bound to the node that has not finished
 * ({@code Succeeded}, {@code Failed}), except DaemonSet pods (their controller puts them back on a cordoned node and
 * they die with the reboot anyway), mirror pods (annotation {@value #MIRROR_ANNOTATION}: the API cannot evict a static
 * pod), the driver pods and the replicas of npu-lifecycle's control plane ({@link PodFacts#isControlPlanePod}): they
 * run the drain and then grant the reboot and uncordon; evicted from a cordoned node (all of them, on a cluster
 * whose only nodes are NPU nodes) they could not come back and the node would stay cordoned and wedged; with {@code scope: npu} only NPU workloads ({@link PodFacts#isNpuWorkload}); and only pods
 * the {@code podSelector} matches. A pod being deleted still counts: the drain waits until it is gone. Pure.
 */
public final class DrainScope {

    /** The annotation the kubelet puts on the mirror pod of a static pod. */
    static final String MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

    private DrainScope() {
    }

    /**
     * @param pods every pod (the informer's cache)
     * @param nodes the nodes being drained
     * @param drain the policy's drain
     * @return per node of {@code nodes}, its pods the drain must see gone, sorted by namespace/name
     */
    public static Map<String, List<Pod>> podsToDrain(Collection<Pod> pods, Collection<String> nodes, DrainSettings drain) {
        Map<String, List<Pod>> out = new HashMap<>();
        for (Pod p : pods) {
            String node = p.getSpec() == null ? null : p.getSpec().getNodeName();
            if (node != null && nodes.contains(node) && drained(p, drain)) {
                out.computeIfAbsent(node, k -> new ArrayList<>()).add(p);
            }
        }
        out.values().forEach(l -> l.sort((a, b) -> ref(a).compareTo(ref(b))));
        return out;
    }

    /** @return whether the drain evicts {@code p} (its node aside) */
    static boolean drained(Pod p, DrainSettings drain) {
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
            return false;
        }
        if (PodFacts.isDriverPod(p) || PodFacts.isControlPlanePod(p) || isMirror(p)
                || "DaemonSet".equals(controllerKind(p))) {
            return false;
        }
        if (drain.npuOnly() && !PodFacts.isNpuWorkload(p)) {
            return false;
        }
        return drain.podSelector().matches(p.getMetadata().getLabels());
    }

    /** @return whether the pod is the mirror of a static pod */
    static boolean isMirror(Pod p) {
        return p.getMetadata().getAnnotations() != null
                && p.getMetadata().getAnnotations().containsKey(MIRROR_ANNOTATION);
    }

    /** @return the kind of the pod's controller ({@code controller: true} owner reference), or null when none */
    static String controllerKind(Pod p) {
        if (p.getMetadata().getOwnerReferences() == null) {
            return null;
        }
        for (OwnerReference o : p.getMetadata().getOwnerReferences()) {
            if (Boolean.TRUE.equals(o.getController())) {
                return o.getKind();
            }
        }
        return null;
    }

    /** @return whether the pod mounts an emptyDir volume */
    static boolean hasEmptyDir(Pod p) {
        return p.getSpec().getVolumes() != null
                && p.getSpec().getVolumes().stream().anyMatch(v -> v.getEmptyDir() != null);
    }

    /**
     * @param p a pod
     * @return {@code namespace/name}
     */
    public static String ref(Pod p) {
        return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
    }
}
