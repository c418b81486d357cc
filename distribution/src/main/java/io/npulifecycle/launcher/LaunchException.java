package io.npulifecycle.launcher;

/**
 * A launch that cannot go on, with the message the user sees and the process exit code.
 * Exit codes: 2 = bad command line or configuration (usage), 3 = the runtime home cannot be used, 1 = the runtime
 * failed to start.
 */
public class LaunchException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Bad command line, bad setting. */
    public static final int USAGE = 2;
    /** The home folder cannot be created or written. */
    public static final int HOME = 3;
    /** The framework failed to start. */
    public static final int FAILED = 1;

    private final int exitCode;

    /**
     * @param exitCode process exit code
     * @param message what is wrong, naming the input and what was expected
     */
    public LaunchException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    /**
     * @param exitCode process exit code
     * @param message what is wrong
     * @param cause the underlying error
     */
    public LaunchException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** @return the process exit code */
    public int exitCode() {
        return exitCode;
    }
}
