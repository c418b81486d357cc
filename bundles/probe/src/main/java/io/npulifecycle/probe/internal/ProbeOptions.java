package io.npulifecycle.probe.internal;

/**
 * Classification switches shared by every probe.
 *
 * @param alarmIsFailure a chip whose Health is {@code Alarm} or {@code Critical} (DCMI 2 or 3) is {@code failed} (a
 *        strike) instead of {@code degraded}; default {@code false}
 * @param timeoutIsFailure a probe that does not answer within its timeout (or DCMI -8006) is a strike for the chips it
 *        covers instead of a probe error; default {@code true}, deliberately: a wedged driver shows as an npu-smi that
 *        hangs, so a hang must strike or a wedged node would never be recovered. The fixtures README calls a time-out a
 *        probe error; set {@code false} to follow it (then a hanging npu-smi never leads to a reboot).
 */
public record ProbeOptions(boolean alarmIsFailure, boolean timeoutIsFailure) {
    /** The defaults: alarm is degraded, a time-out is a strike. */
    public static final ProbeOptions DEFAULTS = new ProbeOptions(false, true);
}
