package io.npulifecycle.api.upgrade.spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Validates {@code spec} of an NPUOperatorCtl read as an untyped map (so that a malformed resource never breaks the
 * informer) into a {@link Policy}, or into a list of problems, each naming the field and what was expected. The
 * rules are the CRD schema's ({@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml}), checked again because a CRD may
 * be installed without its schema or edited.
 */
public final class SpecReader {

    private static final Pattern PERCENT = Pattern.compile("^([0-9]{1,3})%$");

    /**
     * Result: a policy, or the problems.
     *
     * @param policy the upgrade policy, or null when the spec is invalid
     * @param problems each naming its field
     * @param recovery the control plane's part of {@code recoveryPolicy} (meaningful when valid)
     */
    public record Result(Policy policy, List<String> problems, RecoverySettings recovery) {

        /** A result with the default recovery settings. */
        public Result(Policy policy, List<String> problems) {
            this(policy, problems, RecoverySettings.DEFAULT);
        }

        /** @return whether the spec is valid */
        public boolean valid() {
            return policy != null;
        }
    }

    private SpecReader() {
    }

    /**
     * @param spec the {@code spec} object of the resource (may be null)
     * @return a policy, or problems such as {@code spec.driver.version: '' is not a driver version (expected ...)}
     */
    public static Result parse(Object spec) {
        List<String> p = new ArrayList<>();
        Map<?, ?> driver = map(spec, "spec", p) == null ? null : map(((Map<?, ?>) spec).get("driver"), "spec.driver", p);
        if (driver == null) {
            if (p.isEmpty()) {
                p.add("spec.driver: missing (expected an object with at least version)");
            }
            return new Result(null, p);
        }
        String version = null;
        Object v = driver.get("version");
        if (!SpecGrammar.isVersion(v)) {
            p.add("spec.driver.version: " + show(v) + " is not a driver version (expected "
                    + SpecGrammar.VERSION_EXPECTED + ")");
        } else {
            version = (String) v;
        }
        String registry = Policy.DEFAULT_REGISTRY;
        Object r = driver.get("registry");
        if (r != null) {
            if (!SpecGrammar.isRegistry(r)) {
                p.add("spec.driver.registry: " + show(r) + " is not a registry (expected host[:port][/path] without "
                        + "scheme, at most " + SpecGrammar.REGISTRY_MAX_LENGTH + " characters)");
            } else {
                registry = (String) r;
            }
        }
        boolean auto = false;
        int maxPar = 1;
        int maxUnav = 25;
        boolean pct = true;
        Map<UpgradeState, Duration> deadlines = Policy.defaultDeadlines();
        DrainSettings drain = DrainSettings.DEFAULT;
        UpgradeGates gates = UpgradeGates.DEFAULT;
        Map<?, ?> up = driver.get("upgradePolicy") == null ? null
                : map(driver.get("upgradePolicy"), "spec.driver.upgradePolicy", p);
        if (up != null) {
            auto = bool(up.get("autoUpgrade"), "spec.driver.upgradePolicy.autoUpgrade", false, p);
            maxPar = (int) number(up.get("maxParallelUpgrades"), "spec.driver.upgradePolicy.maxParallelUpgrades", 1, 0,
                    100000, p);
            Count mu = count(up.get("maxUnavailable"), "spec.driver.upgradePolicy.maxUnavailable", p);
            if (mu != null && mu.value() == 0) {
                // the CRD refuses it too (its x-kubernetes-validations rule): the rollout would wait for ever
                p.add("spec.driver.upgradePolicy.maxUnavailable: " + show(up.get("maxUnavailable")) + " lets no NPU "
                        + "node be unavailable, so no node could ever be upgraded: give a count or a percentage of at "
                        + "least 1 (the default is 25%)");
                mu = null;
            }
            if (mu != null) {
                maxUnav = mu.value();
                pct = mu.percent();
            }
            Object dr = up.get("drain");
            if (dr != null) {
                Map<?, ?> dm = map(dr, "spec.driver.upgradePolicy.drain", p);
                if (dm != null) {
                    drain = drain(dm, "spec.driver.upgradePolicy.drain", p);
                }
            }
            gates = gates(up, drain, "spec.driver.upgradePolicy", p);
            Object d = up.get("deadlines");
            if (d != null) {
                Map<?, ?> dm = map(d, "spec.driver.upgradePolicy.deadlines", p);
                if (dm != null) {
                    deadline(dm, "podRestartSeconds", UpgradeState.POD_RESTART_REQUIRED, deadlines, p);
                    deadline(dm, "rebootRequiredSeconds", UpgradeState.REBOOT_REQUIRED, deadlines, p);
                    deadline(dm, "rebootingSeconds", UpgradeState.REBOOTING, deadlines, p);
                    deadline(dm, "validationSeconds", UpgradeState.VALIDATION_REQUIRED, deadlines, p);
                }
            }
        }
        RecoverySettings recovery = RecoverySettings.DEFAULT;
        Object rp = driver.get("recoveryPolicy");
        if (rp != null) {
            Map<?, ?> rm = map(rp, "spec.driver.recoveryPolicy", p);
            if (rm != null) {
                boolean autoRecover = bool(rm.get("autoRecover"), "spec.driver.recoveryPolicy.autoRecover", false, p);
                int maxReboots = (int) number(rm.get("maxReboots"), "spec.driver.recoveryPolicy.maxReboots",
                        RecoverySettings.DEFAULT_MAX_REBOOTS, 0, 1000, p);
                Duration window = RecoverySettings.DEFAULT_WINDOW;
                Object w = rm.get("window");
                if (w != null) {
                    window = SpecGrammar.duration(w);
                    if (window == null) {
                        p.add("spec.driver.recoveryPolicy.window: " + show(w) + " is not a duration (expected "
                                + SpecGrammar.DURATION_EXPECTED + ")");
                    }
                }
                recovery = RecoverySettings.parse(rm, (dm, f) -> drain(dm, f, p), p)
                        .withStormProtection(autoRecover, maxReboots, window);
            }
        }
        unknownFields(spec, driver, p);
        if (!p.isEmpty()) {
            return new Result(null, p);
        }
        deadlines.put(UpgradeState.DRAIN_REQUIRED, drain.timeout());
        return new Result(new Policy(version, registry, auto, maxPar, maxUnav, pct, deadlines, drain, gates), List.of(),
                recovery);
    }

    /**
     * A number of nodes: a count, or a percentage of the NPU nodes.
     *
     * @param value the count, or the percentage (0 to 100)
     * @param percent whether {@code value} is a percentage
     */
    record Count(int value, boolean percent) {
    }

    /**
     * {@code maxUnavailable} (upgrade and recovery): an integer 0 to 100000, a string of digits (a count), or a
     * percentage {@code 0%} to {@code 100%} (the CRD's int-or-string with its pattern).
     *
     * @return the count, or null when absent or refused (a problem naming {@code field} is added)
     */
    static Count count(Object raw, String field, List<String> p) {
        if (raw == null) {
            return null;
        }
        if (raw instanceof String s) {
            var m = PERCENT.matcher(s);
            if (m.matches() && Integer.parseInt(m.group(1)) <= 100) {
                return new Count(Integer.parseInt(m.group(1)), true);
            }
            if (s.matches("^[0-9]{1,6}$")) {
                return new Count(Integer.parseInt(s), false);
            }
            p.add(field + ": " + show(raw) + " is not a count or a percentage (expected e.g. 2 or 25%, 0..100%)");
            return null;
        }
        int before = p.size();
        long n = number(raw, field, 0, 0, 100_000, p);
        return p.size() == before ? new Count((int) n, false) : null;
    }

    /**
     * {@code upgradePolicy.maintenanceWindow} ({@link MaintenanceWindow#parse}), {@code blockingPodSelector} and
     * {@code holdNodesWithNpuWorkloads}; {@code holdNodesWithNpuWorkloads: false} needs the drain (else nothing would
     * evict the NPU workloads before the reboot).
     */
    private static UpgradeGates gates(Map<?, ?> up, DrainSettings drain, String f, List<String> p) {
        MaintenanceWindow window = null;
        if (up.get("maintenanceWindow") != null) {
            window = MaintenanceWindow.parse(up.get("maintenanceWindow"), f + ".maintenanceWindow", p);
        }
        PodSelector blocking = PodSelector.field(up.get("blockingPodSelector"), f + ".blockingPodSelector", false, p,
                null);
        boolean hold = bool(up.get("holdNodesWithNpuWorkloads"), f + ".holdNodesWithNpuWorkloads", true, p);
        if (!hold && !drain.enable()) {
            p.add(f + ".holdNodesWithNpuWorkloads: false needs " + f + ".drain.enable: true (without the drain nothing "
                    + "evicts the NPU workloads before the reboot)");
        }
        return new UpgradeGates(window, blocking, hold);
    }

    /**
     * {@code upgradePolicy.drain} or {@code recoveryPolicy.drain} (at {@code f}): every field checked, each problem
     * naming its field.
     */
    private static DrainSettings drain(Map<?, ?> dm, String f, List<String> p) {
        DrainSettings d = DrainSettings.DEFAULT;
        boolean enable = bool(dm.get("enable"), f + ".enable", d.enable(), p);
        Object scope = dm.get("scope");
        boolean npuOnly = false;
        if (scope != null) {
            if ("npu".equals(scope)) {
                npuOnly = true;
            } else if (!"all".equals(scope)) {
                p.add(f + ".scope: " + show(scope) + " is not a scope (expected all or npu)");
            }
        }
        PodSelector selector = PodSelector.field(dm.get("podSelector"), f + ".podSelector", true, p, PodSelector.ALL);
        long timeout = number(dm.get("timeoutSeconds"), f + ".timeoutSeconds", d.timeout().toSeconds(), 1, 31_536_000L,
                p);
        long grace = number(dm.get("gracePeriodSeconds"), f + ".gracePeriodSeconds", d.gracePeriodSeconds(), -1,
                31_536_000L, p);
        boolean emptyDir = bool(dm.get("deleteEmptyDirData"), f + ".deleteEmptyDirData", d.deleteEmptyDirData(), p);
        boolean force = bool(dm.get("force"), f + ".force", d.force(), p);
        boolean disableEviction = bool(dm.get("disableEviction"), f + ".disableEviction", d.disableEviction(), p);
        Object onTimeout = dm.get("onTimeout");
        boolean reboot = false;
        if (onTimeout != null) {
            if ("reboot".equals(onTimeout)) {
                reboot = true;
            } else if (!"fail".equals(onTimeout)) {
                p.add(f + ".onTimeout: " + show(onTimeout) + " is not an action (expected fail or reboot)");
            }
        }
        return new DrainSettings(enable, npuOnly, selector, Duration.ofSeconds(timeout), grace, emptyDir, force,
                disableEviction, reboot);
    }

    /** The fields of the CRD schema, per object (charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml). */
    private static final Map<String, List<String>> FIELDS = Map.of(
            "spec", List.of("driver"),
            "spec.driver", List.of("version", "registry", "upgradePolicy", "recoveryPolicy"),
            "spec.driver.upgradePolicy", List.of("autoUpgrade", "maxParallelUpgrades", "maxUnavailable", "deadlines",
                    "drain", "maintenanceWindow", "blockingPodSelector", "holdNodesWithNpuWorkloads"),
            "spec.driver.upgradePolicy.maintenanceWindow", MaintenanceWindow.FIELDS,
            "spec.driver.upgradePolicy.drain", List.of("enable", "scope", "podSelector", "timeoutSeconds",
                    "gracePeriodSeconds", "deleteEmptyDirData", "force", "disableEviction", "onTimeout"),
            "spec.driver.upgradePolicy.deadlines", List.of("podRestartSeconds", "rebootRequiredSeconds",
                    "rebootingSeconds", "validationSeconds"),
            "spec.driver.recoveryPolicy", RecoverySettings.FIELDS,
            "spec.driver.recoveryPolicy.maintenanceWindow", RecoverySettings.WINDOW_FIELDS,
            "spec.driver.recoveryPolicy.drain", List.of("enable", "scope", "podSelector", "timeoutSeconds",
                    "gracePeriodSeconds", "deleteEmptyDirData", "force", "disableEviction", "onTimeout"));

    /**
     * A field the schema does not know is a problem, not silently ignored: a misspelt {@code autoUpgrad: true} would
     * otherwise mean the default {@code false} without a word. An API server with the
     * CRD's structural schema prunes unknown fields before the controller sees them; this catches a CRD installed
     * without its schema.
     */
    private static void unknownFields(Object spec, Map<?, ?> driver, List<String> p) {
        check("spec", spec, p);
        check("spec.driver", driver, p);
        Object up = driver.get("upgradePolicy");
        check("spec.driver.upgradePolicy", up, p);
        if (up instanceof Map<?, ?> m) {
            check("spec.driver.upgradePolicy.deadlines", m.get("deadlines"), p);
            check("spec.driver.upgradePolicy.drain", m.get("drain"), p);
            check("spec.driver.upgradePolicy.maintenanceWindow", m.get("maintenanceWindow"), p);
        }
        Object rp = driver.get("recoveryPolicy");
        check("spec.driver.recoveryPolicy", rp, p);
        if (rp instanceof Map<?, ?> m) {
            check("spec.driver.recoveryPolicy.drain", m.get("drain"), p);
            check("spec.driver.recoveryPolicy.maintenanceWindow", m.get("maintenanceWindow"), p);
        }
    }

    private static void check(String path, Object o, List<String> p) {
        if (!(o instanceof Map<?, ?> m)) {
            return;
        }
        List<String> known = FIELDS.get(path);
        for (Object k : m.keySet()) {
            if (!known.contains(String.valueOf(k))) {
                p.add(path + "." + show(k).replace("'", "") + ": unknown field (expected one of " + String.join(", ", known) + ")");
            }
        }
    }

    private static void deadline(Map<?, ?> dm, String key, UpgradeState s, Map<UpgradeState, Duration> out, List<String> p) {
        long secs = number(dm.get(key), "spec.driver.upgradePolicy.deadlines." + key, out.get(s).toSeconds(), 0,
                31_536_000L, p);
        out.put(s, Duration.ofSeconds(secs));
    }

    private static Map<?, ?> map(Object o, String field, List<String> p) {
        if (o instanceof Map<?, ?> m) {
            return m;
        }
        p.add(field + ": " + (o == null ? "missing" : show(o) + " is not an object") + " (expected an object)");
        return null;
    }

    private static boolean bool(Object o, String field, boolean def, List<String> p) {
        if (o == null) {
            return def;
        }
        if (o instanceof Boolean b) {
            return b;
        }
        p.add(field + ": " + show(o) + " is not a boolean (expected true or false)");
        return def;
    }

    private static long number(Object o, String field, long def, long min, long max, List<String> p) {
        if (o == null) {
            return def;
        }
        if (o instanceof Number n && (n instanceof Integer || n instanceof Long || n instanceof Short
                || n.doubleValue() == Math.rint(n.doubleValue()))) {
            long l = n.longValue();
            if (l < min || l > max) {
                p.add(field + ": " + l + " is out of range (expected an integer " + min + ".." + max + ")");
                return def;
            }
            return l;
        }
        p.add(field + ": " + show(o) + " is not an integer (expected an integer " + min + ".." + max + ")");
        return def;
    }

    private static String show(Object o) {
        if (o == null) {
            return "missing";
        }
        String s = o instanceof String ? "'" + o + "'" : String.valueOf(o);
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }
}
