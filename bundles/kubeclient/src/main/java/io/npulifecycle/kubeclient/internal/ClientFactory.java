package io.npulifecycle.kubeclient.internal;

import java.util.function.Supplier;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;

/**
 * Builds fabric8 clients from {@link ClientSettings}, with the JDK HTTP client (DESIGN.md "Stack": the Vert.x client
 * is not shipped) and with this bundle's class loader as the thread context class loader.
 *
 * <p>Why the context class loader: while a client is built, fabric8 8.0.0 loads
 * {@code io.fabric8.kubernetes.client.impl.KubernetesClientImpl} through the context class loader first
 * ({@code KubernetesClientBuilder}), discovers {@code ExtensionAdapter}s through {@code ServiceLoader} on it
 * ({@code Adapters}). The context class loader of a framework thread is whatever the launcher (or the test harness)
 * had: the class path. If that class path holds another copy of fabric8 (Pax Exam, the simulator), the builder
 * would pick that copy's {@code KubernetesClientImpl} and fail ({@code NoSuchMethodException}).
 *
 * <p>Why the warm-up in {@link #build}: {@code KubernetesDeserializer} fills its <em>static</em> kind registry (kind
 * to model class, from {@code META-INF/services/io.fabric8.kubernetes.api.model.KubernetesResource}) through
 * {@code ServiceLoader} on the context class loader <em>and</em> its own, lazily, the first time any client
 * deserializes a resource of unknown type, typically a watch event on a fabric8 thread whose context class loader is
 * the class path. With another fabric8 copy there, that throws {@code ServiceConfigurationError: ... not a subtype}
 * and, worse, leaves the static registry half filled for the life of the bundle (seen in KubeClientIT). So the first
 * deserialization happens here, under this bundle's loader.
 */
final class ClientFactory {

    private ClientFactory() {
    }

    /**
     * @param s the settings (not {@link ClientSettings.Mode#NONE})
     * @return the fabric8 configuration
     * @throws ClientSettings.Invalid the kubeconfig file cannot be parsed (names the key and the file)
     */
    static Config config(ClientSettings s) throws ClientSettings.Invalid {
        Config c;
        switch (s.mode()) {
            case MASTER_URL:
                c = s.kubeconfig() == null ? Config.empty() : fromKubeconfig(s);
                c.setMasterUrl(s.masterUrl());
                break;
            case KUBECONFIG:
                c = fromKubeconfig(s);
                break;
            case AUTO:
                c = withBundleLoader(() -> Config.autoConfigure(null));
                break;
            default:
                throw new IllegalStateException("no cluster configured");
        }
        c.setNamespace(s.namespace());
        c.setRequestTimeout(s.requestTimeoutMs());
        c.setConnectionTimeout(s.connectTimeoutMs());
        c.setWatchReconnectInterval((int) s.watchReconnectIntervalMs());
        return c;
    }

    private static Config fromKubeconfig(ClientSettings s) throws ClientSettings.Invalid {
        try {
            return withBundleLoader(() -> Config.fromKubeconfig(s.kubeconfig().toFile()));
        } catch (RuntimeException e) {
            String reason = "is not a usable kubeconfig file (expected YAML with clusters, users and a "
                    + "current-context): " + e.getMessage();
            throw new ClientSettings.Invalid("kubeconfig", String.valueOf(s.kubeconfig()), reason,
                    "PID " + ClientSettings.PID + " key kubeconfig='" + s.kubeconfig() + "' " + reason);
        }
    }

    /**
     * Builds a client. No request is sent: an unreachable server shows only in the first request.
     *
     * @param config from {@link #config(ClientSettings)}
     * @param status interceptor told about every request's outcome (may be null)
     * @return a new client; the caller closes it
     */
    static KubernetesClient build(Config config, Interceptor status) {
        return withBundleLoader(() -> {
            KubernetesClient client = new KubernetesClientBuilder()
                    .withConfig(config)
                    .withHttpClientFactory(new JdkHttpClientFactory())
                    .withHttpClientBuilderConsumer(b -> {
                        if (status != null) {
                            b.addOrReplaceInterceptor("npu-lifecycle-status", status);
                        }
                    })
                    .build();
            warmUp(client);
            return client;
        });
    }

    /**
     * {@code GET /version} once, without fabric8's retries (by default 10, exponential from 100 ms: a refused
     * connection would take about 20 s to report), bounded by the client's request timeout.
     *
     * @param client the client
     * @return the server's version
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server does not answer or answers an error
     */
    static io.fabric8.kubernetes.client.VersionInfo versionOnce(KubernetesClient client) {
        io.fabric8.kubernetes.client.RequestConfig once = new io.fabric8.kubernetes.client.RequestConfigBuilder()
                .withRequestRetryBackoffLimit(0)
                .withRequestTimeout(client.getConfiguration().getRequestTimeout())
                .build();
        return client.adapt(io.fabric8.kubernetes.client.NamespacedKubernetesClient.class).withRequestConfig(once)
                .call(KubernetesClient::getKubernetesVersion);
    }

    /** Fills fabric8's static kind registry and the client's deserializer now (see the class comment). */
    private static void warmUp(KubernetesClient client) {
        Object o = client.getKubernetesSerialization().unmarshal(WARM_UP);
        if (!(o instanceof io.fabric8.kubernetes.api.model.Namespace)) {
            throw new IllegalStateException("fabric8 kind registry incomplete: v1/Namespace read as " + o.getClass());
        }
    }

    private static final String WARM_UP = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"warm-up\"}}";

    /**
     * Runs {@code action} with this bundle's class loader as the thread context class loader (see the class
     * comment), then restores the previous one.
     *
     * @param action what to run
     * @param <T> its result
     * @return its result
     */
    static <T> T withBundleLoader(Supplier<T> action) {
        Thread t = Thread.currentThread();
        ClassLoader previous = t.getContextClassLoader();
        t.setContextClassLoader(ClientFactory.class.getClassLoader());
        try {
            return action.get();
        } finally {
            t.setContextClassLoader(previous);
        }
    }
}
