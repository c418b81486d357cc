package io.npulifecycle.simulator.harness;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition of the simulated cluster with a wall-clock deadline, polling. */
final class Waiter {

    /** Raised when a condition is not met in time; the message says what was seen instead. */
    static final class Timeout extends Exception {
        private static final long serialVersionUID = 1L;

        Timeout(String message) {
            super(message);
        }
    }

    private final Runnable tick;
    private final Runnable guard;

    /** @param tick called on every poll (e.g. to refresh a progress table) */
    Waiter(Runnable tick) {
        this(tick, () -> { });
    }

    /**
     * @param tick called on every poll (e.g. to refresh a progress table)
     * @param guard called on every poll before the condition; what it throws ends the wait at once and reaches the
     *        caller (e.g. {@link SimCluster#checkRuntimes()}: a runtime that keeps exiting fails the wait now, not
     *        at its deadline)
     */
    Waiter(Runnable tick, Runnable guard) {
        this.tick = tick;
        this.guard = guard;
    }

    /**
     * @param what what is awaited, for the message
     * @param deadline wall-clock time allowed
     * @param condition the condition; an exception counts as false
     * @param seen what is seen instead, for the message
     * @throws Timeout when the deadline passes first
     * @throws RuntimeException what the guard throws (e.g. {@link CrashLoopException})
     */
    void until(String what, Duration deadline, BooleanSupplier condition, Supplier<String> seen) throws Timeout {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            guard.run();
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                // not there yet (a runtime restarting, the API server in an outage)
            }
            if (System.nanoTime() > end) {
                String s;
                try {
                    s = seen.get();
                } catch (RuntimeException e) {
                    s = e.toString();
                }
                throw new Timeout("not within " + deadline.toSeconds() + " s: " + what + "; seen: " + s);
            }
            tick.run();
            try {
                Thread.sleep(200); // poll period of the harness, not a wait for a fixed time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Timeout("interrupted while waiting for " + what);
            }
        }
    }
}
