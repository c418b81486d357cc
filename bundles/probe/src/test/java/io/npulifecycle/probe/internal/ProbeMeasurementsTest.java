package io.npulifecycle.probe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.metrics.MetricSource;

/** The health-watch's counters exist at 0 for their known label values before any event. */
class ProbeMeasurementsTest {

    @Test
    void countersStartAtZeroForEveryKnownLabelValue() {
        Map<String, MetricSource.Family> byName = new ProbeMeasurements().families().stream()
                .collect(Collectors.toMap(MetricSource.Family::name, f -> f));
        assertEquals(List.of(List.of()), labels(byName.get("npu_lifecycle_wedges_total")));
        assertEquals(List.of(List.of()), labels(byName.get("npu_lifecycle_suppressed_total")));
        MetricSource.Family errors = byName.get("npu_lifecycle_probe_errors_total");
        assertEquals(List.of(List.of("dcmi"), List.of("npu-smi")), labels(errors));
        errors.series().forEach(s -> assertEquals(0.0, s.value(), s.labelValues().toString()));
    }

    private static List<List<String>> labels(MetricSource.Family f) {
        return f.series().stream().map(MetricSource.Series::labelValues).toList();
    }
}
