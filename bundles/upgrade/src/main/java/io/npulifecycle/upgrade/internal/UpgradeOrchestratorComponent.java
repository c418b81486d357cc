package io.npulifecycle.upgrade.internal;

import io.npulifecycle.upgrade.internal.cluster.ControllerConfig;
import io.npulifecycle.upgrade.internal.cluster.DriverModes;
import io.npulifecycle.upgrade.internal.cluster.LeaderElection;
import io.npulifecycle.upgrade.internal.cluster.PodSecurityLabels;
import io.npulifecycle.upgrade.internal.cluster.UpgradeController;
import io.npulifecycle.upgrade.internal.cluster.UpgradeMeasurements;
import io.npulifecycle.upgrade.internal.plan.WhiteListState;
import io.npulifecycle.upgrade.internal.preflight.RegistrySettings;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;

import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.npulifecycle.api.faults.PlantedBug;
import io.npulifecycle.api.management.ConfigurationRefusals.Refusal;
import io.npulifecycle.api.management.MBeanRegistrations;
import io.npulifecycle.api.time.TimeSource;
import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;

/**
 * The upgrade orchestrator component, PID {@value #PID}: runs {@link UpgradeController} with {@link LeaderElection}
 * on the {@code KubernetesClient} service of {@code io.npulifecycle.kubeclient}, and registers the
 * {@code io.npulifecycle:type=UpgradeOrchestrator} MBean ({@link UpgradeOrchestratorMBean}). An invalid
 * configuration is logged with the PID and key and the previous one is kept; a valid change restarts the controller
 * (state lives in Kubernetes, nothing is lost).
 */
@Component(configurationPid = UpgradeOrchestratorComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
        service = {})
@Designate(ocd = UpgradeOrchestratorComponent.Config.class)
public class UpgradeOrchestratorComponent {

    /** Configuration PID. */
    public static final String PID = "io.npulifecycle.upgrade";
    private static final System.Logger LOG = System.getLogger(UpgradeOrchestratorComponent.class.getName());

    /** Orchestrator configuration. */
    @ObjectClassDefinition(name = "npu-lifecycle upgrade orchestrator", description = "Rolling driver upgrade of the NPU nodes.")
    public @interface Config {
        @AttributeDefinition(name = "Namespace", description = "Namespace of the NPUOperatorCtl and of the Lease.")
        String namespace() default NpuOperatorCtlType.DEFAULT_NAMESPACE;

        @AttributeDefinition(name = "NPUOperatorCtl name", description = "Name of the NPUOperatorCtl to reconcile.")
        String resourceName() default NpuOperatorCtlType.DEFAULT_NAME;

        @AttributeDefinition(name = "Registry check", description = "Check that every driver image tag exists in the registry before touching a node.")
        boolean registryCheck() default true;

        @AttributeDefinition(name = "Registry scheme", description = "Registry scheme: https or http.")
        String registryScheme() default "https";

        @AttributeDefinition(name = "Pull secret", description = "dockerconfigjson pull secret (in namespace) with the registry credentials; empty = anonymous.")
        String pullSecret() default "";

        @AttributeDefinition(name = "Registry CA file", description = "Absolute path of a PEM file of CA certificates"
                + " that the registry preflight trusts beside the JVM's own (a registry whose certificate a private CA"
                + " signs; chart value preflight.registryCABundle, mounted as a file); read at each check; empty = the JVM's"
                + " CAs only. Without it such a registry fails the preflight (closed), naming the registry and this"
                + " key.")
        String registryCaBundle() default "";

        @AttributeDefinition(name = "Registry mirror", description = "host[:port][/path] that the registry preflight"
                + " checks instead of each driver image's own registry (where the nodes pull from when the container"
                + " runtime mirrors it, e.g. mirror.local:5000/ascend; the pull secret's entry for the mirror's host"
                + " is used); chart value preflight.mirror; empty = each image's own registry.")
        String registryMirror() default "";

        @AttributeDefinition(name = "Registry insecure", description = "As Docker's insecure-registries: check over"
                + " HTTPS without verifying the registry's certificate (neither its CA nor its name), and over plain"
                + " HTTP when the registry does not speak TLS; for a test registry only; logged as a warning at each"
                + " check; chart value preflight.insecure.")
        boolean registryInsecure() default false;

        @AttributeDefinition(name = "ImageWhiteList check", description = "When the cluster serves an ImageWhiteList "
                + "kind (API discovery), check that every driver image tag the rollout needs is listed under "
                + "spec.repoList before touching a node.")
        boolean imageWhiteListCheck() default true;

        @AttributeDefinition(name = "ImageWhiteList namespace", description = "Namespace of the ImageWhiteList.")
        String imageWhiteListNamespace() default WhiteListState.DEFAULT_NAMESPACE;

        @AttributeDefinition(name = "ImageWhiteList name",
                description = "Name of the ImageWhiteList that lists the driver image tags.")
        String imageWhiteListName() default WhiteListState.DEFAULT_NAME;

        @AttributeDefinition(name = "Reconcile delay (milliseconds)", description = "Debounce after an informer event, milliseconds.", min = "0", max = "60000")
        int reconcileDelayMillis() default 200;

        @AttributeDefinition(name = "Resync period (seconds)", description = "Periodic reconcile (deadlines, informer health), seconds.", min = "1", max = "3600")
        int resyncSeconds() default 10;

        @AttributeDefinition(name = "Status interval (seconds)", description = "Minimum interval between two status writes, seconds.", min = "0", max = "600")
        int statusIntervalSeconds() default 2;

        @AttributeDefinition(name = "Leader election", description = "Elect a leader through a Lease (false only for a single replica).")
        boolean leaderElection() default true;

        @AttributeDefinition(name = "Lease name", description = "Lease name.")
        String leaseName() default "npu-lifecycle-upgrade";

        @AttributeDefinition(name = "Lease duration (seconds)", description = "Lease duration, seconds.", min = "2", max = "600")
        int leaseDurationSeconds() default 15;

        @AttributeDefinition(name = "Renew deadline (seconds)", description = "Renew deadline, seconds (below the lease duration).", min = "1", max = "600")
        int renewDeadlineSeconds() default 10;

        @AttributeDefinition(name = "Retry period (seconds)", description = "Retry period, seconds (below the renew deadline).", min = "1", max = "600")
        int retryPeriodSeconds() default 2;

        @AttributeDefinition(name = "Lease holder identity", description = "Lease holder identity; empty = env POD_NAME, else hostname plus a random suffix.")
        String identity() default "";

        /**
         * @return {@code managed} or {@code host}; anything else is refused (the previous configuration is kept)
         */
        @AttributeDefinition(name = "Driver management", description = "managed (default, chart driver.enabled=true): "
                + "the control plane writes one driver DaemonSet per (chip, kernel, OS) from the template of "
                + "driverDaemonSetConfigMap and rolls spec.driver.version out; host (driver.enabled=false): the drivers "
                + "are installed on the hosts by their administrator, no driver DaemonSet is written and "
                + "spec.driver.version is reported in the status, never acted on; recovery of wedged chips runs in both.",
                options = {@org.osgi.service.metatype.annotations.Option(label = "managed", value = "managed"),
                    @org.osgi.service.metatype.annotations.Option(label = "host", value = "host")})
        String driverManagement() default DriverModes.MANAGED;

        /**
         * @return the ConfigMap name; not a resource name = refused
         */
        @AttributeDefinition(name = "Driver DaemonSet template ConfigMap", description = "Name of the ConfigMap, in "
                + "the namespace of this configuration, whose key driver-daemonset.yaml holds the driver DaemonSet "
                + "template (read at run time through an informer; containers[0] = the vendor's driver image, "
                + "containers[1] node-agent = the node agent). Missing or malformed: no driver DaemonSet is written and "
                + "the status condition DriverTemplateReady=False names the ConfigMap and the field. A changed template "
                + "is written to the existing DaemonSets (updateStrategy OnDelete: no driver pod restarts) and to the "
                + "ones created next. Unused with driverManagement=host.")
        String driverDaemonSetConfigMap() default ControllerConfig.DEFAULT_DRIVER_DAEMONSET_CONFIGMAP;

        /**
         * @return comma-separated mode=level; a bad entry is refused
         */
        @AttributeDefinition(name = "Pod Security labels", description = "Comma-separated mode=level (modes enforce, "
                + "warn, audit; levels privileged, baseline, restricted), e.g. "
                + "enforce=privileged,warn=privileged,audit=privileged: the leader writes the labels "
                + "pod-security.kubernetes.io/<mode>=<level> onto the namespace of this configuration (JSON merge patch) "
                + "and writes them again when they are removed or changed, so that the privileged node pods are admitted "
                + "on a cluster whose default level is restricted. Empty (the default) = the namespace is left alone.")
        String podSecurityLabels() default "";
    }

    private final KubernetesClient client;
    private final TimeSource time;

    /** The configuration in force; read by the MBean's threads. */
    private volatile ControllerConfig cfg;
    private volatile UpgradeController controller;
    private volatile LeaderElection election;
    private volatile String identity = "";
    /** The planted bug of the chaos checker's tests, read at activation, or {@code null} (always, in the product). */
    private volatile PlantedBug plantedBug;
    private MBeanRegistrations.Registration mbean;
    private final UpgradeMeasurements measurements = new UpgradeMeasurements();
    private org.osgi.framework.ServiceRegistration<io.npulifecycle.api.metrics.MetricSource> metricSource;

    /**
     * @param client the {@code KubernetesClient} service of {@code io.npulifecycle.kubeclient}
     * @param time the runtime clock
     */
    @Activate
    public UpgradeOrchestratorComponent(@Reference(name = "client") KubernetesClient client,
            @Reference(name = "time") TimeSource time) {
        this.client = client;
        this.time = time;
    }

    @Activate
    void activate(BundleContext ctx, Config raw) {
        plantedBug = PlantedBug.plantedIn(ctx.getProperty(PlantedBug.PROPERTY), "upgrade controller",
                EnumSet.of(PlantedBug.ADMIN_CORDON_LIFTED, PlantedBug.WINDOW_IGNORED, PlantedBug.DRAIN_SKIPPED), LOG);
        ControllerConfig c = reported(raw);
        cfg = c == null ? ControllerConfig.defaults() : c;
        startController();
        mbean = MBeanRegistrations.register(ctx, UpgradeOrchestratorMXBean.class,
                new UpgradeOrchestratorMBean(() -> controller, () -> cfg, () -> identity),
                UpgradeOrchestratorMXBean.OBJECT_NAME);
        metricSource = ctx.registerService(io.npulifecycle.api.metrics.MetricSource.class, measurements, null);
    }

    @Modified
    void modified(Config raw) {
        ControllerConfig c = reported(raw);
        if (c == null || c.equals(cfg)) {
            return;
        }
        stopController();
        cfg = c;
        startController();
        LOG.log(Level.INFO, "PID " + PID + ": reconfigured, controller restarted");
    }

    @Deactivate
    void deactivate() {
        if (mbean != null) {
            mbean.unregister();
        }
        if (metricSource != null) {
            try {
                metricSource.unregister();
            } catch (IllegalStateException alreadyGone) {
                // the bundle is stopping: the framework removed it
            }
        }
        stopController();
    }

    private void startController() {
        UpgradeController uc = new UpgradeController(client, time, cfg, null);
        uc.plant(plantedBug);
        uc.measurements(measurements);
        controller = uc;
        uc.start();
        if (cfg.leaderElection()) {
            LeaderElection le = new LeaderElection(client, cfg, uc::setLeader, true);
            identity = le.identity();
            election = le;
        } else {
            identity = cfg.identity().isBlank() ? LeaderElection.defaultIdentity() : cfg.identity();
            uc.setLeader(true);
        }
        LOG.log(Level.INFO, "upgrade orchestrator started for NPUOperatorCtl " + cfg.namespace() + "/" + cfg.resourceName()
                + " (registryCheck " + cfg.registryCheck() + ", imageWhiteListCheck " + cfg.imageWhiteListCheck() + " "
                + cfg.imageWhiteListNamespace() + "/" + cfg.imageWhiteListName() + ", leaderElection "
                + cfg.leaderElection() + ", driverManagement " + cfg.driverManagement()
                + (cfg.hostDrivers() ? "" : ", driver DaemonSet template ConfigMap " + cfg.namespace() + "/"
                        + cfg.driverDaemonSetConfigMap())
                + (cfg.podSecurityLabels().isEmpty() ? "" : ", Pod Security labels " + cfg.podSecurityLabels()) + ")");
    }

    private void stopController() {
        UpgradeController uc = controller;
        if (uc != null) {
            uc.setLeader(false);
        }
        LeaderElection le = election;
        if (le != null) {
            le.close();
            election = null;
        }
        if (uc != null) {
            uc.close();
            controller = null;
        }
    }

    /** Where refused values are listed (the management bundle's Configuration MBean), when present. */
    private final io.npulifecycle.api.management.RefusalReporter refusals =
            new io.npulifecycle.api.management.RefusalReporter();

    /**
     * @param r the service that lists refused values (DS: optional and dynamic, so its arrival or departure never
     *        restarts the control plane)
     */
    @Reference(cardinality = org.osgi.service.component.annotations.ReferenceCardinality.OPTIONAL,
            policy = org.osgi.service.component.annotations.ReferencePolicy.DYNAMIC)
    void bindRefusals(io.npulifecycle.api.management.ConfigurationRefusals r) {
        refusals.bind(r);
    }

    /** @param r the service that goes away */
    void unbindRefusals(io.npulifecycle.api.management.ConfigurationRefusals r) {
        refusals.unbind(r);
    }

    /**
     * {@link #validate}, reporting every refused value (or the end of a refusal) to the ConfigurationRefusals service
     * and logging them in one ERROR line (the previous configuration is kept).
     */
    private ControllerConfig reported(Config raw) {
        return refusals.check(PID, refused -> validate(raw, refused), LOG);
    }

    /**
     * @param c raw configuration
     * @param refused receives, when refused, one refusal per bad key (its value is part of the reason), in the order
     *        they are checked
     * @return the validated configuration, or null when a value is refused
     */
    static ControllerConfig validate(Config c, List<Refusal> refused) {
        List<Refusal> bad = new java.util.ArrayList<>();
        if (c.namespace() == null || !c.namespace().matches("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")) {
            bad.add(new Refusal("namespace", null, "'" + c.namespace() + "' is not a namespace name"));
        }
        if (c.resourceName() == null || !c.resourceName().matches("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")) {
            bad.add(new Refusal("resourceName", null, "'" + c.resourceName() + "' is not a resource name"));
        }
        if (c.imageWhiteListNamespace() == null
                || !c.imageWhiteListNamespace().matches("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")) {
            bad.add(new Refusal("imageWhiteListNamespace", null,
                    "'" + c.imageWhiteListNamespace() + "' is not a namespace name"));
        }
        if (c.imageWhiteListName() == null
                || !c.imageWhiteListName().matches("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")) {
            bad.add(new Refusal("imageWhiteListName", null,
                    "'" + c.imageWhiteListName() + "' is not a resource name"));
        }
        if (!"https".equals(c.registryScheme()) && !"http".equals(c.registryScheme())) {
            bad.add(new Refusal("registryScheme", null, "'" + c.registryScheme() + "' (expected https or http)"));
        }
        RegistrySettings registry = new RegistrySettings(c.registryCaBundle(), c.registryMirror(), c.registryInsecure());
        String registryProblem = registry.problem();
        if (registryProblem != null) {
            int colon = registryProblem.indexOf(": ");
            bad.add(new Refusal(registryProblem.substring(0, colon), null, registryProblem.substring(colon + 2)));
        }
        if (c.reconcileDelayMillis() < 0 || c.resyncSeconds() < 1 || c.statusIntervalSeconds() < 0) {
            bad.add(new Refusal("reconcileDelayMillis/resyncSeconds/statusIntervalSeconds", null,
                    "negative or zero resync"));
        }
        if (!(c.retryPeriodSeconds() < c.renewDeadlineSeconds() && c.renewDeadlineSeconds() < c.leaseDurationSeconds())) {
            bad.add(new Refusal("leaseDurationSeconds/renewDeadlineSeconds/retryPeriodSeconds", null,
                    "expected retryPeriod < renewDeadline < leaseDuration, got " + c.retryPeriodSeconds() + "/" + c.renewDeadlineSeconds() + "/" + c.leaseDurationSeconds()));
        }
        String management = c.driverManagement() == null ? "" : c.driverManagement().trim();
        if (!DriverModes.MANAGED.equals(management) && !DriverModes.HOST.equals(management)) {
            bad.add(new Refusal("driverManagement", null, "'" + c.driverManagement() + "' (expected managed or host)"));
        }
        if (c.driverDaemonSetConfigMap() == null
                || !c.driverDaemonSetConfigMap().matches("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")) {
            bad.add(new Refusal("driverDaemonSetConfigMap", null,
                    "'" + c.driverDaemonSetConfigMap() + "' is not a ConfigMap name"));
        }
        Map<String, String> psa = Map.of();
        try {
            psa = PodSecurityLabels.parse(c.podSecurityLabels());
        } catch (IllegalArgumentException e) {
            bad.add(new Refusal("podSecurityLabels", null, e.getMessage()));
        }
        if (!bad.isEmpty()) {
            refused.addAll(bad);
            return null;
        }
        return new ControllerConfig(c.namespace(), c.resourceName(), c.registryCheck(), c.registryScheme(),
                c.pullSecret() == null ? "" : c.pullSecret(), Duration.ofMillis(c.reconcileDelayMillis()),
                Duration.ofSeconds(c.resyncSeconds()), Duration.ofSeconds(c.statusIntervalSeconds()), c.leaderElection(),
                c.leaseName(), Duration.ofSeconds(c.leaseDurationSeconds()), Duration.ofSeconds(c.renewDeadlineSeconds()),
                Duration.ofSeconds(c.retryPeriodSeconds()), c.identity() == null ? "" : c.identity(),
                c.imageWhiteListCheck(), c.imageWhiteListNamespace(), c.imageWhiteListName(), management,
                c.driverDaemonSetConfigMap(), psa, registry);
    }
}
