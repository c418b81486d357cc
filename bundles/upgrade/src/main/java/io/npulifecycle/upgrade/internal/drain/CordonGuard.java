package io.npulifecycle.upgrade.internal.drain;

import io.npulifecycle.upgrade.internal.plan.NodeWrites;
import io.npulifecycle.upgrade.internal.plan.EventSpec;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.node.NodeKeys;

import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Cordons and uncordons nodes for the upgrade drain, never touching a cordon that is not its own: it cordons only a
 * schedulable node, and in the same patch records {@link NodeKeys#CORDONED_BY}{@code =}
 * {@value NodeKeys#CORDONED_BY_VALUE}; it uncordons only a node carrying that record, and removes the record with
 * the cordon. A node an administrator cordoned (unschedulable without the record) stays cordoned on every path. Each
 * write is a JSON merge patch guarded by the node's resourceVersion, so a node that changed since it was read (an
 * administrator's cordon meanwhile) answers 409 and is decided again from its newer copy.
 */
public final class CordonGuard {

    private static final System.Logger LOG = System.getLogger(CordonGuard.class.getName());

    private final KubernetesClient client;
    private final NodeWrites writer;
    private final BooleanSupplier leader;
    /** Whether the planted bug {@link PlantedBug#ADMIN_CORDON_LIFTED} is active (never in the product). */
    private volatile boolean liftAnyCordon;

    /**
     * @param client the control plane's client ({@code nodes patch})
     * @param writer records the patches and creates the Events
     * @param leader whether this replica may write, checked before each request
     */
    CordonGuard(KubernetesClient client, NodeWrites writer, BooleanSupplier leader) {
        this.client = client;
        this.writer = writer;
        this.leader = leader;
    }

    /** @param bug the planted bug of the chaos checker's tests ({@link PlantedBug}), or {@code null} */
    void plant(PlantedBug bug) {
        liftAnyCordon = bug == PlantedBug.ADMIN_CORDON_LIFTED;
    }

    /**
     * @param n the node as last read
     * @return whether the node is unschedulable ({@code spec.unschedulable}), whoever cordoned it
     */
    public static boolean cordoned(Node n) {
        return n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    }

    /**
     * @param n the node as last read
     * @return whether the node carries this controller's cordon record ({@value NodeKeys#CORDONED_BY}{@code =}
     *         {@value NodeKeys#CORDONED_BY_VALUE})
     */
    public static boolean cordonedByUs(Node n) {
        Map<String, String> ann = n.getMetadata().getAnnotations();
        return ann != null && NodeKeys.CORDONED_BY_VALUE.equals(ann.get(NodeKeys.CORDONED_BY));
    }

    /**
     * Cordons a schedulable node and records it, with the Event {@code Cordoned}; a node already unschedulable is
     * left as it is.
     *
     * @param n the node as last read
     * @param why for the Event, e.g. {@code driver upgrade to 25.5.0}
     * @return false when the write failed (the API server unreachable, a conflict): the caller tries again
     */
    boolean cordon(Node n, String why) {
        if (cordoned(n) || !leader.getAsBoolean()) {
            return true;
        }
        Map<String, Object> ann = new LinkedHashMap<>();
        ann.put(NodeKeys.CORDONED_BY, NodeKeys.CORDONED_BY_VALUE);
        if (patch(n, true, ann)) {
            writer.nodeEvent(new EventSpec("Node", n.getMetadata().getName(), NodeKeys.NORMAL,
                    NodeKeys.EVENT_CORDONED, "cordoned for the " + why + " (" + NodeKeys.CORDONED_BY + "="
                            + NodeKeys.CORDONED_BY_VALUE + ")"));
            return true;
        }
        return false;
    }

    /**
     * Uncordons a node carrying this controller's record, removing the record, with the Event {@code Uncordoned}; a
     * node without the record is left as it is.
     *
     * @param n the node as last read
     * @param why for the Event, e.g. {@code upgraded to 25.5.0}
     * @return false when the write failed: the caller tries again
     */
    boolean uncordon(Node n, String why) {
        // liftAnyCordon: planted bug (testing the chaos checker only): breaks "never lift a cordon npu-lifecycle did
        // not make", as any cordon of a node at the end of its work is taken for its own
        if (!(cordonedByUs(n) || liftAnyCordon && cordoned(n)) || !leader.getAsBoolean()) {
            return true;
        }
        Map<String, Object> ann = new LinkedHashMap<>();
        ann.put(NodeKeys.CORDONED_BY, null);
        if (patch(n, false, ann)) {
            writer.nodeEvent(new EventSpec("Node", n.getMetadata().getName(), NodeKeys.NORMAL,
                    NodeKeys.EVENT_UNCORDONED, "uncordoned: " + why));
            return true;
        }
        return false;
    }

    private boolean patch(Node n, boolean unschedulable, Map<String, Object> annotations) {
        String name = n.getMetadata().getName();
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("resourceVersion", n.getMetadata().getResourceVersion());
        meta.put("annotations", annotations);
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("unschedulable", unschedulable ? Boolean.TRUE : null);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("metadata", meta);
        body.put("spec", spec);
        try {
            Node after = client.nodes().resource(NodeWrites.nodeStub(name))
                    .patch(PatchContext.of(PatchType.JSON_MERGE), client.getKubernetesSerialization().asJson(body));
            writer.count(unschedulable ? "cordon" : "uncordon");
            writer.patchedElsewhere(name, n.getMetadata().getResourceVersion(), after);
            LOG.log(Level.INFO, "node " + name + ": " + (unschedulable ? "cordoned" : "uncordoned"));
            return true;
        } catch (KubernetesClientException e) {
            // 409: the node changed since it was read; the next reconcile decides from its newer copy
            LOG.log(e.getCode() == 409 ? Level.DEBUG : Level.WARNING, "node " + name + ": "
                    + (unschedulable ? "cordon" : "uncordon") + " failed (" + e.getCode() + "): " + e.getMessage());
            return false;
        }
    }
}
