package io.npulifecycle.simulator.cluster.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The folder of the {@code kube-apiserver}, {@code etcd} and {@code pki} binaries that
 * {@code simulator/apiserver/build.sh} builds from source (Maven runs it before the tests of simulator/cluster and
 * hands the folder to them in the system property {@value #BIN_PROPERTY}).
 */
public final class KubeBinaries {

    /** System property: the folder holding the three binaries. */
    public static final String BIN_PROPERTY = "npu.kube.bin";
    /** System property set by build.sh instead of {@value #BIN_PROPERTY} when it could not build (e.g. no Go). */
    public static final String ERROR_PROPERTY = "npu.kube.bin.error";

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

    /**
     * @param folder a folder holding {@code kube-apiserver}, {@code etcd} and {@code pki}
     * @return the binaries of that folder
     * @throws IllegalStateException when one of them is missing or not executable
     */
    public static KubeBinaries in(Path folder) {
        KubeBinaries b = new KubeBinaries(folder.toAbsolutePath().normalize());
        for (Path p : new Path[] {b.kubeApiserver(), b.etcd(), b.pki()}) {
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

    /** @return the etcd binary */
    public Path etcd() {
        return folder.resolve("etcd");
    }

    /** @return the pki binary (simulator/apiserver/cmd/pki) */
    public Path pki() {
        return folder.resolve("pki");
    }
}
