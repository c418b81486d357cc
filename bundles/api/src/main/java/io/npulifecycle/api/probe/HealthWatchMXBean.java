package io.npulifecycle.api.probe;

import io.npulifecycle.api.management.Description;

/** The health-watch, object name {@code io.npulifecycle:type=HealthWatch}. */
@Description("The health-watch (io.npulifecycle:type=HealthWatch): probes the NPU chips with npu-smi or DCMI every "
        + "IntervalSeconds and marks wedged chips.")
public interface HealthWatchMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=HealthWatch";

    /** @return probe interval in seconds */
    @Description("Probe interval in seconds.")
    long getIntervalSeconds();

    /** @return probe timeout in seconds */
    @Description("Probe timeout in seconds.")
    long getTimeoutSeconds();

    /** @return consecutive failures that make a chip wedged */
    @Description("Consecutive failed probes (a count) that make a chip wedged.")
    int getFailureThreshold();

    /** @return probe method, {@code npu-smi} or {@code dcmi} */
    @Description("Probe method, npu-smi or dcmi.")
    String getMethod();

    /** @return expected chips, {@code npu:chip} comma-separated, empty while unknown */
    @Description("Expected chips, npu:chip comma-separated, empty while unknown.")
    String getExpectedChips();

    /** @return wedged chips, comma-separated, empty when none */
    @Description("Wedged chips, comma-separated, empty when none.")
    String getWedgedChips();

    /** @return ISO-8601 start time of the last probe, or {@code null} */
    @Description("ISO-8601 start time of the last probe, or null.")
    String getLastProbeTime();

    /** @return duration of the last probe in ms (measured on the TimeSource's monotonic clock), or -1 */
    @Description("Duration of the last probe in milliseconds (measured on the TimeSource's monotonic clock), or -1.")
    long getLastProbeDurationMs();

    /** @return verdict of the last probe ({@code healthy|degraded|failed|probe-error}), or {@code null} */
    @Description("Verdict of the last probe (healthy|degraded|failed|probe-error), or null.")
    String getLastVerdict();

    /** @return error of the last probe, or {@code null} */
    @Description("Error of the last probe, or null.")
    String getLastError();

    /** @return the driver version reported by the last probe, or {@code null} */
    @Description("The driver version reported by the last probe, or null.")
    String getDriverVersion();

    /**
     * @return probe errors since this activation of the health-watch (starts at 0 at each start, so it can be lower
     *         than {@link #getProbeErrorsInRow()})
     */
    @Description("Probe errors (a count) since this activation of the health-watch (starts at 0 at each start, so it can "
            + "be lower than ProbeErrorsInRow).")
    long getProbeErrorCount();

    /**
     * @return probe errors in a row, counted across restarts (kept in the health-watch's persisted state, as the
     *         strikes are): after a restart the first failed probe can make it 3 while {@link #getProbeErrorCount()}
     *         is 1
     */
    @Description("Probe errors in a row (a count), counted across restarts (kept in the health-watch's persisted state, as "
            + "the strikes are): after a restart the first failed probe can make it 3 while ProbeErrorCount is 1.")
    int getProbeErrorsInRow();

    /** @return whether {@code probeErrorThreshold} probe errors happened in a row (cleared by the next good probe) */
    @Description("Whether probeErrorThreshold probe errors happened in a row (cleared by the next good probe).")
    boolean isProbeDegraded();

    /** @return the last raw output cut to 4 KiB, or {@code null} */
    @Description("The last raw npu-smi output, cut to 4 KiB, or null.")
    String getLastRawOutput();

    /**
     * Runs a probe now, on the probe thread, unless one is already running.
     *
     * @return {@code "started"} or {@code "already running"}
     */
    @Description("Runs a probe now, on the probe thread, unless one is already running. Returns \"started\" or \"already "
            + "running\".")
    String probeNow();
}
