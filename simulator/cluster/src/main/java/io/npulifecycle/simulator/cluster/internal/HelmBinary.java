package io.npulifecycle.simulator.cluster.internal;

import java.io.File;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The {@code helm} binary that {@code charts/build-helm.sh} builds from its Go module ({@code helm.sh/helm/v4}), as
 * {@link KubeBinaries} finds kube-apiserver: the system property {@value #PROPERTY}, else {@code npu.helm} of
 * {@value #PROPERTIES} (written by module charts) found from the working folder or one of its parents, else the
 * result of running {@value #SCRIPT} (a no-op when the binary is cached in {@code ~/.cache/npu-lifecycle/helm/}).
 */
public final class HelmBinary {

    /** System property: the helm binary. */
    public static final String PROPERTY = "npu.helm";
    /** The properties file module charts writes, relative to the repository root. */
    public static final String PROPERTIES = "charts/target/helm.properties";
    /** The build script, relative to the repository root. */
    public static final String SCRIPT = "charts/build-helm.sh";
    /** How long a build may take (a first build downloads and compiles for minutes). */
    static final long BUILD_TIMEOUT_MINUTES = 30;

    private HelmBinary() {
    }

    /**
     * @return the path of an executable helm
     * @throws IllegalStateException when none is named, found or can be built (no Go, no network for a first build);
     *         the message says what to do
     */
    public static Path locate() {
        String p = System.getProperty(PROPERTY);
        if (p != null && !p.isBlank()) {
            return executable(Paths.get(p), "system property " + PROPERTY);
        }
        for (Path d = Paths.get("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path props = d.resolve(PROPERTIES);
            if (Files.isRegularFile(props)) {
                Properties q = new Properties();
                try (Reader r = Files.newBufferedReader(props, StandardCharsets.UTF_8)) {
                    q.load(r);
                } catch (IOException e) {
                    throw new IllegalStateException("cannot read " + props + ": " + e.getMessage(), e);
                }
                String bin = q.getProperty(PROPERTY);
                if (bin != null && Files.isExecutable(Paths.get(bin))) {
                    return Paths.get(bin);
                }
            }
            Path script = d.resolve(SCRIPT);
            if (Files.isRegularFile(script)) {
                return build(script);
            }
        }
        throw new IllegalStateException("no helm: neither system property " + PROPERTY + " nor " + PROPERTIES + " nor "
                + SCRIPT + " in " + Paths.get("").toAbsolutePath() + " or a parent: build module charts");
    }

    private static Path build(Path script) {
        try {
            Path out = Files.createTempFile("build-helm", ".out");
            try {
                ProcessBuilder pb = new ProcessBuilder("bash", script.toString())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                        .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT);
                Process proc = pb.start();
                if (!proc.waitFor(BUILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                    proc.destroyForcibly();
                    throw new IllegalStateException(script + " did not finish within " + BUILD_TIMEOUT_MINUTES + " min");
                }
                if (proc.exitValue() != 0) {
                    throw new IllegalStateException(script + " failed (exit " + proc.exitValue()
                            + "): it needs Go >= 1.26 (/usr/local/go/bin) and, for a first build, the Go module proxy");
                }
                String last = Files.readAllLines(out, StandardCharsets.UTF_8).stream().reduce((a, b) -> b).orElse("");
                return executable(Paths.get(last.strip()), script.toString());
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while " + script + " ran", e);
        }
    }

    private static Path executable(Path p, String from) {
        if (!Files.isExecutable(p)) {
            throw new IllegalStateException(from + " names " + p + ", which is not an executable helm: run " + SCRIPT);
        }
        return p;
    }
}
