package io.npulifecycle.upgrade.internal.plan;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.npulifecycle.api.node.NodeKeys;

/**
 * Facts about a Node that both the upgrade's planner and the recovery flow read: pure, from the object as given.
 */
public final class NodeFacts {

    private NodeFacts() {
    }

    /**
     * @param n the node
     * @return whether the node agent declares a recovery request on the Node: label
     *         {@value NodeKeys#REBOOT_REQUIRED}{@code =true} with annotation {@value NodeKeys#REBOOT_REASON}
     *         {@code =recovery}
     */
    public static boolean recoveryRequested(Node n) {
        Map<String, String> l = n.getMetadata().getLabels();
        Map<String, String> a = n.getMetadata().getAnnotations();
        return l != null && "true".equals(l.get(NodeKeys.REBOOT_REQUIRED))
                && a != null && "recovery".equals(a.get(NodeKeys.REBOOT_REASON));
    }

    /**
     * @param n the node
     * @return whether the node carries the {@value NodeKeys#NPU_UNHEALTHY_TAINT} taint (any effect)
     */
    public static boolean tainted(Node n) {
        List<Taint> t = n.getSpec() == null ? null : n.getSpec().getTaints();
        return t != null && t.stream().anyMatch(x -> NodeKeys.NPU_UNHEALTHY_TAINT.equals(x.getKey()));
    }
}
