package io.npulifecycle.simulator.cluster;

import java.util.function.Consumer;
import java.util.function.Supplier;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;

/**
 * The client defaults every {@link ClusterBackend} hands out, and the backend's one shared client: fabric8 with the
 * JDK HTTP client (DESIGN.md: the Vert.x client is excluded), namespace {@code npu-operator}, 10 s request and 5 s
 * connection timeouts, watches reconnecting after 200 ms, 2 retries 50 ms apart. Never in-cluster configuration:
 * the master URL is always the backend's loopback URL.
 */
final class BackendClients {

    private BackendClients() {
    }

    /**
     * @param masterUrl the backend's URL
     * @param setup credentials, CA, then the caller's changes, applied after the defaults
     * @return a new client; the caller closes it
     */
    static KubernetesClient build(String masterUrl, Consumer<Config> setup) {
        return build(masterUrl, setup, http -> { });
    }

    /**
     * @param masterUrl the backend's URL
     * @param setup credentials, CA, then the caller's changes, applied after the defaults
     * @param http changes the HTTP client (e.g. an interceptor a test hooks in)
     * @return a new client; the caller closes it
     */
    static KubernetesClient build(String masterUrl, Consumer<Config> setup,
            Consumer<io.fabric8.kubernetes.client.http.HttpClient.Builder> http) {
        Config config = Config.empty();
        config.setMasterUrl(masterUrl);
        config.setNamespace(EmbeddedCluster.NPU_NAMESPACE);
        config.setRequestTimeout(10_000);
        config.setConnectionTimeout(5_000);
        config.setWatchReconnectInterval(200);
        config.setRequestRetryBackoffLimit(2);
        config.setRequestRetryBackoffInterval(50);
        setup.accept(config);
        return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new JdkHttpClientFactory())
                .withHttpClientBuilderConsumer(http).build();
    }

    /** A client built on first use and closed with its backend. Thread-safe. */
    static final class Shared implements AutoCloseable {
        private final Supplier<KubernetesClient> factory;
        private KubernetesClient client;
        private boolean closed;

        Shared(Supplier<KubernetesClient> factory) {
            this.factory = factory;
        }

        /**
         * @return the shared client
         * @throws IllegalStateException after {@link #close()}
         */
        synchronized KubernetesClient get() {
            if (closed) {
                throw new IllegalStateException("the cluster backend is closed");
            }
            if (client == null) {
                client = factory.get();
            }
            return client;
        }

        @Override
        public synchronized void close() {
            closed = true;
            if (client != null) {
                client.close();
                client = null;
            }
        }
    }
}
