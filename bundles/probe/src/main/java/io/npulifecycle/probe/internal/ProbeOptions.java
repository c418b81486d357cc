package io.npulifecycle.probe.internal;

/**
 * Classification switches shared by every probe.
 *
 * @param alarmIsFailure a chip whose Health is {@code Alarm} or {@code Critical} (DCMI 2 or 3) is {@code failed} (a
 *        strike) instead of {@code degraded}; default {@code false}
 * @param timeoutIsFailure a probe that does not answer within its timeout (or DCMI -8006) is a strike for the chips it
 *        covers instead of a probe error; default {@code true}. The fixtures README says a time-out is a probe error;
 *        issue #3 says a hang is a strike. The field symptom of a wedged driver is npu-smi hanging, so a hang counts
 *        as a strike by default; set {@code false} to follow the fixtures README.
 */
public record ProbeOptions(boolean alarmIsFailure, boolean timeoutIsFailure) {
    /** The defaults: alarm is degraded, a time-out is a strike. */
    public static final ProbeOptions DEFAULTS = new ProbeOptions(false, true);
}
