package io.npulifecycle.metrics.internal;

import java.util.Collection;
import java.util.function.Supplier;

import io.npulifecycle.api.metrics.MetricSource;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * What one runtime's {@code /metrics} collects: a new Prometheus registry (never the client's static default one)
 * with the collectors of the runtime's role. Apart from {@link MetricsEndpoint} so that the registry can be built
 * and written without the servlet and Jetty classes (tests, the scrape benchmark).
 */
public final class RuntimeRegistry {

    private RuntimeRegistry() {
    }

    /**
     * The registry of one runtime.
     *
     * @param role {@code node}, {@code control-plane} (or {@code null}: both collectors)
     * @param mbeans the product's MBeans
     * @param sources the current metric sources
     * @param jvm whether to add the JVM's metrics
     * @return the registry
     */
    public static PrometheusRegistry of(String role, MBeans mbeans, Supplier<Collection<MetricSource>> sources,
            boolean jvm) {
        PrometheusRegistry registry = new PrometheusRegistry();
        if (!"control-plane".equals(role)) {
            registry.register(new NodeCollector(mbeans));
        }
        if (!"node".equals(role)) {
            registry.register(new ControlPlaneCollector(mbeans));
        }
        registry.register(new KubeCollector(mbeans));
        registry.register(new SourceCollector(sources));
        if (jvm) {
            registry.register(new JvmCollector());
        }
        return registry;
    }
}
