package io.npulifecycle.upgrade.internal.cluster;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.npulifecycle.api.metrics.Counts;
import io.npulifecycle.api.metrics.Durations;
import io.npulifecycle.api.metrics.MetricSource;
import io.npulifecycle.api.upgrade.model.NodeIssue;

/**
 * The control plane's counters, histograms and drain gauges for {@code /metrics} (docs/metrics.md), fed by the
 * controller after each reconcile; kept by the orchestrator component, so a restart of the controller (a
 * configuration change) or a hot update of the metrics bundle keeps them. Transitions are counted only while this
 * replica leads, so the replicas' sums count each node once.
 *
 * <p>A node's time in a state is measured from the reconcile that first saw it in that state (on the monotonic
 * clock) to the one that sees it leave; a state this replica did not see begin (it became leader meanwhile) is not
 * observed.
 */
public final class UpgradeMeasurements implements MetricSource {

    private final Counts upgrades = new Counts("npu_lifecycle_upgrades_total",
            "node upgrades finished, by result: succeeded (validated at the target) or failed (upgrade-failed)",
            "result");
    private final Durations stateDurations = new Durations("npu_lifecycle_upgrade_state_duration_seconds",
            "time a node spent in one upgrade state, seconds, observed when it leaves the state", Durations.LONG,
            "state");
    private final Durations reconcileDurations = new Durations("npu_lifecycle_reconcile_duration_seconds",
            "how long one reconcile of the NPUOperatorCtl took (plan and writes), seconds", Durations.SHORT);
    private final Map<String, Seen> seen = new HashMap<>();
    private volatile Map<String, Boolean> drainBlocked = Map.of();

    private record Seen(String state, long sinceNanos) {
    }

    /** Every counter at zero (both upgrade outcomes listed from the start), no node seen yet. */
    public UpgradeMeasurements() {
        upgrades.touch("succeeded");
        upgrades.touch("failed");
    }

    /** @param d how long a reconcile took */
    void reconciled(Duration d) {
        reconcileDurations.observe(d);
    }

    /**
     * Counts the transitions between the last reconcile and this one.
     *
     * @param nodeStates per node: its upgrade state label, or {@code upgraded}, {@code pending}, ... (the plan's)
     * @param draining the status' draining nodes (cordoning, or pods left)
     * @param leader whether this replica leads now
     * @param monoNanos the monotonic clock now
     */
    synchronized void observe(Map<String, String> nodeStates, List<NodeIssue> draining, boolean leader,
            long monoNanos) {
        Map<String, Boolean> blocked = new TreeMap<>();
        for (NodeIssue i : draining) {
            if (i.getReason() != null && i.getReason().startsWith("pods left")) {
                blocked.put(i.getName(), true);
            } else {
                blocked.put(i.getName(), false);
            }
        }
        drainBlocked = blocked;
        if (!leader) {
            seen.clear();
            return;
        }
        for (Map.Entry<String, String> e : nodeStates.entrySet()) {
            String now = e.getValue() == null ? "" : e.getValue();
            Seen before = seen.get(e.getKey());
            if (before != null && before.state().equals(now)) {
                continue;
            }
            if (before != null && UpgradeState.of(before.state()) != null) {
                stateDurations.observe(Duration.ofNanos(monoNanos - before.sinceNanos()), before.state());
                if ("upgraded".equals(now)) {
                    upgrades.increment("succeeded");
                } else if (UpgradeState.UPGRADE_FAILED.label().equals(now)) {
                    upgrades.increment("failed");
                }
            }
            seen.put(e.getKey(), new Seen(now, monoNanos));
        }
        seen.keySet().retainAll(nodeStates.keySet());
    }

    @Override
    public List<Family> families() {
        List<Series> blocked = new ArrayList<>();
        drainBlocked.forEach((n, b) -> blocked.add(Series.of(List.of(n), b ? 1 : 0)));
        return List.of(upgrades.family(), stateDurations.family(), reconcileDurations.family(),
                new Family("npu_lifecycle_drain_blocked", Type.GAUGE,
                        "per node being drained for its upgrade: 1 while pods are left on it (evictions pending or "
                                + "refused, e.g. by a PodDisruptionBudget), 0 while it is only being cordoned or "
                                + "has none left",
                        List.of("node"), blocked));
    }
}
