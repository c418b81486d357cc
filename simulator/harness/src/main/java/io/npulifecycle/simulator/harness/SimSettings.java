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
 * @param anchorEpochMillis wall-clock instant at which simulated and real time coincide
 * @param logLevel the runtimes' log level
 */
public record SimSettings(int nodes, int npus, int chipsPerNpu, String chipType, String installedVersion,
        double timeScale, long anchorEpochMillis, String logLevel) {

    /** @return the {@code io.npulifecycle.time.cfg} of every runtime */
    String timeConfig() {
        return "scale=" + timeScale + "\nanchorEpochMillis=" + anchorEpochMillis + "\n";
    }
}
