package io.npulifecycle.metrics.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.management.DynamicMBean;

import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.npulifecycle.api.management.Mbeans;
import io.npulifecycle.api.metrics.MetricSource;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * {@code /metrics} of the runtime, PID {@value #PID}: a Prometheus registry of this component (never the client's
 * static default registry, so a hot update starts clean) served by the Prometheus client's own HTTP server on its
 * own listener, {@code metrics.host}:{@code metrics.port} of {@code etc/runtime.properties} (framework properties
 * {@value #HOST_PROPERTY} and {@value #PORT_PROPERTY}, set and checked by the launcher), by the client's
 * {@code PrometheusMetricsServlet} ({@link MetricsServlet}) on a {@link MetricsListener}: a Jetty server of this
 * bundle's own, one connector and one servlet, built from the Jetty classes Felix HTTP Jetty 12 exports (so no HTTP
 * server code is loaded twice), and none of the HTTP whiteboard's: no whiteboard servlet, filter or context (Jolokia's,
 * the health servlet) is ever served there. The client negotiates the format from the {@code Accept} header:
 * Prometheus text 0.0.4 by default, OpenMetrics 1.0 when asked, gzip when accepted. Read-only: {@code GET} and
 * {@code HEAD} of {@code /metrics}; any other path is a 404, any other method a 405.
 *
 * <p>Collected at each scrape: the role's MBeans ({@link NodeCollector} or {@link ControlPlaneCollector}, and
 * {@link KubeCollector}), read from the objects behind the product's MBean services ({@link MBeans}), every
 * {@link MetricSource} service (the counters and histograms the owning bundles keep, so they survive a hot update of
 * this bundle) and the JVM's metrics ({@link JvmCollector}). Nothing in the product depends on this bundle:
 * without it, or with its listener down, probing and reboots go on.
 *
 * <p>A listener that cannot be opened (the port taken after the launcher's check) is logged naming
 * {@code metrics.port}; the runtime runs on without {@code /metrics}.
 */
@Component(configurationPid = MetricsEndpoint.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = MetricsEndpoint.Config.class)
public class MetricsEndpoint {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.metrics";
    /** Framework property: the listener's address (from {@code metrics.host}). */
    public static final String HOST_PROPERTY = "npu.lifecycle.metrics.host";
    /** Framework property: the listener's port (from {@code metrics.port}). */
    public static final String PORT_PROPERTY = "npu.lifecycle.metrics.port";
    /** The path Prometheus scrapes. */
    public static final String PATH = "/metrics";

    private static final System.Logger LOG = System.getLogger(MetricsEndpoint.class.getName());

    /** Metrics configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle metrics",
            description = "What /metrics publishes. Its address and port are metrics.host and metrics.port of "
                    + "etc/runtime.properties.")
    public @interface Config {
        /** @return whether the JVM's metrics are published */
        @AttributeDefinition(name = "JVM metrics", description = "Publish the JVM's metrics (memory, GC, threads, "
                + "class loading, process CPU and resident memory) with the product's.")
        boolean jvmMetrics() default true;
    }

    private final MBeans mbeans = new MBeans();
    private final List<MetricSource> sources = new CopyOnWriteArrayList<>();
    private volatile MetricsListener listener;

    /** @param s a source that appeared */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addSource(MetricSource s) {
        sources.add(s);
    }

    /** @param s a source that went away */
    void removeSource(MetricSource s) {
        sources.remove(s);
    }

    /**
     * @param m an MBean of the product's domain that a bundle published
     * @param props its service properties, with {@value Mbeans#OBJECT_NAME_PROPERTY}
     */
    @Reference(service = DynamicMBean.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, target = "(" + Mbeans.OBJECT_NAME_PROPERTY + "=" + Mbeans.DOMAIN + ":*)")
    void addMBean(DynamicMBean m, Map<String, Object> props) {
        try {
            mbeans.add(String.valueOf(props.get(Mbeans.OBJECT_NAME_PROPERTY)), m);
        } catch (IllegalArgumentException e) {
            LOG.log(System.Logger.Level.WARNING, "MBean service left out of /metrics: " + e.getMessage());
        }
    }

    /**
     * @param m an MBean that went away
     * @param props its service properties
     */
    void removeMBean(DynamicMBean m, Map<String, Object> props) {
        mbeans.remove(String.valueOf(props.get(Mbeans.OBJECT_NAME_PROPERTY)), m);
    }

    @Activate
    void activate(BundleContext ctx, Config config) {
        String role = ctx.getProperty("npu.lifecycle.role");
        String host = orDefault(ctx.getProperty(HOST_PROPERTY), "127.0.0.1");
        int port = Integer.parseInt(orDefault(ctx.getProperty(PORT_PROPERTY), "9464"));
        PrometheusRegistry registry = RuntimeRegistry.of(role, mbeans, () -> sources, config.jvmMetrics());
        try {
            listener = MetricsListener.start(host, port, new MetricsServlet(registry));
            LOG.log(System.Logger.Level.INFO, "Metrics on http://" + (host.contains(":") ? "[" + host + "]" : host)
                    + ":" + listener.port() + PATH);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.ERROR, "cannot listen on " + host + ":" + port + " for /metrics (metrics.host, "
                    + "metrics.port in etc/runtime.properties): " + e + "; the runtime runs on without /metrics");
        }
    }

    /** @return the listener's port, or -1 when it is not listening */
    int port() {
        MetricsListener l = listener;
        return l == null ? -1 : l.port();
    }

    @Deactivate
    void deactivate() {
        MetricsListener l = listener;
        listener = null;
        if (l != null) {
            l.close();
        }
    }

    private static String orDefault(String v, String d) {
        return v == null || v.isBlank() ? d : v.trim();
    }
}
