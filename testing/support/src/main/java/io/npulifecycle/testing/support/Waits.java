package io.npulifecycle.testing.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Waiting in tests for a condition with a deadline (Awaitility), the same way everywhere: the condition is polled in
 * the calling thread, first at once, then every 20 ms, and an exception it throws fails the wait at once; an uncaught
 * exception of another thread (an informer, a server) is left to that thread. A test never sleeps for a fixed time to
 * let something happen.
 *
 * <pre>
 * Waits.until("label reboot-required", Duration.ofSeconds(20), () -&gt; "true".equals(cluster.label(node, key)));
 * Waits.await("three events").atMost(Duration.ofMinutes(1)).until(() -&gt; events().size() == 3);
 * </pre>
 */
public final class Waits {

    /** Deadline of {@link #await(String)} when the caller gives none. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(20);
    /** How often the condition is polled. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private Waits() {
    }

    /**
     * @param what what is waited for, named in the failure ("Condition with alias 'what' didn't complete within ...")
     * @return an Awaitility condition factory polling in the calling thread, at once and then every
     *         {@link #POLL_INTERVAL}, failing after {@link #DEFAULT_TIMEOUT} unless {@code atMost} is given
     */
    public static ConditionFactory await(String what) {
        return Awaitility.await(what).pollInSameThread().dontCatchUncaughtExceptions().pollDelay(Duration.ZERO)
                .pollInterval(POLL_INTERVAL).atMost(DEFAULT_TIMEOUT);
    }

    /**
     * Waits until {@code condition} holds.
     *
     * @param what what is waited for
     * @param timeout the deadline
     * @param condition polled in the calling thread
     * @throws AssertionError naming {@code what} and {@code timeout} when the deadline passes
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        until(what, timeout, condition, null);
    }

    /**
     * Waits until {@code condition} holds, running {@code betweenPolls} after each poll that found it false (e.g.
     * advancing a manual clock so that a periodic task runs).
     *
     * @param what what is waited for
     * @param timeout the deadline
     * @param condition polled in the calling thread
     * @param betweenPolls run in the calling thread after each false poll
     * @throws AssertionError naming {@code what} and {@code timeout} when the deadline passes
     */
    public static void untilRunning(String what, Duration timeout, BooleanSupplier condition, Runnable betweenPolls) {
        until(what, timeout, () -> {
            if (condition.getAsBoolean()) {
                return true;
            }
            betweenPolls.run();
            return false;
        });
    }

    /**
     * Waits until {@code condition} holds; a timeout's message adds {@code diagnostics} (e.g. a bundle table).
     *
     * @param what what is waited for
     * @param timeout the deadline
     * @param condition polled in the calling thread
     * @param diagnostics called once at the deadline; may be null
     * @throws AssertionError naming {@code what}, {@code timeout} and the diagnostics when the deadline passes
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition, Supplier<String> diagnostics) {
        try {
            await(what).atMost(timeout).until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("timed out after " + timeout + " waiting for " + what
                    + (diagnostics == null ? "" : "\n" + diagnostics.get()), e);
        }
    }
}
