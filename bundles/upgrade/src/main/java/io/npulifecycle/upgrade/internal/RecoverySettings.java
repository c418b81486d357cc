package io.npulifecycle.upgrade.internal;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

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
 */
record RecoverySettings(DrainSettings drain, int maxUnavailable, boolean percent, MaintenanceWindow window,
        PodSelector blocking) {

    /** The defaults of the CRD schema: the default drain, 25 %, no window enforced, no blocking pods. */
    static final RecoverySettings DEFAULT = new RecoverySettings(DrainSettings.DEFAULT, 25, true, null, null);

    /** The fields of {@code recoveryPolicy} the CRD schema knows. */
    static final List<String> FIELDS = List.of("autoRecover", "maxReboots", "window", "drain", "maxUnavailable",
            "maintenanceWindow", "blockingPodSelector");

    /** The fields of {@code recoveryPolicy.maintenanceWindow}: the window's and {@code enforce}. */
    static final List<String> WINDOW_FIELDS = java.util.stream.Stream.concat(MaintenanceWindow.FIELDS.stream(),
            java.util.stream.Stream.of("enforce")).toList();

    /** Without a window and without blocking pods. */
    RecoverySettings(DrainSettings drain, int maxUnavailable, boolean percent) {
        this(drain, maxUnavailable, percent, null, null);
    }

    private static final Pattern PERCENT = Pattern.compile("^([0-9]{1,3})%$");

    /**
     * @param npuNodes the number of NPU nodes
     * @return how many NPU nodes may be unavailable while wedged nodes are drained and rebooted: at least 1
     */
    int limit(int npuNodes) {
        int n = percent ? (int) Math.ceil(npuNodes * maxUnavailable / 100.0) : maxUnavailable;
        return Math.max(1, n);
    }

    /**
     * Reads the control plane's part of {@code recoveryPolicy}; each problem names its field.
     *
     * @param rm the {@code recoveryPolicy} object, or null when absent
     * @param drain parses a drain object ({@code SpecParser}'s, shared with {@code upgradePolicy.drain})
     * @param problems where problems go
     * @return the settings (meaningful only when no problem was added)
     */
    static RecoverySettings parse(Map<?, ?> rm, java.util.function.BiFunction<Map<?, ?>, String, DrainSettings> drain,
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
        Object mu = rm.get("maxUnavailable");
        String mf = "spec.driver.recoveryPolicy.maxUnavailable";
        if (mu instanceof String s) {
            var m = PERCENT.matcher(s);
            if (m.matches() && Integer.parseInt(m.group(1)) <= 100) {
                max = Integer.parseInt(m.group(1));
            } else if (s.matches("^[0-9]{1,6}$")) {
                max = Integer.parseInt(s);
                pct = false;
            } else {
                problems.add(mf + ": '" + s + "' is not a count or a percentage (expected e.g. 2 or 25%, 0..100%)");
            }
        } else if (mu instanceof Integer || mu instanceof Long || mu instanceof Short) {
            long l = ((Number) mu).longValue();
            if (l < 0 || l > 100_000) {
                problems.add(mf + ": " + l + " is out of range (expected an integer 0..100000)");
            } else {
                max = (int) l;
                pct = false;
            }
        } else if (mu != null) {
            problems.add(mf + ": " + mu + " is not a count or a percentage (expected e.g. 2 or 25%)");
        }
        MaintenanceWindow window = window(rm.get("maintenanceWindow"), d, problems);
        PodSelector blocking = null;
        Object sel = rm.get("blockingPodSelector");
        String bf = "spec.driver.recoveryPolicy.blockingPodSelector";
        if (sel != null) {
            if (!(sel instanceof String s) || s.isBlank()) {
                problems.add(bf + ": " + (sel instanceof String ? "'" + sel + "'" : sel) + " is not a label selector "
                        + "(expected a string like app=critical)");
            } else {
                try {
                    blocking = PodSelector.parse(s);
                } catch (IllegalArgumentException e) {
                    problems.add(bf + ": '" + s + "' does not parse: " + e.getMessage());
                }
            }
        }
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
