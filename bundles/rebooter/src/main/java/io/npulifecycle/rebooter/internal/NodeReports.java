package io.npulifecycle.rebooter.internal;

import java.lang.System.Logger.Level;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodeWriter;

/**
 * What the rebooter writes to its own Node: the {@code recovery-blocked} label and {@code recovery-failure}
 * annotation of loop protection, the {@code rebooting-from-boot-id} annotation, and the Events RecoveryFailed,
 * ApprovalInvalid and Rebooting. The writes are the {@link NodeWriter}'s desired state, so they never block on the API
 * server; a writer that throws is logged and never changes a decision; without a writer (no Kubernetes connection)
 * nothing is reported.
 */
final class NodeReports {

    private static final System.Logger LOG = System.getLogger(RebootEngine.class.getName());

    private final Supplier<NodeWriter> writers;
    /** Whether the planted bug {@link PlantedBug#REBOOT_UNANNOUNCED} is active (never in the product). */
    private volatile boolean unannounced;

    /** @param writers the Node writer, or {@code null} / a supplier of {@code null} (nothing reported) */
    NodeReports(Supplier<NodeWriter> writers) {
        this.writers = writers;
    }

    /** @param bug the planted bug of the chaos checker's tests ({@link PlantedBug}), or {@code null} */
    void plant(PlantedBug bug) {
        unannounced = bug == PlantedBug.REBOOT_UNANNOUNCED;
    }

    /**
     * Loop protection refused an automatic recovery reboot.
     *
     * @param requestId identifies the request, so its Event is recorded once
     * @param text the decision text, shown in the annotation and the Event
     */
    void recoveryBlocked(String requestId, String text) {
        report(w -> {
            w.setLabel(NodeKeys.RECOVERY_BLOCKED, "true");
            w.setAnnotation(NodeKeys.RECOVERY_FAILURE, text);
            w.recordEvent(NodeKeys.EVENT_RECOVERY_FAILED + "/" + requestId, NodeKeys.WARNING,
                    NodeKeys.EVENT_RECOVERY_FAILED, text);
        });
    }

    /** Loop protection does not block: the label and the annotation are removed. */
    void recoveryUnblocked() {
        report(w -> {
            w.setLabel(NodeKeys.RECOVERY_BLOCKED, null);
            w.setAnnotation(NodeKeys.RECOVERY_FAILURE, null);
        });
    }

    /**
     * The approval annotation holds a value that is not an approval.
     *
     * @param requestId identifies the request; with the value, its Event is recorded once
     * @param value the annotation's value
     * @param reason the request's reason
     */
    void approvalInvalid(String requestId, String value, String reason) {
        report(w -> w.recordEvent(NodeKeys.EVENT_APPROVAL_INVALID + "/" + requestId + "/" + value, NodeKeys.WARNING,
                NodeKeys.EVENT_APPROVAL_INVALID, "annotation " + NodeKeys.APPROVE_REBOOT + "="
                        + Authorisation.quoteValue(value) + " is not an approval (only the value 'true' is): no reboot"
                        + " (reason=" + reason + ")"));
    }

    /**
     * The reboot is about to be called.
     *
     * @param boot the boot id left
     * @param reason the request's reason
     * @param via what authorised it
     */
    void rebooting(String boot, String reason, String via) {
        report(w -> {
            w.setAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, boot);
            if (unannounced) {
                // planted bug (testing the chaos checker only): breaks "every reboot has its Rebooting Event"
                return;
            }
            w.recordEvent(NodeKeys.EVENT_REBOOTING + "/" + boot, NodeKeys.NORMAL, NodeKeys.EVENT_REBOOTING,
                    "rebooting: reason=" + reason + ", authorised by " + via + ", leaving boot " + boot);
        });
    }

    /** The steps of a previous boot are settled: {@code rebooting-from-boot-id} is removed. */
    void previousBootSettled() {
        report(w -> w.setAnnotation(NodeKeys.REBOOTING_FROM_BOOT_ID, null));
    }

    /**
     * Waits for the writes to be on the Node, right before a reboot would cut them short; logs when they are not.
     * The writer keeps what it has not written on the host before this returns, so the reboot that follows loses
     * nothing.
     *
     * @param timeoutMillis the longest wait, ms of wall-clock time
     */
    void flushBeforeReboot(long timeoutMillis) {
        NodeWriter w = writers == null ? null : writers.get();
        if (w != null && !w.flush(timeoutMillis)) {
            LOG.log(Level.WARNING, "the Node writes (Rebooting Event, labels) could not all be made before the reboot;"
                    + " they are kept on the host (NodeSync MBean PendingWrites, PendingWritesFile) and written when"
                    + " the API server answers again");
        }
    }

    private void report(Consumer<NodeWriter> a) {
        NodeWriter w = writers == null ? null : writers.get();
        if (w == null) {
            return;
        }
        try {
            a.accept(w);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot report to the Node: " + e.getMessage());
        }
    }
}
