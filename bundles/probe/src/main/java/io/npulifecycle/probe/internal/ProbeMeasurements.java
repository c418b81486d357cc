package io.npulifecycle.probe.internal;

import java.time.Duration;
import java.util.List;

import io.npulifecycle.api.metrics.Counts;
import io.npulifecycle.api.metrics.Durations;
import io.npulifecycle.api.metrics.MetricSource;

/**
 * The health-watch's counters and probe durations for {@code /metrics} (docs/metrics.md), counted by the engine as
 * it acts; kept as long as the health-watch component, so a hot update of the metrics bundle keeps them.
 */
final class ProbeMeasurements implements MetricSource {

    private final Counts wedges = new Counts("npu_lifecycle_wedges_total",
            "wedges declared: a chip reached failureThreshold consecutive strikes and reboot-required reason=recovery "
                    + "was written (one per wedge, however many chips)");
    private final Counts suppressed = new Counts("npu_lifecycle_suppressed_total",
            "wedges suppressed: every wedged chip answered healthy again before the reboot, markers restored");
    private final Counts probeErrors = new Counts("npu_lifecycle_probe_errors_total",
            "probe runs that could not judge the chips (no strike), by probe: npu-smi or dcmi", "kind");
    private final Durations probeDuration = new Durations("npu_lifecycle_probe_duration_seconds",
            "how long one probe run took (npu-smi or DCMI), seconds", Durations.SHORT);

    ProbeMeasurements() {
        wedges.touch();
        suppressed.touch();
        // the known label values at 0 before the first probe error (Prometheus' instrumentation guidance)
        for (String kind : PROBE_KINDS) {
            probeErrors.touch(kind);
        }
    }

    /** The values of {@code kind} of {@code npu_lifecycle_probe_errors_total}: the probe methods. */
    static final List<String> PROBE_KINDS = List.of("npu-smi", "dcmi");

    /** A wedge was declared. */
    void wedge() {
        wedges.increment();
    }

    /** A wedge was suppressed. */
    void suppressed() {
        suppressed.increment();
    }

    /** @param method the probe that erred */
    void probeError(String method) {
        probeErrors.increment(method);
    }

    /** @param ms how long a probe run took, milliseconds */
    void probed(long ms) {
        probeDuration.observe(Duration.ofMillis(Math.max(0, ms)));
    }

    @Override
    public List<Family> families() {
        return List.of(wedges.family(), suppressed.family(), probeErrors.family(), probeDuration.family());
    }
}
