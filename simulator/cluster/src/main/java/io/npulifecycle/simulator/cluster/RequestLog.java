package io.npulifecycle.simulator.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The requests an {@link EmbeddedCluster} has received (mock only): the last 20000, each {@code "METHOD /path?query"},
 * and listeners told of each one. Recorded by the cluster's dispatcher before faults and outages apply. One per
 * cluster, from {@link EmbeddedCluster#requestLog()}. Thread-safe.
 */
public final class RequestLog {

    private static final int REQUEST_LOG_LIMIT = 20_000;

    private final ConcurrentLinkedDeque<String> requests = new ConcurrentLinkedDeque<>();
    private final AtomicInteger requestLogSize = new AtomicInteger();
    private final List<RequestListener> requestListeners = new CopyOnWriteArrayList<>();

    RequestLog() {
    }

    /** Sees every request the cluster receives, before faults and outages are applied (mock only). */
    @FunctionalInterface
    public interface RequestListener {
        /**
         * Called on the server's thread; must return quickly and not throw.
         *
         * @param method HTTP method ({@code GET} for watches too)
         * @param pathAndQuery e.g. {@code /api/v1/nodes?watch=true}
         * @param userAgent the {@code User-Agent} header, or null
         */
        void request(String method, String pathAndQuery, String userAgent);
    }

    /**
     * Adds a listener of every request (e.g. counting requests per client by User-Agent).
     *
     * @param listener the listener
     */
    public void addRequestListener(RequestListener listener) {
        requestListeners.add(Objects.requireNonNull(listener));
    }

    /** Logs a request (the oldest is forgotten beyond 20000) and tells the listeners. */
    void record(String method, String pathAndQuery, String userAgent) {
        requests.addLast(method + " " + pathAndQuery);
        if (requestLogSize.incrementAndGet() > REQUEST_LOG_LIMIT) {
            requests.pollFirst();
            requestLogSize.decrementAndGet();
        }
        for (RequestListener l : requestListeners) {
            l.request(method, pathAndQuery, userAgent);
        }
    }

    /** @return the last requests (at most 20000), oldest first, each {@code "METHOD /path?query"} */
    public List<String> requests() {
        return new ArrayList<>(requests);
    }

    /** Forgets the request log. */
    public void clearRequests() {
        requests.clear();
        requestLogSize.set(0);
    }
}
