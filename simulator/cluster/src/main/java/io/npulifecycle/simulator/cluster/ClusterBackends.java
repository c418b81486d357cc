package io.npulifecycle.simulator.cluster;

import java.util.List;
import java.util.function.Supplier;

import io.npulifecycle.simulator.cluster.internal.KubeBinaries;

/**
 * Starts a {@link ClusterBackend} by name, so that tests, the simulator harness and {@code bin/npu-lifecycle cluster}
 * pick the API server with one word: {@value ClusterBackend#EMBEDDED} (the in-process mock, {@link EmbeddedCluster})
 * or {@value ClusterBackend#REAL} (kube-apiserver and etcd, {@link RealApiServer}).
 *
 * <pre>
 * try (ClusterBackend api = ClusterBackends.start("real")) { ... }
 * </pre>
 */
public final class ClusterBackends {

    /** The names {@link #start(String)} accepts, in the order they are listed in messages. */
    public static final List<String> KINDS = List.of(ClusterBackend.EMBEDDED, ClusterBackend.REAL);

    private ClusterBackends() {
    }

    /**
     * @param kind a backend name as a user or a test wrote it
     * @return {@code kind}, when it is one of {@link #KINDS}
     * @throws IllegalArgumentException naming the value and the two choices otherwise (also for null)
     */
    public static String checkKind(String kind) {
        if (kind == null || !KINDS.contains(kind)) {
            throw new IllegalArgumentException("unknown API server kind " + (kind == null ? "null" : "'" + kind + "'")
                    + ": expected " + KINDS.get(0) + " or " + KINDS.get(1));
        }
        return kind;
    }

    /**
     * Starts a backend; a real one from the binaries of {@link KubeBinaries#locate()}: system property
     * {@value KubeBinaries#BIN_PROPERTY} (set by Maven for the tests of simulator/cluster), else the build script
     * found from the working folder.
     *
     * @param kind {@value ClusterBackend#EMBEDDED} or {@value ClusterBackend#REAL}
     * @return the running backend, ready for requests; the caller closes it
     * @throws IllegalArgumentException for any other kind (the message names it and the two choices)
     * @throws IllegalStateException when a real server cannot start (see {@link RealApiServer#start()})
     */
    public static ClusterBackend start(String kind) {
        return start(kind, KubeBinaries::locate);
    }

    /**
     * Starts a backend.
     *
     * @param kind {@value ClusterBackend#EMBEDDED} (a free loopback port) or {@value ClusterBackend#REAL}
     * @param realBinaries where a real server's binaries come from; called only for {@value ClusterBackend#REAL}
     * @return the running backend, ready for requests; the caller closes it
     * @throws IllegalArgumentException for any other kind (the message names it and the two choices)
     * @throws IllegalStateException when a real server cannot start: the binaries are missing (the supplier's
     *         message), a process exits or does not get ready within {@link RealApiServer#DEFAULT_START_TIMEOUT}
     */
    public static ClusterBackend start(String kind, Supplier<KubeBinaries> realBinaries) {
        return start(kind, realBinaries, List.of());
    }

    /**
     * Starts a backend, a real one with more kube-apiserver flags (see
     * {@link RealApiServer#start(KubeBinaries, java.time.Duration, java.util.function.LongSupplier, List)}).
     *
     * @param kind {@value ClusterBackend#EMBEDDED} (a free loopback port) or {@value ClusterBackend#REAL}
     * @param realBinaries where a real server's binaries come from; called only for {@value ClusterBackend#REAL}
     * @param realApiServerFlags e.g. {@code List.of("--watch-cache=false")}; ignored for the embedded mock
     * @return the running backend, as {@link #start(String, Supplier)}
     * @throws IllegalArgumentException for any other kind (the message names it and the two choices)
     * @throws IllegalStateException when a real server cannot start
     */
    public static ClusterBackend start(String kind, Supplier<KubeBinaries> realBinaries,
            List<String> realApiServerFlags) {
        if (ClusterBackend.EMBEDDED.equals(checkKind(kind))) {
            return EmbeddedCluster.start();
        }
        return RealApiServer.start(realBinaries.get(), RealApiServer.DEFAULT_START_TIMEOUT, System::nanoTime,
                realApiServerFlags);
    }
}
