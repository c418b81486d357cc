package io.npulifecycle.kube.internal;

import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.npulifecycle.api.node.NodePolicy;

/**
 * Reads and validates the fields of the {@code NPUOperatorCtl} custom resource the node agent uses ({@code DESIGN.md}):
 * {@code spec.driver.version}, {@code spec.driver.upgradePolicy.autoUpgrade},
 * {@code spec.driver.recoveryPolicy.autoRecover}, {@code .maxReboots}, {@code .window}, {@code .drain.enable} (absent =
 * {@code true}: a recovery reboot waits for the control plane's drain and grant). Anything malformed gives an
 * unknown policy (which authorises nothing) with a message naming the resource, the field and what was expected.
 */
public final class PolicyParser {

    /** A driver version: dot-separated alphanumerics starting with a number, e.g. {@code 25.5.0}, {@code 23.0.rc3}. */
    static final Pattern VERSION = Pattern.compile("[0-9]+(\\.[0-9A-Za-z]+){1,4}");
    /** A Kubernetes/Go duration limited to hours, minutes, seconds, e.g. {@code 24h}, {@code 1h30m}, {@code 90s}. */
    static final Pattern DURATION = Pattern.compile("(?:([0-9]{1,6})h)?(?:([0-9]{1,6})m)?(?:([0-9]{1,8})s)?");

    private PolicyParser() {
    }

    /**
     * @param what names the resource in messages, e.g. {@code npu-operator/npuoperatorctl-sample}
     * @param spec the resource's {@code spec} (any JSON value), or {@code null} when the resource has none
     * @param resourceVersion the resource's {@code metadata.resourceVersion}
     * @return the policy; {@link NodePolicy#known()} is {@code false} when a field is malformed
     */
    public static NodePolicy parse(String what, Object spec, String resourceVersion) {
        try {
            Map<?, ?> s = map(spec, "spec", what);
            Map<?, ?> driver = map(s == null ? null : s.get("driver"), "spec.driver", what);
            if (driver == null) {
                return new NodePolicy(true, null, false, false, null, null, null, resourceVersion, true);
            }
            Object v = driver.get("version");
            String version = null;
            if (v != null) {
                if (!(v instanceof String str) || !VERSION.matcher(str).matches() || str.length() > 63) {
                    throw new Bad(what, "spec.driver.version", "a driver version like 25.5.0", v);
                }
                version = str;
            }
            Map<?, ?> up = map(driver.get("upgradePolicy"), "spec.driver.upgradePolicy", what);
            boolean autoUpgrade = bool(up == null ? null : up.get("autoUpgrade"), "spec.driver.upgradePolicy.autoUpgrade", what);
            Map<?, ?> rp = map(driver.get("recoveryPolicy"), "spec.driver.recoveryPolicy", what);
            boolean autoRecover = bool(rp == null ? null : rp.get("autoRecover"), "spec.driver.recoveryPolicy.autoRecover", what);
            Integer maxReboots = null;
            Object mr = rp == null ? null : rp.get("maxReboots");
            if (mr != null) {
                if (!(mr instanceof Integer || mr instanceof Long || mr instanceof Short)
                        || ((Number) mr).longValue() < 0 || ((Number) mr).longValue() > 1000) {
                    throw new Bad(what, "spec.driver.recoveryPolicy.maxReboots", "an integer from 0 to 1000", mr);
                }
                maxReboots = ((Number) mr).intValue();
            }
            Duration window = null;
            Object w = rp == null ? null : rp.get("window");
            if (w != null) {
                window = duration(w, what);
            }
            Map<?, ?> rd = map(rp == null ? null : rp.get("drain"), "spec.driver.recoveryPolicy.drain", what);
            Object re = rd == null ? null : rd.get("enable");
            boolean recoveryDrain = re == null || bool(re, "spec.driver.recoveryPolicy.drain.enable", what);
            return new NodePolicy(true, version, autoUpgrade, autoRecover, maxReboots, window, null, resourceVersion,
                    recoveryDrain);
        } catch (Bad e) {
            return NodePolicy.unknown(e.getMessage());
        }
    }

    /**
     * @param text a duration such as {@code 24h}, {@code 1h30m}, {@code 45m}, {@code 90s}
     * @return it, or {@code null} if it is not one (or zero)
     */
    public static Duration parseDuration(String text) {
        if (text == null) {
            return null;
        }
        Matcher m = DURATION.matcher(text.trim());
        if (text.isBlank() || !m.matches()) {
            return null;
        }
        long seconds = 0;
        if (m.group(1) != null) {
            seconds += Long.parseLong(m.group(1)) * 3600;
        }
        if (m.group(2) != null) {
            seconds += Long.parseLong(m.group(2)) * 60;
        }
        if (m.group(3) != null) {
            seconds += Long.parseLong(m.group(3));
        }
        return seconds == 0 ? null : Duration.ofSeconds(seconds);
    }

    private static Duration duration(Object w, String what) throws Bad {
        Duration d = w instanceof String s ? parseDuration(s) : null;
        if (d == null) {
            throw new Bad(what, "spec.driver.recoveryPolicy.window", "a positive duration like 24h, 1h30m or 90s", w);
        }
        return d;
    }

    private static Map<?, ?> map(Object o, String field, String what) throws Bad {
        if (o == null) {
            return null;
        }
        if (!(o instanceof Map<?, ?> m)) {
            throw new Bad(what, field, "an object", o);
        }
        return m;
    }

    private static boolean bool(Object o, String field, String what) throws Bad {
        if (o == null) {
            return false;
        }
        if (!(o instanceof Boolean b)) {
            throw new Bad(what, field, "a boolean (true or false, not a string)", o);
        }
        return b;
    }

    private static final class Bad extends Exception {
        private static final long serialVersionUID = 1L;

        Bad(String what, String field, String expected, Object got) {
            super("NPUOperatorCtl " + what + ": " + field + " must be " + expected + ", got "
                    + (got instanceof String ? "'" + got + "'" : got + " (" + got.getClass().getSimpleName() + ")")
                    + ": the policy is unknown and authorises no automatic reboot");
        }
    }
}
