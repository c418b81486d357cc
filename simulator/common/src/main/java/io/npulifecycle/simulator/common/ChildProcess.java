package io.npulifecycle.simulator.common;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process (an npu-lifecycle runtime, a bare framework) started by the simulator, the benchmarks or a test:
 * no standard input, standard error merged into standard output, and that output either written to a file by the
 * kernel ({@link Builder#output(Path, boolean)}) or read line by line, each line recorded with the monotonic time it
 * arrived and copied to a file ({@link Builder#recordLines(Path)}). Stopping is SIGTERM, then SIGKILL after a grace
 * period.
 *
 * <pre>
 * try (ChildProcess p = ChildProcess.builder(List.of("bin/npu-lifecycle", "node", "--no-shell"))
 *         .env(Map.of("NODE_NAME", "node-0")).recordLines(home.resolve("console.log")).start()) {
 *     p.awaitLine(s -&gt; s.contains("first probe completed"), 0, Duration.ofMinutes(2), "the first probe");
 * }
 * </pre>
 */
public final class ChildProcess implements AutoCloseable {

    /** How long {@link #kill()} and a stop wait for the process to be gone after SIGKILL. */
    private static final long KILL_WAIT_SECONDS = 10;

    /**
     * One output line, with the parent's {@link System#nanoTime()} when it was read.
     *
     * @param text the line, without its line break
     * @param arrivedNanos monotonic nanoseconds
     */
    public record Line(String text, long arrivedNanos) {

        /**
         * @return the instant at the start of a runtime log line ({@code 2026-11-30T10:00:00.123Z INFO ...})
         * @throws java.time.format.DateTimeParseException when the line does not start with an instant
         */
        public Instant logTime() {
            int sp = text.indexOf(' ');
            return Instant.parse(sp < 0 ? text : text.substring(0, sp));
        }
    }

    /** What to start and where its output goes. */
    public static final class Builder {
        private final List<String> command;
        private final Map<String, String> env = new LinkedHashMap<>();
        private Predicate<String> removeEnv = k -> false;
        private Path file;
        private boolean append;
        private boolean record;
        private Duration stopGrace = Duration.ofSeconds(20);
        private boolean stopOnExit;
        private String name;

        private Builder(List<String> command) {
            if (command.isEmpty()) {
                throw new IllegalArgumentException("no command");
            }
            this.command = List.copyOf(command);
        }

        /**
         * @param vars environment variables set on top of the inherited ones (after {@link #removeEnv})
         * @return this
         */
        public Builder env(Map<String, String> vars) {
            env.putAll(vars);
            return this;
        }

        /**
         * @param keys inherited environment variables to drop (e.g. credentials the test must not pass on)
         * @return this
         */
        public Builder removeEnv(Predicate<String> keys) {
            removeEnv = removeEnv.or(keys);
            return this;
        }

        /**
         * The kernel writes the output to a file; no line is recorded.
         *
         * @param out the file (its folder is created)
         * @param appendToIt append (a runtime started again keeps one console log) rather than truncate
         * @return this
         */
        public Builder output(Path out, boolean appendToIt) {
            this.file = out;
            this.append = appendToIt;
            this.record = false;
            return this;
        }

        /**
         * The output is read line by line, each line recorded ({@link #awaitLine}, {@link #linesFrom}) and copied to
         * a file (truncated first). Every line is kept in memory: for processes of bounded output.
         *
         * @param copy the file (its folder is created)
         * @return this
         */
        public Builder recordLines(Path copy) {
            this.file = copy;
            this.append = false;
            this.record = true;
            return this;
        }

        /**
         * @param grace how long {@link ChildProcess#close()} waits after SIGTERM before SIGKILL (default 20 s)
         * @return this
         */
        public Builder stopGrace(Duration grace) {
            this.stopGrace = Objects.requireNonNull(grace);
            return this;
        }

        /**
         * @param processName what messages call the process, e.g. {@code etcd} (default: the program's file name)
         * @return this
         */
        public Builder name(String processName) {
            this.name = Objects.requireNonNull(processName);
            return this;
        }

        /**
         * @param on send SIGTERM to the process when this JVM exits (default off)
         * @return this
         */
        public Builder stopOnJvmExit(boolean on) {
            this.stopOnExit = on;
            return this;
        }

        /**
         * @return the running process
         * @throws IOException if it cannot be started or its output file cannot be created
         * @throws IllegalStateException when neither {@link #output} nor {@link #recordLines} was given
         */
        public ChildProcess start() throws IOException {
            if (file == null) {
                throw new IllegalStateException("no output file for " + command);
            }
            return new ChildProcess(this);
        }
    }

    /**
     * @param command the program and its arguments
     * @return a builder; give it an output with {@link Builder#output} or {@link Builder#recordLines}
     */
    public static Builder builder(List<String> command) {
        return new Builder(command);
    }

    private final List<String> command;
    private final String name;
    private final Process process;
    private final Path file;
    private final Duration stopGrace;
    private final long startNanos;
    private final Instant startInstant;
    private final List<Line> lines;

    private ChildProcess(Builder b) throws IOException {
        this.command = b.command;
        this.name = b.name != null ? b.name : Path.of(b.command.get(0)).getFileName().toString();
        this.file = b.file;
        this.stopGrace = b.stopGrace;
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        if (!b.record) {
            pb.redirectOutput(b.append ? ProcessBuilder.Redirect.appendTo(file.toFile())
                    : ProcessBuilder.Redirect.to(file.toFile()));
        }
        pb.environment().keySet().removeIf(b.removeEnv);
        pb.environment().putAll(b.env);
        this.startNanos = System.nanoTime();
        this.process = pb.start();
        this.startInstant = process.info().startInstant().orElse(Instant.EPOCH);
        if (b.stopOnExit) {
            Process started = process;
            Runtime.getRuntime().addShutdownHook(new Thread(started::destroy, "child-stop-" + started.pid()));
        }
        this.lines = b.record ? new ArrayList<>() : null;
        if (b.record) {
            readLines();
        }
    }

    private void readLines() throws IOException {
        PrintWriter copy = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8), true);
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String s;
                while ((s = r.readLine()) != null) {
                    long now = System.nanoTime();
                    copy.println(s);
                    synchronized (lines) {
                        lines.add(new Line(s, now));
                        lines.notifyAll();
                    }
                }
            } catch (IOException e) {
                // the process ended
            } finally {
                copy.close();
                synchronized (lines) {
                    lines.notifyAll();
                }
            }
        }, "child-output-" + process.pid());
        t.setDaemon(true);
        t.start();
    }

    /** @return the process */
    public Process process() {
        return process;
    }

    /** @return its pid (bin/npu-lifecycle execs java, so for a runtime this is the JVM's pid) */
    public long pid() {
        return process.pid();
    }

    /** @return what messages call the process ({@link Builder#name}) */
    public String name() {
        return name;
    }

    /**
     * @return when the process started, as the operating system reports it ({@link Instant#EPOCH} if unknown): with
     *         the pid, it tells this process from a later one that reuses the pid
     */
    public Instant startInstant() {
        return startInstant;
    }

    /** @return the parent's {@link System#nanoTime()} right before the process was started */
    public long startNanos() {
        return startNanos;
    }

    /** @return whether the process runs */
    public boolean alive() {
        return process.isAlive();
    }

    /**
     * @return the exit code
     * @throws IllegalThreadStateException while the process runs
     */
    public int exitValue() {
        return process.exitValue();
    }

    /**
     * @param timeout how long to wait
     * @return whether the process ended within {@code timeout}
     * @throws InterruptedException when interrupted
     */
    public boolean waitFor(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return the output file */
    public Path outputFile() {
        return file;
    }

    /** @return everything in the output file so far, or a note when it cannot be read */
    public String output() {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    /**
     * @param count how many lines
     * @return the last lines of the output file, for error messages ("" when there is no file yet, a note when it
     *         cannot be read)
     */
    public String outputTail(int count) {
        try {
            if (!Files.isRegularFile(file)) {
                return "";
            }
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - count), all.size()));
        } catch (IOException | java.io.UncheckedIOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
    }

    /**
     * Waits for the first recorded line, from index {@code from} on, that matches.
     *
     * @param match the test
     * @param from index of the first line to look at ({@link #lineCount()} before an action: only later lines)
     * @param timeout how long to wait
     * @param what for the message, e.g. {@code "the first probe"}
     * @return the line
     * @throws IllegalStateException when the process ends or {@code timeout} passes first (with the last 20 lines),
     *         or when lines are not recorded
     * @throws InterruptedException when interrupted
     */
    public Line awaitLine(Predicate<String> match, int from, Duration timeout, String what)
            throws InterruptedException {
        List<Line> l = recorded();
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (l) {
            int i = from;
            while (true) {
                for (; i < l.size(); i++) {
                    if (match.test(l.get(i).text())) {
                        return l.get(i);
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive() && i >= l.size()) {
                    throw new IllegalStateException("no " + what + " within " + timeout.toMillis() + " ms (process "
                            + (process.isAlive() ? "alive" : "ended with " + process.exitValue()) + "); last lines:\n"
                            + String.join("\n", tail(20)));
                }
                // a new line notifies; the process's end does not: look again at least every 200 ms
                l.wait(Math.max(1, Math.min(200, TimeUnit.NANOSECONDS.toMillis(left))));
            }
        }
    }

    /** @return how many lines were recorded so far */
    public int lineCount() {
        List<Line> l = recorded();
        synchronized (l) {
            return l.size();
        }
    }

    /**
     * @param from index of the first line
     * @return the recorded lines from index {@code from}
     */
    public List<Line> linesFrom(int from) {
        List<Line> l = recorded();
        synchronized (l) {
            return new ArrayList<>(l.subList(Math.min(from, l.size()), l.size()));
        }
    }

    private List<Line> recorded() {
        if (lines == null) {
            throw new IllegalStateException("the output of " + command.get(0) + " goes to " + file
                    + " and is not recorded line by line (ChildProcess.Builder#recordLines)");
        }
        return lines;
    }

    private List<String> tail(int n) {
        List<String> out = new ArrayList<>();
        for (int i = Math.max(0, lines.size() - n); i < lines.size(); i++) {
            out.add(lines.get(i).text());
        }
        return out;
    }

    /**
     * Stops the process: SIGTERM, then SIGKILL when it has not ended after {@code grace}; returns when it is gone (or
     * 10 s after SIGKILL).
     *
     * @param grace how long to wait after SIGTERM
     */
    public void stop(Duration grace) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** Kills the process at once (SIGKILL), as a crash would, and waits up to 10 s for it to be gone. */
    public void kill() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link #stop(Duration)} with the builder's grace period. */
    @Override
    public void close() {
        stop(stopGrace);
    }

    /** @return {@code <name> (pid N)} */
    @Override
    public String toString() {
        return name + " (pid " + pid() + ")";
    }
}
