package io.npulifecycle.api.probe;

/** The health-watch, object name {@code io.npulifecycle:type=HealthWatch}. */
public interface HealthWatchMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=HealthWatch";

    /** @return probe interval in seconds */
    long getIntervalSeconds();

    /** @return probe timeout in seconds */
    long getTimeoutSeconds();

    /** @return consecutive failures that make a chip wedged */
    int getFailureThreshold();

    /** @return probe method, {@code npu-smi} or {@code dcmi} */
    String getMethod();

    /** @return expected chips, {@code npu:chip} comma-separated, empty while unknown */
    String getExpectedChips();

    /** @return wedged chips, comma-separated, empty when none */
    String getWedgedChips();

    /** @return ISO-8601 start time of the last probe, or {@code null} */
    String getLastProbeTime();

    /** @return duration of the last probe in ms (measured on the TimeSource's monotonic clock), or -1 */
    long getLastProbeDurationMs();

    /** @return verdict of the last probe ({@code healthy|degraded|failed|probe-error}), or {@code null} */
    String getLastVerdict();

    /** @return error of the last probe, or {@code null} */
    String getLastError();

    /** @return the driver version reported by the last probe, or {@code null} */
    String getDriverVersion();

    /**
     * @return probe errors since this activation of the health-watch (starts at 0 at each start, so it can be lower
     *         than {@link #getProbeErrorsInRow()})
     */
    long getProbeErrorCount();

    /**
     * @return probe errors in a row, counted across restarts (kept in the health-watch's persisted state, as the
     *         strikes are): after a restart the first failed probe can make it 3 while {@link #getProbeErrorCount()}
     *         is 1
     */
    int getProbeErrorsInRow();

    /** @return whether {@code probeErrorThreshold} probe errors happened in a row (cleared by the next good probe) */
    boolean isProbeDegraded();

    /** @return the last raw output cut to 4 KiB, or {@code null} */
    String getLastRawOutput();

    /**
     * Runs a probe now, on the probe thread, unless one is already running.
     *
     * @return {@code "started"} or {@code "already running"}
     */
    String probeNow();
}
