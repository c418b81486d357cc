package io.npulifecycle.management.internal;

import java.time.Duration;

import io.npulifecycle.api.time.TimeSource;

/**
 * A task run every {@code periodSeconds} of wall-clock time on the injected {@link TimeSource}, whatever the clock's
 * scale (the simulator compresses time; a console's refresh and a deploy-folder scan must not speed up with it).
 * Each run schedules the next one once it ended, so runs never overlap; {@link #stop()} cancels the pending one.
 * Thread-safe.
 */
final class WallPeriod {

    private final TimeSource time;
    private final long periodSeconds;
    private final Runnable task;
    private volatile boolean active;
    private volatile TimeSource.Scheduled next;

    /**
     * @param time the injected clock
     * @param periodSeconds the wall-clock period, seconds (at least 1 ms after scaling)
     * @param task what to run; an exception it throws ends nothing: the next run is scheduled anyway
     */
    WallPeriod(TimeSource time, long periodSeconds, Runnable task) {
        this.time = time;
        this.periodSeconds = periodSeconds;
        this.task = task;
    }

    /** Schedules the first run one period from now. */
    void start() {
        active = true;
        reschedule();
    }

    /** Cancels the pending run; a run under way finishes and schedules nothing. */
    void stop() {
        active = false;
        TimeSource.Scheduled s = next;
        if (s != null) {
            s.cancel();
        }
    }

    private void reschedule() {
        if (!active) {
            return;
        }
        Duration period = Duration.ofMillis(Math.max(1, Math.round(periodSeconds * 1000 * time.scale())));
        next = time.schedule(() -> {
            try {
                task.run();
            } finally {
                reschedule();
            }
        }, period);
    }
}
