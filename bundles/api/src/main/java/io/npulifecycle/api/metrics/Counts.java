package io.npulifecycle.api.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A labelled counter kept by the bundle that owns the fact (thread-safe). Lives as long as its owner's component:
 * it survives a hot update of the metrics bundle, and starts at 0 in a new process (where Prometheus expects a
 * counter reset).
 */
public final class Counts {

    private final String name;
    private final String help;
    private final List<String> labelNames;
    private final Map<List<String>, AtomicLong> values = new ConcurrentSkipListMap<>(Counts::compare);

    /**
     * @param name metric name ending in {@code _total}
     * @param help help text
     * @param labelNames label names
     * @throws IllegalArgumentException if {@code name} does not end in {@code _total}
     */
    public Counts(String name, String help, String... labelNames) {
        if (!name.endsWith("_total")) {
            throw new IllegalArgumentException("counter name '" + name + "' does not end in _total");
        }
        this.name = name;
        this.help = help;
        this.labelNames = List.of(labelNames);
    }

    /**
     * Adds one to the series of these label values (created at 0 first).
     *
     * @param labelValues one value per label name
     * @throws IllegalArgumentException if the number of values differs from the number of label names
     */
    public void increment(String... labelValues) {
        series(labelValues).incrementAndGet();
    }

    /**
     * Creates the series at 0 if it does not exist, so a rate is defined before the first event.
     *
     * @param labelValues one value per label name
     */
    public void touch(String... labelValues) {
        series(labelValues);
    }

    /**
     * @param labelValues one value per label name
     * @return the count of that series, 0 when it does not exist
     */
    public long get(String... labelValues) {
        AtomicLong v = values.get(List.of(labelValues));
        return v == null ? 0 : v.get();
    }

    private AtomicLong series(String... labelValues) {
        if (labelValues.length != labelNames.size()) {
            throw new IllegalArgumentException(name + ": " + labelValues.length + " label values for labels "
                    + labelNames);
        }
        return values.computeIfAbsent(List.of(labelValues), k -> new AtomicLong());
    }

    /** @return the family now: one series per label values seen, in label order */
    public MetricSource.Family family() {
        List<MetricSource.Series> out = new ArrayList<>();
        values.forEach((k, v) -> out.add(MetricSource.Series.of(k, v.get())));
        return new MetricSource.Family(name, MetricSource.Type.COUNTER, help, labelNames, out);
    }

    static int compare(List<String> a, List<String> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = a.get(i).compareTo(b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }
}
