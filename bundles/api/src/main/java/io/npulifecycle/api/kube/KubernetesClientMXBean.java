package io.npulifecycle.api.kube;

import io.npulifecycle.api.management.Description;

/**
 * {@code io.npulifecycle:type=KubernetesClient}: where the runtime's Kubernetes client points and whether the API
 * server answers.
 */
@Description("The Kubernetes API client (io.npulifecycle:type=KubernetesClient): configuration, request counts, connection "
        + "test.")
public interface KubernetesClientMXBean {

    /** Object name. */
    String OBJECT_NAME = "io.npulifecycle:type=KubernetesClient";

    /** @return the API server URL of the registered client, or empty when no client is registered */
    @Description("The API server URL of the registered client, or empty when no client is registered.")
    String getMasterUrl();

    /** @return the client's default namespace (key {@code namespace}) */
    @Description("The client's default namespace (key namespace).")
    String getNamespace();

    /** @return how the configuration was found (URL and its source, kubeconfig file, service account) or why none */
    @Description("How the configuration was found (URL and its source, kubeconfig file, service account) or why none.")
    String getConfiguration();

    /** @return whether a {@code KubernetesClient} service is registered */
    @Description("Whether a KubernetesClient service is registered.")
    boolean isRegistered();

    /**
     * @return outcome of the last request of any user of the client: true when the API server answered with a
     *         status below 500, false after a connection failure or a 5xx answer (also false before any request)
     */
    @Description("Outcome of the last request of any user of the client: true when the API server answered with a status "
            + "below 500, false after a connection failure or a 5xx answer (also false before any request).")
    boolean isConnected();

    /** @return the last failure (configuration problem, connection failure, 5xx answer), with its time; or empty */
    @Description("The last failure (configuration problem, connection failure, 5xx answer), with its time; or empty.")
    String getLastError();

    /** @return requests sent (answered or failed) since the client was built */
    @Description("Requests sent (answered or failed) since the client was built (a count).")
    long getRequestCount();

    /** @return requests failed (connection failure or 5xx) since the client was built */
    @Description("Requests failed (connection failure or 5xx) since the client was built (a count).")
    long getFailureCount();

    /**
     * Sends {@code GET /version} now (bounded by {@code requestTimeoutSeconds}).
     *
     * @return e.g. {@code "connected to http://127.0.0.1:35451/: Kubernetes v1.32.0"} or {@code "failed: ..."}
     */
    @Description("Sends GET /version now (bounded by requestTimeoutSeconds). Returns e.g. \"connected to "
            + "http://127.0.0.1:35451/: Kubernetes v1.32.0\" or \"failed: ...\".")
    String checkConnection();
}
