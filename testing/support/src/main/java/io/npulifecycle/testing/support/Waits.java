package io.npulifecycle.testing.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.ThrowingRunnable;

/**
 * Waiting in tests for a condition with a deadline (Awaitility), the same way everywhere: the condition is polled in
 * the calling thread, first at once, then every 20 ms, and an exception it throws fails the wait at once; an uncaught
 * exception of another thread (an informer, a server) is left to that thread. A test never sleeps for a fixed time to
 * let something happen.
 *
 * <pre>
 * Waits.until("label reboot-required", Duration.ofSeconds(20), () -&gt; "true".equals(cluster.label(node, key)));
 * Waits.await("three events").atMost(Duration.ofMinutes(1)).until(() -&gt; events().size() == 3);
 * Waits.untilAsserted("the Event", Duration.ofSeconds(20), () -&gt; assertEquals(List.of("n1"), eventNodes()));
 * </pre>
 *
 * <p>Wait for the very value that is asserted, not for another one that is usually written before it: a value written
 * later, by another component or another request (an Event after the patch it announces, a status written at most
 * every few seconds, a counter incremented after the state it counts), is read too early once in a while.
 */
public final class Waits {

    /** Deadline of {@link #await(String)} when the caller gives none. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(20);
    /** How long after the first poll the second one comes; each next gap is half as long again. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(20);
    /**
     * The longest gap between two polls. A condition often reads the API server (a list of nodes, pods, events):
     * polling a long wait every 20 ms made the tests and the API servers they read spend a tenth of the build's CPU on
     * the polls themselves; short waits still end within 20 to 50 ms of the condition.
     */
    public static final Duration MAX_POLL_INTERVAL = Duration.ofMillis(100);

    private Waits() {
    }

    /**
     * @param what what is waited for, named in the failure ("Condition with alias 'what' didn't complete within ...")
     * @return an Awaitility condition factory polling in the calling thread, at once, after {@link #POLL_INTERVAL},
     *         then at gaps growing by half up to {@link #MAX_POLL_INTERVAL}, failing after {@link #DEFAULT_TIMEOUT}
     *         unless {@code atMost} is given
     */
    public static ConditionFactory await(String what) {
        return Awaitility.await(what).pollInSameThread().dontCatchUncaughtExceptions().pollDelay(Duration.ZERO)
                .pollInterval((count, previous) -> count <= 1 ? POLL_INTERVAL
                        : min(previous.plus(previous.dividedBy(2)), MAX_POLL_INTERVAL))
                .atMost(DEFAULT_TIMEOUT);
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

    /**
     * Waits until {@code assertion} passes: the assertion is at once what is waited for and what is checked, so a
     * value that is right only a moment later is waited for, and one that never gets right fails with the assertion's
     * own message (the last one seen). Only an {@link AssertionError} is retried; any other exception fails at once.
     *
     * @param what what is waited for
     * @param timeout the deadline
     * @param assertion run in the calling thread until it throws no {@link AssertionError}
     * @throws AssertionError naming {@code what}, {@code timeout} and the last assertion's message when the deadline
     *         passes
     */
    public static void untilAsserted(String what, Duration timeout, ThrowingRunnable assertion) {
        try {
            await(what).atMost(timeout).untilAsserted(assertion);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("timed out after " + timeout + " waiting for " + what
                    + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()), e);
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
