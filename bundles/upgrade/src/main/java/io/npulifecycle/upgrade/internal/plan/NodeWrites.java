package io.npulifecycle.upgrade.internal.plan;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

/**
 * What the drain and the recovery flow, which patch nodes themselves (cordon, taint, grant), need of the controller's
 * writer ({@code cluster.PlanWriter}): Events on nodes, the write counters of the MBean, and the record of a patch
 * so that the next plan reads the patched copy. Implementations are thread-safe.
 */
public interface NodeWrites {

    /**
     * Creates an Event on a Node (namespace {@code default}) while this replica leads; a failure is logged, not thrown.
     *
     * @param e the Event, {@code kind} {@code Node}
     */
    void nodeEvent(EventSpec e);

    /**
     * Counts one write (the MBean's {@code WriteCounts}).
     *
     * @param kind the write's kind, e.g. {@code cordon}, {@code eviction}
     */
    void count(String kind);

    /**
     * Records a patch of a node made outside the plan, so that the next plan reads the patched copy while the
     * informer's is older.
     *
     * @param node the node's name
     * @param fromVersion the resourceVersion the patch was guarded by
     * @param after the node as the patch returned it
     */
    void patchedElsewhere(String node, String fromVersion, Node after);

    /**
     * @param name the node's name
     * @return a Node with only its name: the target of a patch that must not read the object first (RBAC: no get)
     */
    static Node nodeStub(String name) {
        Node n = new Node();
        n.setMetadata(new ObjectMetaBuilder().withName(name).build());
        return n;
    }
}
