package io.npulifecycle.simulator.harness;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;

import io.npulifecycle.simulator.cluster.ClusterBackend;
import io.npulifecycle.simulator.cluster.EmbeddedCluster;
import io.npulifecycle.simulator.cluster.EmbeddedFaults;
import io.npulifecycle.simulator.cluster.RealApiServer;
import io.npulifecycle.simulator.common.TcpProxy;

/**
 * The API server faults of the scenarios ({@code apiUnreachable}, {@code apiOutage}, {@code apiGone}) as the
 * simulated cluster's runtimes see them. The runtimes reach the API server through a forwarder ({@link TcpProxy});
 * the harness itself (operator, kubelet and DaemonSet emulation) talks to the server directly and is never cut off.
 *
 * <ul>
 * <li>On the embedded mock the forwarder passes bytes through; a 503 outage and 410 Gone are the mock's own
 *     ({@link EmbeddedFaults}: every client, the harness included, sees them).
 * <li>On a real kube-apiserver, when the run needs 503 answers ({@code start(cluster, true, log)}), the forwarder is a
 *     front proxy that terminates TLS with the server's own serving certificate (127.0.0.1, the server's CA, which
 *     the runtimes' kubeconfigs trust) and relays HTTP/1.1 over a TLS connection of its own, each request keeping
 *     its bearer token; a 503 outage is that proxy closing every open connection and answering every request
 *     {@code 503 Service Unavailable} (a kube Status body, {@code Retry-After}). Otherwise the forwarder passes the
 *     TLS bytes through, so the runtimes speak to the server as they would without it (HTTP/2).
 * <li>410 Gone on a real server is etcd compacted for real ({@link RealApiServer#compact()}) and the runtimes'
 *     connections closed, so every watch resumes from a resourceVersion older than the compaction and etcd answers
 *     it 410 Gone; that needs the server to serve watches from etcd ({@link #realServerFlags(boolean)}), as the
 *     watch cache would otherwise resume them from its own window.
 * </ul>
 */
final class ApiFaults implements AutoCloseable {

    /** {@code Retry-After} of the forwarder's 503 answers (wall-clock). */
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final ClusterBackend cluster;
    private final TcpProxy proxy;
    private final Consumer<String> log;

    private ApiFaults(ClusterBackend cluster, TcpProxy proxy, Consumer<String> log) {
        this.cluster = cluster;
        this.proxy = proxy;
        this.log = log;
    }

    /**
     * @param cluster the running API server
     * @param answers503 whether the run makes a real server answer 503 ({@code apiOutage}): the forwarder then
     *        terminates TLS; ignored on the embedded mock
     * @param log told each fault as it starts and ends
     * @return the forwarder in front of {@code cluster}, listening on a free loopback port
     * @throws IOException if no port can be bound
     * @throws IllegalStateException when the real server's certificates cannot be read
     */
    static ApiFaults start(ClusterBackend cluster, boolean answers503, Consumer<String> log) throws IOException {
        URI master = URI.create(cluster.masterUrl());
        TcpProxy.Tls tls = answers503 && cluster instanceof RealApiServer real
                ? new TcpProxy.Tls(real.servingSslContext().getServerSocketFactory(),
                        real.trustingSslContext().getSocketFactory())
                : null;
        return new ApiFaults(cluster, new TcpProxy(master.getPort(), tls, log), log);
    }

    /**
     * @param watchesFromEtcd whether the scenario compacts etcd ({@code apiGone})
     * @return the extra kube-apiserver flags of a real server for the scenario: {@code --watch-cache=false} when
     *         {@code watchesFromEtcd}, none otherwise
     */
    static List<String> realServerFlags(boolean watchesFromEtcd) {
        return watchesFromEtcd ? List.of("--watch-cache=false") : List.of();
    }

    /** @return the URL the runtimes are given: the forwarder's port, the server's scheme */
    String runtimeMaster() {
        return URI.create(cluster.masterUrl()).getScheme() + "://127.0.0.1:" + proxy.port();
    }

    /**
     * Makes the API server unreachable for the runtimes (connections refused and reset, not an HTTP error) for
     * {@code wall} of wall-clock time, in the background.
     *
     * @param wall how long
     */
    void unreachableFor(Duration wall) {
        proxy.cutOff();
        restoreAfter(wall, "api-unreachable");
    }

    /**
     * Makes every request of the runtimes fail with {@code 503 Service Unavailable} for {@code wall} of wall-clock
     * time, in the background (on the embedded mock: every client's request).
     *
     * @param wall how long
     * @return what was done, for the scenario's output
     * @throws IOException when the forwarder cannot listen again
     * @throws IllegalStateException on a real server when {@link #start} was not told {@code answers503}
     */
    String unavailableFor(Duration wall) throws IOException {
        if (cluster instanceof EmbeddedCluster embedded) {
            embedded.faults().outageFor(wall, EmbeddedFaults.OutageMode.SERVICE_UNAVAILABLE);
            return "the embedded API server answers every request 503 for " + wall.toMillis() + " ms";
        }
        if (!proxy.url().startsWith("https:")) {
            throw new IllegalStateException("apiOutage on a real API server needs the TLS front proxy: the simulated "
                    + "cluster must be told answers503(true) before it starts");
        }
        proxy.serviceUnavailable(RETRY_AFTER);
        restoreAfter(wall, "api-unavailable");
        return "the front proxy of kube-apiserver closed the runtimes' connections and answers each request 503 "
                + "Service Unavailable (Retry-After " + RETRY_AFTER.toSeconds() + " s) for " + wall.toMillis() + " ms";
    }

    /**
     * Makes every watch of the runtimes end and resume with {@code 410 Gone}: on the embedded mock, open watches end
     * with 410 Expired and the next {@code failNext} watch requests are answered 410 Gone; on a real server etcd is
     * compacted to its current revision and the runtimes' connections are closed ({@code failNext} does not apply:
     * each watch resuming from before the compaction is answered 410 Gone once).
     *
     * @param failNext the mock's count of watch requests answered 410 Gone
     * @return what was done, for the scenario's output
     * @throws IllegalStateException when etcd refuses the compaction
     */
    String gone(int failNext) {
        if (cluster instanceof EmbeddedCluster embedded) {
            embedded.faults().failNextWatches(failNext);
            embedded.faults().expireWatches();
            return "the embedded API server expired every watch and answers the next " + failNext
                    + " watch requests 410 Gone";
        }
        long revision = ((RealApiServer) cluster).compact();
        int closed = proxy.dropConnections();
        awaitGone(revision);
        String done = "etcd compacted to revision " + revision + ", " + closed + " runtime connection(s) closed: "
                + "every watch resuming from an older resourceVersion is answered 410 Gone (a watch from "
                + "resourceVersion 1 was)";
        log.accept("api: " + done);
        return done;
    }

    /** @return what the forwarder did over the run, e.g. how many requests it answered 503; null for nothing */
    String summary() {
        long n = proxy.answered503();
        return n == 0 ? null : "the front proxy answered " + n + " request(s) of the runtimes 503 Service Unavailable";
    }

    /**
     * Checks that the compaction is one the runtimes' watches meet: a watch of the nodes from resourceVersion 1
     * (older than any compaction to a later revision) must end with 410 Gone.
     *
     * @throws IllegalStateException when it does not within 30 s (e.g. the server has its watch cache on)
     */
    private void awaitGone(long revision) {
        CompletableFuture<WatcherException> closed = new CompletableFuture<>();
        try (Watch w = cluster.client().nodes().watch(new ListOptionsBuilder().withResourceVersion("1").build(),
                new Watcher<Node>() {
                    @Override
                    public void eventReceived(Action action, Node node) {
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                        closed.complete(cause);
                    }
                })) {
            WatcherException gone = closed.get(30, TimeUnit.SECONDS);
            if (gone == null || !gone.isHttpGone()) {
                throw new IllegalStateException("after compacting etcd to revision " + revision
                        + ", a watch from resourceVersion 1 ended with " + gone + ", not 410 Gone");
            }
        } catch (TimeoutException e) {
            throw new IllegalStateException("after compacting etcd to revision " + revision + ", a watch from "
                    + "resourceVersion 1 was not answered 410 Gone within 30 s (is the watch cache on?)", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the 410 check failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while checking the compaction", e);
        }
    }

    private void restoreAfter(Duration wall, String name) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(wall.toMillis()); // the fault's own length
                proxy.restore();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                log.accept("api: cannot end the " + name + " period: " + e.getMessage());
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    /** Stops the forwarder (every runtime connection ends). */
    @Override
    public void close() {
        proxy.close();
    }
}
