package io.npulifecycle.simulator.harness;

import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * What {@code demo} and {@code scenario} say when they are stopped by a signal (SIGTERM from a CI job's timeout,
 * Ctrl-C): a JVM shutdown hook that, unless the command finished first, prints to standard error what was
 * interrupted (the scenario and its step, as {@link #doing} last said), that the runtimes and the API server are being
 * stopped, and the exit code, then runs the {@link #onInterrupt} actions (e.g. the JUnit report of what ran). The JVM
 * exits with 128 + the signal number: 143 for SIGTERM, 130 for SIGINT. The runtimes themselves are stopped by
 * {@link SimCluster}'s own hook.
 */
final class Interruption {

    private final String command;
    private final PrintStream err;
    private final Thread hook;
    private final List<Runnable> actions = new CopyOnWriteArrayList<>();
    private volatile Supplier<String> doing = () -> "starting";
    private volatile boolean finished;
    /** Whether the shutdown hook has begun: the command must start nothing more (no next file, seed or shrink). */
    private volatile boolean signalled;

    /**
     * @param command {@code demo} or {@code scenario}, for the message
     * @param err where the message goes
     */
    Interruption(String command, PrintStream err) {
        this.command = command;
        this.err = err;
        this.hook = new Thread(this::interrupted, "npu-lifecycle-" + command + "-interrupted");
    }

    /**
     * Registers the shutdown hook.
     *
     * @return this
     */
    Interruption install() {
        Runtime.getRuntime().addShutdownHook(hook);
        return this;
    }

    /** @param what what the command does now, read when a signal comes, e.g. the scenario and its current step */
    void doing(Supplier<String> what) {
        doing = what;
    }

    /** @param action run by the hook after the message (each one's failure is printed, not thrown) */
    void onInterrupt(Runnable action) {
        actions.add(action);
    }

    /** The command ended by itself: the hook says nothing. */
    void finished() {
        finished = true;
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException | SecurityException shuttingDown) {
            // the JVM is exiting already: the hook sees finished and is silent
        }
    }

    /** @return the message the hook prints */
    String message() {
        String what;
        try {
            what = doing.get();
        } catch (RuntimeException e) {
            what = "(unknown: " + e + ")";
        }
        return "npu-lifecycle " + command + ": stopped by a signal (SIGTERM, or Ctrl-C) while " + what
                + "; stopping the runtimes and the API server; exit code 143 on SIGTERM, 130 on Ctrl-C";
    }

    /**
     * @return whether a signal stopped the command (its shutdown hook has begun): nothing more may be started, as
     *         every runtime is being stopped and the JVM refuses new shutdown hooks ("Shutdown in progress")
     */
    boolean signalled() {
        return signalled;
    }

    /** Marks the command stopped by a signal; called first by the hook (and by tests). */
    void markSignalled() {
        signalled = true;
    }

    private void interrupted() {
        markSignalled();
        if (finished) {
            return;
        }
        err.println(message());
        err.flush();
        for (Runnable a : actions) {
            try {
                a.run();
            } catch (RuntimeException e) {
                err.println("npu-lifecycle " + command + ": " + e.getMessage());
            }
        }
        err.flush();
    }
}
