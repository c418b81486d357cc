package io.npulifecycle.simulator.harness;

import java.util.List;

import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.ServerBaseline;

/**
 * The real API server of one scenario handed to the next scenario of the same {@code scenario} run, restored to what
 * the harness installed ({@link ServerBaseline}: the manifests, the CRDs, the namespace) instead of starting a new
 * kube-apiserver, etcd and kube-controller-manager for every file. A server that cannot be restored exactly, or was
 * started with other kube-apiserver flags than the next scenario needs, is closed and the next scenario starts its
 * own. Holds at most one idle server; {@link #close()} stops it.
 */
final class ServerReuse implements AutoCloseable {

    /** A server with the flags it was started with and what the harness had installed on it. */
    record Held(RealApiServer server, List<String> flags, ServerBaseline baseline) {
    }

    private Held idle;

    /**
     * @param flags the kube-apiserver flags the next scenario needs ({@link ApiFaults#realServerFlags(boolean)})
     * @return the idle server if it was started with exactly those flags, else null (an idle one is closed)
     */
    synchronized Held take(List<String> flags) {
        Held h = idle;
        idle = null;
        if (h != null && !h.flags().equals(flags)) {
            h.server().close();
            return null;
        }
        return h;
    }

    /**
     * Restores {@code held} for the next scenario, or closes its server when that fails.
     *
     * @param held a server whose scenario has stopped every runtime and client of its own
     */
    void giveBack(Held held) {
        if (!held.baseline().restore(held.server().client())) {
            held.server().close();
            return;
        }
        Held previous;
        synchronized (this) {
            previous = idle;
            idle = held;
        }
        if (previous != null) {
            previous.server().close();
        }
    }

    @Override
    public synchronized void close() {
        if (idle != null) {
            idle.server().close();
            idle = null;
        }
    }
}
