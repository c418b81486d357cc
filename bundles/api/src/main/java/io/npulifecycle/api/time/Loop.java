package io.npulifecycle.api.time;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A round of work run on one daemon thread every {@code period} of {@link TimeSource} time and at once when woken
 * (a marker changed, an event arrived); wakes that arrive while a round is queued are coalesced into it, and a wake
 * restarts the period. Used by the rebooter and the driver bundle, whose rounds must never run concurrently.
 */
public final class Loop {

    private static final System.Logger LOG = System.getLogger(Loop.class.getName());

    private final TimeSource time;
    private final Runnable round;
    private final ExecutorService worker;
    private final AtomicBoolean queued = new AtomicBoolean();
    private volatile Duration period;
    private volatile TimeSource.Scheduled next;
    private volatile boolean active;

    /**
     * @param name the thread name, e.g. {@code npu-rebooter}
     * @param time the clock that schedules the periodic rounds
     * @param period time between rounds when nothing wakes the loop (must be positive)
     * @param round the work; an exception it throws is logged and the loop goes on
     */
    public Loop(String name, TimeSource time, Duration period, Runnable round) {
        this.time = Objects.requireNonNull(time, "time");
        this.round = Objects.requireNonNull(round, "round");
        this.period = requirePositive(period);
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    private static Duration requirePositive(Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException("period must be positive, got " + d);
        }
        return d;
    }

    /** Starts the loop: runs a first round at once. */
    public void start() {
        active = true;
        wake();
    }

    /**
     * @param newPeriod the time between rounds from the next round on
     * @throws IllegalArgumentException if not positive
     */
    public void period(Duration newPeriod) {
        this.period = requirePositive(newPeriod);
    }

    /** @return the time between rounds */
    public Duration period() {
        return period;
    }

    /** Runs a round as soon as the worker is free (coalesced with a round already queued). */
    public void wake() {
        if (!active || !queued.compareAndSet(false, true)) {
            return;
        }
        try {
            worker.execute(this::runRound);
        } catch (RuntimeException e) {
            queued.set(false);
        }
    }

    private void runRound() {
        queued.set(false);
        TimeSource.Scheduled n = next;
        if (n != null) {
            n.cancel();
        }
        try {
            round.run();
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "round of " + Thread.currentThread().getName() + " failed", e);
        } finally {
            if (active) {
                try {
                    next = time.schedule(this::wake, period);
                } catch (IllegalStateException e) {
                    LOG.log(Level.DEBUG, "time source shut down");
                }
            }
        }
    }

    /** Stops the loop: no more rounds; a running round is interrupted. */
    public void stop() {
        active = false;
        TimeSource.Scheduled n = next;
        if (n != null) {
            n.cancel();
        }
        worker.shutdownNow();
    }
}
