package io.npulifecycle.api.upgrade.spec;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/**
 * A validated {@code spec.driver} (see {@link SpecReader}).
 *
 * @param version target driver version
 * @param registry image registry, e.g. {@code registry.local:5000}
 * @param autoUpgrade reboot without approval
 * @param maxParallelUpgrades nodes in flight at once, 0 = unlimited
 * @param maxUnavailable absolute count, or a percentage when {@code maxUnavailablePercent}
 * @param maxUnavailablePercent whether {@code maxUnavailable} is a percentage of the NPU nodes
 * @param deadlines per in-flight state; {@link Duration#ZERO} = none ({@code drain-required}: the drain's timeout)
 * @param drain the upgrade drain
 * @param gates the maintenance window, the blocking pods and the NPU workload hold
 */
public record Policy(String version, String registry, boolean autoUpgrade, int maxParallelUpgrades, int maxUnavailable,
        boolean maxUnavailablePercent, Map<UpgradeState, Duration> deadlines, DrainSettings drain, UpgradeGates gates) {

    /** A policy with the default gates ({@link UpgradeGates#DEFAULT}). */
    public Policy(String version, String registry, boolean autoUpgrade, int maxParallelUpgrades, int maxUnavailable,
            boolean maxUnavailablePercent, Map<UpgradeState, Duration> deadlines, DrainSettings drain) {
        this(version, registry, autoUpgrade, maxParallelUpgrades, maxUnavailable, maxUnavailablePercent, deadlines,
                drain, UpgradeGates.DEFAULT);
    }

    /** A policy with the default drain ({@link DrainSettings#DEFAULT}). */
    public Policy(String version, String registry, boolean autoUpgrade, int maxParallelUpgrades, int maxUnavailable,
            boolean maxUnavailablePercent, Map<UpgradeState, Duration> deadlines) {
        this(version, registry, autoUpgrade, maxParallelUpgrades, maxUnavailable, maxUnavailablePercent, deadlines,
                DrainSettings.DEFAULT);
    }

    /** Default registry when {@code spec.driver.registry} is absent. */
    public static final String DEFAULT_REGISTRY = "registry.local";

    /**
     * Default deadlines (seconds): cordon 900 (the control plane's own write, as the pod restart: not configurable),
     * drain 300 (the drain's
     * {@code timeoutSeconds}), pod restart 900, reboot-required 86400, rebooting 1800, validation 900.
     */
    public static Map<UpgradeState, Duration> defaultDeadlines() {
        Map<UpgradeState, Duration> m = new EnumMap<>(UpgradeState.class);
        m.put(UpgradeState.CORDON_REQUIRED, Duration.ofSeconds(900));
        m.put(UpgradeState.DRAIN_REQUIRED, DrainSettings.DEFAULT.timeout());
        m.put(UpgradeState.POD_RESTART_REQUIRED, Duration.ofSeconds(900));
        m.put(UpgradeState.REBOOT_REQUIRED, Duration.ofSeconds(86400));
        m.put(UpgradeState.REBOOTING, Duration.ofSeconds(1800));
        m.put(UpgradeState.VALIDATION_REQUIRED, Duration.ofSeconds(900));
        return m;
    }

    /**
     * @param npuNodes number of NPU nodes
     * @return how many may be unavailable; a percentage is rounded up (25% of 5 = 2)
     */
    public int maxUnavailableOf(int npuNodes) {
        if (!maxUnavailablePercent) {
            return maxUnavailable;
        }
        return (int) Math.ceil(npuNodes * maxUnavailable / 100.0);
    }
}
