package io.npulifecycle.kubeclient.internal;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;

/**
 * Outcome of the client's requests, fed by a fabric8 HTTP {@link Interceptor} on every request of every user of the
 * client (informers, watches, the MBean's {@code checkConnection}). Thread-safe.
 *
 * <p>fabric8 8.0.0 calls {@link #afterConnectionFailure} only for a failure it is going to retry (its
 * {@code requestRetryBackoffLimit}, 10 by default): with the default every connection failure is seen at its first
 * attempt. A 5xx answer is seen through {@link #after}.
 */
final class ClientStatus implements Interceptor {

    private final Supplier<Instant> clock;
    private volatile boolean connected;
    private volatile String lastError = "";
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final io.npulifecycle.api.metrics.Counts byVerbAndCode = new io.npulifecycle.api.metrics.Counts(
            "npu_lifecycle_kubernetes_requests_total",
            "requests of this runtime to the Kubernetes API server, by verb (the HTTP method, WATCH for a watch) and "
                    + "code (the HTTP status, none when no answer came)", "verb", "code");

    /** @param clock the time for {@link #getLastError()} (the TimeSource); may answer null when there is none */
    ClientStatus(Supplier<Instant> clock) {
        this.clock = clock;
    }

    @Override
    public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<java.nio.ByteBuffer>> consumer) {
        byVerbAndCode.increment(verb(request.method(), request.uri()), String.valueOf(response.code()));
        answered(request.method(), String.valueOf(request.uri()), response.code());
    }

    @Override
    public void afterConnectionFailure(HttpRequest request, Throwable failure) {
        byVerbAndCode.increment(verb(request.method(), request.uri()), "none");
        failed(request.method() + " " + request.uri() + ": connection failed: " + describe(failure));
    }

    /**
     * @param method the HTTP method
     * @param uri the request URI
     * @return the method in upper case, {@code WATCH} for a GET with {@code watch=true} (a bounded label value)
     */
    static String verb(String method, java.net.URI uri) {
        String m = method == null ? "UNKNOWN" : method.toUpperCase(java.util.Locale.ROOT);
        String q = uri == null ? null : uri.getRawQuery();
        if ("GET".equals(m) && q != null && ("&" + q + "&").contains("&watch=true&")) {
            return "WATCH";
        }
        return m.matches("[A-Z]{1,10}") ? m : "OTHER";
    }

    /** @return the requests by verb and code, for {@code /metrics}; never reset while the component lives */
    io.npulifecycle.api.metrics.MetricSource.Family requestsFamily() {
        return byVerbAndCode.family();
    }

    /**
     * @param method HTTP method
     * @param uri request URI
     * @param code HTTP status
     */
    void answered(String method, String uri, int code) {
        if (code >= 500) {
            failed(method + " " + uri + ": HTTP " + code);
        } else {
            requests.incrementAndGet();
            connected = true;
        }
    }

    /** @param what a failure: no answer, or a 5xx */
    void failed(String what) {
        requests.incrementAndGet();
        failures.incrementAndGet();
        connected = false;
        Instant now = clock.get();
        lastError = (now == null ? "" : now + " ") + what;
    }

    /** Forgets the outcome: a new client is being built. */
    void reset() {
        connected = false;
        requests.set(0);
        failures.set(0);
    }

    /**
     * @param e a failure
     * @return its message and the messages of its causes, e.g. {@code "An error has occurred.: Connection refused"}
     */
    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null && sb.length() < 500; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
            if (sb.indexOf(m) < 0) {
                sb.append(sb.length() == 0 ? "" : ": ").append(m);
            }
        }
        return sb.toString();
    }

    /** @param error a configuration problem, shown as the last error */
    void configurationError(String error) {
        Instant now = clock.get();
        lastError = (now == null ? "" : now + " ") + error;
    }

    boolean isConnected() {
        return connected;
    }

    String getLastError() {
        return lastError;
    }

    long getRequestCount() {
        return requests.get();
    }

    long getFailureCount() {
        return failures.get();
    }
}
