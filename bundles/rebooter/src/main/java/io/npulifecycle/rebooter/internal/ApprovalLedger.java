package io.npulifecycle.rebooter.internal;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.function.Supplier;

import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.ConsumeResult;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.time.TimeSource;

/**
 * Uses an approval exactly once per boot, and puts it back when its reboot does not happen.
 *
 * <p>Consuming is recorded in two steps around the API call: the intent before it (a crash in the middle is resolved
 * by asking the API server again, which answers {@code ALREADY_CONSUMED}), the consumption right after it (a restart
 * in the same boot then reboots without a second approval). An approval is put back only while no reboot was called in
 * this boot, and only by the API server's proof of the consumption ({@link ApprovalService#restoreApproval}).
 *
 * <p>Not thread-safe: called under the engine's lock, with the engine's state.
 */
final class ApprovalLedger {

    /** Saves the engine's state file. */
    interface Saver {
        /**
         * @param what what is recorded, for the error message
         * @return whether it was written
         */
        boolean save(String what);
    }

    /** Records a decision of the engine. */
    interface Decider {
        /**
         * @param d the decision
         * @param why the text
         */
        void decide(Decision d, String why);
    }

    private static final System.Logger LOG = System.getLogger(RebootEngine.class.getName());

    private final Supplier<ApprovalService> approvals;
    private final TimeSource time;
    private final Saver saver;
    private final Decider decider;

    /**
     * @param approvals the approval service, or {@code null} / a supplier of {@code null} (no approval can be used)
     * @param time the TimeSource (times of the records)
     * @param saver saves the engine's state
     * @param decider records the engine's decision when the approval cannot be used
     */
    ApprovalLedger(Supplier<ApprovalService> approvals, TimeSource time, Saver saver, Decider decider) {
        this.approvals = approvals;
        this.time = time;
        this.saver = saver;
        this.decider = decider;
    }

    private ApprovalService service() {
        return approvals == null ? null : approvals.get();
    }

    /** @return the approval as last seen; unknown when there is no approval service */
    ApprovalState approval() {
        ApprovalService as = service();
        ApprovalState a = as == null ? null : as.approval();
        return a == null ? new ApprovalState(false, false, null, null) : a;
    }

    /**
     * @return why the control plane does not allow an upgrade reboot now ({@link ApprovalService#upgradeRebootRefusal}),
     *         or null; without an approval service, a refusal: the grant cannot be read. The service is absent while
     *         the Kubernetes bundle starts or stops, and the policy source (autoUpgrade) may still be bound then: a
     *         chaos run saw an upgrade reboot, without its slot or its Rebooting Event, while the node agent was
     *         being stopped. A node agent without Kubernetes never makes an upgrade reboot either way (its policy
     *         is unknown and no approval can be consumed).
     */
    String upgradeRebootRefusal() {
        ApprovalService as = service();
        return as == null ? "no Kubernetes connection service (starting or stopping): the control plane's grant "
                + "cannot be read" : as.upgradeRebootRefusal(time.now());
    }

    /**
     * @param boot the current boot id
     * @return whether the control plane's recovery reboot grant, as last seen, names {@code boot}
     */
    boolean grantSeen(String boot) {
        ApprovalService as = service();
        return as != null && boot != null && boot.equals(as.rebootGrant());
    }

    /**
     * The Rebooter MBean's {@code RecoveryGrant}: what a recovery request of this boot needs from the control plane
     * and what the Node shows (as last seen by the node agent's Node informer).
     *
     * @param boot the current boot id
     * @param needsGrant whether the policy makes a recovery reboot wait for the grant
     *        ({@code NodePolicy.recoveryNeedsGrant()})
     * @return e.g. {@code waiting for npu.openfuyao.com/recovery-reboot-granted=<boot> (the Node has none)},
     *         {@code granted for boot <boot> (...)}, or {@code not needed (...)}
     */
    String grantView(String boot, boolean needsGrant) {
        if (!needsGrant) {
            return "not needed: spec.driver.recoveryPolicy.drain.enable is false or the policy is unknown (the "
                    + "recovery reboot does not wait for the control plane's drain)";
        }
        ApprovalService as = service();
        String g = as == null ? null : as.rebootGrant();
        if (boot != null && boot.equals(g)) {
            return "granted for boot " + boot + " (" + NodeKeys.RECOVERY_REBOOT_GRANTED + "): the control plane "
                    + "drained the node";
        }
        return "waiting for " + NodeKeys.RECOVERY_REBOOT_GRANTED + "=" + boot + " (the Node has "
                + (g == null ? "none" : "'" + g + "', another boot's") + "): the control plane cordons and drains the "
                + "node first (its NPUOperatorCtl status recoveringNodes says how far)";
    }

    /**
     * @param boot the current boot id
     * @return whether the grant names {@code boot} on the Node read from the API server now; false when unreachable
     */
    boolean grantConfirmed(String boot) {
        ApprovalService as = service();
        return as != null && as.rebootGranted(boot);
    }

    /**
     * Consumes the approval for a reboot leaving {@code boot}.
     *
     * @param state the engine's state (intent and consumption are recorded in it)
     * @param boot the current boot id
     * @param reason the request's reason
     * @param context why it is consumed now, for the log
     * @param stateFile the state file, for the error message
     * @return what authorised the reboot, e.g. {@code approval (CONSUMED)}; {@code null} when it must not reboot now
     *         (the decision is made)
     */
    String consume(RebooterState state, String boot, String reason, String context, Path stateFile) {
        ApprovalService as = service();
        if (as == null) {
            decider.decide(Decision.WAITING_FOR_API, "reason=" + reason
                    + ": no Kubernetes connection service: approval not used");
            return null;
        }
        if (state.intent == null || !state.intent.bootId().equals(boot)) {
            state.intent = new RebooterState.Step(boot, reason, time.now(), "approval");
            if (!saver.save("record the approval consumption intent")) {
                state.intent = null;
                decider.decide(Decision.FAILED, "cannot write the state file " + stateFile + ": approval not used");
                return null;
            }
        }
        ConsumeResult r = as.consumeApproval(boot);
        switch (r) {
            case CONSUMED, ALREADY_CONSUMED -> {
                state.consumed = new RebooterState.Step(boot, reason, time.now(), "approval");
                state.intent = null;
                if (!saver.save("record the consumed approval")) {
                    // the Node shows the consumption (rebooting-from-boot-id): the intent path finds it again
                    state.intent = state.consumed;
                    state.consumed = null;
                    decider.decide(Decision.FAILED, "approval consumed but the state file " + stateFile
                            + " cannot be written: no reboot now");
                    return null;
                }
                LOG.log(Level.INFO, "approval consumed for reason=" + reason + " leaving boot " + boot + " (" + context
                        + ", " + r + ")");
                return "approval (" + r + ")";
            }
            case NOT_APPROVED -> {
                state.intent = null;
                saver.save("clear the consumption intent");
                decider.decide(Decision.WAITING_FOR_APPROVAL, "reason=" + reason
                        + ": the approval was withdrawn before it could be consumed: no reboot");
                return null;
            }
            default -> {
                decider.decide(Decision.WAITING_FOR_API, "reason=" + reason + ": cannot consume the approval (" + r
                        + "): the approval is not used, no reboot");
                return null;
            }
        }
    }

    /**
     * Puts back the approval consumed for {@code boot}, unless a reboot was called in this boot.
     *
     * @param state the engine's state
     * @param boot the current boot id
     */
    void giveBack(RebooterState state, String boot) {
        if (state.consumed == null || !state.consumed.bootId().equals(boot)) {
            return;
        }
        if (state.reboot != null && state.reboot.bootId().equals(boot)) {
            // The executor was called in this boot: the approval was used. The node may still be running for a
            // moment (a reboot command returns before the host goes down); the marker vanishing now must not put
            // the approval back for a later reboot.
            return;
        }
        ApprovalService as = service();
        if (as != null && as.restoreApproval(boot)) {
            state.consumed = null;
            saver.save("clear the consumed approval");
        }
    }

    /**
     * Settles a consumption started for {@code boot} whose request went away: the approval is put back if the API
     * server shows it consumed, and the intent is cleared once that is settled.
     *
     * @param state the engine's state
     * @param boot the current boot id
     */
    void withdrawIntent(RebooterState state, String boot) {
        if (state.intent != null && state.intent.bootId().equals(boot)) {
            ApprovalService as = service();
            if (as != null && as.restoreApproval(boot)) {
                state.intent = null;
                saver.save("clear the consumption intent");
            }
        }
    }
}
