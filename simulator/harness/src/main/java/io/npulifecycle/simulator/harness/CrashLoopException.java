package io.npulifecycle.simulator.harness;

/**
 * A runtime of the simulated cluster keeps exiting on its own ({@link CrashLoop}): the running step, or the wait for
 * the cluster to be installed, fails at once with this message instead of waiting out its timeout.
 */
final class CrashLoopException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String runtime;
    private final int exits;
    private final int exitCode;
    private final String lastError;

    /**
     * @param runtime the runtime, e.g. {@code node-0} or {@code control-plane}
     * @param exits how many exits in a row without reaching ready
     * @param exitCode the last exit's code
     * @param lastError the last error line of the last run's console output
     * @param message the whole message
     */
    CrashLoopException(String runtime, int exits, int exitCode, String lastError, String message) {
        super(message);
        this.runtime = runtime;
        this.exits = exits;
        this.exitCode = exitCode;
        this.lastError = lastError;
    }

    /** @return the runtime, e.g. {@code node-0} */
    String runtime() {
        return runtime;
    }

    /** @return how many exits in a row without reaching ready */
    int exits() {
        return exits;
    }

    /** @return the last exit's code */
    int exitCode() {
        return exitCode;
    }

    /** @return the last error line of the last run */
    String lastError() {
        return lastError;
    }
}
