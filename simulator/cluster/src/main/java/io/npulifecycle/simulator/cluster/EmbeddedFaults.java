package io.npulifecycle.simulator.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.WebSocketListener;

/**
 * The fault hooks of an {@link EmbeddedCluster} for reliability tests (mock only; a real API server has none): API
 * outages (every request answered {@code 503} or not at all, open watches dropped), injected per-request faults, and
 * watch expiry ({@code 410 Expired} on open watches, {@code 410 Gone} on the next watch requests). The cluster's
 * dispatcher asks it before serving each request. One per cluster, from {@link EmbeddedCluster#faults()}.
 * Thread-safe.
 */
public final class EmbeddedFaults {

    /** How an outage looks to clients. */
    public enum OutageMode {
        /** every request is answered {@code 503 ServiceUnavailable} at once */
        SERVICE_UNAVAILABLE,
        /** requests get no answer until the outage ends (clients run into their request timeout) */
        NO_ANSWER
    }

    /** A fault injected into matching requests (reliability tests). */
    @FunctionalInterface
    public interface Fault {
        /**
         * @param method HTTP method
         * @param pathAndQuery e.g. {@code /api/v1/nodes/node-0?fieldManager=x}
         * @return the HTTP status to answer instead of serving the request (a Kubernetes {@code Status} body), or 0
         */
        int statusFor(String method, String pathAndQuery);
    }

    private final Set<TrackedWatch> openWatches = ConcurrentHashMap.newKeySet();
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final AtomicInteger goneWatches = new AtomicInteger();
    private volatile OutageMode outage;
    private volatile long outageEndsNanos;
    private volatile boolean outageTimed;
    private volatile LongSupplier nanoClock = System::nanoTime;

    EmbeddedFaults() {
    }

    /**
     * Starts an API outage: open watches are dropped and every request fails ({@code 503}, or no answer) until
     * {@link #endOutage()}.
     *
     * @param mode how requests fail
     */
    public void startOutage(OutageMode mode) {
        outageTimed = false;
        outage = Objects.requireNonNull(mode);
        dropWatches();
    }

    /**
     * An outage that ends by itself after {@code duration} (measured with the cluster's clock, {@link
     * #setClock(LongSupplier)}).
     *
     * @param duration how long
     * @param mode how requests fail
     */
    public void outageFor(Duration duration, OutageMode mode) {
        outageEndsNanos = nanoClock.getAsLong() + duration.toNanos();
        outageTimed = true;
        outage = Objects.requireNonNull(mode);
        dropWatches();
    }

    /** Ends the outage. */
    public void endOutage() {
        outage = null;
        outageTimed = false;
    }

    /** @return whether requests are failing now */
    public boolean inOutage() {
        return currentOutage() != null;
    }

    private OutageMode currentOutage() {
        OutageMode m = outage;
        if (m != null && outageTimed && nanoClock.getAsLong() - outageEndsNanos >= 0) {
            outage = null;
            return null;
        }
        return m;
    }

    /**
     * The clock of {@link #outageFor(Duration, OutageMode)} (default {@code System::nanoTime}).
     *
     * @param nanos monotonic nanoseconds
     */
    public void setClock(LongSupplier nanos) {
        this.nanoClock = Objects.requireNonNull(nanos);
    }

    /**
     * Ends every open watch with an ERROR event {@code 410 Expired} ("too old resource version") and closes it, as an
     * API server does after compacting a watch's resourceVersion. fabric8 informers then list again.
     *
     * @return how many watches were ended
     */
    public int expireWatches() {
        List<TrackedWatch> now = new ArrayList<>(openWatches);
        for (TrackedWatch w : now) {
            w.fail(410, "Expired", "too old resource version (simulated by EmbeddedCluster)");
        }
        return now.size();
    }

    /**
     * The next {@code count} watch requests are answered {@code 410 Gone} instead of being opened.
     *
     * @param count how many
     */
    public void failNextWatches(int count) {
        goneWatches.addAndGet(count);
    }

    /** @return watches open now */
    public int openWatches() {
        return openWatches.size();
    }

    /** @return path and query of each open watch */
    public List<String> openWatchPaths() {
        List<String> out = new ArrayList<>();
        openWatches.forEach(w -> out.add(w.path()));
        return out;
    }

    /**
     * Adds a fault: requests for which it answers a status are answered with that status (e.g. 409 on a node's
     * PATCH, 500 on event creation).
     *
     * @param fault the fault
     */
    public void injectFault(Fault fault) {
        faults.add(Objects.requireNonNull(fault));
    }

    /** Removes every injected fault. */
    public void clearFaults() {
        faults.clear();
    }

    private void dropWatches() {
        new ArrayList<>(openWatches).forEach(TrackedWatch::drop);
    }

    /**
     * @return the answer of the current outage or of the first injected fault that matches the request, or null to
     *         serve it
     */
    MockResponse faultFor(String method, String pathAndQuery) {
        OutageMode m = currentOutage();
        if (m != null) {
            MockResponse r = KubectlDispatcher.status(503, "ServiceUnavailable",
                    "the API server is unavailable (simulated outage)");
            if (m == OutageMode.NO_ANSWER) {
                long remaining = outageTimed ? Math.max(0, outageEndsNanos - nanoClock.getAsLong())
                        : Duration.ofHours(1).toNanos();
                r.setBodyDelay(Duration.ofNanos(remaining));
            }
            return r;
        }
        for (Fault f : faults) {
            int code = f.statusFor(method, pathAndQuery);
            if (code != 0) {
                return KubectlDispatcher.status(code, reason(code), "fault injected by EmbeddedCluster: HTTP " + code
                        + " for " + method + " " + pathAndQuery);
            }
        }
        return null;
    }

    private static String reason(int code) {
        switch (code) {
            case 409: return "Conflict";
            case 404: return "NotFound";
            case 410: return "Gone";
            case 429: return "TooManyRequests";
            case 500: return "InternalError";
            case 503: return "ServiceUnavailable";
            case 504: return "Timeout";
            default: return "Failure";
        }
    }

    /** @return whether this watch request is answered {@code 410} ({@link #failNextWatches(int)}), counting it */
    boolean takeGoneWatch() {
        return goneWatches.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }

    /** @return the watch's listener wrapped so that outages and {@link #expireWatches()} reach it */
    WebSocketListener track(WebSocketListener listener, FieldSelector fields) {
        return new TrackedWatch(listener, fields, openWatches);
    }
}
