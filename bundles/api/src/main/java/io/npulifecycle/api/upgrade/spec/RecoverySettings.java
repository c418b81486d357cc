package io.npulifecycle.api.upgrade.spec;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A validated {@code spec.driver.recoveryPolicy} as far as the control plane acts on it (docs/upgrade.md "Recovery
 * drain"): the drain of a wedged node before its recovery reboot, the storm protection and the maintenance window.
 *
 * @param drain {@code recoveryPolicy.drain}: the fields of {@code upgradePolicy.drain}, default enabled
 * @param maxUnavailable {@code recoveryPolicy.maxUnavailable}: a count, or a percentage when {@code percent}
 * @param percent whether {@code maxUnavailable} is a percentage of the NPU nodes (rounded up)
 * @param window {@code recoveryPolicy.maintenanceWindow} when {@code enforce: true}, else null: recovery reboots
 *        ignore the window unless it is enforced (a wedged node heals at once by default)
 * @param blocking {@code recoveryPolicy.blockingPodSelector}: while a pod it matches runs on a wedged node, that
 *        node is not drained or granted; null for none
 * @param autoRecover {@code recoveryPolicy.autoRecover}: the node agent reboots a wedged node without approval
 * @param maxReboots {@code recoveryPolicy.maxReboots}: recovery reboots allowed per {@code stormWindow}, then the node
 *        needs a person (0 to 1000)
 * @param stormWindow {@code recoveryPolicy.window}: the window of {@code maxReboots} (above zero, at most a year)
 */
public record RecoverySettings(DrainSettings drain, int maxUnavailable, boolean percent, MaintenanceWindow window,
        PodSelector blocking, boolean autoRecover, int maxReboots, Duration stormWindow) {

    /** {@code recoveryPolicy.maxReboots} when absent (the CRD's default). */
    public static final int DEFAULT_MAX_REBOOTS = 3;
    /** {@code recoveryPolicy.window} when absent (the CRD's default). */
    public static final Duration DEFAULT_WINDOW = Duration.ofHours(24);

    /** The defaults of the CRD schema: the default drain, 25 %, no window enforced, no blocking pods. */
    public static final RecoverySettings DEFAULT = new RecoverySettings(DrainSettings.DEFAULT, 25, true, null, null);

    /** The control plane's part, with the storm protection's defaults (no automatic recovery, 3 per 24 h). */
    public RecoverySettings(DrainSettings drain, int maxUnavailable, boolean percent, MaintenanceWindow window,
            PodSelector blocking) {
        this(drain, maxUnavailable, percent, window, blocking, false, DEFAULT_MAX_REBOOTS, DEFAULT_WINDOW);
    }

    /** @return these settings with the node agent's part: {@code autoRecover}, {@code maxReboots}, {@code window} */
    public RecoverySettings withStormProtection(boolean auto, int max, Duration stormWindowOrNull) {
        return new RecoverySettings(drain, maxUnavailable, percent, window, blocking, auto, max,
                stormWindowOrNull == null ? DEFAULT_WINDOW : stormWindowOrNull);
    }

    /** The fields of {@code recoveryPolicy} the CRD schema knows. */
    public static final List<String> FIELDS = List.of("autoRecover", "maxReboots", "window", "drain", "maxUnavailable",
            "maintenanceWindow", "blockingPodSelector");

    /** The fields of {@code recoveryPolicy.maintenanceWindow}: the window's and {@code enforce}. */
    public static final List<String> WINDOW_FIELDS = java.util.stream.Stream.concat(MaintenanceWindow.FIELDS.stream(),
            java.util.stream.Stream.of("enforce")).toList();

    /** Without a window and without blocking pods. */
    public RecoverySettings(DrainSettings drain, int maxUnavailable, boolean percent) {
        this(drain, maxUnavailable, percent, null, null);
    }


    /**
     * @param npuNodes the number of NPU nodes
     * @return how many NPU nodes may be unavailable while wedged nodes are drained and rebooted: at least 1
     */
    public int limit(int npuNodes) {
        int n = percent ? (int) Math.ceil(npuNodes * maxUnavailable / 100.0) : maxUnavailable;
        return Math.max(1, n);
    }

    /**
     * Reads the control plane's part of {@code recoveryPolicy}; each problem names its field.
     *
     * @param rm the {@code recoveryPolicy} object, or null when absent
     * @param drain parses a drain object ({@code SpecReader}'s, shared with {@code upgradePolicy.drain})
     * @param problems where problems go
     * @return the settings (meaningful only when no problem was added)
     */
    public static RecoverySettings parse(Map<?, ?> rm, java.util.function.BiFunction<Map<?, ?>, String, DrainSettings> drain,
            List<String> problems) {
        if (rm == null) {
            return DEFAULT;
        }
        DrainSettings d = DrainSettings.DEFAULT;
        Object dr = rm.get("drain");
        String f = "spec.driver.recoveryPolicy.drain";
        if (dr instanceof Map<?, ?> dm) {
            d = drain.apply(dm, f);
        } else if (dr != null) {
            problems.add(f + ": '" + dr + "' is not an object (expected an object)");
        }
        int max = DEFAULT.maxUnavailable();
        boolean pct = true;
        SpecReader.Count mu = SpecReader.count(rm.get("maxUnavailable"), "spec.driver.recoveryPolicy.maxUnavailable",
                problems);
        if (mu != null) {
            max = mu.value();
            pct = mu.percent();
        }
        MaintenanceWindow window = window(rm.get("maintenanceWindow"), d, problems);
        PodSelector blocking = PodSelector.field(rm.get("blockingPodSelector"),
                "spec.driver.recoveryPolicy.blockingPodSelector", false, problems, null);
        return new RecoverySettings(d, max, pct, window, blocking);
    }

    /**
     * {@code recoveryPolicy.maintenanceWindow}: checked in full whether enforced or not (a bad window is refused
     * either way, never half-applied); {@code enforce: true} needs the drain, since without it the node agent reboots
     * without asking the control plane, which then has nothing to hold.
     *
     * @return the window when enforced, else null
     */
    private static MaintenanceWindow window(Object raw, DrainSettings drain, List<String> problems) {
        if (raw == null) {
            return null;
        }
        String f = "spec.driver.recoveryPolicy.maintenanceWindow";
        MaintenanceWindow w = MaintenanceWindow.parse(raw, f, problems);
        if (!(raw instanceof Map<?, ?> m)) {
            return null;
        }
        Object e = m.get("enforce");
        boolean enforce = false;
        if (e instanceof Boolean b) {
            enforce = b;
        } else if (e != null) {
            problems.add(f + ".enforce: " + (e instanceof String ? "'" + e + "'" : e)
                    + " is not a boolean (expected true or false)");
        }
        if (enforce && !drain.enable()) {
            problems.add(f + ".enforce: true needs spec.driver.recoveryPolicy.drain.enable: true (without the drain "
                    + "the node agent reboots without the control plane's grant, so nothing holds the reboot for the "
                    + "window)");
        }
        return enforce ? w : null;
    }
}
