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
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;

import io.npulifecycle.api.time.TimeSource;

/**
 * The {@link TimeSource} of a runtime: the system clock, optionally compressed by a scale factor.
 *
 * <p>Simulated instant = {@code anchor + (wall - anchor) * scale}; simulated delays are divided by {@code scale}
 * before they are handed to the scheduler. With {@code scale = 1} this is exactly the system clock.
 *
 * <p>A configuration change is applied in place ({@code @Modified}), as a real clock change would be: nothing is
 * restarted. {@code wallOffsetMillis} moves {@link #now()} only (a wall-clock step, as NTP or an operator makes one);
 * {@link #monotonicNanos()} stays continuous and never goes backwards, and tasks already scheduled keep their delays.
 */
@Component(service = TimeSource.class, configurationPid = ScaledTimeSource.PID, immediate = true)
@Designate(ocd = TimeSourceConfig.class)
public class ScaledTimeSource implements TimeSource {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.time";

    private static final System.Logger LOG = System.getLogger(ScaledTimeSource.class.getName());

    private final Clock wall;
    private final MonotonicSource monotonic;
    private volatile double scale = 1.0;
    private volatile long anchorMillis;
    private volatile long nanoOrigin;
    /** Simulated monotonic nanoseconds accumulated before the last scale change. */
    private volatile long monotonicBase;
    private volatile long offsetMillis;
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
        jumpTo(config.wallOffsetMillis());
    }

    /**
     * Applies a changed configuration in place: a new wall-clock offset is a jump of {@link #now()} (logged); a new
     * scale or anchor re-bases the simulated time while {@link #monotonicNanos()} stays continuous.
     *
     * @param config the new configuration (already validated against the metatype by the management bundle)
     */
    @Modified
    synchronized void modified(TimeSourceConfig config) {
        double newScale = config.scale();
        if (!(newScale > 0) || Double.isInfinite(newScale)) {
            LOG.log(Level.WARNING, "PID {0}: key scale={1} is not a positive number; keeping {2}", PID, newScale,
                    scale);
            newScale = scale;
        }
        long newAnchor = config.anchorEpochMillis() > 0 ? config.anchorEpochMillis() : anchorMillis;
        if (newScale != scale || newAnchor != anchorMillis) {
            long nowNanos = monotonic.nanoTime();
            monotonicBase = monotonicBase + (long) ((nowNanos - nanoOrigin) * scale);
            nanoOrigin = nowNanos;
            scale = newScale;
            anchorMillis = newAnchor;
            LOG.log(Level.INFO, "Clock changed in place: {0} simulated seconds per wall-clock second (anchor {1})",
                    scale, Instant.ofEpochMilli(anchorMillis));
        }
        jumpTo(config.wallOffsetMillis());
    }

    /**
     * Moves the wall clock ({@link #now()} only) to {@code offset} milliseconds from the (scaled) system clock.
     *
     * @param offset milliseconds, negative = back in time
     */
    void jumpTo(long offset) {
        long old = offsetMillis;
        if (old != offset) {
            offsetMillis = offset;
            LOG.log(Level.WARNING, "Wall clock jumped by " + (offset - old) + " ms (offset " + offset
                    + " ms, key wallOffsetMillis of PID " + PID + "); monotonic time and scheduled delays are unchanged");
        }
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
        double s = scale;
        if (s == 1.0) {
            return Instant.ofEpochMilli(w + offsetMillis);
        }
        long a = anchorMillis;
        double simulated = a + (w - a) * s;
        return Instant.ofEpochMilli(Math.round(simulated) + offsetMillis);
    }

    @Override
    public long monotonicNanos() {
        long elapsed = monotonic.nanoTime() - nanoOrigin;
        double s = scale;
        return monotonicBase + (s == 1.0 ? elapsed : (long) (elapsed * s));
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
