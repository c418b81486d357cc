package io.npulifecycle.simulator.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Tells a runtime that keeps exiting on its own from one that runs, or that the harness stopped, killed or restarted
 * (a scenario's {@code killAgent} and {@code killControlPlane}, a driver pod replaced, the end of a run): like a
 * kubelet's CrashLoopBackOff, it counts the exits the harness did not cause, in a row, of runs that never printed the
 * launcher's {@code started:} line (a refused configuration exits 2 at once, a framework that cannot start exits 1).
 * A run that got that far, or an exit the harness caused, starts the count again. A simulated reboot restarts the
 * framework inside the same JVM ({@code restartMode=framework}): no exit.
 *
 * <p>Thread-safe: exits are reported from the thread that sees the process end.
 */
final class CrashLoop {

    /**
     * Exits in a row that make a node agent's crash loop: the simulated DaemonSet restarts an agent that exits, so
     * one refused start is followed by the next at once.
     */
    static final int NODE_AGENT_EXITS = 3;

    /**
     * Exits that make a control-plane replica's crash loop: nothing restarts a replica that exits on its own (the
     * harness does not emulate its Deployment), so its first exit before ready is final.
     */
    static final int CONTROL_PLANE_EXITS = 1;

    /**
     * One exit the harness did not cause.
     *
     * @param startNanos {@link System#nanoTime()} when the run was started
     * @param exitNanos {@link System#nanoTime()} when its exit was seen
     * @param code its exit code
     * @param run what it wrote to its console log
     */
    record Exit(long startNanos, long exitNanos, int code, ConsoleLog.Run run) {
    }

    private final String runtime;
    private final int threshold;
    private final Path consoleLog;
    /** The exits in a row without reaching ready, oldest first. */
    private final List<Exit> streak = new ArrayList<>();

    /**
     * @param runtime what messages call the runtime, e.g. {@code node-0}
     * @param threshold exits in a row that make a crash loop ({@link #NODE_AGENT_EXITS}, {@link
     *        #CONTROL_PLANE_EXITS}), at least 1
     * @param consoleLog its console log, named in the message
     */
    CrashLoop(String runtime, int threshold, Path consoleLog) {
        if (threshold < 1) {
            throw new IllegalArgumentException("threshold " + threshold + " < 1");
        }
        this.runtime = runtime;
        this.threshold = threshold;
        this.consoleLog = consoleLog;
    }

    /**
     * The runtime exited and the harness did not end it.
     *
     * @param exit the exit
     */
    synchronized void exitedOnItsOwn(Exit exit) {
        if (exit.run().ready()) {
            streak.clear(); // it got going: a later exit starts a new count
        } else {
            streak.add(exit);
        }
    }

    /** The harness stopped or killed the runtime: whatever happened before does not count. */
    synchronized void endedByHarness() {
        streak.clear();
    }

    /** @return how many exits in a row count now */
    synchronized int exitsInARow() {
        return streak.size();
    }

    /**
     * @return the failure when the runtime is in a crash loop ({@code threshold} exits in a row without reaching
     *         ready), naming it, how many exits in how long, the last exit code, the last error line of its console
     *         log and the file; null otherwise
     */
    synchronized CrashLoopException failure() {
        if (streak.size() < threshold) {
            return null;
        }
        Exit first = streak.get(0);
        Exit last = streak.get(streak.size() - 1);
        String error = last.run().lastError();
        String message;
        if (streak.size() == 1) {
            message = runtime + "'s runtime exited before it was ready (exit code " + last.code()
                    + ") and nothing restarts it: last error: " + error + " (" + consoleLog + ")";
        } else {
            long seconds = Math.max(1, (long) Math.ceil((last.exitNanos() - first.startNanos()) / 1e9));
            message = runtime + "'s runtime keeps exiting (" + streak.size() + " exits in " + seconds
                    + " s, exit code " + last.code() + "): last error: " + error + " (" + consoleLog + ")";
        }
        return new CrashLoopException(runtime, streak.size(), last.code(), error, message);
    }
}
