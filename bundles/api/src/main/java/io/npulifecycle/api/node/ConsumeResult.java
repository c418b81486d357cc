package io.npulifecycle.api.node;

/** Outcome of {@link ApprovalService#consumeApproval(String)}. */
public enum ConsumeResult {
    /** This call removed the annotation (optimistic-concurrency update) and wrote {@value NodeKeys#REBOOTING_FROM_BOOT_ID}. */
    CONSUMED,
    /** The approval had already been consumed for this boot id (a previous call, before a runtime restart). */
    ALREADY_CONSUMED,
    /** No approval on the Node (absent, withdrawn, or a value other than {@code true}). Nothing changed. */
    NOT_APPROVED,
    /** The API server could not be reached or answered an error: nothing is known to have changed; do not reboot. */
    UNREACHABLE,
    /** The Node kept changing under us (409 conflicts past the retry budget): nothing changed; try later. */
    CONFLICT
}
