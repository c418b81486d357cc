package io.npulifecycle.simulator.harness;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.cluster.ServerBaseline;

/**
 * Real API servers handed from one scenario file to the next of a {@code scenario} run, instead of a new
 * kube-apiserver, etcd and kube-controller-manager for every file (their start is 5 to 10 s of wall time and most of
 * a core; docs/benchmarks.md, "The test command").
 *
 * <p>A server is handed over only in the state it had when its first file had set it up: the installation's
 * manifests applied (namespace, ServiceAccounts, RBAC, the node agent's admission policy), the NPUOperatorCtl and
 * ImageWhiteList CRDs installed, nothing else ({@link ServerBaseline}). When a file is done its
 * {@link ServerBaseline#restoreOrWhy} deletes what the file created; when that cannot bring the server back (an
 * object of the baseline changed, a CRD was installed, the server no longer answers), the server is closed and the
 * next file starts a new one, so a file never meets what an earlier file did. Only servers started with the same
 * extra kube-apiserver flags are handed over (a file that reads etcd's watches, {@code --watch-cache=false}, gets a
 * server started so); servers with an audit log or the node-lifecycle controller are never handed over (the caller
 * does not offer them).
 *
 * <p>Holds at most {@code capacity} idle servers (one per file running at a time); {@link #close} stops them.
 * Thread-safe: the files of {@code scenario --parallel N} take and give back servers from N threads.
 */
final class ServerHandover implements AutoCloseable {

    /**
     * A server lent to one file.
     *
     * @param server the server
     * @param flags the extra kube-apiserver flags it was started with
     * @param baseline what it held when its first file had set it up
     * @param files how many files used it before this one
     */
    record Lent(RealApiServer server, List<String> flags, ServerBaseline baseline, int files) {
    }

    private final int capacity;
    private final Deque<Lent> idle = new ArrayDeque<>();
    private boolean closed;
    private int handedOver;
    private int restarted;

    /**
     * @param capacity how many idle servers to keep, 1 or more (the number of files run at a time)
     * @throws IllegalArgumentException when {@code capacity} is below 1
     */
    ServerHandover(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " is below 1");
        }
        this.capacity = capacity;
    }

    /**
     * @param flags the extra kube-apiserver flags the file needs
     * @return an idle server started with exactly those flags, removed from the idle ones, or null (the caller starts
     *         a server and offers it with {@link #lend} once it is set up)
     */
    synchronized Lent take(List<String> flags) {
        for (Iterator<Lent> it = idle.iterator(); it.hasNext();) {
            Lent l = it.next();
            if (l.flags().equals(flags)) {
                it.remove();
                handedOver++;
                return new Lent(l.server(), l.flags(), l.baseline(), l.files() + 1);
            }
        }
        return null;
    }

    /**
     * Records what a newly started, set-up server holds, so that it can be given back after its first file.
     *
     * @param server the server, with the manifests and CRDs of every file installed and nothing else
     * @param flags the extra kube-apiserver flags it was started with
     * @return the loan to {@link #giveBack} when the file is done
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server does not answer
     */
    Lent lend(RealApiServer server, List<String> flags) {
        return new Lent(server, List.copyOf(flags), ServerBaseline.of(server.client()), 0);
    }

    /**
     * Restores a server whose file is done (every runtime of the file stopped) to its baseline and keeps it idle for
     * the next file, or closes it; never throws.
     *
     * @param lent what {@link #take} or {@link #lend} gave
     * @param log told what happened (kept, or closed and why)
     */
    void giveBack(Lent lent, Consumer<String> log) {
        long t0 = System.nanoTime();
        String why;
        try {
            why = lent.baseline().restoreOrWhy(lent.server().client());
        } catch (RuntimeException e) {
            why = "restoring it failed: " + e;
        }
        Lent evicted = null;
        if (why == null) {
            synchronized (this) {
                if (closed) {
                    why = "the run is over";
                } else {
                    idle.addLast(lent);
                    if (idle.size() > capacity) {
                        evicted = idle.removeFirst();
                    }
                }
            }
        }
        if (why != null) {
            synchronized (this) {
                restarted++;
            }
            log.accept("cluster: API server " + lent.server().masterUrl() + " closed, not handed to the next file: "
                    + why);
            lent.server().close();
        } else {
            log.accept(String.format(java.util.Locale.ROOT, "cluster: API server %s restored to its baseline in "
                    + "%.1f s, kept for the next file", lent.server().masterUrl(), (System.nanoTime() - t0) / 1e9));
        }
        if (evicted != null) {
            evicted.server().close();
        }
    }

    /** @return how many files got a server handed over, and how many servers could not be restored */
    synchronized String summary() {
        return handedOver + " file(s) on a server handed over from an earlier file, " + restarted
                + " server(s) not restorable";
    }

    /** Stops every idle server; a server given back later is closed at once. */
    @Override
    public void close() {
        List<Lent> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(idle);
            idle.clear();
        }
        all.forEach(l -> l.server().close());
    }
}
