package io.npulifecycle.testing.support;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.npulifecycle.api.time.TimeSource;

/**
 * A compressed clock for tests with real threads (informers): {@code scale} simulated seconds pass per wall second;
 * scheduled tasks run on one daemon thread.
 */
public final class ScaledTestClock implements TimeSource, AutoCloseable {
    private final double scale;
    private final Instant anchor = Instant.parse("2026-12-01T00:00:00Z");
    private final long startNanos = System.nanoTime();
    private final ScheduledExecutorService ses = Executors.newScheduledThreadPool(1, r -> {
        Thread t = new Thread(r, "scaled-time");
        t.setDaemon(true);
        return t;
    });

    /** @param scale simulated seconds per wall second */
    public ScaledTestClock(double scale) {
        this.scale = scale;
    }

    private volatile long wallOffsetMillis;

    @Override
    public Instant now() {
        return anchor.plusNanos(monotonicNanos()).plusMillis(wallOffsetMillis);
    }

    /**
     * Steps the wall clock (an NTP correction, an operator setting the date): {@link #now()} jumps, monotonic time and
     * scheduled delays do not (like PID io.npulifecycle.time key wallOffsetMillis of the real clock bundle).
     *
     * @param by the step, positive = forward
     */
    public void jumpWall(Duration by) {
        wallOffsetMillis += by.toMillis();
    }

    @Override
    public long monotonicNanos() {
        return (long) ((System.nanoTime() - startNanos) * scale);
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        long real = Math.max(0, (long) (delay.toNanos() / scale));
        ScheduledFuture<?> f = ses.schedule(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                System.getLogger(ScaledTestClock.class.getName()).log(System.Logger.Level.WARNING, "task failed", e);
            }
        }, real, TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    @Override
    public double scale() {
        return scale;
    }

    @Override
    public void close() {
        ses.shutdownNow();
    }
}
