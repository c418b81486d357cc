package io.npulifecycle.api.time;

import java.time.Duration;
import java.time.Instant;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The clock and scheduler of a runtime, registered as an OSGi service.
 *
 * <p>The production implementation follows the system clock. A scaled implementation (the simulator's compressed
 * clock, configured through PID {@code io.npulifecycle.time}) advances {@code scale} simulated seconds per wall-clock
 * second, and a manual implementation in tests advances only when told to. Every duration passed to or returned by
 * this interface is in <em>simulated</em> time.
 */
@ProviderType
public interface TimeSource {

    /**
     * The current wall-clock instant. May jump (NTP, an operator fixing the clock): never use it to measure
     * durations, use {@link #monotonicNanos()}.
     *
     * @return the current instant, never {@code null}
     */
    Instant now();

    /**
     * A monotonic reading in nanoseconds with an arbitrary origin, for measuring elapsed (simulated) time. Never
     * goes backwards within one runtime process.
     *
     * @return nanoseconds since an arbitrary origin
     */
    long monotonicNanos();

    /**
     * Runs {@code task} once, after {@code delay} of (simulated) time, on a scheduler thread of the time source.
     * A task that throws is logged by the time source and does not affect other tasks.
     *
     * @param task the work; must not block for long
     * @param delay how long to wait; zero or negative runs it as soon as possible
     * @return a handle to cancel the task before it runs
     * @throws NullPointerException if {@code task} or {@code delay} is {@code null}
     * @throws IllegalStateException if the time source has been shut down
     */
    Scheduled schedule(Runnable task, Duration delay);

    /**
     * How many simulated seconds pass per wall-clock second: {@code 1.0} in production.
     *
     * @return the scale, always positive
     */
    double scale();

    /** A task scheduled with {@link TimeSource#schedule(Runnable, Duration)}. */
    @ProviderType
    interface Scheduled {
        /**
         * Cancels the task if it has not started yet.
         *
         * @return {@code true} if the task will not run because of this call
         */
        boolean cancel();
    }
}
