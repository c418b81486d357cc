package io.npulifecycle.upgrade.internal.plan;

import io.npulifecycle.api.upgrade.spec.PodSelector;

import io.npulifecycle.api.node.NodeKeys;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * What the rollout reads from pods (docs/upgrade.md "Preflight"): the driver pod of each node (namespace
 * {@code npu-operator}, label {@code app=npu-driver-daemonset}), the NPU workloads that hold their node, and the image
 * of a pod. Pure functions of the pods given.
 */
public final class PodFacts {

    private PodFacts() {
    }

    /**
     * @param p a pod
     * @return whether it is a driver pod: namespace {@code npu-operator}, label {@code app=npu-driver-daemonset}
     */
    public static boolean isDriverPod(Pod p) {
        return NodeKeys.DRIVER_NAMESPACE.equals(p.getMetadata().getNamespace()) && p.getMetadata().getLabels() != null
                && NodeKeys.DRIVER_APP.equals(p.getMetadata().getLabels().get(NodeKeys.DRIVER_APP_LABEL));
    }

    /** The label value of npu-lifecycle's control-plane pods (the chart's {@code app} label). */
    static final String CONTROL_PLANE_APP = "npu-lifecycle-control-plane";
    /** The chart's {@code app.kubernetes.io/part-of} label of every object it installs. */
    static final String PART_OF = "app.kubernetes.io/part-of";

    /**
     * @param p a pod
     * @return whether it is a replica of npu-lifecycle's control plane: labels {@code app=npu-lifecycle-control-plane}
     *         and {@code app.kubernetes.io/part-of=npu-lifecycle} (the chart's, templates/30-control-plane.yaml)
     */
    public static boolean isControlPlanePod(Pod p) {
        Map<String, String> l = p.getMetadata().getLabels();
        return l != null && CONTROL_PLANE_APP.equals(l.get(NodeKeys.DRIVER_APP_LABEL))
                && "npu-lifecycle".equals(l.get(PART_OF));
    }

    /**
     * @param pods all pods
     * @return the driver pod of each node (by {@code spec.nodeName}), one per node: a pod not being deleted over one
     *         being deleted, else the newer {@code creationTimestamp}
     */
    public static Map<String, Pod> driverPods(Collection<Pod> pods) {
        Map<String, Pod> byNode = new HashMap<>();
        for (Pod p : pods) {
            if (isDriverPod(p) && p.getSpec() != null && p.getSpec().getNodeName() != null) {
                byNode.merge(p.getSpec().getNodeName(), p, (a, b) -> a.getMetadata().getDeletionTimestamp() != null ? b
                        : b.getMetadata().getDeletionTimestamp() != null ? a
                                : String.valueOf(a.getMetadata().getCreationTimestamp())
                                        .compareTo(String.valueOf(b.getMetadata().getCreationTimestamp())) >= 0 ? a : b);
            }
        }
        return byNode;
    }

    /**
     * @param pods all pods
     * @return the NPU workloads ({@link #isNpuWorkload}) by node name, each as {@code namespace/name}, sorted
     */
    public static Map<String, List<String>> workloads(Collection<Pod> pods) {
        Map<String, List<String>> m = new HashMap<>();
        for (Pod p : pods) {
            if (isNpuWorkload(p)) {
                m.computeIfAbsent(p.getSpec().getNodeName(), k -> new ArrayList<>())
                        .add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName());
            }
        }
        m.values().forEach(l -> l.sort(null));
        return m;
    }

    /**
     * @param pods all pods
     * @param selector {@code upgradePolicy.blockingPodSelector}, or null for none
     * @return per node name, its pods bound to it, not finished ({@code Succeeded}, {@code Failed}), whose labels
     *         the selector matches, each as {@code namespace/name}, sorted; empty without a selector
     */
    public static Map<String, List<String>> blocking(Collection<Pod> pods, PodSelector selector) {
        Map<String, List<String>> m = new HashMap<>();
        if (selector == null) {
            return m;
        }
        for (Pod p : pods) {
            String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
            if (p.getSpec() == null || p.getSpec().getNodeName() == null || "Succeeded".equals(phase)
                    || "Failed".equals(phase) || !selector.matches(p.getMetadata().getLabels())) {
                continue;
            }
            m.computeIfAbsent(p.getSpec().getNodeName(), k -> new ArrayList<>())
                    .add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName());
        }
        m.values().forEach(l -> l.sort(null));
        return m;
    }

    /**
     * @param p a pod
     * @return whether it is bound to a node, not finished, not a driver pod, and requests or limits an NPU resource
     *         ({@code huawei.com/Ascend910*}, {@code huawei.com/Ascend310P*}) in any container or init container
     */
    public static boolean isNpuWorkload(Pod p) {
        if (p.getSpec() == null || p.getSpec().getNodeName() == null) {
            return false;
        }
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        if ("Succeeded".equals(phase) || "Failed".equals(phase) || isDriverPod(p)) {
            return false;
        }
        List<Container> cs = new ArrayList<>();
        if (p.getSpec().getContainers() != null) {
            cs.addAll(p.getSpec().getContainers());
        }
        if (p.getSpec().getInitContainers() != null) {
            cs.addAll(p.getSpec().getInitContainers());
        }
        for (Container c : cs) {
            if (c.getResources() == null) {
                continue;
            }
            for (var m : Arrays.asList(c.getResources().getRequests(), c.getResources().getLimits())) {
                if (m != null && m.keySet().stream().anyMatch(k -> NodeKeys.NPU_RESOURCE_PREFIXES.stream().anyMatch(k::startsWith))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * @param p a pod
     * @return the image of the pod's first container, or "" when it has none
     */
    public static String image(Pod p) {
        if (p.getSpec() == null || p.getSpec().getContainers() == null || p.getSpec().getContainers().isEmpty()) {
            return "";
        }
        return Objects.requireNonNullElse(p.getSpec().getContainers().get(0).getImage(), "");
    }
}
