package io.npulifecycle.simulator.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The message of {@code scenario} on SIGTERM, in a JVM of its own that the test stops as a CI job's timeout does. */
class InterruptionTest {

    @TempDir
    Path tmp;

    /** The child: says what it does, runs until stopped; on SIGTERM the hook writes the report file. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Interruption i = new Interruption("scenario", System.err).install();
            i.doing(() -> "running scenario 'x' (x.yaml, 1 of 2), step 3 (line 12, at 60s) approve: {node: node-0}");
            i.onInterrupt(() -> {
                try {
                    Files.writeString(Path.of(args[0]), "written on the way out");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            System.out.println("running");
            System.out.flush();
            new java.util.concurrent.CountDownLatch(1).await(); // until the signal
        }
    }

    /** A child whose run has a work folder: on SIGTERM it prints the folder's path. */
    public static final class ChildWithWork {
        public static void main(String[] args) throws Exception {
            Interruption i = new Interruption("scenario", System.err).install();
            WorkFolder.keptOnInterrupt(i, Path.of(args[0]), System.out);
            System.out.println("running");
            System.out.flush();
            new java.util.concurrent.CountDownLatch(1).await(); // until the signal
        }
    }

    @Test
    void sigtermPrintsTheKeptWorkFolder() throws Exception {
        Path work = WorkFolder.prepare(tmp.resolve("work"), "scenario");
        Path stdout = tmp.resolve("stdout");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ChildWithWork.class.getName(), work.toString()))
                .redirectOutput(stdout.toFile()).redirectError(tmp.resolve("stderr").toFile()).start();
        try {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> Files.readString(stdout).startsWith("running\n"));
            p.destroy(); // SIGTERM
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the child exits");
        } finally {
            p.destroyForcibly();
        }
        String rest = Files.readString(stdout).substring("running\n".length()).strip();
        assertEquals(143, p.exitValue());
        assertEquals("work folder kept: " + work + " (runtime homes and logs of the interrupted run)", rest);
        assertTrue(Files.isDirectory(work));
    }

    @Test
    void sigtermSaysWhatWasInterruptedAndExits143() throws Exception {
        Path report = tmp.resolve("report");
        Path stderr = tmp.resolve("stderr");
        Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Child.class.getName(), report.toString()))
                .redirectError(stderr.toFile()).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertEquals("running", r.readLine());
            p.destroy(); // SIGTERM
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the child exits");
        } finally {
            p.destroyForcibly();
        }
        String text = Files.readString(stderr);
        assertEquals(143, p.exitValue(), text);
        assertEquals("npu-lifecycle scenario: stopped by a signal (SIGTERM, or Ctrl-C) while running scenario 'x' "
                + "(x.yaml, 1 of 2), step 3 (line 12, at 60s) approve: {node: node-0}; stopping the runtimes and the "
                + "API server; exit code 143 on SIGTERM, 130 on Ctrl-C\n", text);
        assertEquals("written on the way out", Files.readString(report));
    }

    @Test
    void aFinishedCommandSaysNothing() {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        Interruption i = new Interruption("demo", new java.io.PrintStream(err, true, StandardCharsets.UTF_8))
                .install();
        i.finished();
        assertTrue(i.message().startsWith("npu-lifecycle demo: stopped by a signal (SIGTERM, or Ctrl-C) while "
                + "starting;"), i.message());
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }

    /**
     * A signal during a run of several files (or seeds): the file running finishes as it can, no further file is
     * started (each would fail at once, "Shutdown in progress", and be reported as failed), their results stay empty.
     */
    @Test
    void noFileIsStartedOnceASignalCame() {
        Interruption interruption = new Interruption("chaos", new java.io.PrintStream(
                java.io.OutputStream.nullOutputStream()));
        ScenarioResult[] results = new ScenarioResult[5];
        List<Integer> started = new java.util.ArrayList<>();
        ScenarioCommand.runSerially(results, interruption, i -> {
            started.add(i);
            if (i == 1) {
                interruption.markSignalled(); // the SIGTERM arrives while file 2 runs
            }
            return new ScenarioResult("s" + i, "s" + i + ".yaml", 1.0, null, List.of(), "");
        });
        assertEquals(List.of(0, 1), started);
        assertTrue(results[0] != null && results[1] != null);
        assertTrue(results[2] == null && results[3] == null && results[4] == null);
    }
}
