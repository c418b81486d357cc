package io.npulifecycle.metrics.internal;

import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.probe.ChipMXBean;
import io.npulifecycle.api.probe.HealthWatchMXBean;
import io.npulifecycle.api.reboot.DriverMXBean;
import io.npulifecycle.api.reboot.RebooterMXBean;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The node agent's gauges, read at each scrape from the objects behind its MBeans ({@link MBeans}): per chip the
 * health state and consecutive failures (every {@code io.npulifecycle:type=Chip,*}, {@code ChipMXBean}), probe
 * degraded (HealthWatch), recovery blocked and approval waiting (the Rebooter's decision), the loaded and desired
 * driver versions (Driver). The Kubernetes connection gauge is {@link KubeCollector}'s. An MBean that is not
 * published leaves its series out.
 */
final class NodeCollector implements MultiCollector {

    /** The values of the {@code state} label of {@code npu_lifecycle_chip_health}, in this order. */
    static final List<String> CHIP_STATES = List.of("healthy", "degraded", "failed", "probe-error", "wedged");

    private final MBeans mbeans;
    private final LabelCache labels = new LabelCache();

    /** @param mbeans the MBean reader */
    NodeCollector(MBeans mbeans) {
        this.mbeans = mbeans;
    }

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> out = Families.list();
        chips(out);
        HealthWatchMXBean hw = mbeans.get(HealthWatchMXBean.OBJECT_NAME, HealthWatchMXBean.class);
        Families.Gauge degraded = Families.gauge(labels, "npu_lifecycle_probe_degraded",
                "1 while probe-degraded is raised: the probe itself keeps failing (npu-smi or DCMI), not the chips");
        try {
            if (hw != null) {
                degraded.add(hw.isProbeDegraded() ? 1 : 0);
            }
        } catch (RuntimeException failed) {
            // a getter that fails leaves its series out of this scrape, not the scrape
        }
        out.add(degraded.build());
        rebooter(out);
        driver(out);
        labels.endScrape();
        return new MetricSnapshots(out);
    }

    /** What the chip series show of one chip; the state is null before its first probe. */
    private record ChipFact(String npu, String chip, String state, int strikes) {
    }

    /** The chip families of the last scrape and the facts they show, reused while the facts are the same. */
    private record Chips(List<ChipFact> facts, MetricSnapshot health, MetricSnapshot failures) {
    }

    private volatile Chips lastChips;

    private void chips(List<MetricSnapshot> out) {
        List<ChipFact> facts = new ArrayList<>();
        for (ChipMXBean c : mbeans.all("Chip", ChipMXBean.class)) {
            try {
                facts.add(new ChipFact(String.valueOf(c.getNpu()), String.valueOf(c.getChip()),
                        c.isWedged() ? "wedged" : c.getClassification(), c.getConsecutiveFailures()));
            } catch (RuntimeException failed) {
                // that chip's series are left out of this scrape
            }
        }
        Chips built = lastChips;
        if (built == null || !built.facts().equals(facts)) {
            built = build(facts);
            lastChips = built;
        }
        out.add(built.health());
        out.add(built.failures());
    }

    private Chips build(List<ChipFact> facts) {
        Families.Gauge health = Families.gauge(labels, "npu_lifecycle_chip_health",
                "1 for the chip's current health state (healthy, degraded, failed, probe-error, wedged), 0 for the "
                        + "others; no series before the chip's first probe",
                "npu", "chip", "state");
        Families.Gauge failures = Families.gauge(labels, "npu_lifecycle_chip_consecutive_failures",
                "consecutive failed probes of the chip (strikes toward a wedge)", "npu", "chip");
        for (ChipFact f : facts) {
            if (f.state() != null) {
                for (String s : CHIP_STATES) {
                    health.add(s.equals(f.state()) ? 1 : 0, f.npu(), f.chip(), s);
                }
            }
            failures.add(f.strikes(), f.npu(), f.chip());
        }
        return new Chips(facts, health.build(), failures.build());
    }

    private void rebooter(List<MetricSnapshot> out) {
        Families.Gauge blocked = Families.gauge(labels, "npu_lifecycle_recovery_blocked",
                "1 while recovery reboots are refused: the reboot limit in the window is reached, a person is needed");
        Families.Gauge waiting = Families.gauge(labels, "npu_lifecycle_approval_waiting",
                "1 while a reboot waits for the approve-reboot annotation");
        RebooterMXBean r = mbeans.get(RebooterMXBean.OBJECT_NAME, RebooterMXBean.class);
        String d = null;
        try {
            d = r == null ? null : r.getDecision();
        } catch (RuntimeException failed) {
            r = null; // its series are left out of this scrape
        }
        if (r != null) {
            blocked.add("RECOVERY_BLOCKED".equals(d) ? 1 : 0);
            waiting.add("WAITING_FOR_APPROVAL".equals(d) ? 1 : 0);
        }
        out.add(blocked.build());
        out.add(waiting.build());
    }

    private void driver(List<MetricSnapshot> out) {
        DriverMXBean d = mbeans.get(DriverMXBean.OBJECT_NAME, DriverMXBean.class);
        try {
            if (d != null) {
                out.add(Families.info(labels, "npu_lifecycle_driver_info",
                        "the driver version loaded in the running kernel and the one the driver pod ships (empty "
                                + "when unknown)",
                        List.of("loaded", "desired"), List.of(orEmpty(d.getLoadedVersion()), orEmpty(d.getPodVersion()))));
            }
        } catch (RuntimeException failed) {
            // its series is left out of this scrape
        }
    }

    static String orEmpty(String s) {
        return s == null ? "" : s;
    }

}
