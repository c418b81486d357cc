package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.simulator.cluster.ClusterBackend;

/**
 * {@link RolloutCases} on a real kube-apiserver with etcd: the chart's RBAC in force, the controller on its
 * ServiceAccount's token, restarts and compactions of the real server.
 */
public class RolloutOnRealServerTest extends RolloutCases {

    RolloutOnRealServerTest() {
        super(ClusterBackend.REAL);
    }
}
