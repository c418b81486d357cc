package io.npulifecycle.rebooter.internal;

/** The kinds of decision of one rebooter evaluation; the Rebooter MBean shows the name and the why. */
public enum Decision {
    /** No valid reboot-required marker for this boot. */
    NONE,
    /** A request waits for an approval (or for a valid one). */
    WAITING_FOR_APPROVAL,
    /** Authorised, but the API server could not be reached to consume the approval. */
    WAITING_FOR_API,
    /**
     * An upgrade reboot the control plane does not allow now: the Node's driver-upgrade-state holds it (no rollout
     * slot, cordon or drain in progress) or its maintenance window closed ({@code upgrade-reboot-before}).
     */
    UPGRADE_HELD,
    /**
     * A recovery request with the drain enabled ({@code recoveryPolicy.drain.enable}, or an unknown policy) waits for
     * the control plane to cordon and drain the node and grant the reboot ({@code recovery-reboot-granted}).
     */
    WAITING_FOR_DRAIN,
    /** Recovery reboot limit reached: a person is needed. */
    RECOVERY_BLOCKED,
    /** The re-check right before the reboot failed. */
    RECHECK_FAILED,
    /** Would reboot, but dry-run or no executor. */
    DRY_RUN,
    /** The executor was called. */
    REBOOTING,
    /** The executor failed. */
    FAILED,
    /** The state file is corrupt: nothing reboots until a person resets it. */
    STATE_CORRUPT,
    /** The marker is not usable (unknown reason). */
    INVALID_REQUEST
}
