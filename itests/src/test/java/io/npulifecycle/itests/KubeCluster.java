package io.npulifecycle.itests;

import io.npulifecycle.simulator.cluster.EmbeddedCluster;

/**
 * The {@link EmbeddedCluster} of the integration tests, started once per failsafe JVM from {@code @Configuration}
 * methods (outside the framework). Like {@link RuntimeOptions}, never loaded by a test method: the simulator's
 * classes are not visible inside the framework; pass {@link #masterUrl()} to the tests as a framework property.
 */
public final class KubeCluster {

    private static EmbeddedCluster cluster;

    private KubeCluster() {
    }

    /** @return the master URL of the shared cluster, started on first use and stopped when the JVM exits */
    public static synchronized String masterUrl() {
        if (cluster == null) {
            cluster = EmbeddedCluster.start();
            cluster.installCrd();
            EmbeddedCluster c = cluster;
            Runtime.getRuntime().addShutdownHook(new Thread(c::close, "embedded-cluster-stop"));
        }
        return cluster.masterUrl();
    }
}
