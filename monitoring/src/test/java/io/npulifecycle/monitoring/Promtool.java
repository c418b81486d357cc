package io.npulifecycle.monitoring;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * Runs {@code promtool} (Debian package {@code prometheus}, installed by .ci/run). On CI (environment {@code CI=true})
 * a missing promtool fails the test; elsewhere the test is skipped and says so on standard error.
 */
final class Promtool {

    /** The result of one run: exit code and everything it printed (standard output and error together). */
    record Result(int exitCode, String output) {
    }

    private Promtool() {
    }

    /**
     * @return the promtool executable: the first on {@code PATH}
     * @throws org.opentest4j.TestAbortedException (skip) if there is none and this is not CI
     * @throws org.opentest4j.AssertionFailedError if there is none on CI
     */
    static Path require() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir, "promtool");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        String message = "promtool not found on PATH: install the Debian package prometheus"
                + " (`apt-get install -y --no-install-recommends prometheus`, as .ci/run does)";
        if ("true".equals(System.getenv("CI"))) {
            fail(message + "; on CI it is required");
        }
        System.err.println("SKIPPED (local run): " + message);
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }

    /**
     * Runs promtool with arguments in a working folder, at most 60 s.
     *
     * @param dir the working folder (rule test files name their rule files relative to themselves)
     * @param args promtool's arguments
     * @return its exit code and output
     * @throws IOException if it cannot be started
     * @throws InterruptedException if interrupted while waiting
     * @throws AssertionError if it ran over 60 s (it is then killed)
     */
    static Result run(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(require().toString());
        command.addAll(List.of(args));
        Path log = Files.createTempFile("promtool", ".log");
        try {
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("promtool " + String.join(" ", args) + " ran over 60 s: "
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
