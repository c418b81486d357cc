package io.npulifecycle.api.reboot;

import java.util.List;

/** The rebooter, object name {@code io.npulifecycle:type=Rebooter}. */
public interface RebooterMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=Rebooter";

    /** @return the last decision: NONE, WAITING_FOR_APPROVAL, WAITING_FOR_DRAIN (the control plane's drain and grant), WAITING_FOR_API, RECOVERY_BLOCKED, RECHECK_FAILED, DRY_RUN, REBOOTING, FAILED, STATE_CORRUPT, INVALID_REQUEST */
    String getDecision();

    /** @return why, in words */
    String getDecisionReason();

    /** @return the reboot-required marker of this boot, or {@code null} */
    String getPendingRequest();

    /** @return the last reboot (history entry), or {@code null} */
    String getLastReboot();

    /** @return the reboot history, oldest first */
    List<String> getHistory();

    /** @return recovery reboots counted in the current window ({@code -1} while the state is corrupt) */
    int getRecoveryRebootsInWindow();

    /** @return the recovery reboot limit in force (the CR's, else the configuration's) */
    int getMaxReboots();

    /** @return the window in seconds */
    long getWindowSeconds();

    /** @return whether dryRun is set */
    boolean isDryRun();

    /** @return the reboot executor, or why there is none */
    String getExecutor();

    /** @return the state file path */
    String getStateFile();

    /** @return why the state file is unusable, or {@code null} */
    String getStateProblem();

    /** @return the approval consumed in this boot and not yet used, or {@code null} */
    String getConsumedApproval();

    /** @return the last error, or {@code null} */
    String getLastError();

    /**
     * Runs one decision now, through the same checks as the poll (policy or approval, re-check, loop protection). Can
     * reboot the node. Logged.
     *
     * @return the decision and why
     */
    String evaluateNow();

    /**
     * After a corrupt state file (a copy is kept next to it), starts an empty state. Logged.
     *
     * @return what was done
     */
    String resetState();
}
