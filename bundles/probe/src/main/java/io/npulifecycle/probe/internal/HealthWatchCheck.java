package io.npulifecycle.probe.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * Felix Health Check {@value #NAME} (tag {@value #TAGS}): makes a health-watch that cannot judge the chips visible,
 * since such a health-watch never strikes and would otherwise look fine (e.g. a method no probe serves makes every
 * probe a probe error).
 * <ul>
 * <li>CRITICAL when the marker store folder is missing or not writable, or the last marker/state write failed (a
 * wedge could not be recorded), or the configured method has no probe (neither built in nor a registered
 * {@code ChipProbe} service);</li>
 * <li>WARN while {@code probe-degraded} ({@code probeErrorThreshold} probe errors in a row);</li>
 * <li>OK otherwise.</li>
 * </ul>
 */
final class HealthWatchCheck implements HealthCheck {

    /** {@code hc.name} of the check. */
    static final String NAME = "npu-lifecycle health-watch";
    /** {@code hc.tags} of the check. */
    static final String TAGS = "ready";

    private final Supplier<HealthWatchEngine> engine;
    private final Predicate<String> hasProbe;

    /**
     * @param engine the running engine, or {@code null} before activation
     * @param hasProbe whether a method has a probe (built in or a registered service)
     */
    HealthWatchCheck(Supplier<HealthWatchEngine> engine, Predicate<String> hasProbe) {
        this.engine = engine;
        this.hasProbe = hasProbe;
    }

    @Override
    public Result execute() {
        HealthWatchEngine e = engine.get();
        if (e == null) {
            return new Result(Result.Status.CRITICAL, "health-watch not running");
        }
        Path folder = e.markers().folder();
        if (!Files.isDirectory(folder) || !Files.isWritable(folder)) {
            return new Result(Result.Status.CRITICAL, "marker store " + folder + " is not a writable folder: a wedged "
                    + "chip could not be recorded");
        }
        String storeError = e.markerStoreError();
        if (storeError != null) {
            return new Result(Result.Status.CRITICAL, "marker store " + folder + ": " + storeError);
        }
        String method = e.getMethod();
        if (!hasProbe.test(method)) {
            return new Result(Result.Status.CRITICAL, "no probe for method '" + method + "': chips are not judged");
        }
        if (e.isProbeDegraded()) {
            return new Result(Result.Status.WARN, "probe-degraded: " + e.getProbeErrorsInRow() + " " + method
                    + " probe errors in a row (last: " + e.getLastError() + "); chips cannot be judged");
        }
        return new Result(Result.Status.OK, "health-watch probing with " + method + ", last verdict "
                + e.getLastVerdict());
    }
}
