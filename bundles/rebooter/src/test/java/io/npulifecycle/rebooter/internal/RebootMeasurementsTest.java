package io.npulifecycle.rebooter.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.npulifecycle.api.metrics.MetricSource;
import io.npulifecycle.clock.testing.ManualTimeSource;
import io.npulifecycle.markers.internal.FileMarkerStore;

/** {@code npu_lifecycle_reboots_total{reason,via}}: every known series exists at 0 before the first reboot. */
class RebootMeasurementsTest {

    @Test
    void everyReasonAndViaStartsAtZero(@TempDir Path dir) {
        ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-12-05T00:00:00Z"));
        FileMarkerStore markers = new FileMarkerStore(dir.resolve("run"), "boot-1", time::now, null);
        RebootEngine engine = new RebootEngine(markers, () -> null, () -> null, () -> null, () -> null, time,
                RebootEngine.Settings.builder().stateDir(dir.resolve("state")).flushTimeoutMillis(300).build());
        MetricSource.Family reboots = new RebootMeasurements(engine).families().stream()
                .filter(f -> f.name().equals("npu_lifecycle_reboots_total")).findFirst().orElseThrow();
        Map<List<String>, Double> series = new TreeMap<>(java.util.Comparator.comparing(Object::toString));
        reboots.series().forEach(s -> series.put(s.labelValues(), s.value()));
        assertEquals(Map.of(List.of("recovery", "policy"), 0.0, List.of("recovery", "approval"), 0.0,
                List.of("upgrade", "policy"), 0.0, List.of("upgrade", "approval"), 0.0), Map.copyOf(series));
    }
}
