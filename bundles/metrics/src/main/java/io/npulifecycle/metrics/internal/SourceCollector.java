package io.npulifecycle.metrics.internal;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import io.npulifecycle.api.metrics.MetricSource;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The families of every {@link MetricSource} service (counters and histograms the owning bundles keep), read at each
 * scrape. A source that throws, or a family that breaks the naming rules, is left out of that scrape (logged once
 * per name) instead of failing the whole scrape; a family name offered twice is kept once (the first source).
 */
final class SourceCollector implements MultiCollector {

    private static final System.Logger LOG = System.getLogger(SourceCollector.class.getName());

    private final Supplier<Collection<MetricSource>> sources;
    private final LabelCache labels = new LabelCache();
    /** The families of the last scrape and their snapshots, by name: an unchanged family is not built again. */
    private volatile Map<String, Built> last = Map.of();

    private record Built(MetricSource.Family family, MetricSnapshot snapshot) {
    }
    private final Set<String> reported = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** @param sources the current sources (the DS component's dynamic reference) */
    SourceCollector(Supplier<Collection<MetricSource>> sources) {
        this.sources = sources;
    }

    @Override
    public MetricSnapshots collect() {
        List<MetricSnapshot> out = Families.list();
        Set<String> names = new HashSet<>();
        Map<String, Built> previous = last;
        Map<String, Built> now = new HashMap<>();
        for (MetricSource s : sources.get()) {
            List<MetricSource.Family> fs;
            try {
                fs = s.families();
            } catch (RuntimeException e) {
                report(s.getClass().getName(), "failed: " + e);
                continue;
            }
            for (MetricSource.Family f : fs) {
                if (!names.add(f.name())) {
                    report(f.name(), "offered by more than one source; the first is kept");
                    continue;
                }
                try {
                    Built b = previous.get(f.name());
                    if (b == null || !b.family().equals(f)) {
                        b = new Built(f, Families.of(f, labels));
                    }
                    now.put(f.name(), b);
                    out.add(b.snapshot());
                } catch (RuntimeException e) {
                    report(f.name(), "is not a valid metric family: " + e.getMessage());
                }
            }
        }
        labels.endScrape();
        last = now;
        return new MetricSnapshots(out);
    }

    private void report(String what, String problem) {
        if (reported.add(what + problem)) {
            LOG.log(System.Logger.Level.WARNING, "metric source " + what + " " + problem + "; left out of /metrics");
        }
    }
}
