package io.npulifecycle.api.faults;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The bugs a runtime can be told to have on purpose, one per invariant of the chaos checker (the simulator harness's
 * {@code Invariants}), so that a test ({@code itests} {@code PlantedBugIT}) shows the checker catching each: a run
 * of {@code npu-lifecycle scenario} or {@code chaos} with {@code --planted-bug NAME} starts its runtimes with the
 * framework property {@value #PROPERTY}{@code =NAME} ({@code -D} on the JVM: Felix's {@code BundleContext.getProperty}
 * falls back to the system properties). Each component reads it once, at activation ({@link #plantedIn}), and breaks
 * the rule at its own decision point, behind {@code if (plantedBug == PlantedBug.X)}.
 *
 * <p><b>Testing the checker only.</b> The product's launcher, Helm chart, manifests and images never set the
 * property; a runtime with a bug planted says so at WARN in its log, once per component that carries the bug.
 */
public enum PlantedBug {

    /** The node agent's rebooter reboots without writing its {@code Rebooting} Event. */
    REBOOT_UNANNOUNCED("reboot-unannounced", "every-reboot-announced"),
    /**
     * The rebooter takes {@code autoRecover} as {@code true} (and the recovery drain as off) whatever the policy
     * says: a lasting wedge reboots the node without an approval (both reboot guards skipped).
     */
    REBOOT_UNAUTHORISED("reboot-unauthorised", "every-reboot-authorised"),
    /** The node agent's consumption of an approval leaves the annotation on the Node: one approval reboots again. */
    APPROVAL_REUSED("approval-reused", "one-reboot-per-approval"),
    /** The control plane uncordons a node it did not cordon (an administrator's cordon) as if it were its own. */
    ADMIN_CORDON_LIFTED("admin-cordon-lifted", "administrator-cordon-kept"),
    /** The node agent loads a new driver version into the running kernel instead of staging it for the next boot. */
    MODULE_RELOADED("module-reloaded", "no-module-load-outside-fresh-boot"),
    /** The control plane treats the upgrade's maintenance window as always open. */
    WINDOW_IGNORED("window-ignored", "no-upgrade-reboot-outside-window"),
    /**
     * The control plane's drains (upgrade and recovery) report done without evicting a pod (a reboot with a pod under a
     * PodDisruptionBudget on the node; budgets and eviction exist only on a real API server).
     */
    DRAIN_SKIPPED("drain-skipped", "no-reboot-with-a-protected-pod"),
    /**
     * The node agent's health-watch keeps {@value #LEAK_MIB_PER_PROBE} MiB of native memory on every probe, up to
     * {@value #LEAK_CAP_MIB} MiB
     * (so that the JVM lives on and the checker, not a crash, reports it).
     */
    MEMORY_LEAK("memory-leak", "node-agent-memory-bounded");

    /** The framework (or system) property naming the planted bug, one name of {@link #bugName()}. */
    public static final String PROPERTY = "npu.lifecycle.plantedBug";
    /** The native memory {@link #MEMORY_LEAK} keeps on each probe, MiB. */
    public static final int LEAK_MIB_PER_PROBE = 2;
    /**
     * The most native memory {@link #MEMORY_LEAK} keeps, MiB: four times the invariant's growth bound (64 MiB) and
     * above its limit (256 MiB), so that the checker sees it whatever part was kept before its first reading; a JVM
     * whose direct-memory limit ({@code -XX:MaxDirectMemorySize}, by default its heap's maximum) is lower throws
     * {@code OutOfMemoryError} on the probe thread instead (the simulator's harness raises it for this bug).
     */
    public static final int LEAK_CAP_MIB = 256;

    private final String bugName;
    private final String invariant;

    PlantedBug(String bugName, String invariant) {
        this.bugName = bugName;
        this.invariant = invariant;
    }

    /** @return the name given to {@value #PROPERTY} and {@code --planted-bug}, e.g. {@code reboot-unannounced} */
    public String bugName() {
        return bugName;
    }

    /** @return the name of the invariant it breaks, as the harness's {@code Invariants} names it */
    public String invariant() {
        return invariant;
    }

    /** @return every bug name, comma-separated, in declaration order */
    public static String names() {
        return Arrays.stream(values()).map(PlantedBug::bugName).collect(Collectors.joining(", "));
    }

    /**
     * @param name a bug name, e.g. {@code memory-leak}
     * @return the bug of that name
     * @throws IllegalArgumentException when no bug has that name (the message names it and the valid ones)
     */
    public static PlantedBug of(String name) {
        for (PlantedBug b : values()) {
            if (b.bugName.equals(name)) {
                return b;
            }
        }
        throw new IllegalArgumentException("'" + name + "' is no planted bug (one of " + names() + ")");
    }

    /**
     * The bug a component carries, from the value of {@value #PROPERTY} it read at activation
     * ({@code BundleContext.getProperty}). A bug of this component is logged at WARN (what it breaks and that it is
     * on purpose); an unknown name is logged at ERROR and plants nothing.
     *
     * @param value the property's value; {@code null} or blank: no bug
     * @param component what the log calls the component, e.g. {@code rebooter}
     * @param here the bugs this component carries
     * @param log where to say so
     * @return the bug of this component named by {@code value}, or {@code null} (none, another component's, or an
     *         unknown name)
     */
    public static PlantedBug plantedIn(String value, String component, Set<PlantedBug> here, System.Logger log) {
        if (value == null || value.isBlank()) {
            return null;
        }
        PlantedBug b;
        try {
            b = of(value.trim());
        } catch (IllegalArgumentException e) {
            log.log(Level.ERROR, PROPERTY + "=" + value + ": " + e.getMessage() + ": no bug planted in the "
                    + component);
            return null;
        }
        if (!here.contains(b)) {
            return null;
        }
        log.log(Level.WARNING, "planted bug " + b.bugName + " active (" + component + "): this runtime breaks "
                + "invariant " + b.invariant + " on purpose (" + PROPERTY + ", testing the chaos checker only)");
        return b;
    }
}
