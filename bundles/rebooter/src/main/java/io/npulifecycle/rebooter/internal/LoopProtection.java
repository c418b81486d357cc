package io.npulifecycle.rebooter.internal;

import java.time.Duration;
import java.util.function.Supplier;

import io.npulifecycle.api.node.NodePolicy;
import io.npulifecycle.api.time.TimeSource;

/**
 * Loop protection of automatic recovery: at most {@code maxReboots} recovery reboots (called or completed) within the
 * last {@code window}, each taken from the node's policy when it sets them, else from the rebooter's configuration.
 * Past the limit an automatic recovery reboot needs a person ({@link Authorisation.Refused}).
 */
final class LoopProtection {

    private final Supplier<NodePolicy> policy;
    private final Supplier<RebootEngine.Settings> settings;
    private final TimeSource time;

    /**
     * @param policy the node's current policy, never {@code null}
     * @param settings the rebooter's current settings
     * @param time the TimeSource (the end of the window is now)
     */
    LoopProtection(Supplier<NodePolicy> policy, Supplier<RebootEngine.Settings> settings, TimeSource time) {
        this.policy = policy;
        this.settings = settings;
        this.time = time;
    }

    /** @return the recovery reboots allowed in the window */
    int maxReboots() {
        Integer fromCr = policy.get().maxReboots();
        return fromCr != null ? fromCr : settings.get().maxReboots();
    }

    /** @return the window */
    Duration window() {
        Duration fromCr = policy.get().window();
        return fromCr != null ? fromCr : settings.get().window();
    }

    /**
     * @param state the rebooter's state (its history)
     * @return the recovery reboots in the window up to now
     */
    int inWindow(RebooterState state) {
        return state.recoveryRebootsSince(time.now().minus(window()));
    }

    /**
     * @param state the rebooter's state (its history)
     * @return e.g. {@code 3 recovery reboots in the last PT24H (limit 3)} when the limit is reached, else {@code null}
     */
    String limitReached(RebooterState state) {
        int max = maxReboots();
        Duration window = window();
        int n = state.recoveryRebootsSince(time.now().minus(window));
        return n >= max ? n + " recovery reboots in the last " + window + " (limit " + max + ")" : null;
    }
}
