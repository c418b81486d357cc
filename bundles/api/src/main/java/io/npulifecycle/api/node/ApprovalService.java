package io.npulifecycle.api.node;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The node's reboot approval ({@value NodeKeys#APPROVE_REBOOT}) and its exactly-once consumption (an OSGi service of
 * the Kubernetes bundle).
 *
 * <p>Consumption is one optimistic-concurrency update of the Node (PUT with the {@code resourceVersion} just read):
 * it removes the approval and sets {@value NodeKeys#REBOOTING_FROM_BOOT_ID} to the boot id being left, in the same
 * write, so after a crash the caller can ask the API server whether its consumption happened
 * ({@link ConsumeResult#ALREADY_CONSUMED}). A 409 re-reads the Node and retries while the approval is still there.
 */
@ProviderType
public interface ApprovalService {

    /** @return the approval as last seen by the Node informer; never {@code null} */
    ApprovalState approval();

    /**
     * Consumes the approval for a reboot that leaves {@code bootId}. Reads the Node from the API server (not the
     * cache). Idempotent per boot id.
     *
     * @param bootId the current boot id
     * @return what happened; only {@link ConsumeResult#CONSUMED} and {@link ConsumeResult#ALREADY_CONSUMED} authorise
     *         a reboot
     */
    ConsumeResult consumeApproval(String bootId);

    /**
     * Puts back an approval consumed for {@code bootId} whose reboot did not happen (the re-check before the reboot
     * failed, the reboot call failed, or the request went away): only if the Node still shows that consumption
     * ({@value NodeKeys#REBOOTING_FROM_BOOT_ID} equals {@code bootId}), it removes that annotation and sets the
     * approval to {@code true} again, in one optimistic-concurrency update. Without that proof nothing is changed (an
     * approval withdrawn by the person is not put back).
     *
     * @param bootId the boot id the consumption was made for
     * @return {@code true} when settled (put back, or nothing to put back); {@code false} if the API server could not
     *         be reached (call again later)
     */
    boolean restoreApproval(String bootId);

    /**
     * Whether the control plane allows an upgrade reboot now, from the Node as last seen by the informer: the rule of
     * {@link NodeKeys#upgradeRebootRefusal} (no reboot unless its {@value NodeKeys#DRIVER_UPGRADE_STATE} grants it,
     * {@link NodeKeys#upgradeRebootGranted}, nor at or after its {@value NodeKeys#UPGRADE_REBOOT_BEFORE}, the close of
     * the maintenance window).
     *
     * @param now the node agent's clock
     * @return why no upgrade reboot may start now (also when the Node is not known: deleted, or not read yet), or
     *         {@code null} when it may; this default, for a node agent without Kubernetes (no control plane to grant
     *         anything), returns {@code null}: the policy decides
     * @since 1.3
     */
    default String upgradeRebootRefusal(java.time.Instant now) {
        return null;
    }

    /**
     * @return the control plane's recovery reboot grant ({@value NodeKeys#RECOVERY_REBOOT_GRANTED}: the boot id the
     *         granted reboot leaves) as last seen by the Node informer, or {@code null} when absent or not seen yet
     */
    default String rebootGrant() {
        return null;
    }

    /**
     * Reads the Node from the API server (not the cache), right before a recovery reboot that needs the drain.
     *
     * @param bootId the current boot id
     * @return whether {@value NodeKeys#RECOVERY_REBOOT_GRANTED} names {@code bootId}; {@code false} when it does not,
     *         and when the API server cannot be reached (no reboot without the proof of the drain)
     */
    default boolean rebootGranted(String bootId) {
        return false;
    }
}
