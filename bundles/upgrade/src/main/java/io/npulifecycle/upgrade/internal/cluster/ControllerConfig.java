package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.upgrade.internal.preflight.PreflightSettings;

import io.npulifecycle.upgrade.internal.plan.WhiteListState;
import io.npulifecycle.upgrade.internal.preflight.RegistrySettings;

import io.npulifecycle.api.upgrade.NpuOperatorCtlType;

import io.npulifecycle.api.node.NodeKeys;

import java.time.Duration;

/**
 * Validated settings of the orchestrator (PID {@code io.npulifecycle.upgrade}).
 *
 * @param namespace namespace of the CR and of the Lease (default {@code npu-operator})
 * @param resourceName name of the NPUOperatorCtl (default {@code npuoperatorctl-sample})
 * @param registryCheck run the registry preflight
 * @param registryScheme {@code https} or {@code http}
 * @param pullSecret name of a dockerconfigjson secret in {@code namespace}, "" = anonymous
 * @param reconcileDelay debounce after an informer event
 * @param resync periodic reconcile (deadlines, informer health)
 * @param statusInterval minimum interval between two status writes
 * @param leaderElection use a Lease (false: always leader, single replica only)
 * @param leaseName Lease name
 * @param leaseDuration lease duration (default 15 s)
 * @param renewDeadline renew deadline (default 10 s)
 * @param retryPeriod retry period (default 2 s)
 * @param identity holder identity, "" = pod name (env POD_NAME) or hostname + random suffix
 * @param imageWhiteListCheck check the platform's ImageWhiteList when the cluster serves the kind
 * @param imageWhiteListNamespace namespace of the ImageWhiteList (default {@code cpaas-system})
 * @param imageWhiteListName name of the ImageWhiteList (default {@code ascend-driver})
 * @param driverManagement {@code managed} (driver DaemonSets, upgrades) or {@code host} (drivers installed on the
 *        hosts: no DaemonSet, no upgrade, recovery only) ({@link DriverModes})
 * @param driverDaemonSetConfigMap the ConfigMap in {@code namespace} whose key {@code driver-daemonset.yaml} holds the
 *        driver DaemonSet template (default {@value #DEFAULT_DRIVER_DAEMONSET_CONFIGMAP})
 * @param podSecurityLabels the Pod Security labels the leader keeps on {@code namespace}, full keys; empty = none
 *        ({@link PodSecurityLabels})
 * @param registry how the registry preflight reaches the registries: CA file, mirror, insecure (default
 *        {@link RegistrySettings#DEFAULT})
 */
public record ControllerConfig(String namespace, String resourceName, boolean registryCheck, String registryScheme,
        String pullSecret, Duration reconcileDelay, Duration resync, Duration statusInterval, boolean leaderElection,
        String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, String identity,
        boolean imageWhiteListCheck, String imageWhiteListNamespace, String imageWhiteListName,
        String driverManagement, String driverDaemonSetConfigMap, java.util.Map<String, String> podSecurityLabels,
        RegistrySettings registry) {

    /** Default of {@code driverDaemonSetConfigMap} (the chart's ConfigMap). */
    public static final String DEFAULT_DRIVER_DAEMONSET_CONFIGMAP = "npu-lifecycle-driver-daemonset";

    /** Copies the labels (immutable); a null {@code registry} reads as {@link RegistrySettings#DEFAULT}. */
    public ControllerConfig {
        podSecurityLabels = podSecurityLabels == null ? java.util.Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(podSecurityLabels));
        registry = registry == null ? RegistrySettings.DEFAULT : registry;
    }

    /**
     * The settings with {@link RegistrySettings#DEFAULT}.
     *
     * @param namespace see the record
     * @param resourceName see the record
     * @param registryCheck see the record
     * @param registryScheme see the record
     * @param pullSecret see the record
     * @param reconcileDelay see the record
     * @param resync see the record
     * @param statusInterval see the record
     * @param leaderElection see the record
     * @param leaseName see the record
     * @param leaseDuration see the record
     * @param renewDeadline see the record
     * @param retryPeriod see the record
     * @param identity see the record
     * @param imageWhiteListCheck see the record
     * @param imageWhiteListNamespace see the record
     * @param imageWhiteListName see the record
     * @param driverManagement see the record
     * @param driverDaemonSetConfigMap see the record
     * @param podSecurityLabels see the record
     */
    public ControllerConfig(String namespace, String resourceName, boolean registryCheck, String registryScheme,
            String pullSecret, Duration reconcileDelay, Duration resync, Duration statusInterval, boolean leaderElection,
            String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, String identity,
            boolean imageWhiteListCheck, String imageWhiteListNamespace, String imageWhiteListName,
            String driverManagement, String driverDaemonSetConfigMap, java.util.Map<String, String> podSecurityLabels) {
        this(namespace, resourceName, registryCheck, registryScheme, pullSecret, reconcileDelay, resync, statusInterval,
                leaderElection, leaseName, leaseDuration, renewDeadline, retryPeriod, identity, imageWhiteListCheck,
                imageWhiteListNamespace, imageWhiteListName, driverManagement, driverDaemonSetConfigMap,
                podSecurityLabels, RegistrySettings.DEFAULT);
    }

    /**
     * Managed drivers from the default ConfigMap, no Pod Security label, {@link RegistrySettings#DEFAULT}.
     *
     * @param namespace see the record
     * @param resourceName see the record
     * @param registryCheck see the record
     * @param registryScheme see the record
     * @param pullSecret see the record
     * @param reconcileDelay see the record
     * @param resync see the record
     * @param statusInterval see the record
     * @param leaderElection see the record
     * @param leaseName see the record
     * @param leaseDuration see the record
     * @param renewDeadline see the record
     * @param retryPeriod see the record
     * @param identity see the record
     * @param imageWhiteListCheck see the record
     * @param imageWhiteListNamespace see the record
     * @param imageWhiteListName see the record
     */
    public ControllerConfig(String namespace, String resourceName, boolean registryCheck, String registryScheme,
            String pullSecret, Duration reconcileDelay, Duration resync, Duration statusInterval, boolean leaderElection,
            String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, String identity,
            boolean imageWhiteListCheck, String imageWhiteListNamespace, String imageWhiteListName) {
        this(namespace, resourceName, registryCheck, registryScheme, pullSecret, reconcileDelay, resync, statusInterval,
                leaderElection, leaseName, leaseDuration, renewDeadline, retryPeriod, identity, imageWhiteListCheck,
                imageWhiteListNamespace, imageWhiteListName, DriverModes.MANAGED, DEFAULT_DRIVER_DAEMONSET_CONFIGMAP,
                java.util.Map.of());
    }

    /** @return whether the drivers are installed on the hosts ({@code driverManagement=host}) */
    public boolean hostDrivers() {
        return DriverModes.HOST.equals(driverManagement);
    }

    /**
     * @param management {@code driverManagement}
     * @param configMap {@code driverDaemonSetConfigMap}
     * @param labels {@code podSecurityLabels}, full keys
     * @return these settings with other driver modes
     */
    public ControllerConfig withDriverModes(String management, String configMap, java.util.Map<String, String> labels) {
        return new ControllerConfig(namespace, resourceName, registryCheck, registryScheme, pullSecret, reconcileDelay,
                resync, statusInterval, leaderElection, leaseName, leaseDuration, renewDeadline, retryPeriod, identity,
                imageWhiteListCheck, imageWhiteListNamespace, imageWhiteListName, management, configMap, labels,
                registry);
    }

    /**
     * The settings with the ImageWhiteList check on, at its default namespace and name.
     *
     * @param namespace see the record
     * @param resourceName see the record
     * @param registryCheck see the record
     * @param registryScheme see the record
     * @param pullSecret see the record
     * @param reconcileDelay see the record
     * @param resync see the record
     * @param statusInterval see the record
     * @param leaderElection see the record
     * @param leaseName see the record
     * @param leaseDuration see the record
     * @param renewDeadline see the record
     * @param retryPeriod see the record
     * @param identity see the record
     */
    public ControllerConfig(String namespace, String resourceName, boolean registryCheck, String registryScheme,
            String pullSecret, Duration reconcileDelay, Duration resync, Duration statusInterval, boolean leaderElection,
            String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, String identity) {
        this(namespace, resourceName, registryCheck, registryScheme, pullSecret, reconcileDelay, resync, statusInterval,
                leaderElection, leaseName, leaseDuration, renewDeadline, retryPeriod, identity, true,
                WhiteListState.DEFAULT_NAMESPACE, WhiteListState.DEFAULT_NAME);
    }

    /** @return the defaults */
    public static ControllerConfig defaults() {
        return new ControllerConfig(NpuOperatorCtlType.DEFAULT_NAMESPACE, NpuOperatorCtlType.DEFAULT_NAME, true, "https", "",
                Duration.ofMillis(200), Duration.ofSeconds(10), Duration.ofSeconds(2), true, "npu-lifecycle-upgrade",
                Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2), "");
    }

    /**
     * @param check {@code imageWhiteListCheck}
     * @param whiteListNamespace {@code imageWhiteListNamespace}
     * @param whiteListName {@code imageWhiteListName}
     * @return these settings with another ImageWhiteList configuration
     */
    public ControllerConfig withImageWhiteList(boolean check, String whiteListNamespace, String whiteListName) {
        return new ControllerConfig(namespace, resourceName, registryCheck, registryScheme, pullSecret, reconcileDelay,
                resync, statusInterval, leaderElection, leaseName, leaseDuration, renewDeadline, retryPeriod, identity,
                check, whiteListNamespace, whiteListName, driverManagement, driverDaemonSetConfigMap, podSecurityLabels,
                registry);
    }

    /**
     * @param settings the registry preflight's CA bundle, mirror and insecure switch
     * @return these settings with another registry access
     */
    public ControllerConfig withRegistry(RegistrySettings settings) {
        return new ControllerConfig(namespace, resourceName, registryCheck, registryScheme, pullSecret, reconcileDelay,
                resync, statusInterval, leaderElection, leaseName, leaseDuration, renewDeadline, retryPeriod, identity,
                imageWhiteListCheck, imageWhiteListNamespace, imageWhiteListName, driverManagement,
                driverDaemonSetConfigMap, podSecurityLabels, settings);
    }

    /** @return what the preflight reads of these settings */
    public PreflightSettings preflight() {
        return new PreflightSettings(namespace, registryCheck, registryScheme, pullSecret, registry,
                imageWhiteListCheck, imageWhiteListNamespace, imageWhiteListName);
    }
}
