package io.npulifecycle.testing.support;

import java.util.List;

import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.ServerBaseline;

/**
 * Real API servers kept from one test to the next in a test JVM: starting kube-apiserver, etcd and
 * kube-controller-manager takes 5 to 10 s, a test on them often less.
 *
 * <p>A server goes back to the pool only in the state it was handed out: its {@link ServerBaseline} is every object
 * that existed then (the product's manifests applied, nothing else); when {@link ServerBaseline#restore} cannot bring
 * it back to that, the server is closed and the next test starts a new one, so a test never meets what an earlier
 * test did.
 *
 * <p>The pool is one per JVM by nature (it outlives every test instance, and the surefire fork is the unit of reuse);
 * it holds at most one idle server, and the server's own shutdown hook stops it when the JVM exits.
 */
final class RealServerPool {

    /** One idle server, or none. */
    private static Idle idle;

    private RealServerPool() {
    }

    /** An idle server, the apiserver flags it was started with, and what existed when it was handed out. */
    record Idle(RealApiServer server, List<String> flags, ServerBaseline baseline) {
    }

    /**
     * @param flags the extra kube-apiserver flags the test needs
     * @return an idle server started with exactly those flags, or null (the caller starts one)
     */
    static synchronized Idle take(List<String> flags) {
        Idle i = idle;
        if (i == null) {
            return null;
        }
        idle = null;
        if (i.flags().equals(flags)) {
            return i;
        }
        i.server().close();
        return null;
    }

    /**
     * Restores the server to {@code baseline} and keeps it idle, or closes it.
     *
     * @param server a server handed out with that baseline; its test's clients are closed
     * @param flags its extra kube-apiserver flags
     * @param baseline what existed when it was handed out
     */
    static void giveBack(RealApiServer server, List<String> flags, ServerBaseline baseline) {
        boolean clean;
        try {
            clean = baseline.restore(server.client());
        } catch (RuntimeException e) {
            clean = false; // a closed server
        }
        if (!clean) {
            server.close();
            return;
        }
        Idle previous;
        synchronized (RealServerPool.class) {
            previous = idle;
            idle = new Idle(server, flags, baseline);
        }
        if (previous != null) {
            previous.server().close();
        }
    }
}
