package io.npulifecycle.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process of the benchmark (a node agent or the bare framework) whose output lines are recorded with the
 * instant they arrived, and copied to a log file.
 */
final class Child implements AutoCloseable {

    /** One output line, with the benchmark's monotonic time when it was read. */
    record Line(String text, long arrivedNanos) {

        /** @return the instant at the start of a runtime log line ({@code 2026-11-30T10:00:00.123Z INFO ...}) */
        Instant logTime() {
            int sp = text.indexOf(' ');
            return Instant.parse(sp < 0 ? text : text.substring(0, sp));
        }
    }

    private final Process process;
    private final long startNanos;
    private final List<Line> lines = new ArrayList<>();

    Child(ProcessBuilder pb, Path log) throws IOException {
        pb.redirectErrorStream(true);
        Files.createDirectories(log.toAbsolutePath().getParent());
        this.startNanos = System.nanoTime();
        this.process = pb.start();
        process.getOutputStream().close();
        Process started = process;
        Runtime.getRuntime().addShutdownHook(new Thread(started::destroy, "bench-stop-" + started.pid()));
        PrintWriter copy = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true);
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
        }, "bench-output-" + process.pid());
        t.setDaemon(true);
        t.start();
    }

    /** @return the pid (bin/npu-lifecycle execs java, so this is the JVM's pid) */
    long pid() {
        return process.pid();
    }

    /** @return the benchmark's monotonic time right before the process was started */
    long startNanos() {
        return startNanos;
    }

    /**
     * Waits for the first line (from index {@code from}) that matches.
     *
     * @return the line
     * @throws IllegalStateException when the process ends or {@code timeoutMs} passes first, with the last lines
     */
    Line await(Predicate<String> match, int from, long timeoutMs, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (lines) {
            int i = from;
            while (true) {
                for (; i < lines.size(); i++) {
                    if (match.test(lines.get(i).text())) {
                        return lines.get(i);
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive() && i >= lines.size()) {
                    throw new IllegalStateException("no " + what + " within " + timeoutMs + " ms (process "
                            + (process.isAlive() ? "alive" : "ended with " + process.exitValue()) + "); last lines:\n"
                            + String.join("\n", tail(20)));
                }
                lines.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    /** @return how many lines were read so far */
    int lineCount() {
        synchronized (lines) {
            return lines.size();
        }
    }

    /** @return the lines from index {@code from} */
    List<Line> linesFrom(int from) {
        synchronized (lines) {
            return new ArrayList<>(lines.subList(Math.min(from, lines.size()), lines.size()));
        }
    }

    private List<String> tail(int n) {
        List<String> out = new ArrayList<>();
        for (int i = Math.max(0, lines.size() - n); i < lines.size(); i++) {
            out.add(lines.get(i).text());
        }
        return out;
    }

    /** Stops the process (SIGTERM, SIGKILL after 20 s) and waits for it. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
