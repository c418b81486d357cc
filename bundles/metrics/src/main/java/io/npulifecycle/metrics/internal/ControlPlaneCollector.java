package io.npulifecycle.metrics.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.npulifecycle.api.upgrade.UpgradeOrchestratorMXBean;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The control plane's gauges, read at each scrape from the object behind the MBean
 * {@value UpgradeOrchestratorMXBean#OBJECT_NAME} ({@link MBeans}):
 * nodes per upgrade state ({@code NodeStates}: a node without an upgrade state counts as {@code done}), the rollout's
 * target, pause and whether this replica leads. Every state has a series (0 included), so a PromQL expression over
 * one state never sees it vanish.
 */
final class ControlPlaneCollector implements MultiCollector {

    /** The values of the node label {@code npu.openfuyao.com/driver-upgrade-state} (docs/upgrade.md), then done. */
    static final List<String> STATES = List.of("upgrade-required", "cordon-required", "drain-required",
            "pod-restart-required", "reboot-required", "reboot-deferred", "rebooting", "validation-required",
            "upgrade-failed", "done");
    /** The states of a drain: the node's cordon and its evictions. */
    static final List<String> DRAINING = List.of("cordon-required", "drain-required");

    private final MBeans mbeans;
    private final LabelCache labels = new LabelCache();

    /** @param mbeans the MBean reader */
    ControlPlaneCollector(MBeans mbeans) {
        this.mbeans = mbeans;
    }

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> out = Families.list();
        Families.Gauge nodes = Families.gauge(labels, "npu_lifecycle_nodes",
                "NPU nodes per upgrade state (the driver-upgrade-state label; done: no upgrade state)", "state");
        Families.Gauge draining = Families.gauge(labels, "npu_lifecycle_nodes_draining",
                "NPU nodes being cordoned or drained for their upgrade (cordon-required, drain-required)");
        Families.Gauge paused = Families.gauge(labels, "npu_lifecycle_rollout_paused", "1 while the rollout is paused");
        Families.Gauge leader = Families.gauge(labels, "npu_lifecycle_leader",
                "1 when this control-plane replica holds the leader Lease");
        UpgradeOrchestratorMXBean u = mbeans.get(UpgradeOrchestratorMXBean.OBJECT_NAME, UpgradeOrchestratorMXBean.class);
        try {
            if (u != null) {
                Map<String, Integer> counts = new LinkedHashMap<>();
                STATES.forEach(s -> counts.put(s, 0));
                for (String s : u.getNodeStates().values()) {
                    counts.merge(counts.containsKey(s) && !"done".equals(s) ? s : "done", 1, Integer::sum);
                }
                counts.forEach((s, n) -> nodes.add(n, s));
                draining.add(DRAINING.stream().mapToInt(counts::get).sum());
                paused.add(u.isPaused() ? 1 : 0);
                leader.add(u.isLeader() ? 1 : 0);
                String target = u.getTargetVersion();
                out.add(Families.info(labels, "npu_lifecycle_rollout_info", "the rollout's target driver version",
                        List.of("target"), List.of(target == null ? "" : target)));
            }
        } catch (RuntimeException failed) {
            // a getter that fails leaves its series out of this scrape, not the scrape
        }
        out.add(nodes.build());
        out.add(draining.build());
        out.add(paused.build());
        out.add(leader.build());
        labels.endScrape();
        return new MetricSnapshots(out);
    }
}
