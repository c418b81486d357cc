package io.npulifecycle.itests.launcher;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.awaitility.core.ThrowingRunnable;

import io.npulifecycle.simulator.common.ChildProcess;
import io.npulifecycle.testing.support.Waits;

/**
 * Runs {@code bin/npu-lifecycle} of the built distribution as a child process, as an operator would, and talks to
 * it over HTTP. Output goes to a file that tests can wait on.
 */
public final class RuntimeProcess implements AutoCloseable {

    /** The Jolokia operator of the runtimes the tests start ({@code NPU_LIFECYCLE_JOLOKIA_USER}). */
    public static final String USER = "itest-operator";
    /** The password of {@link #USER} ({@code NPU_LIFECYCLE_JOLOKIA_PASSWORD}). */
    public static final String PASSWORD = "itest-password-0123456789";

    /**
     * The environment of a runtime run by a test as {@link #USER}.
     *
     * @param httpPort {@code NPU_LIFECYCLE_HTTP_PORT} (Jolokia, health)
     * @param metricsPort {@code NPU_LIFECYCLE_METRICS_PORT}; 0 for any free port
     * @return the four variables (an immutable map)
     */
    public static Map<String, String> operatorEnv(int httpPort, int metricsPort) {
        return Map.of("NPU_LIFECYCLE_JOLOKIA_USER", USER, "NPU_LIFECYCLE_JOLOKIA_PASSWORD", PASSWORD,
                "NPU_LIFECYCLE_HTTP_PORT", String.valueOf(httpPort), "NPU_LIFECYCLE_METRICS_PORT",
                String.valueOf(metricsPort));
    }

    /** The assembled distribution, {@code distribution/target/npu-lifecycle}. */
    public static Path distribution() {
        Path p = Path.of(System.getProperty("npu.distribution.dir", "../distribution/target/npu-lifecycle"))
                .toAbsolutePath().normalize();
        if (!Files.isExecutable(p.resolve("bin/npu-lifecycle"))) {
            throw new IllegalStateException("distribution not built at " + p + " (run mvn package first)");
        }
        return p;
    }

    /** How long {@link #close()} waits after SIGTERM (the launcher's shutdown hook stops the framework). */
    static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final ChildProcess process;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private RuntimeProcess(ChildProcess process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts {@code bin/npu-lifecycle ARGS} with the given extra environment; the test's own Jolokia credentials and
     * {@code NPU_LIFECYCLE_HOME} are not inherited.
     *
     * @param output file receiving stdout and stderr
     * @param port the HTTP port the runtime is expected to use (for the HTTP helpers)
     */
    public static RuntimeProcess start(Path output, int port, Map<String, String> env, String... args)
            throws IOException {
        isolateNode(args);
        List<String> cmd = new ArrayList<>();
        cmd.add(distribution().resolve("bin/npu-lifecycle").toString());
        cmd.addAll(List.of(args));
        return new RuntimeProcess(ChildProcess.builder(cmd)
                .removeEnv(k -> k.equals("NPU_LIFECYCLE_JOLOKIA_USER") || k.equals("NPU_LIFECYCLE_JOLOKIA_PASSWORD")
                        || k.equals("NPU_LIFECYCLE_HOME"))
                .env(env).output(output, false).stopGrace(STOP_GRACE).start(), port);
    }

    /**
     * A node agent started by a test never touches the host's /run/npu-operator, /var/lib/npu-operator, /proc/modules
     * or boot id: unless the test configured them itself, they point into {@code <home>-host/}.
     */
    private static void isolateNode(String... args) {
        if (args.length == 0 || !"node".equals(args[0])) {
            return;
        }
        for (int i = 1; i + 1 < args.length; i++) {
            if ("--home".equals(args[i])) {
                Path home = Path.of(args[i + 1]);
                Path parent = home.toAbsolutePath().getParent();
                if (parent != null && Files.isDirectory(parent)) {
                    io.npulifecycle.itests.HostPaths.isolate(home, parent.resolve(home.getFileName() + "-host"));
                }
            }
        }
    }

    /** Runs a command to completion (for commands that exit), returning its exit code. */
    public static int runToExit(Path output, Map<String, String> env, long timeoutSeconds, String... args)
            throws Exception {
        try (RuntimeProcess p = start(output, 0, env, args)) {
            if (!p.process.waitFor(Duration.ofSeconds(timeoutSeconds))) {
                throw new AssertionError("npu-lifecycle " + String.join(" ", args) + " did not exit within "
                        + timeoutSeconds + " s:\n" + p.output());
            }
            return p.process.exitValue();
        }
    }

    /** @return everything the process printed so far */
    public String output() {
        return process.output();
    }

    /** @return whether the process is still running */
    public boolean alive() {
        return process.alive();
    }

    /** @return the process */
    public Process process() {
        return process.process();
    }

    /**
     * Waits until {@code condition} holds ({@link Waits}), failing at once with the process output when the process
     * exits, and with the output after the deadline.
     */
    public void await(String what, Duration deadline, BooleanSupplier condition) {
        Waits.until(what, deadline, () -> {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (!process.alive()) {
                throw new AssertionError("runtime exited (" + process.exitValue() + ") while waiting for " + what
                        + ":\n" + output());
            }
            return false;
        }, this::output);
    }

    /**
     * Waits until {@code assertion} passes ({@link Waits#untilAsserted}): what is asserted is what is waited for.
     * Fails at once with the process output when the process exits, and after the deadline with the last assertion's
     * message and the output.
     */
    public void awaitAsserted(String what, Duration deadline, ThrowingRunnable assertion) {
        try {
            Waits.untilAsserted(what, deadline, () -> {
                try {
                    assertion.run();
                } catch (AssertionError e) {
                    if (!process.alive()) {
                        throw new Exited("runtime exited (" + process.exitValue() + ") while waiting for " + what
                                + " (" + e.getMessage() + "):\n" + output());
                    }
                    throw e;
                }
            });
        } catch (Exited e) {
            throw new AssertionError(e.getMessage());
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + output(), e);
        }
    }

    /** Ends {@link #awaitAsserted} at once: an exception that is not an AssertionError is not polled again. */
    private static final class Exited extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Exited(String message) {
            super(message);
        }
    }

    /** A minimal HTTP answer. */
    public static final class Answer {
        /** HTTP status, or -1 when the connection failed. */
        public final int status;
        /** Body, or the connection error. */
        public final String body;

        Answer(int status, String body) {
            this.status = status;
            this.body = body;
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    /**
     * GETs {@code http://127.0.0.1:PORT + path}, with basic authentication when {@code user} is not null.
     *
     * @return the answer; status -1 when nothing listens yet
     */
    public Answer get(String path, String user, String password) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (user != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(r.statusCode(), r.body());
        } catch (IOException e) {
            return new Answer(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(-1, e.toString());
        }
    }

    /** Stops the process: SIGTERM (the launcher's shutdown hook stops the framework), SIGKILL after 30 s. */
    @Override
    public void close() {
        process.close();
    }
}
