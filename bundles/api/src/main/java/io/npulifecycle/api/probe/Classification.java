package io.npulifecycle.api.probe;

/**
 * The classification of one chip by one probe. Declared from best to worst: a verdict over several chips is the
 * maximum by {@link #ordinal()}.
 */
public enum Classification {
    /** Health {@code OK} / DCMI health 0. */
    HEALTHY("healthy"),
    /** Health {@code Warning} (DCMI 1, minor alarm), or {@code Alarm}/{@code Critical} unless {@code alarmIsFailure}: visible, no strike. */
    DEGRADED("degraded"),
    /**
     * The driver refuses to enumerate or answer for the chip: a strike toward a wedge (e.g. DCMI -8005/-8008, "Get
     * physical device number failed", an expected chip absent, a probe that timed out when {@code timeoutIsFailure}).
     */
    FAILED("failed"),
    /**
     * The probe itself could not tell (binary missing, exit 126/127, -8020 occupied, -8013, -8012, -8017, -9005,
     * unparsable output, unknown Health value): no strike, never a reboot; counted toward {@code probe-degraded}.
     */
    PROBE_ERROR("probe-error");

    private final String label;

    Classification(String label) {
        this.label = label;
    }

    /** @return the lower-case label used in JSON, MBeans and logs, e.g. {@code probe-error} */
    public String label() {
        return label;
    }

    /**
     * @param other another classification, may be {@code null}
     * @return the worse of the two
     */
    public Classification worst(Classification other) {
        return other == null || ordinal() >= other.ordinal() ? this : other;
    }

    @Override
    public String toString() {
        return label;
    }
}
