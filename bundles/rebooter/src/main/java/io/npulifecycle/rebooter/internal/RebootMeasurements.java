package io.npulifecycle.rebooter.internal;

import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.metrics.MetricSource;

/**
 * The rebooter's facts for {@code /metrics} (docs/metrics.md): {@code npu_lifecycle_reboots_total{reason,via}} counted
 * from the persisted reboot history (so it survives a hot update of any bundle and a runtime restart; it follows the
 * history, which keeps the last {@value RebooterState#MAX_HISTORY} entries), and
 * {@code npu_lifecycle_reboot_required{reason}} from the reboot-required marker of this boot.
 */
final class RebootMeasurements implements MetricSource {

    /** The reasons of a reboot-required marker. */
    static final List<String> REASONS = List.of("recovery", "upgrade");
    /** The authorisations of a reboot (label {@code via}): a policy (autoRecover, autoUpgrade) or an approval. */
    static final List<String> VIAS = List.of("policy", "approval");

    private final RebootEngine engine;

    /** @param engine the engine whose state is read */
    RebootMeasurements(RebootEngine engine) {
        this.engine = engine;
    }

    @Override
    public List<Family> families() {
        // every known (reason, via) series from the start, at 0 until its first reboot (Prometheus' instrumentation
        // guidance: a series that appears only with its first event has no rate() before it, and alerts on it miss it)
        java.util.Map<List<String>, Long> called = new java.util.TreeMap<>(java.util.Comparator.comparing(Object::toString));
        for (String r : REASONS) {
            for (String v : VIAS) {
                called.put(List.of(r, v), 0L);
            }
        }
        engine.rebootsCalled().forEach((k, n) -> called.merge(k, n, Long::sum));
        List<Series> reboots = new ArrayList<>();
        called.forEach((k, n) -> reboots.add(Series.of(k, n)));
        String pending = engine.pendingReason();
        List<Series> required = new ArrayList<>();
        for (String r : REASONS) {
            required.add(Series.of(List.of(r), r.equals(pending) ? 1 : 0));
        }
        return List.of(
                new Family("npu_lifecycle_reboots_total", Type.COUNTER,
                        "reboots called by the node agent, by reason (recovery, upgrade) and authorisation (via: "
                                + "policy, approval), from the persisted reboot history",
                        List.of("reason", "via"), reboots),
                new Family("npu_lifecycle_reboot_required", Type.GAUGE,
                        "1 while the reboot-required marker of this boot has this reason", List.of("reason"),
                        required));
    }
}
