package io.npulifecycle.rebooter.internal;

import io.npulifecycle.api.markers.MarkerRead;
import io.npulifecycle.api.markers.Markers;
import io.npulifecycle.api.node.ApprovalState;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodePolicy;

/**
 * What authorises the reboot a valid {@code reboot-required} marker asks for, decided by {@link #authorise} from facts
 * alone (no I/O, no clock); {@link RebootEngine} acts on it. This is the first of the two reboot guards; the second,
 * {@link #recheck}, reads the marker and the policy again right before the reboot.
 *
 * <p>Order: an approval consumption already recorded for this boot (finished: {@link Allowed}; interrupted by a
 * restart: {@link Consume}) stands without looking at anything else; else loop protection refuses an automatic
 * recovery reboot once the limit is reached ({@link Refused}; an approval overrides it); else a recovery request that
 * needs the drain ({@link NodePolicy#recoveryNeedsGrant()}) waits until the control plane has drained the node and
 * granted the reboot for this boot ({@link AwaitingDrain}), before any approval is consumed; else {@code autoRecover} /
 * {@code autoUpgrade} allow it ({@link Allowed}); else a valid approval ({@code approve-reboot=true} exactly) allows it
 * once consumed ({@link Consume}), or, when nothing can reboot, leaves it unconsumed ({@link DryRun}); else the request
 * waits ({@link Held}).
 */
sealed interface Authorisation permits Authorisation.Allowed, Authorisation.Consume, Authorisation.DryRun,
        Authorisation.Held, Authorisation.Refused, Authorisation.AwaitingDrain {

    /**
     * The facts one authorisation is decided from.
     *
     * @param boot the current boot id
     * @param reason the marker's reason: {@code recovery} or {@code upgrade}
     * @param chips the marker's {@code chips}, empty when none
     * @param consumed the recorded approval consumption, or {@code null}
     * @param intent the recorded start of an approval consumption, or {@code null}
     * @param policy the node's policy (never {@code null}; {@link NodePolicy#unknown} authorises nothing)
     * @param approval the approval annotation as last seen (never {@code null})
     * @param armed whether a reboot can be made (not dry-run, an executor configured)
     * @param unarmedWhy why no reboot can be made, shown when not {@code armed}
     * @param limitReached loop protection: the recovery reboots in the window when the limit is reached, else
     *        {@code null}
     * @param granted whether the control plane's recovery reboot grant, as last seen, names {@code boot}
     */
    record Request(String boot, String reason, String chips, RebooterState.Step consumed, RebooterState.Step intent,
            NodePolicy policy, ApprovalState approval, boolean armed, String unarmedWhy, String limitReached,
            boolean granted) {

        /** A request without a grant seen. */
        Request(String boot, String reason, String chips, RebooterState.Step consumed, RebooterState.Step intent,
                NodePolicy policy, ApprovalState approval, boolean armed, String unarmedWhy, String limitReached) {
            this(boot, reason, chips, consumed, intent, policy, approval, armed, unarmedWhy, limitReached, false);
        }

        /** @return whether this is a recovery request (else an upgrade) */
        boolean recovery() {
            return Markers.REASON_RECOVERY.equals(reason);
        }
    }

    /**
     * Authorised without consuming anything now.
     *
     * @param via what authorised it, recorded in the history and the Rebooting Event
     * @param recorded whether it stands on an approval consumption recorded earlier in this boot (a runtime restart)
     */
    record Allowed(String via, boolean recorded) implements Authorisation {
    }

    /**
     * Authorised once the approval is consumed (exactly once, recorded before and after the API call).
     *
     * @param context why it is consumed now, for the log
     * @param recorded whether it finishes a consumption whose start was recorded earlier in this boot
     */
    record Consume(String context, boolean recorded) implements Authorisation {
    }

    /**
     * A valid approval, but nothing can reboot (dry run, or no executor): the approval is left in place.
     *
     * @param via what would authorise it
     */
    record DryRun(String via) implements Authorisation {
    }

    /**
     * Not authorised: waiting for an approval.
     *
     * @param why the decision text
     * @param invalidValue the approval annotation's value when present but not an approval, else {@code null}
     */
    record Held(String why, String invalidValue) implements Authorisation {
    }

    /**
     * Refused by loop protection: an automatic recovery reboot past the limit needs a person.
     *
     * @param why the decision text, also shown on the Node: the limit, the chips, and how a person approves
     */
    record Refused(String why) implements Authorisation {
    }

    /**
     * Not authorised yet: a recovery reboot with the drain enabled waits for the control plane's cordon, drain and
     * grant ({@value NodeKeys#RECOVERY_REBOOT_GRANTED} naming this boot). Never skipped: with the control plane or
     * the API server unreachable it waits.
     *
     * @param why the decision text
     */
    record AwaitingDrain(String why) implements Authorisation {
    }

    /**
     * @return whether the decision was taken now from the policy, the approval and loop protection, which clears a
     *         {@code recovery-blocked} label unless it refuses again; {@code false} for a decision that stands on a
     *         recorded consumption and for a refusal
     */
    default boolean decidedAfresh() {
        if (this instanceof Allowed a) {
            return !a.recorded();
        }
        if (this instanceof Consume c) {
            return !c.recorded();
        }
        return !(this instanceof Refused);
    }

    /**
     * Decides what authorises the request.
     *
     * @param q the facts
     * @return the authorisation, never {@code null}
     */
    static Authorisation authorise(Request q) {
        if (q.consumed() != null && q.consumed().bootId().equals(q.boot())) {
            return new Allowed("approval consumed at " + q.consumed().at() + " (before a runtime restart)", true);
        }
        if (q.intent() != null && q.intent().bootId().equals(q.boot())) {
            return new Consume("finishing a consumption interrupted by a restart", true);
        }
        boolean auto = q.recovery() ? q.policy().allowsAutoRecover() : q.policy().allowsAutoUpgrade();
        boolean approved = q.approval().approved();
        if (q.recovery() && auto && !approved && q.limitReached() != null) {
            return new Refused("recovery reboot limit reached: " + q.limitReached() + "; chips " + q.chips()
                    + " still wedged: a person is needed (approve a reboot with " + NodeKeys.APPROVE_REBOOT + "=true)");
        }
        if (q.recovery() && q.policy().recoveryNeedsGrant() && !q.granted()) {
            return new AwaitingDrain("reason=recovery: waiting for the control plane to cordon and drain the node and "
                    + "grant the reboot (" + NodeKeys.RECOVERY_REBOOT_GRANTED + "=" + q.boot() + "; "
                    + "spec.driver.recoveryPolicy.drain.enable is true)");
        }
        if (auto && !approved) {
            return new Allowed(q.recovery() ? "autoRecover=true" : "autoUpgrade=true", false);
        }
        if (approved) {
            return q.armed() ? new Consume("valid approval", false)
                    : new DryRun("approval (not consumed: " + q.unarmedWhy() + ")");
        }
        if (q.approval().invalid()) {
            return new Held("reason=" + q.reason() + ": annotation " + NodeKeys.APPROVE_REBOOT + " has the value "
                    + quoteValue(q.approval().value()) + ", which is not an approval (only 'true' is)",
                    q.approval().value());
        }
        return new Held("reason=" + q.reason() + ": waiting for " + NodeKeys.APPROVE_REBOOT + "=true ("
                + (q.recovery() ? "autoRecover" : "autoUpgrade") + " is "
                + (q.policy().known() ? "false" : "unknown: " + q.policy().problem()) + ")"
                + (q.approval().known() ? "" : "; the Node has not been read yet"), null);
    }

    /**
     * The second reboot guard, right before the reboot: the request must still be there (false-positive suppression
     * removes it) with the same reason, an automatic reboot must still be allowed by the policy, and a recovery
     * reboot that needs the drain must still be granted on the Node read from the API server now.
     *
     * @param again the {@code reboot-required} marker read again
     * @param reason the reason that was authorised
     * @param via what authorised it; {@code auto...} for {@code autoRecover}/{@code autoUpgrade}
     * @param policy the node's policy now
     * @param grant reads the grant from the API server (called only for a recovery reboot that needs it)
     * @return why the reboot must not happen, or {@code null} when it still may
     */
    static String recheck(MarkerRead again, String reason, String via, NodePolicy policy,
            java.util.function.BooleanSupplier grant) {
        String problem = recheck(again, reason, via, policy);
        if (problem == null && Markers.REASON_RECOVERY.equals(reason) && policy.recoveryNeedsGrant()
                && !grant.getAsBoolean()) {
            return "the control plane's recovery reboot grant (" + NodeKeys.RECOVERY_REBOOT_GRANTED
                    + ") for this boot is not on the Node read now (withdrawn, or the API server unreachable)";
        }
        return problem;
    }

    /**
     * The marker and policy part of {@link #recheck(MarkerRead, String, String, NodePolicy, java.util.function.BooleanSupplier)}.
     *
     * @param again the {@code reboot-required} marker read again
     * @param reason the reason that was authorised
     * @param via what authorised it
     * @param policy the node's policy now
     * @return why the reboot must not happen, or {@code null} when it still may
     */
    static String recheck(MarkerRead again, String reason, String via, NodePolicy policy) {
        if (!again.present() || !reason.equals(again.marker().reason())) {
            return "the reboot-required marker is gone or changed (" + again.status() + ")";
        }
        boolean still = Markers.REASON_RECOVERY.equals(reason) ? policy.allowsAutoRecover() : policy.allowsAutoUpgrade();
        if (via.startsWith("auto") && !still) {
            return "the policy no longer allows it (" + (policy.known() ? "auto=false" : policy.problem()) + ")";
        }
        return null;
    }

    /**
     * An annotation value as shown in Events and the log: quoted, control characters escaped, and cut to 64 characters
     * with its length when longer, so that a value of any size makes a short message (an events.k8s.io note is
     * limited to 1 KiB).
     *
     * @param value the value, may be {@code null}
     * @return e.g. {@code 'yes'}, {@code 'true\n'}, {@code 'xxxx...' (10240 characters)}
     */
    static String quoteValue(String value) {
        if (value == null) {
            return "(none)";
        }
        StringBuilder sb = new StringBuilder("'");
        int shown = Math.min(value.length(), 64);
        for (int i = 0; i < shown; i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append(value.length() > shown ? "...' (" + value.length() + " characters)" : "'");
        return sb.toString();
    }
}
