package io.npulifecycle.api.upgrade.spec;

/**
 * What must hold before a node gets a rollout slot, besides the slot counts ({@code spec.driver.upgradePolicy};
 * docs/upgrade.md "Maintenance window", "Blocking pods"). Validated by {@link SpecReader}.
 *
 * @param window {@code maintenanceWindow}: a slot only while it is open, and the reboot must start while it is
 *        open; null = no window (always open)
 * @param blockingPods {@code blockingPodSelector}: a node with a non-terminal pod it matches gets no slot; null =
 *        none
 * @param holdNpuWorkloads {@code holdNodesWithNpuWorkloads}: a node running NPU workloads is held before its slot
 *        (true, the default); false = they are evicted by the drain like the other pods
 */
public record UpgradeGates(MaintenanceWindow window, PodSelector blockingPods, boolean holdNpuWorkloads) {

    /** No window, no blocking pods, NPU workloads hold their node: the defaults of the CRD schema. */
    public static final UpgradeGates DEFAULT = new UpgradeGates(null, null, true);
}
