package io.npulifecycle.kube.internal;

/**
 * Whether the API server answered the node sync's last request, and the last error it reported. Every part that talks
 * to the API server (Node reads and writes, Event creation, informer starts) records its outcome here, so that
 * {@code connected()} and the MBean's {@code LastError} speak for the whole sync. Thread-safe.
 */
final class ApiHealth {

    private volatile boolean ok;
    private volatile String lastError;

    /** Records a request the API server answered. */
    void answered() {
        ok = true;
    }

    /**
     * Records a failed request.
     *
     * @param error what failed, naming the object and the API server's message
     */
    void failed(String error) {
        ok = false;
        lastError = error;
    }

    /** @return whether the last request was answered; {@code false} before the first one */
    boolean ok() {
        return ok;
    }

    /** @return the last error recorded, or {@code null} */
    String lastError() {
        return lastError;
    }
}
