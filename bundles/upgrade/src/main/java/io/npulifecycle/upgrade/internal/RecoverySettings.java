package io.npulifecycle.upgrade.internal;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A validated {@code spec.driver.recoveryPolicy} as far as the control plane acts on it (docs/upgrade.md "Recovery
 * drain"): the drain of a wedged node before its recovery reboot and the storm protection.
 *
 * @param drain {@code recoveryPolicy.drain}: the fields of {@code upgradePolicy.drain}, default enabled
 * @param maxUnavailable {@code recoveryPolicy.maxUnavailable}: a count, or a percentage when {@code percent}
 * @param percent whether {@code maxUnavailable} is a percentage of the NPU nodes (rounded up)
 */
record RecoverySettings(DrainSettings drain, int maxUnavailable, boolean percent) {

    /** The defaults of the CRD schema: the default drain, 25 %. */
    static final RecoverySettings DEFAULT = new RecoverySettings(DrainSettings.DEFAULT, 25, true);

    /** The fields of {@code recoveryPolicy} the CRD schema knows. */
    static final List<String> FIELDS = List.of("autoRecover", "maxReboots", "window", "drain", "maxUnavailable");

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
        return new RecoverySettings(d, max, pct);
    }
}
