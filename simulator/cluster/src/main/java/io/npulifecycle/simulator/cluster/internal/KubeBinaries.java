package io.npulifecycle.simulator.cluster.internal;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;

/**
 * The folder of the {@code kube-apiserver}, {@code kube-controller-manager}, {@code etcd} and {@code pki} binaries
 * that
 * {@code simulator/apiserver/build.sh} builds from source (Maven runs it before the tests of simulator/cluster and
 * hands the folder to them in the system property {@value #BIN_PROPERTY}).
 */
public final class KubeBinaries {

    /** System property: the folder holding the four binaries. */
    public static final String BIN_PROPERTY = "npu.kube.bin";
    /** System property set by build.sh instead of {@value #BIN_PROPERTY} when it could not build (e.g. no Go). */
    public static final String ERROR_PROPERTY = "npu.kube.bin.error";

    /** Where the upstream Go release tarball installs {@code go}; added to the build script's PATH when present. */
    private static final Path UPSTREAM_GO = Paths.get("/usr/local/go/bin");

    private final Path folder;

    private KubeBinaries(Path folder) {
        this.folder = folder;
    }

    /**
     * @return the binaries named by {@value #BIN_PROPERTY}
     * @throws IllegalStateException when the build could not run ({@value #ERROR_PROPERTY}, e.g. Go is missing), the
     *         property is not set, or a binary is missing; the message says what to do
     */
    public static KubeBinaries fromSystemProperties() {
        String error = System.getProperty(ERROR_PROPERTY);
        if (error != null && !error.isBlank()) {
            throw new IllegalStateException("no kube-apiserver to run: " + error);
        }
        String bin = System.getProperty(BIN_PROPERTY);
        if (bin == null || bin.isBlank()) {
            throw new IllegalStateException("system property " + BIN_PROPERTY + " is not set: it names the folder of "
                    + "kube-apiserver, etcd and pki built by simulator/apiserver/build.sh, which Maven runs before the "
                    + "tests of simulator/cluster (mvn -pl simulator/cluster verify); elsewhere run "
                    + "simulator/apiserver/build.sh <file> and pass -D" + BIN_PROPERTY + "=<the folder it names>");
        }
        return in(Paths.get(bin));
    }

    /** Where {@link #locate()} looks for the build script, relative to the working folder or one of its parents. */
    public static final String BUILD_SCRIPT = "simulator/apiserver/build.sh";

    /**
     * The binaries for a test of any module: those of {@value #BIN_PROPERTY} when Maven set it (simulator/cluster),
     * otherwise those of {@value #BUILD_SCRIPT}, found from the working folder or a parent and run through
     * {@link #fromBuildScript} (a no-op when its cache folder is complete), writing
     * {@code target/kube-bin.properties} of the working folder.
     *
     * @return the binaries
     * @throws IllegalStateException as {@link #fromSystemProperties()} when a property is set, or when no build
     *         script is found or it cannot build (the message says what to do)
     */
    public static KubeBinaries locate() {
        if (System.getProperty(BIN_PROPERTY) != null || System.getProperty(ERROR_PROPERTY) != null) {
            return fromSystemProperties();
        }
        Path cwd = Paths.get("").toAbsolutePath();
        for (Path d = cwd; d != null; d = d.getParent()) {
            Path script = d.resolve(BUILD_SCRIPT);
            if (Files.isRegularFile(script)) {
                try {
                    return fromBuildScript(script, cwd.resolve("target").resolve("kube-bin.properties"));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while " + script + " ran", e);
                }
            }
        }
        throw new IllegalStateException("no kube-apiserver to run: neither system property " + BIN_PROPERTY
                + " nor " + BUILD_SCRIPT + " in " + cwd + " or a parent");
    }

    /**
     * Runs {@code build.sh} (a no-op when its cache folder is complete; a first build takes many minutes and needs
     * Go &gt;= 1.26) and returns the binaries of the properties file it writes. The script writes to this process's
     * standard output and error, so that a long build shows its progress. {@code /usr/local/go/bin} (the upstream Go
     * release) is appended to its PATH when it holds {@code go}.
     *
     * @param buildScript {@code simulator/apiserver/build.sh}, or the copy an installation ships beside the Go sources
     * @param propertiesFile where the script writes {@value #BIN_PROPERTY} or {@value #ERROR_PROPERTY}
     * @return the binaries
     * @throws IllegalStateException when the script is missing, fails, or could not build ({@value #ERROR_PROPERTY},
     *         e.g. no Go: the message says what to install)
     * @throws InterruptedException when interrupted while the script runs (the script is then destroyed)
     */
    public static KubeBinaries fromBuildScript(Path buildScript, Path propertiesFile) throws InterruptedException {
        if (!Files.isRegularFile(buildScript)) {
            throw new IllegalStateException(buildScript + " is missing: it builds kube-apiserver and etcd from the Go "
                    + "sources beside it (simulator/apiserver in the source tree)");
        }
        Process p;
        try {
            Files.deleteIfExists(propertiesFile);
            ProcessBuilder pb = new ProcessBuilder("bash", buildScript.toString(), propertiesFile.toString())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT);
            // the upstream Go release's place, which a login shell's PATH often lacks (.ci/run adds it too)
            String path = pb.environment().getOrDefault("PATH", "");
            if (Files.isExecutable(UPSTREAM_GO.resolve("go")) && !(":" + path + ":").contains(":" + UPSTREAM_GO
                    + ":")) {
                pb.environment().put("PATH", path.isEmpty() ? UPSTREAM_GO.toString() : path + ":" + UPSTREAM_GO);
            }
            p = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + buildScript + ": " + e.getMessage(), e);
        }
        int rc;
        try {
            rc = p.waitFor();
        } catch (InterruptedException e) {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            throw e;
        }
        if (rc != 0) {
            throw new IllegalStateException(buildScript + " failed (exit code " + rc + "): its output above says why");
        }
        Properties props = new Properties();
        try (Reader r = Files.newBufferedReader(propertiesFile)) {
            props.load(r);
        } catch (IOException e) {
            throw new IllegalStateException(buildScript + " wrote no " + propertiesFile + ": " + e.getMessage(), e);
        }
        String error = props.getProperty(ERROR_PROPERTY);
        if (error != null && !error.isBlank()) {
            throw new IllegalStateException("no kube-apiserver to run: " + error);
        }
        String bin = props.getProperty(BIN_PROPERTY);
        if (bin == null || bin.isBlank()) {
            throw new IllegalStateException(propertiesFile + " names neither " + BIN_PROPERTY + " nor "
                    + ERROR_PROPERTY);
        }
        return in(Paths.get(bin));
    }

    /**
     * @param folder a folder holding {@code kube-apiserver}, {@code etcd} and {@code pki}
     * @return the binaries of that folder
     * @throws IllegalStateException when one of them is missing or not executable
     */
    public static KubeBinaries in(Path folder) {
        KubeBinaries b = new KubeBinaries(folder.toAbsolutePath().normalize());
        for (Path p : new Path[] {b.kubeApiserver(), b.kubeControllerManager(), b.etcd(), b.pki()}) {
            if (!Files.isExecutable(p)) {
                throw new IllegalStateException(p + " is missing or not executable: build it with "
                        + "simulator/apiserver/build.sh (Maven does so for simulator/cluster)");
            }
        }
        return b;
    }

    /** @return the folder */
    public Path folder() {
        return folder;
    }

    /** @return the kube-apiserver binary */
    public Path kubeApiserver() {
        return folder.resolve("kube-apiserver");
    }

    /** @return the kube-controller-manager binary */
    public Path kubeControllerManager() {
        return folder.resolve("kube-controller-manager");
    }

    /** @return the etcd binary */
    public Path etcd() {
        return folder.resolve("etcd");
    }

    /** @return the pki binary (simulator/apiserver/cmd/pki) */
    public Path pki() {
        return folder.resolve("pki");
    }

    /** @return kube-scheduler (a real node's pods need it: only a scheduler binds Deployment and DaemonSet pods) */
    public Path kubeScheduler() {
        return folder.resolve("kube-scheduler");
    }

    /** @return the kubelet of a real node ({@code cmd/kubenode} starts it) */
    public Path kubelet() {
        return folder.resolve("kubelet");
    }

    /** @return kube-proxy of a real node ({@code cmd/kubenode} starts it) */
    public Path kubeProxy() {
        return folder.resolve("kube-proxy");
    }

    /** @return kubenode, which makes this machine a real node (containerd, kubelet, kube-proxy; see RealNode) */
    public Path kubenode() {
        return folder.resolve("kubenode");
    }
}
