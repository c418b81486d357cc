package io.npulifecycle.kubeclient.internal;

import io.npulifecycle.api.kube.KubernetesClientMXBean;

import java.lang.System.Logger.Level;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

/**
 * The runtime's Kubernetes client, PID {@value ClientSettings#PID}: builds one fabric8 {@link KubernetesClient}
 * (JDK HTTP client) from the configuration and registers it as an OSGi service of type
 * {@code io.fabric8.kubernetes.client.KubernetesClient} with the service properties {@value #PROP_MASTER_URL} and
 * {@value #PROP_NAMESPACE}; the node-side and control-plane bundles use that service (they must not close it).
 *
 * <ul>
 * <li>Where the API server is: see {@link ClientSettings} ({@code NPU_LIFECYCLE_KUBE_MASTER} overrides
 * {@code masterUrl}; empty = automatic, as fabric8's {@code Config.autoConfigure}).</li>
 * <li>No cluster configured or found: one log line says so, no service is registered, the runtime runs on.</li>
 * <li>A bad {@code masterUrl}, namespace or number, or an unreadable kubeconfig: a log line naming the PID, the key
 * and the value, and the refusal reported to {@link ConfigurationRefusals} (so
 * {@code io.npulifecycle:type=Configuration} lists it until a configuration is accepted); at activation no service is
 * registered, on a later change the previous client is kept.</li>
 * <li>A valid configuration change closes the client (after unregistering it) and registers a new one; users see
 * the service go and come back.</li>
 * <li>MBean {@value KubernetesClientMXBean#OBJECT_NAME}.</li>
 * </ul>
 */
@Component(configurationPid = ClientSettings.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = KubernetesClientComponent.Config.class)
public class KubernetesClientComponent {

    /** Service property: the API server URL of the registered client. */
    public static final String PROP_MASTER_URL = "masterUrl";
    /** Service property: the client's default namespace. */
    public static final String PROP_NAMESPACE = "namespace";

    private static final System.Logger LOG = System.getLogger(KubernetesClientComponent.class.getName());

    /** Kubernetes client configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle Kubernetes client",
            description = "Where the Kubernetes API server is and how the client talks to it.")
    public @interface Config {
        /** @return URL */
        @AttributeDefinition(name = "API server URL", required = false, description = "API server URL (http:// or https://). Empty = automatic: "
                + "the pod's service account, else $KUBECONFIG or ~/.kube/config. The environment variable "
                + "NPU_LIFECYCLE_KUBE_MASTER overrides it.")
        String masterUrl() default "";

        /** @return path */
        @AttributeDefinition(name = "Kubeconfig file", required = false, description = "Path of a kubeconfig file (its current context). Empty = none.")
        String kubeconfig() default "";

        /** @return namespace */
        @AttributeDefinition(name = "Namespace", description = "Default namespace of the client.")
        String namespace() default NpuOperatorCtlType.DEFAULT_NAMESPACE;

        /** @return seconds */
        @AttributeDefinition(name = "Request timeout (seconds)", min = "1", max = "3600", description = "Timeout of one request, in seconds.")
        int requestTimeoutSeconds() default 10;

        /** @return seconds */
        @AttributeDefinition(name = "Connect timeout (seconds)", min = "1", max = "600", description = "Timeout of establishing a connection, in seconds.")
        int connectTimeoutSeconds() default 5;

        /** @return ms */
        @AttributeDefinition(name = "Watch reconnect pause (milliseconds)", min = "100", max = "600000", description = "Pause before a broken watch reconnects, in milliseconds.")
        long watchReconnectIntervalMs() default 1000;
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile TimeSource time;

    private BundleContext context;
    private ClientStatus status;
    private ServiceRegistration<io.npulifecycle.api.metrics.MetricSource> metricSource;
    private MBeanRegistrations.Registration mbean;

    /** The settings of the registered client, or null. */
    private volatile ClientSettings settings;
    private volatile KubernetesClient client;
    private volatile String configuration = "not configured yet";
    private ServiceRegistration<KubernetesClient> registration;
    /**
     * Builds clients off the activation thread: building one loads fabric8, Jackson and the kind registry (about 1 s
     * of a node agent's start on 2 cores, docs/benchmarks.md), and the framework's start-level thread (HTTP and
     * Jolokia, started after this bundle at the same level) would wait until it is done. Users bind the service
     * when it appears.
     */
    private ExecutorService builder;
    /** Incremented by every apply and by deactivate: a build finishing for an older generation is discarded. */
    private long generation;

    @Activate
    void activate(BundleContext ctx, Config cfg) {
        this.context = ctx;
        this.builder = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "npu-kube-client-build");
            t.setDaemon(true);
            return t;
        });
        this.status = new ClientStatus(this::now);
        ClientStatus counted = status;
        metricSource = ctx.registerService(io.npulifecycle.api.metrics.MetricSource.class,
                () -> java.util.List.of(counted.requestsFamily()), null);
        mbean = MBeanRegistrations.register(ctx, KubernetesClientMXBean.class, new KubernetesClientMBean(this),
                KubernetesClientMXBean.OBJECT_NAME);
        apply(cfg, true);
    }

    @Modified
    void modified(Config cfg) {
        apply(cfg, false);
    }

    @Deactivate
    void deactivate() {
        synchronized (this) {
            generation++;
        }
        builder.shutdown();
        try {
            if (!builder.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.log(Level.WARNING, "a Kubernetes client build did not finish within 30 s of the deactivation");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        dropClient();
        if (mbean != null) {
            mbean.unregister();
            mbean = null;
        }
        if (metricSource != null) {
            try {
                metricSource.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping: the framework removed it
            }
            metricSource = null;
        }
    }

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        re-creates the client)
     */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    void bindRefusals(ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    /**
     * {@link ClientSettings#resolve} of {@code cfg}; a refused value is reported to the {@link ConfigurationRefusals}
     * service (its key, value and reason; the caller logs the whole message).
     *
     * @param cfg the configuration
     * @param env the process environment ({@code System::getenv})
     * @param frameworkProperty framework properties; may answer {@code null}
     * @param home the user's home folder, or {@code null}
     * @return the settings
     * @throws ClientSettings.Invalid the first refused value, as reported
     */
    ClientSettings resolved(Config cfg, java.util.function.Function<String, String> env,
            java.util.function.Function<String, String> frameworkProperty, java.nio.file.Path home)
            throws ClientSettings.Invalid {
        try {
            return ClientSettings.resolve(cfg.masterUrl(), cfg.kubeconfig(), cfg.namespace(),
                    cfg.requestTimeoutSeconds(), cfg.connectTimeoutSeconds(), cfg.watchReconnectIntervalMs(), env,
                    frameworkProperty, home);
        } catch (ClientSettings.Invalid e) {
            refused(e);
            throw e;
        }
    }

    /** Reports {@code e} to the {@link ConfigurationRefusals} service, when present (the caller logs it). */
    private void refused(ClientSettings.Invalid e) {
        refusals.refused(ClientSettings.PID, e.key(), e.value(), e.reason());
    }

    private Instant now() {
        TimeSource t = time;
        return t == null ? null : t.now();
    }

    private synchronized void apply(Config cfg, boolean initial) {
        long gen = ++generation;
        ClientSettings next;
        org.osgi.framework.Bundle b = context.getBundle();
        String home = System.getProperty("user.home");
        try {
            next = resolved(cfg, System::getenv, key -> b.getBundleContext().getProperty(key),
                    home == null ? null : Paths.get(home));
        } catch (ClientSettings.Invalid e) {
            rejected(e.getMessage(), initial);
            return;
        }
        if (next.mode() == ClientSettings.Mode.NONE) {
            refusals.accepted(ClientSettings.PID);
            dropClient();
            configuration = "no cluster configured (masterUrl and kubeconfig empty, " + ClientSettings.ENV_MASTER
                    + " unset, no service account, no $KUBECONFIG or ~/.kube/config)";
            LOG.log(Level.WARNING, "PID " + ClientSettings.PID + ": " + configuration
                    + ": no KubernetesClient registered; the Kubernetes features of this runtime stay idle");
            return;
        }
        if (next.equals(settings) && client != null) {
            refusals.accepted(ClientSettings.PID);
            return; // nothing changed
        }
        io.fabric8.kubernetes.client.Config c;
        try {
            c = ClientFactory.config(next);
        } catch (ClientSettings.Invalid e) {
            refused(e);
            rejected(e.getMessage(), initial);
            return;
        } catch (RuntimeException e) {
            rejected("PID " + ClientSettings.PID + ": cannot build a Kubernetes client for " + next.describe() + ": "
                    + e, initial);
            return;
        }
        refusals.accepted(ClientSettings.PID);
        try {
            builder.execute(() -> build(gen, next, c, initial));
        } catch (RejectedExecutionException e) {
            LOG.log(Level.DEBUG, "component deactivated; no Kubernetes client built");
        }
    }

    /** On the builder thread: builds the client and registers it unless a newer apply or a deactivate came first. */
    private void build(long gen, ClientSettings next, io.fabric8.kubernetes.client.Config c, boolean initial) {
        KubernetesClient fresh;
        try {
            synchronized (this) {
                if (gen != generation) {
                    return;
                }
                status.reset();
            }
            fresh = ClientFactory.build(c, status);
        } catch (RuntimeException e) {
            synchronized (this) {
                rejected("PID " + ClientSettings.PID + ": cannot build a Kubernetes client for " + next.describe()
                        + ": " + e, initial);
            }
            return;
        }
        synchronized (this) {
            if (gen != generation) {
                fresh.close();
                return;
            }
            register(next, fresh);
        }
    }

    private void register(ClientSettings next, KubernetesClient fresh) {
        dropClient();
        client = fresh;
        settings = next;
        configuration = next.describe();
        Dictionary<String, Object> props = new Hashtable<>();
        props.put(PROP_MASTER_URL, fresh.getMasterUrl().toString());
        props.put(PROP_NAMESPACE, next.namespace());
        registration = context.registerService(KubernetesClient.class, fresh, props);
        LOG.log(Level.INFO, "KubernetesClient registered: " + fresh.getMasterUrl() + " (" + configuration + ")");
    }

    private void rejected(String message, boolean initial) {
        status.configurationError(message);
        if (initial || client == null) {
            configuration = "invalid configuration: " + message;
            LOG.log(Level.ERROR, message + ": no KubernetesClient registered");
        } else {
            LOG.log(Level.ERROR, message + ": keeping the previous client (" + settings.describe() + ")");
        }
    }

    private synchronized void dropClient() {
        ServiceRegistration<KubernetesClient> r = registration;
        registration = null;
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // already gone with the bundle
            }
        }
        KubernetesClient c = client;
        client = null;
        settings = null;
        if (c != null) {
            c.close();
            LOG.log(Level.INFO, "KubernetesClient for " + c.getMasterUrl() + " unregistered and closed");
        }
    }

    /** @return the settings of the registered client, or {@code null} while none is registered */
    ClientSettings settings() {
        return settings;
    }

    /** @return the registered client, or {@code null} while none is registered */
    KubernetesClient client() {
        return client;
    }

    /**
     * @return the configuration in words: the registered client's ({@link ClientSettings#describe()}), why there is
     *         none, or {@code not configured yet}
     */
    String configuration() {
        return configuration;
    }

    /** @return the request counts and last error of the current client (reset when a new client is built) */
    ClientStatus status() {
        return status;
    }

}
