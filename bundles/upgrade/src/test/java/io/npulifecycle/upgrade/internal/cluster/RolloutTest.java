package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.simulator.cluster.ClusterBackend;

/** {@link RolloutCases} on the embedded mock API server (CRUD, no Eviction API, no admission). */
public class RolloutTest extends RolloutCases {

    RolloutTest() {
        super(ClusterBackend.EMBEDDED);
    }
}
