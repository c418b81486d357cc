package io.npulifecycle.simulator.harness;

/**
 * Settings of a simulated cluster.
 *
 * @param nodes number of NPU nodes (node-0, node-1, ...)
 * @param npus NPU ids per node
 * @param chipsPerNpu chips per NPU id (310P: 2)
 * @param chipType {@code 910b} or {@code 310p}
 * @param installedVersion the driver version installed at the start
 * @param timeScale simulated seconds per wall-clock second, shared by every runtime
 * @param anchorEpochMillis wall-clock instant at which simulated and real time coincide (before the offset)
 * @param logLevel the runtimes' log level
 * @param wallOffsetMillis milliseconds every runtime's simulated clock starts ahead of (or, negative, behind) the
 *        anchored time: the clock's {@code wallOffsetMillis} (a scenario's {@code cluster.startTime})
 */
public record SimSettings(int nodes, int npus, int chipsPerNpu, String chipType, String installedVersion,
        double timeScale, long anchorEpochMillis, String logLevel, long wallOffsetMillis) {

    /** Settings whose clocks start at the anchored time (no offset). */
    public SimSettings(int nodes, int npus, int chipsPerNpu, String chipType, String installedVersion,
            double timeScale, long anchorEpochMillis, String logLevel) {
        this(nodes, npus, chipsPerNpu, chipType, installedVersion, timeScale, anchorEpochMillis, logLevel, 0);
    }

    /** @return the {@code io.npulifecycle.time.cfg} every runtime starts with */
    String timeConfig() {
        return timeConfig(wallOffsetMillis);
    }

    /**
     * @param offsetMillis the clock's {@code wallOffsetMillis}
     * @return the {@code io.npulifecycle.time.cfg} of a runtime whose clock is {@code offsetMillis} ahead
     */
    String timeConfig(long offsetMillis) {
        return "scale=" + timeScale + "\nanchorEpochMillis=" + anchorEpochMillis + "\nwallOffsetMillis=" + offsetMillis
                + "\n";
    }

    /**
     * @param wallEpochMillis a wall-clock instant
     * @param offsetMillis a runtime's {@code wallOffsetMillis}
     * @return that runtime's simulated time then, epoch milliseconds (the clock bundle's {@code ScaledTimeSource}:
     *         anchor + (wall - anchor) x scale + offset)
     */
    long simulatedAt(long wallEpochMillis, long offsetMillis) {
        return anchorEpochMillis + (long) ((wallEpochMillis - anchorEpochMillis) * timeScale) + offsetMillis;
    }
}
