package io.npulifecycle.clock.internal;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;

import io.npulifecycle.api.time.TimeSource;

/**
 * The {@link TimeSource} of a runtime: the system clock, optionally compressed by a scale factor.
 *
 * <p>Simulated instant = {@code anchor + (wall - anchor) * scale}; simulated delays are divided by {@code scale}
 * before they are handed to the scheduler. With {@code scale = 1} this is exactly the system clock. A configuration
 * change re-creates the component (no {@code @Modified}), so dependents see one consistent clock at a time.
 */
@Component(service = TimeSource.class, configurationPid = ScaledTimeSource.PID, immediate = true)
@Designate(ocd = TimeSourceConfig.class)
public class ScaledTimeSource implements TimeSource {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.time";

    private static final System.Logger LOG = System.getLogger(ScaledTimeSource.class.getName());

    private final Clock wall;
    private final MonotonicSource monotonic;
    private double scale = 1.0;
    private long anchorMillis;
    private long nanoOrigin;
    private ScheduledThreadPoolExecutor executor;

    /** Supplies monotonic wall-clock nanoseconds; replaced in tests. */
    @FunctionalInterface
    interface MonotonicSource {
        long nanoTime();
    }

    /** DS constructor: the system clock. */
    public ScaledTimeSource() {
        this(Clock.systemUTC(), System::nanoTime);
    }

    ScaledTimeSource(Clock wall, MonotonicSource monotonic) {
        this.wall = wall;
        this.monotonic = monotonic;
    }

    @Activate
    void activate(TimeSourceConfig config) {
        start(config.scale(), config.anchorEpochMillis());
    }

    /**
     * Starts the scheduler.
     *
     * @param newScale simulated seconds per wall second; a non-positive or non-finite value is replaced by 1 with a
     *        log line (configuration validation normally rejects it first)
     * @param anchorEpochMillis where simulated and real time coincide; 0 = now
     */
    void start(double newScale, long anchorEpochMillis) {
        if (!(newScale > 0) || Double.isInfinite(newScale)) {
            LOG.log(Level.WARNING, "PID {0}: key scale={1} is not a positive number; using 1", PID, newScale);
            newScale = 1.0;
        }
        this.scale = newScale;
        this.anchorMillis = anchorEpochMillis > 0 ? anchorEpochMillis : wall.millis();
        this.nanoOrigin = monotonic.nanoTime();
        AtomicInteger n = new AtomicInteger();
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "npu-lifecycle-clock-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(2, tf);
        ex.setRemoveOnCancelPolicy(true);
        ex.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.executor = ex;
        if (scale != 1.0) {
            LOG.log(Level.INFO, "Clock compressed: {0} simulated seconds per wall-clock second (anchor {1})", scale,
                    Instant.ofEpochMilli(anchorMillis));
        }
    }

    @Deactivate
    void deactivate() {
        ScheduledThreadPoolExecutor ex = executor;
        if (ex != null) {
            ex.shutdownNow();
        }
    }

    @Override
    public Instant now() {
        long w = wall.millis();
        if (scale == 1.0) {
            return Instant.ofEpochMilli(w);
        }
        double simulated = anchorMillis + (w - anchorMillis) * scale;
        return Instant.ofEpochMilli(Math.round(simulated));
    }

    @Override
    public long monotonicNanos() {
        long elapsed = monotonic.nanoTime() - nanoOrigin;
        return scale == 1.0 ? elapsed : (long) (elapsed * scale);
    }

    @Override
    public Scheduled schedule(Runnable task, Duration delay) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(delay, "delay");
        ScheduledThreadPoolExecutor ex = executor;
        if (ex == null || ex.isShutdown()) {
            throw new IllegalStateException("the clock has been shut down");
        }
        long wallNanos = delay.isNegative() ? 0 : (long) (toNanosSaturated(delay) / scale);
        Runnable guarded = () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "Scheduled task " + task + " failed", e);
            }
        };
        ScheduledFuture<?> f = ex.schedule(guarded, wallNanos, TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    @Override
    public double scale() {
        return scale;
    }

    private static long toNanosSaturated(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
