package io.npulifecycle.api.upgrade.spec;

import java.math.BigInteger;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The grammars and bounds of the {@code NPUOperatorCtl} spec's strings, one of each, the same as the CRD's schema
 * ({@code charts/npu-lifecycle/crds/crd-npuoperatorctl.yaml}: its patterns, lengths and CEL rules), used by
 * {@link SpecReader} (the control plane and the node agent) and the scenario harness. The table test
 * {@code manifests SpecCorpusTest} sends a corpus of values to the real API server ({@code --dry-run=server}) and to
 * the reader and fails on any disagreement.
 */
public final class SpecGrammar {

    /** A driver version: {@code 25.5.0}, {@code 24.1.rc3}, {@code 23.0.3.1} (the CRD's pattern). */
    public static final Pattern VERSION = Pattern.compile("^[0-9]+\\.[0-9]+\\.([rR][cC])?[0-9]+(\\.[0-9]+)*$");
    /** The longest driver version, in characters (the CRD's {@code maxLength}). */
    public static final int VERSION_MAX_LENGTH = 32;
    /** A registry: host[:port][/path], no scheme (the CRD's pattern). */
    public static final Pattern REGISTRY =
            Pattern.compile("^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9._-]+)*$");
    /** The longest registry, in characters (the CRD's {@code maxLength}). */
    public static final int REGISTRY_MAX_LENGTH = 253;
    /**
     * A duration as Go writes one, in whole hours, minutes and seconds, in any order, each unit any number of times,
     * summed: {@code 24h}, {@code 1h30m}, {@code 30m1h} (90 minutes), {@code 600s} (the CRD's pattern).
     */
    public static final Pattern DURATION = Pattern.compile("^([0-9]+(s|m|h))+$");
    private static final Pattern DURATION_PART = Pattern.compile("([0-9]+)(s|m|h)");
    /** The longest duration, in characters (the CRD's {@code maxLength}). */
    public static final int DURATION_MAX_LENGTH = 32;
    /** The longest duration: a year (the CRD's CEL rule {@code duration(self) <= duration('8760h')}). */
    public static final Duration DURATION_MAX = Duration.ofHours(8760);

    /** The longest label selector ({@code podSelector}, {@code blockingPodSelector}), in characters. */
    public static final int SELECTOR_MAX_LENGTH = 1024;
    /**
     * A maintenance window's time zone: an IANA name of the time zone database, e.g. {@code Europe/Berlin},
     * {@code Asia/Shanghai}, {@code UTC} (the CRD's pattern; its CEL rule asks Go's time zone database, the reader
     * Java's, {@link java.time.ZoneId#getAvailableZoneIds()}: no offsets such as {@code +08:00}, no {@code Local}).
     */
    public static final Pattern TIME_ZONE = Pattern.compile("^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$");
    /** The longest time zone name, in characters. */
    public static final int TIME_ZONE_MAX_LENGTH = 64;

    /** What a driver version looks like, for messages. */
    public static final String VERSION_EXPECTED = "digits like 25.5.0 or 24.1.rc3, at most " + VERSION_MAX_LENGTH
            + " characters";
    /** What a duration looks like, for messages. */
    public static final String DURATION_EXPECTED = "a duration above zero and at most 8760h, like 24h, 90m, 1h30m or "
            + "600s, at most " + DURATION_MAX_LENGTH + " characters";

    private SpecGrammar() {
    }

    /** @return whether {@code v} is a driver version (a string of {@link #VERSION}, at most 32 characters) */
    public static boolean isVersion(Object v) {
        return v instanceof String s && s.length() <= VERSION_MAX_LENGTH && VERSION.matcher(s).matches();
    }

    /** @return whether {@code v} is a registry (a string of {@link #REGISTRY}, at most 253 characters) */
    public static boolean isRegistry(Object v) {
        return v instanceof String s && s.length() <= REGISTRY_MAX_LENGTH && REGISTRY.matcher(s).matches();
    }

    /** @return the time zone {@code v} names, or null when it is not one ({@link #TIME_ZONE}, at most 64 characters) */
    public static java.time.ZoneId timeZone(Object v) {
        if (!(v instanceof String s) || s.length() > TIME_ZONE_MAX_LENGTH || !TIME_ZONE.matcher(s).matches()
                || !java.time.ZoneId.getAvailableZoneIds().contains(s)) {
            return null;
        }
        return java.time.ZoneId.of(s);
    }

    /**
     * @param v a value of the spec
     * @return the duration it writes (seconds, summed over its parts), or null when it is not one: not a string of
     *         {@link #DURATION}, longer than {@value #DURATION_MAX_LENGTH} characters, zero, or above
     *         {@link #DURATION_MAX}
     */
    public static Duration duration(Object v) {
        if (!(v instanceof String s) || s.length() > DURATION_MAX_LENGTH || !DURATION.matcher(s).matches()) {
            return null;
        }
        BigInteger seconds = BigInteger.ZERO;
        Matcher m = DURATION_PART.matcher(s);
        while (m.find()) {
            long unit = switch (m.group(2)) {
                case "h" -> 3600;
                case "m" -> 60;
                default -> 1;
            };
            seconds = seconds.add(new BigInteger(m.group(1)).multiply(BigInteger.valueOf(unit)));
        }
        if (seconds.signum() == 0 || seconds.compareTo(BigInteger.valueOf(DURATION_MAX.toSeconds())) > 0) {
            return null;
        }
        return Duration.ofSeconds(seconds.longValueExact());
    }
}
