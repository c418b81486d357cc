package io.npulifecycle.kube.internal;

import io.npulifecycle.api.node.NodeSyncMXBean;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

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
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.management.ConfigurationRefusals;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.management.RefusalReporter;
import io.npulifecycle.api.markers.MarkerStore;
import io.npulifecycle.api.node.ApprovalService;
import io.npulifecycle.api.node.NodeKeys;
import io.npulifecycle.api.node.NodeWriter;
import io.npulifecycle.api.node.PolicySource;
import io.npulifecycle.api.time.TimeSource;

/**
 * Runs a {@link NodeSync} on the {@code KubernetesClient} service of {@code io.npulifecycle.kubeclient} (static
 * greedy reference: the sync is rebuilt from the objects when the client is re-created), PID {@value #PID}. Registers
 * {@link PolicySource}, {@link ApprovalService}, {@link NodeWriter} and the {@code io.npulifecycle:type=NodeSync}
 * MBean. The node name comes from the configuration or, when empty, from the {@code NODE_NAME} environment variable;
 * without one nothing is registered and the error is logged. Every refused value of a configuration is logged naming
 * the PID and the key and reported to {@link ConfigurationRefusals} (listed by
 * {@code io.npulifecycle:type=Configuration} until a configuration is accepted), and the previous configuration is
 * kept.
 */
@Component(configurationPid = NodeSyncComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL, service = {})
@Designate(ocd = NodeSyncComponent.Config.class)
public class NodeSyncComponent {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.kube.node";
    private static final System.Logger LOG = System.getLogger(NodeSyncComponent.class.getName());
    private static final Pattern DNS_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    /** Configuration of the node-side sync. */
    @ObjectClassDefinition(name = "npu-lifecycle node-side Kubernetes sync",
            description = "Informers on this node's Node and on the NPUOperatorCtl; the node agent's labels, annotations and Events.")
    public @interface Config {
        /** @return the node name */
        @AttributeDefinition(name = "Node name", description = "Name of this node; empty = the NODE_NAME environment variable.")
        String nodeName() default "";

        /** @return CR namespace */
        @AttributeDefinition(name = "NPUOperatorCtl namespace", description = "Namespace of the NPUOperatorCtl.")
        String crNamespace() default NpuOperatorCtlType.DEFAULT_NAMESPACE;

        /** @return CR name */
        @AttributeDefinition(name = "NPUOperatorCtl name", description = "Name of the NPUOperatorCtl.")
        String crName() default NpuOperatorCtlType.DEFAULT_NAME;

        /** @return Event namespace */
        @AttributeDefinition(name = "Event namespace", description = "Namespace of the Events written about this Node (kubectl describe node shows 'default').")
        String eventNamespace() default NodeSync.Settings.DEFAULT_EVENT_NAMESPACE;

        /** @return health interval */
        @AttributeDefinition(name = "Informer health interval (seconds)", description = "Seconds between informer health checks (re-create a stopped or non-watching informer, resync).", min = "1")
        int healthIntervalSeconds() default NodeSync.Settings.DEFAULT_HEALTH_INTERVAL_SECONDS;

        /** @return state folder */
        @AttributeDefinition(name = "State folder", description = "Persistent host folder (it outlives a reboot) where the writes the API server has not received yet are kept, in node-writes.pending.")
        String stateDir() default "/var/lib/npu-operator/";
    }

    private final KubernetesClient client;
    private final TimeSource time;
    private final MarkerStore markers;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile EventAdmin eventAdmin;

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final RefusalReporter refusals = new RefusalReporter();

    private BundleContext context;
    private NodeSync sync;
    private NodeSync.Settings current;
    private ServiceRegistration<?> services;
    private MBeanRegistrations.Registration mbean;

    /**
     * @param client the {@code KubernetesClient} service (greedy: a better-ranked client re-creates this component)
     * @param time the runtime clock
     * @param markers the marker store the sync mirrors into the Node
     */
    @Activate
    public NodeSyncComponent(@Reference(name = "client", policyOption = ReferencePolicyOption.GREEDY)
            KubernetesClient client, @Reference(name = "time") TimeSource time,
            @Reference(name = "markers") MarkerStore markers) {
        this.client = client;
        this.time = time;
        this.markers = markers;
    }

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        restarts the sync)
     */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    void bindRefusals(ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    @Activate
    void activate(BundleContext ctx, Config config) {
        this.context = ctx;
        NodeSync.Settings s = reported(config);
        if (s == null) {
            LOG.log(Level.ERROR, "PID " + PID + ": no usable configuration: the node-side Kubernetes sync does not run"
                    + " (no policy and no approval: nothing authorises a reboot)");
            return;
        }
        startSync(s);
    }

    @Modified
    void modified(Config config) {
        NodeSync.Settings s = reported(config);
        if (s == null) {
            LOG.log(Level.ERROR, "PID " + PID + ": keeping the previous configuration");
            return;
        }
        if (s.equals(current)) {
            return;
        }
        stopSync();
        startSync(s);
    }

    @Deactivate
    void deactivate() {
        stopSync();
    }

    private void startSync(NodeSync.Settings s) {
        sync = new NodeSync(client, s, time, markers, this::post);
        sync.plant(PlantedBug.plantedIn(context.getProperty(PlantedBug.PROPERTY), "node sync",
                EnumSet.of(PlantedBug.APPROVAL_REUSED), LOG));
        current = s;
        sync.start();
        services = context.registerService(new String[] {PolicySource.class.getName(), ApprovalService.class.getName(),
                NodeWriter.class.getName()}, sync, null);
        try {
            mbean = MBeanRegistrations.register(context, NodeSyncMXBean.class, new NodeSyncMBean(sync),
                    NodeSyncMXBean.OBJECT_NAME);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "cannot register the NodeSync MBean", e);
        }
    }

    private void stopSync() {
        if (services != null) {
            try {
                services.unregister();
            } catch (IllegalStateException ignored) {
                // already unregistered with the bundle
            }
        }
        if (mbean != null) {
            mbean.unregister();
        }
        services = null;
        mbean = null;
        if (sync != null) {
            sync.stop();
            sync = null;
        }
    }

    private void post(String what) {
        EventAdmin ea = eventAdmin;
        if (ea != null) {
            ea.postEvent(new Event(NodeKeys.TOPIC_NODE_CHANGED, Map.of("what", what)));
        }
    }

    /**
     * {@link #settings(Config, List)}, reporting every refused value (or the end of a refusal) to the
     * {@link ConfigurationRefusals} service and logging them in one ERROR line.
     *
     * @param c the configuration
     * @return the settings, or {@code null} when a value is refused
     */
    NodeSync.Settings reported(Config c) {
        return refusals.check(PID, refused -> settings(c, refused), LOG);
    }

    /**
     * @param c the configuration; an empty {@code nodeName} is read from the environment variable {@code NODE_NAME}
     * @param refused receives every refused value, in the order of the keys checked
     * @return the settings, or {@code null} when a value is refused
     */
    static NodeSync.Settings settings(Config c, List<ConfigurationRefusals.Refusal> refused) {
        String node = c.nodeName() == null ? "" : c.nodeName().trim();
        String source = "";
        if (node.isEmpty()) {
            String env = System.getenv("NODE_NAME");
            node = env == null ? "" : env.trim();
            source = "(from the environment variable NODE_NAME) ";
        }
        if (node.isEmpty()) {
            refused.add(new ConfigurationRefusals.Refusal("nodeName", c.nodeName(), "is empty and the environment "
                    + "variable NODE_NAME is unset: set NODE_NAME (downward API spec.nodeName) or this key"));
        } else if (!DNS_NAME.matcher(node).matches()) {
            refused.add(new ConfigurationRefusals.Refusal("nodeName", node, source + "'" + node
                    + "' is not a Kubernetes node name (lowercase DNS subdomain)"));
        }
        if (!DNS_NAME.matcher(c.crNamespace()).matches() || c.crNamespace().length() > 63) {
            refused.add(new ConfigurationRefusals.Refusal("crNamespace", c.crNamespace(),
                    "'" + c.crNamespace() + "' is not a namespace name"));
        }
        if (!DNS_NAME.matcher(c.crName()).matches()) {
            refused.add(new ConfigurationRefusals.Refusal("crName", c.crName(),
                    "'" + c.crName() + "' is not a resource name"));
        }
        if (!DNS_NAME.matcher(c.eventNamespace()).matches() || c.eventNamespace().length() > 63) {
            refused.add(new ConfigurationRefusals.Refusal("eventNamespace", c.eventNamespace(),
                    "'" + c.eventNamespace() + "' is not a namespace name"));
        }
        if (c.healthIntervalSeconds() < 1) {
            refused.add(new ConfigurationRefusals.Refusal("healthIntervalSeconds", c.healthIntervalSeconds(),
                    c.healthIntervalSeconds() + " must be at least 1"));
        }
        String dir = c.stateDir() == null ? "" : c.stateDir().trim();
        Path stateDir;
        try {
            stateDir = dir.isEmpty() ? null : Path.of(dir);
        } catch (InvalidPathException e) {
            stateDir = null;
        }
        if (stateDir == null || !stateDir.isAbsolute()) {
            refused.add(new ConfigurationRefusals.Refusal("stateDir", c.stateDir(),
                    "'" + dir + "' is not an absolute path"));
        }
        if (!refused.isEmpty()) {
            return null;
        }
        return NodeSync.Settings.builder(node).crNamespace(c.crNamespace()).crName(c.crName())
                .eventNamespace(c.eventNamespace()).healthInterval(Duration.ofSeconds(c.healthIntervalSeconds()))
                .stateDir(stateDir).build();
    }
}
