package io.npulifecycle.kube.internal;

import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * The one thread that runs the node sync's rounds (mirror the markers, write the desired state, create the queued
 * Events), so that rounds never overlap and callers never block on the API server. Requests coalesce: any number of
 * {@link #request()} calls while a round is queued give one round.
 */
final class SyncWorker {

    private final Runnable round;
    private final ExecutorService executor;
    private final AtomicBoolean queued = new AtomicBoolean();
    private volatile boolean stopped;

    /**
     * @param threadName the worker thread's name (a daemon thread)
     * @param round one round; exceptions it throws are its own to record (they end the round only)
     */
    SyncWorker(String threadName, Runnable round) {
        this.round = Objects.requireNonNull(round, "round");
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Queues one round unless one is queued already; does nothing after {@link #stop()}. */
    void request() {
        if (stopped || !queued.compareAndSet(false, true)) {
            return;
        }
        try {
            executor.execute(() -> {
                queued.set(false);
                round.run();
            });
        } catch (RuntimeException e) {
            queued.set(false);
        }
    }

    /**
     * Runs rounds on the worker until {@code done} answers {@code true} after one, {@code keepTrying} answers
     * {@code false}, or the timeout passes. The timeout is wall-clock time ({@link System#nanoTime()}), not
     * TimeSource time: it bounds I/O with the API server, which a simulated clock does not speed up.
     *
     * @param timeoutMillis the longest wait, in milliseconds
     * @param done asked on the worker after each round: is everything written?
     * @param keepTrying asked after a round that did not finish: is another round worth it (the API server answers)?
     * @return whether {@code done} answered {@code true}
     */
    boolean flush(long timeoutMillis, BooleanSupplier done, BooleanSupplier keepTrying) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            Future<Boolean> f;
            try {
                f = executor.submit(() -> {
                    round.run();
                    return done.getAsBoolean();
                });
            } catch (RuntimeException e) {
                return false;
            }
            try {
                if (f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    return true;
                }
            } catch (TimeoutException e) {
                f.cancel(true);
                return false;
            } catch (ExecutionException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            if (System.nanoTime() >= deadline || !keepTrying.getAsBoolean()) {
                return false;
            }
        }
    }

    /** Stops the worker: a running round is interrupted, queued ones are dropped. */
    void stop() {
        stopped = true;
        executor.shutdownNow();
    }
}
