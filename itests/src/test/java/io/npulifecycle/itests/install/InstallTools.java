package io.npulifecycle.itests.install;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

import io.npulifecycle.simulator.cluster.internal.HelmBinary;

/**
 * Finds and runs what the install tests use, as an operator would: {@code helm} (built from its Go module by the chart
 * part's {@code charts/build-helm.sh}), the chart {@code charts/npu-lifecycle}, {@code kubectl}, and the
 * distribution's launcher {@code bin/npu-lifecycle} (for the uninstall command the chart's pre-delete hook runs).
 * A missing tool skips the test with the reason and what to build (a local run) or fails it (under {@code CI=true}).
 */
final class InstallTools {

    /** System property: the chart folder; default {@code charts/npu-lifecycle} in the working folder or a parent. */
    static final String CHART_PROPERTY = "npu.chart";
    /** System property: the helm binary (set by the charts module, as {@code charts/target/helm.properties}). */
    static final String HELM_PROPERTY = "npu.helm";
    /** System property: the launcher; default {@code distribution/target/npu-lifecycle/bin/npu-lifecycle} above. */
    static final String LAUNCHER_PROPERTY = "npu.launcher";
    /** How long one helm, kubectl or launcher run may take. */
    static final Duration RUN_TIMEOUT = Duration.ofMinutes(4);

    private InstallTools() {
    }

    /** Skips (local run) or fails (CI) the test, saying why. */
    static <T> T missing(String message) {
        if ("true".equals(System.getenv("CI"))) {
            fail(message + "; on CI it is required");
        }
        System.err.println("SKIPPED (local run): " + message);
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }

    private static Path above(String relative) {
        for (Path d = Paths.get("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.exists(d.resolve(relative))) {
                return d.resolve(relative);
            }
        }
        return null;
    }

    /** @return kubectl: on {@code PATH}, else {@code /usr/bin/kubectl} */
    static Path kubectl() {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Paths.get(d.isEmpty() ? "." : d, "kubectl");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        Path usr = Paths.get("/usr/bin/kubectl");
        return Files.isExecutable(usr) ? usr : missing("kubectl is neither on PATH nor at /usr/bin/kubectl: install"
                + " kubectl (.ci/run checks for it)");
    }

    /** @return the chart folder (holds Chart.yaml) */
    static Path chart() {
        String p = System.getProperty(CHART_PROPERTY);
        Path chart = p != null && !p.isBlank() ? Path.of(p) : above("charts/npu-lifecycle/Chart.yaml") == null ? null
                : above("charts/npu-lifecycle");
        if (chart == null || !Files.isRegularFile(chart.resolve("Chart.yaml"))) {
            return missing("no chart: neither system property " + CHART_PROPERTY + " nor charts/npu-lifecycle/Chart.yaml"
                    + " above " + Paths.get("").toAbsolutePath() + " (the chart of issue 25 part A)");
        }
        return chart;
    }

    /**
     * @return the helm binary, through the chart part's locator ({@link HelmBinary#locate()}: system property
     *         {@value #HELM_PROPERTY}, else charts/target/helm.properties, else charts/build-helm.sh builds it)
     */
    static Path helm() {
        try {
            return HelmBinary.locate();
        } catch (IllegalStateException e) {
            return missing("no helm binary: " + e.getMessage());
        }
    }

    /**
     * @return the launcher {@code bin/npu-lifecycle}: {@value #LAUNCHER_PROPERTY}, else that of the distribution
     *         {@code npu.distribution.dir} (set by the itests module), else above the working folder
     */
    static Path launcher() {
        String p = System.getProperty(LAUNCHER_PROPERTY);
        String dist = System.getProperty("npu.distribution.dir");
        Path l = p != null && !p.isBlank() ? Path.of(p) : dist != null && !dist.isBlank()
                ? Path.of(dist, "bin/npu-lifecycle") : above("distribution/target/npu-lifecycle/bin/npu-lifecycle");
        if (l == null || !Files.isExecutable(l)) {
            return missing("no launcher: neither system property " + LAUNCHER_PROPERTY + " nor distribution/target/"
                    + "npu-lifecycle/bin/npu-lifecycle above " + Paths.get("").toAbsolutePath()
                    + ": build the distribution (mvn -B -q -DskipTests package)");
        }
        return l;
    }

    /** The result of one run. */
    record Run(List<String> command, int exit, String out, String err) {
        @Override
        public String toString() {
            return String.join(" ", command) + ": exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }

        /** @return this run, when it exited 0 */
        Run ok() {
            if (exit != 0) {
                throw new AssertionError(toString());
            }
            return this;
        }
    }

    /** A started process whose output goes to files; {@link #await()} waits for it. */
    static final class Started {
        final List<String> command;
        final Process process;
        final Path out;
        final Path err;

        Started(List<String> command, Process process, Path out, Path err) {
            this.command = command;
            this.process = process;
            this.out = out;
            this.err = err;
        }

        /** @return the run, once the process exits (at most {@link #RUN_TIMEOUT}; killed after it) */
        Run await() throws IOException, InterruptedException {
            if (!process.waitFor(RUN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " ran over " + RUN_TIMEOUT + "\nstdout:\n"
                        + Files.readString(out) + "\nstderr:\n" + Files.readString(err));
            }
            return new Run(command, process.exitValue(), Files.readString(out), Files.readString(err));
        }

        boolean alive() {
            return process.isAlive();
        }
    }

    /**
     * Starts a command in {@code work} with {@code HOME} and helm's folders there and no {@code KUBECONFIG}.
     *
     * @param work the test's folder
     * @param env more environment
     * @param command the program and its arguments
     */
    static Started start(Path work, Map<String, String> env, String... command) throws IOException {
        List<String> cmd = List.copyOf(Arrays.asList(command));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile());
        pb.environment().put("HOME", work.toString());
        pb.environment().put("HELM_CACHE_HOME", work.resolve("helm/cache").toString());
        pb.environment().put("HELM_CONFIG_HOME", work.resolve("helm/config").toString());
        pb.environment().put("HELM_DATA_HOME", work.resolve("helm/data").toString());
        pb.environment().remove("KUBECONFIG");
        pb.environment().putAll(env);
        Path out = Files.createTempFile(work, "out-", ".txt");
        Path err = Files.createTempFile(work, "err-", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        return new Started(cmd, pb.start(), out, err);
    }

    /** Runs a command to its end (see {@link #start}). */
    static Run run(Path work, String... command) throws IOException, InterruptedException {
        return start(work, Map.of(), command).await();
    }

    /** @return {@code base} followed by {@code more} */
    static String[] concat(List<String> base, String... more) {
        List<String> all = new ArrayList<>(base);
        all.addAll(Arrays.asList(more));
        return all.toArray(String[]::new);
    }
}
