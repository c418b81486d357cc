package io.npulifecycle.upgrade.internal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.npulifecycle.api.metrics.MetricSource;
import io.npulifecycle.api.upgrade.model.NodeIssue;

/** The control plane's transition counting: results, per-state durations, leader only, drain blocked. */
class UpgradeMeasurementsTest {

    static final long S = 1_000_000_000L;

    static MetricSource.Family family(UpgradeMeasurements m, String name) {
        return m.families().stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow();
    }

    static double value(MetricSource.Family f, String... labels) {
        return f.series().stream().filter(s -> s.labelValues().equals(List.of(labels))).findFirst()
                .map(MetricSource.Series::value).orElse(Double.NaN);
    }

    @Test
    void aNodeThroughItsStatesCountsOneSuccessAndTheTimeInEachState() {
        UpgradeMeasurements m = new UpgradeMeasurements();
        m.observe(Map.of("n1", "upgrade-required"), List.of(), true, 0);
        m.observe(Map.of("n1", "rebooting"), List.of(), true, 30 * S);
        m.observe(Map.of("n1", "rebooting"), List.of(), true, 40 * S);
        m.observe(Map.of("n1", "upgraded"), List.of(), true, 130 * S);
        MetricSource.Family results = family(m, "npu_lifecycle_upgrades_total");
        assertEquals(1.0, value(results, "succeeded"));
        assertEquals(0.0, value(results, "failed"));
        MetricSource.Family d = family(m, "npu_lifecycle_upgrade_state_duration_seconds");
        assertEquals(30.0, value(d, "upgrade-required"), 1e-9);
        assertEquals(100.0, value(d, "rebooting"), 1e-9);
    }

    @Test
    void aFollowerCountsNothingAndAFailureIsCounted() {
        UpgradeMeasurements m = new UpgradeMeasurements();
        m.observe(Map.of("n1", "validation-required"), List.of(), false, 0);
        m.observe(Map.of("n1", "upgrade-failed"), List.of(), false, 10 * S);
        assertEquals(0.0, value(family(m, "npu_lifecycle_upgrades_total"), "failed"));
        m.observe(Map.of("n1", "validation-required"), List.of(), true, 20 * S);
        m.observe(Map.of("n1", "upgrade-failed"), List.of(), true, 50 * S);
        assertEquals(1.0, value(family(m, "npu_lifecycle_upgrades_total"), "failed"));
    }

    @Test
    void drainBlockedIsOneWhilePodsAreLeft() {
        UpgradeMeasurements m = new UpgradeMeasurements();
        m.observe(Map.of(), List.of(new NodeIssue("a", "pods left: default/web-0"), new NodeIssue("b", "cordoning")),
                true, 0);
        MetricSource.Family f = family(m, "npu_lifecycle_drain_blocked");
        assertEquals(1.0, value(f, "a"));
        assertEquals(0.0, value(f, "b"));
        m.observe(Map.of(), List.of(), true, S);
        assertEquals(List.of(), family(m, "npu_lifecycle_drain_blocked").series());
    }
}
