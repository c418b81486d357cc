package io.npulifecycle.itests;

import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/**
 * The Kubernetes API server of the integration tests (a {@link ClusterBackend}: the {@link EmbeddedCluster}), started
 * once per failsafe JVM from {@code @Configuration} methods (outside the framework). Like {@link RuntimeOptions}, never loaded by a test method: the simulator's
 * classes are not visible inside the framework; pass {@link #masterUrl()} to the tests as a framework property.
 */
public final class KubeCluster {

    private static ClusterBackend cluster;

    private KubeCluster() {
    }

    /** @return the master URL of the shared cluster, started on first use and stopped when the JVM exits */
    public static synchronized String masterUrl() {
        if (cluster == null) {
            cluster = EmbeddedCluster.start();
            cluster.installCrd();
            io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate.install(cluster.client(),
                    EmbeddedCluster.NPU_NAMESPACE, io.npulifecycle.simulator.cluster.DriverDaemonSetTemplate.locate());
            ClusterBackend c = cluster;
            Runtime.getRuntime().addShutdownHook(new Thread(c::close, "embedded-cluster-stop"));
        }
        return cluster.masterUrl();
    }
}
