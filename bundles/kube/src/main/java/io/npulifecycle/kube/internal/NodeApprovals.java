package io.npulifecycle.kube.internal;

import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodeKeys;

/**
 * The reboot approval ({@value NodeKeys#APPROVE_REBOOT} = {@code true} on the Node) and its exactly-once
 * consumption, as {@link ApprovalService} describes it.
 *
 * <p>The consumption is one {@link NodeApi#updateNode} that removes the approval and sets
 * {@value NodeKeys#REBOOTING_FROM_BOOT_ID} to the boot being left, in the same write: the mark of this boot with no
 * approval next to it proves the consumption happened ({@link ConsumeResult#ALREADY_CONSUMED} after a runtime
 * restart), and only that proof lets {@link #restoreApproval} put an unused approval back. While the consumption or
 * the restoration writes the mark, {@link DesiredNodeState} does not manage it, so a concurrent reconcile can neither
 * remove the mark (an unused approval could then not be restored) nor write it without the approval's removal (the
 * mark alone would read as a consumption). Any value other than exactly {@code true} is not an approval
 * ({@link ApprovalState#invalid()}) and is never changed.
 *
 * <p>While the control plane's label {@value NodeKeys#DRIVER_UPGRADE_STATE} is {@code reboot-deferred} (the node gave
 * its rollout slot to another node, docs/upgrade.md "Slots"), {@code cordon-required} or {@code drain-required} (the
 * control plane cordons and drains the node before its upgrade reboot, docs/upgrade.md "Drain"; a staged node that
 * gets its slot back goes through both again), the approval is not used ({@link NodeKeys#approvalOnHold}): the consumption's write is
 * decided on the Node read right before it and guarded by its resourceVersion, so either the control plane's label
 * change comes first and nothing is consumed ({@link ConsumeResult#NOT_APPROVED}: the approval stays for later), or
 * the consumption comes first and the control plane's write, guarded the same way, is rejected. Thread-safe; the
 * rebooter calls one method at a time.
 */
final class NodeApprovals implements ApprovalService {

    private static final System.Logger LOG = System.getLogger(NodeApprovals.class.getName());
    private final NodeApi api;
    private final DesiredNodeState desired;
    /** Whether the planted bug {@link PlantedBug#APPROVAL_REUSED} is active (never in the product). */
    private volatile boolean leaveApproval;

    /**
     * @param api the Node
     * @param desired the node agent's desired state (it keeps {@value NodeKeys#REBOOTING_FROM_BOOT_ID} on the Node
     *        between the consumption and the reboot)
     */
    NodeApprovals(NodeApi api, DesiredNodeState desired) {
        this.api = Objects.requireNonNull(api, "api");
        this.desired = Objects.requireNonNull(desired, "desired");
    }

    /** @param bug the planted bug of the chaos checker's tests ({@link PlantedBug}), or {@code null} */
    void plant(PlantedBug bug) {
        leaveApproval = bug == PlantedBug.APPROVAL_REUSED;
    }

    @Override
    public ApprovalState approval() {
        Node n = api.cached();
        if (n == null) {
            return new ApprovalState(false, false, null, null);
        }
        Map<String, String> a = NodeApi.annotations(n);
        return new ApprovalState(true, a.containsKey(NodeKeys.APPROVE_REBOOT), a.get(NodeKeys.APPROVE_REBOOT),
                n.getMetadata().getResourceVersion());
    }

    /**
     * @param before the Node seen before, or {@code null}
     * @param after the Node seen now
     * @return whether the approval annotation (its presence or value) or the control plane's recovery reboot grant
     *         differs, or there was no Node before
     */
    static boolean approvalChanged(Node before, Node after) {
        if (before == null) {
            return true;
        }
        Map<String, String> b = NodeApi.annotations(before);
        Map<String, String> a = NodeApi.annotations(after);
        return b.containsKey(NodeKeys.APPROVE_REBOOT) != a.containsKey(NodeKeys.APPROVE_REBOOT)
                || !Objects.equals(b.get(NodeKeys.APPROVE_REBOOT), a.get(NodeKeys.APPROVE_REBOOT))
                || !Objects.equals(b.get(NodeKeys.RECOVERY_REBOOT_GRANTED), a.get(NodeKeys.RECOVERY_REBOOT_GRANTED));
    }

    @Override
    public String rebootGrant() {
        Node n = api.cached();
        return n == null ? null : NodeApi.annotations(n).get(NodeKeys.RECOVERY_REBOOT_GRANTED);
    }

    @Override
    public boolean rebootGranted(String bootId) {
        try {
            NodeApi.Update u = api.updateNode("check the recovery reboot grant", n -> null);
            boolean granted = u.node() != null && bootId != null
                    && bootId.equals(NodeApi.annotations(u.node()).get(NodeKeys.RECOVERY_REBOOT_GRANTED));
            if (!granted) {
                LOG.log(Level.INFO, "Node " + api.nodeName() + ": no recovery reboot grant for boot " + bootId
                        + " on the Node read now (" + NodeKeys.RECOVERY_REBOOT_GRANTED + "="
                        + (u.node() == null ? "(no Node)" : NodeApi.annotations(u.node())
                                .get(NodeKeys.RECOVERY_REBOOT_GRANTED)) + ")");
            }
            return granted;
        } catch (KubernetesClientException e) {
            LOG.log(Level.WARNING, "cannot read Node " + api.nodeName() + " to check the recovery reboot grant: "
                    + e.getMessage() + ": no reboot until it answers");
            return false;
        }
    }

    @Override
    public ConsumeResult consumeApproval(String bootId) {
        Objects.requireNonNull(bootId, "bootId");
        Optional<String> mark = desired.releaseAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID);
        try {
            NodeApi.Update u = api.updateNode("consume the approval",
                    n -> approved(n) && !slotGivenUp(n) ? consumed(n, bootId, leaveApproval) : null);
            switch (u.outcome()) {
                case WRITTEN:
                    mark = Optional.of(bootId);
                    LOG.log(Level.INFO, "approval " + NodeKeys.APPROVE_REBOOT + " consumed on Node " + api.nodeName()
                            + " (now resourceVersion " + u.node().getMetadata().getResourceVersion()
                            + ") for a reboot leaving boot " + bootId);
                    return ConsumeResult.CONSUMED;
                case ABSENT:
                    LOG.log(Level.WARNING, "Node " + api.nodeName() + " not found: no approval to consume");
                    return ConsumeResult.NOT_APPROVED;
                case UNCHANGED:
                    // the consumption's mark with no approval next to it: the consuming write happened (it does both)
                    if (bootId.equals(NodeApi.annotations(u.node()).get(NodeKeys.REBOOTING_FROM_BOOT_ID))) {
                        LOG.log(Level.INFO, "approval on Node " + api.nodeName() + " was already consumed for boot "
                                + bootId);
                        return ConsumeResult.ALREADY_CONSUMED;
                    }
                    if (approved(u.node()) && slotGivenUp(u.node())) {
                        LOG.log(Level.INFO, "approval on Node " + api.nodeName() + " not used: "
                                + NodeKeys.DRIVER_UPGRADE_STATE + "=" + upgradeState(u.node()) + " (the node gave its"
                                + " rollout slot up, or the control plane cordons and drains it; the approval is used"
                                + " once the node holds a slot and is drained)");
                    }
                    return ConsumeResult.NOT_APPROVED;
                default:
                    return ConsumeResult.CONFLICT;
            }
        } catch (KubernetesClientException e) {
            LOG.log(Level.WARNING, "cannot consume the approval on Node " + api.nodeName() + ": " + e.getMessage()
                    + ": the approval is not used");
            return ConsumeResult.UNREACHABLE;
        } finally {
            // managed again: the new mark after a consumption, what was desired before otherwise
            desired.manageAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, mark);
        }
    }

    @Override
    public String upgradeRebootRefusal(java.time.Instant now) {
        Node n = api.cached();
        if (n == null) {
            return "the Node " + api.nodeName() + " is not known (deleted from the API server, or not read yet): no "
                    + "upgrade reboot without the control plane's grant on it";
        }
        return NodeKeys.upgradeRebootRefusal(upgradeState(n), NodeApi.annotations(n).get(NodeKeys.UPGRADE_REBOOT_BEFORE),
                now);
    }

    private static boolean approved(Node n) {
        return NodeKeys.APPROVE_VALUE.equals(NodeApi.annotations(n).get(NodeKeys.APPROVE_REBOOT));
    }

    private static boolean slotGivenUp(Node n) {
        return NodeKeys.approvalOnHold(upgradeState(n));
    }

    private static String upgradeState(Node n) {
        Map<String, String> l = n.getMetadata() == null ? null : n.getMetadata().getLabels();
        return l == null ? null : l.get(NodeKeys.DRIVER_UPGRADE_STATE);
    }

    private static Node consumed(Node n, String bootId, boolean leaveApproval) {
        Map<String, String> a = new HashMap<>(NodeApi.annotations(n));
        if (!leaveApproval) {
            a.remove(NodeKeys.APPROVE_REBOOT);
        } // else planted bug (testing the chaos checker only): breaks "one reboot per approval"
        a.put(NodeKeys.REBOOTING_FROM_BOOT_ID, bootId);
        n.getMetadata().setAnnotations(a);
        return n;
    }

    @Override
    public boolean restoreApproval(String bootId) {
        Objects.requireNonNull(bootId, "bootId");
        NodeApi.Update u;
        try {
            u = api.updateNode("put the approval back", n -> consumedFor(n, bootId) ? restored(n) : null);
        } catch (KubernetesClientException e) {
            LOG.log(Level.WARNING, "cannot put the approval back on Node " + api.nodeName() + ": " + e.getMessage()
                    + " (tried again later)");
            return false;
        }
        switch (u.outcome()) {
            case WRITTEN:
                // only after the write: removing the mark before it would let a reconcile remove the proof it checks
                desired.manageAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.empty());
                LOG.log(Level.INFO, "approval put back on Node " + api.nodeName()
                        + ": the reboot it was consumed for (leaving boot " + bootId + ") did not happen");
                return true;
            case UNCHANGED:
                // no consumption for this boot on the Node: nothing to put back, and no mark of this boot to keep
                desired.manageAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, Optional.empty());
                return true;
            default:
                return false;
        }
    }

    private static boolean consumedFor(Node n, String bootId) {
        return bootId.equals(NodeApi.annotations(n).get(NodeKeys.REBOOTING_FROM_BOOT_ID));
    }

    private static Node restored(Node n) {
        Map<String, String> a = new HashMap<>(NodeApi.annotations(n));
        a.remove(NodeKeys.REBOOTING_FROM_BOOT_ID);
        a.putIfAbsent(NodeKeys.APPROVE_REBOOT, NodeKeys.APPROVE_VALUE);
        n.getMetadata().setAnnotations(a);
        return n;
    }
}
