package io.npulifecycle.rebooter.internal;

import java.time.Duration;

/**
 * Whether a reboot recorded as called in this boot is still to be waited for. The agent that called it waits for the
 * new boot for good: a reboot is never called twice in one boot by one agent. An agent that finds the call of its
 * predecessor (a runtime restart in the same boot) waits {@link #GRACE} of monotonic time from when it first saw it,
 * then takes the call as one that did not take effect, so the request is served again.
 *
 * <p>Not thread-safe: used under the engine's lock.
 */
final class CallWatch {

    /**
     * How long a restarted node agent waits, in the same boot, after finding a reboot called by its predecessor before
     * concluding that the call never took effect (simulated time, monotonic, so a wall-clock jump changes nothing).
     * Without it, an agent killed between recording the call and the executor's work would leave the node in this
     * boot for good, its approval consumed and the request never served.
     */
    static final Duration GRACE = Duration.ofMinutes(10);

    /** Whether this engine (this runtime process) called the executor; a restarted agent starts with false. */
    private boolean calledHere;
    /** Monotonic time at which this engine first saw a reboot called by a previous process in this boot. */
    private Long sawForeignCallNanos;

    /** This agent is calling the executor now. */
    void calling() {
        calledHere = true;
    }

    /** The executor call failed: nothing is waited for. */
    void callFailed() {
        calledHere = false;
    }

    /**
     * @param reboot the reboot recorded as called in this boot
     * @param boot the current boot id
     * @param nowNanos monotonic time now
     * @return the decision text while the call is waited for, {@code null} once the predecessor's call is taken as
     *         one that did not take effect (it is then forgotten)
     */
    String waiting(RebooterState.Step reboot, String boot, long nowNanos) {
        if (calledHere) {
            return "the reboot was called at " + reboot.at() + " (reason=" + reboot.reason() + "); waiting for the new"
                    + " boot (the reboot is never called twice in one boot by one agent)";
        }
        if (sawForeignCallNanos == null) {
            sawForeignCallNanos = nowNanos;
        }
        if (nowNanos - sawForeignCallNanos < GRACE.toNanos()) {
            return "the reboot was called at " + reboot.at() + " (reason=" + reboot.reason() + ") by the previous node"
                    + " agent; waiting for the new boot; if the host is still in boot " + boot + " "
                    + GRACE.toSeconds() + " s after this agent found it, the call did not take effect and is made"
                    + " again under the same authority";
        }
        sawForeignCallNanos = null;
        return null;
    }
}
