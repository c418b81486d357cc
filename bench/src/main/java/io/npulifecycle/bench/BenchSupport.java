package io.npulifecycle.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/** What the benchmark sections share: running a command, the JDK's {@code java}, a free port, progress lines. */
final class BenchSupport {

    private BenchSupport() {
    }

    /**
     * Runs a command to its end, stdin closed, stderr merged into stdout.
     *
     * @param cmd the command and its arguments
     * @param what names the command in the error
     * @return its output (UTF-8)
     * @throws IllegalStateException when it exits other than 0 (with the exit code and the output)
     * @throws IOException when it cannot start
     * @throws InterruptedException when interrupted while waiting for it
     */
    static String exec(List<String> cmd, String what) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        if (rc != 0) {
            throw new IllegalStateException(what + " failed with exit code " + rc + ": " + out);
        }
        return out;
    }

    /** @return the {@code java} launcher of the running JDK */
    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Prints a progress line on stdout with the current time. */
    static void log(String s) {
        System.out.println(Instant.now() + " bench: " + s);
        System.out.flush();
    }
}
