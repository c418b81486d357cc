package io.npulifecycle.simulator.cluster.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A server binary (etcd, kube-apiserver) run as a child process of this JVM, stdout and stderr into one log file,
 * standard input from {@code /dev/null}.
 */
public final class ChildProcess {

    private final String name;
    private final Process process;
    private final Path log;
    private final Instant startInstant;

    private ChildProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.startInstant = process.info().startInstant().orElse(Instant.EPOCH);
    }

    /**
     * @param name for messages, e.g. {@code etcd}
     * @param command the binary and its arguments
     * @param log the log file (created or appended)
     * @return the running process
     * @throws UncheckedIOException when it cannot be started
     */
    public static ChildProcess start(String name, List<String> command, Path log) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            return new ChildProcess(name, p, log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + " (" + command.get(0) + ")", e);
        }
    }

    /** @return e.g. {@code etcd} */
    public String name() {
        return name;
    }

    /** @return the process id */
    public long pid() {
        return process.pid();
    }

    /** @return when the process started, as the operating system reports it ({@link Instant#EPOCH} if unknown) */
    public Instant startInstant() {
        return startInstant;
    }

    /** @return whether it still runs */
    public boolean alive() {
        return process.isAlive();
    }

    /** @return the exit code, or -1 while it runs */
    public int exitCode() {
        return process.isAlive() ? -1 : process.exitValue();
    }

    /** @return the log file */
    public Path log() {
        return log;
    }

    /**
     * Stops it: SIGTERM, then SIGKILL when it has not exited within {@code grace}; returns once it has exited (at
     * most 10 s after the SIGKILL).
     *
     * @param grace how long it may take to shut down cleanly
     * @return whether it has exited
     */
    public boolean stop(Duration grace) {
        if (!process.isAlive()) {
            return true;
        }
        process.destroy();
        if (!waitFor(grace)) {
            process.destroyForcibly();
            return waitFor(Duration.ofSeconds(10));
        }
        return true;
    }

    /**
     * Kills it (SIGKILL) and returns once it has exited (at most 10 s).
     *
     * @return whether it has exited
     */
    public boolean kill() {
        process.destroyForcibly();
        return waitFor(Duration.ofSeconds(10));
    }

    private boolean waitFor(Duration d) {
        try {
            process.onExit().get(d.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return !process.isAlive();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    /**
     * @param lines how many
     * @return the last lines of the log, for error messages ("" when there is no log)
     */
    public String tail(int lines) {
        try {
            if (!Files.isRegularFile(log)) {
                return "";
            }
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", new ArrayList<>(all.subList(Math.max(0, all.size() - lines), all.size())));
        } catch (IOException | UncheckedIOException e) {
            return "(log " + log + " unreadable: " + e.getMessage() + ")";
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ")";
    }
}
