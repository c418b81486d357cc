package io.npulifecycle.api.probe;

/**
 * OSGi EventAdmin topics and properties posted by the health-watch, in addition to the marker store's
 * {@code io/npulifecycle/markers/CHANGED}.
 */
public final class HealthWatchEvents {

    /** A chip reached {@code failureThreshold} consecutive strikes: driver-ready removed, recovery marker written. */
    public static final String TOPIC_WEDGED = "io/npulifecycle/probe/WEDGED";
    /** Every wedged chip answered healthy again before a reboot: recovery marker removed (false-positive suppression). */
    public static final String TOPIC_SUPPRESSED = "io/npulifecycle/probe/SUPPRESSED";
    /** The probe-degraded condition was raised or cleared (property {@value #PROP_PROBE_DEGRADED}). */
    public static final String TOPIC_PROBE_DEGRADED = "io/npulifecycle/probe/PROBE_DEGRADED";

    /** Event property: wedged chips, {@code npu:chip} comma-separated (String). */
    public static final String PROP_CHIPS = "chips";
    /** Event property: whether driver-ready was restored on suppression (Boolean). */
    public static final String PROP_DRIVER_READY_RESTORED = "driverReadyRestored";
    /** Event property: whether the probe-degraded condition holds (Boolean). */
    public static final String PROP_PROBE_DEGRADED = "probeDegraded";
    /** Event property: the last error message (String, may be absent). */
    public static final String PROP_ERROR = "error";

    private HealthWatchEvents() {
    }
}
