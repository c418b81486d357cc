package io.npulifecycle.clock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.time.TimeSource;

/** Deterministic TimeSource for tests: time moves only in {@link #advance}, which runs due tasks in order. */
public final class ManualTimeSource implements TimeSource {
    private Instant now;
    private long nanos;
    private long seq;
    private final List<Task> tasks = new ArrayList<>();

    private final class Task implements Scheduled {
        final long dueNanos;
        final long order;
        final Runnable r;
        boolean cancelled;

        Task(long dueNanos, long order, Runnable r) {
            this.dueNanos = dueNanos;
            this.order = order;
            this.r = r;
        }

        @Override
        public boolean cancel() {
            synchronized (ManualTimeSource.this) {
                boolean was = tasks.remove(this);
                cancelled = true;
                return was;
            }
        }
    }

    public ManualTimeSource(Instant start) {
        this.now = start;
    }

    @Override
    public synchronized Instant now() {
        return now;
    }

    @Override
    public synchronized long monotonicNanos() {
        return nanos;
    }

    @Override
    public synchronized Scheduled schedule(Runnable task, Duration delay) {
        long d = Math.max(0, delay.toNanos());
        Task t = new Task(nanos + d, seq++, task);
        tasks.add(t);
        return t;
    }

    @Override
    public double scale() {
        return 1.0;
    }

    /** @return number of pending tasks */
    public synchronized int pending() {
        return tasks.size();
    }

    /**
     * Moves time forward by {@code d}, running every task due on the way (including tasks they schedule), each at
     * its due time.
     */
    public void advance(Duration d) {
        long target;
        synchronized (this) {
            target = nanos + d.toNanos();
        }
        while (true) {
            Task next = null;
            synchronized (this) {
                for (Task t : tasks) {
                    if (t.dueNanos <= target && (next == null || t.dueNanos < next.dueNanos
                            || (t.dueNanos == next.dueNanos && t.order < next.order))) {
                        next = t;
                    }
                }
                if (next == null) {
                    now = now.plusNanos(target - nanos);
                    nanos = target;
                    return;
                }
                tasks.remove(next);
                now = now.plusNanos(next.dueNanos - nanos);
                nanos = next.dueNanos;
            }
            next.r.run();
        }
    }
}
