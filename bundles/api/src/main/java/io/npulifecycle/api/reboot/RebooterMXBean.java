package io.npulifecycle.api.reboot;

import java.util.List;

import io.npulifecycle.api.management.Description;

/** The rebooter, object name {@code io.npulifecycle:type=Rebooter}. */
@Description("The rebooter (io.npulifecycle:type=Rebooter): reboot decisions, the recovery drain grant it waits for, "
        + "history and recovery-reboot window.")
public interface RebooterMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=Rebooter";

    /** @return the last decision: NONE, WAITING_FOR_APPROVAL, WAITING_FOR_DRAIN (the control plane's drain and grant), WAITING_FOR_API, UPGRADE_HELD, RECOVERY_BLOCKED, RECHECK_FAILED, DRY_RUN, REBOOTING, FAILED, STATE_CORRUPT, INVALID_REQUEST */
    @Description("The last decision: NONE, WAITING_FOR_APPROVAL, WAITING_FOR_DRAIN (the control plane's drain and "
            + "reboot grant), WAITING_FOR_API, UPGRADE_HELD, RECOVERY_BLOCKED, RECHECK_FAILED, DRY_RUN, REBOOTING, "
            + "FAILED, STATE_CORRUPT, INVALID_REQUEST.")
    String getDecision();

    /** @return why, in words */
    @Description("Why the rebooter made its last decision, in words.")
    String getDecisionReason();

    /** @return the reboot-required marker of this boot, or {@code null} */
    @Description("The reboot-required marker of this boot, or null.")
    String getPendingRequest();

    /**
     * @return for a recovery request of this boot, the control plane's drain grant
     *         ({@code npu.openfuyao.com/recovery-reboot-granted}) it waits for and what the Node shows, e.g.
     *         {@code waiting for npu.openfuyao.com/recovery-reboot-granted=<boot id> (the Node has none): ...},
     *         {@code granted for boot <boot id> ...}, or {@code not needed: ...} (the drain disabled); {@code null}
     *         without a recovery request. As of the last decision
     * @since 1.1
     */
    @Description("For a recovery request of this boot, the control plane's drain grant "
            + "(npu.openfuyao.com/recovery-reboot-granted) it waits for and what the Node shows: waiting for ...=<boot id> "
            + "(the Node has none), granted for boot <boot id>, or not needed (the recovery drain disabled); null without a "
            + "recovery request. As of the last decision.")
    default String getRecoveryGrant() {
        return null;
    }

    /** @return the last reboot (history entry), or {@code null} */
    @Description("The last reboot (history entry), or null.")
    String getLastReboot();

    /** @return the reboot history, oldest first */
    @Description("The reboot history, oldest first.")
    List<String> getHistory();

    /** @return recovery reboots counted in the current window ({@code -1} while the state is corrupt) */
    @Description("Recovery reboots (a count) in the current window (-1 while the state is corrupt).")
    int getRecoveryRebootsInWindow();

    /** @return the recovery reboot limit in force (the CR's, else the configuration's) */
    @Description("The recovery reboot limit in force, reboots per window (the CR's, else the configuration's).")
    int getMaxReboots();

    /** @return the window in seconds */
    @Description("The length of the recovery-reboot window, in seconds.")
    long getWindowSeconds();

    /** @return whether dryRun is set */
    @Description("Whether dryRun is set (decisions are logged, the node is never rebooted).")
    boolean isDryRun();

    /** @return the reboot executor, or why there is none */
    @Description("The reboot executor, or why there is none.")
    String getExecutor();

    /** @return the state file path */
    @Description("The path of the rebooter's state file (history and window counts).")
    String getStateFile();

    /** @return why the state file is unusable, or {@code null} */
    @Description("Why the state file is unusable, or null.")
    String getStateProblem();

    /** @return the approval consumed in this boot and not yet used, or {@code null} */
    @Description("The approval consumed in this boot and not yet used, or null.")
    String getConsumedApproval();

    /** @return the last error, or {@code null} */
    @Description("The last error, or null.")
    String getLastError();

    /**
     * Runs one decision now, through the same checks as the poll (policy or approval, re-check, loop protection). Can
     * reboot the node. Logged.
     *
     * @return the decision and why
     */
    @Description("Runs one decision now, through the same checks as the poll (policy or approval, re-check, loop "
            + "protection). Can reboot the node. Logged. Returns the decision and why.")
    String evaluateNow();

    /**
     * After a corrupt state file (a copy is kept next to it), starts an empty state. Logged. The decision is then
     * {@code NONE} (not evaluated since the reset) until the next evaluation, the poll's or {@link #evaluateNow}.
     *
     * @return what was done
     */
    @Description("After a corrupt state file (a copy is kept next to it), starts an empty state. Logged. The Decision is "
            + "then NONE until the next evaluation (the poll's or evaluateNow). Returns what was done.")
    String resetState();
}
