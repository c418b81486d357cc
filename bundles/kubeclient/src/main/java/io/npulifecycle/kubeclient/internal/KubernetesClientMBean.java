package io.npulifecycle.kubeclient.internal;

import java.lang.System.Logger.Level;
import java.util.Objects;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.VersionInfo;
import io.npulifecycle.api.kube.KubernetesClientMXBean;

/**
 * {@value KubernetesClientMXBean#OBJECT_NAME}: the Kubernetes client's MBean, an adapter that answers every attribute
 * from its {@link KubernetesClientComponent} (the client registered at the time of the call, its settings and
 * request counts); {@link #checkConnection()} sends one {@code GET /version} with that client. Registered by the
 * component as a {@code DynamicMBean} service with {@code jmx.objectname} set
 * ({@link io.npulifecycle.api.management.MBeanRegistrations}); the attribute and operation names are those of
 * {@link KubernetesClientMXBean}, which Jolokia clients, Hawtio and the metrics bundle read.
 */
public final class KubernetesClientMBean implements KubernetesClientMXBean {

    /** The component's logger: what is asked through JMX is logged beside what the component does. */
    private static final System.Logger LOG = System.getLogger(KubernetesClientComponent.class.getName());

    private final KubernetesClientComponent component;

    /** @param component the component whose client is shown and checked */
    public KubernetesClientMBean(KubernetesClientComponent component) {
        this.component = Objects.requireNonNull(component, "component");
    }

    @Override
    public String getMasterUrl() {
        KubernetesClient c = component.client();
        return c == null ? "" : c.getMasterUrl().toString();
    }

    @Override
    public String getNamespace() {
        ClientSettings s = component.settings();
        return s == null ? "" : s.namespace();
    }

    @Override
    public String getConfiguration() {
        return component.configuration();
    }

    @Override
    public boolean isRegistered() {
        return component.client() != null;
    }

    @Override
    public boolean isConnected() {
        return component.client() != null && component.status().isConnected();
    }

    @Override
    public String getLastError() {
        return component.status().getLastError();
    }

    @Override
    public long getRequestCount() {
        return component.status().getRequestCount();
    }

    @Override
    public long getFailureCount() {
        return component.status().getFailureCount();
    }

    @Override
    public String checkConnection() {
        KubernetesClient c = component.client();
        if (c == null) {
            String configuration = component.configuration();
            LOG.log(Level.INFO, "checkConnection requested through JMX: no KubernetesClient (" + configuration + ")");
            return "failed: no KubernetesClient registered: " + configuration;
        }
        LOG.log(Level.INFO, "checkConnection requested through JMX: GET " + c.getMasterUrl() + "version");
        try {
            VersionInfo v = ClientFactory.versionOnce(c);
            String answer = "connected to " + c.getMasterUrl() + ": Kubernetes "
                    + (v.getGitVersion() != null ? v.getGitVersion() : v.getMajor() + "." + v.getMinor());
            LOG.log(Level.INFO, "checkConnection: " + answer);
            return answer;
        } catch (RuntimeException e) {
            String why = ClientStatus.describe(e);
            component.status().failed("GET " + c.getMasterUrl() + "version: " + why);
            LOG.log(Level.WARNING, "checkConnection: GET " + c.getMasterUrl() + "version failed: " + why);
            return "failed: " + why;
        }
    }
}
