package io.npulifecycle.api.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A labelled histogram of durations in seconds, kept by the bundle that owns the fact (thread-safe), with fixed
 * bucket upper bounds. Like {@link Counts}, it survives a hot update of the metrics bundle and starts empty in a new
 * process.
 */
public final class Durations {

    /** Buckets for work of milliseconds to seconds (a probe, a reconcile): 5 ms to 30 s. */
    public static final List<Double> SHORT = List.of(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            30.0);
    /** Buckets for states of a node upgrade: 10 s to 24 h. */
    public static final List<Double> LONG = List.of(10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0,
            21600.0, 86400.0);

    private final String name;
    private final String help;
    private final List<String> labelNames;
    private final List<Double> bounds;
    private final Map<List<String>, long[]> counts = new ConcurrentSkipListMap<>(Counts::compare);
    private final Map<List<String>, double[]> sums = new ConcurrentSkipListMap<>(Counts::compare);

    /**
     * @param name metric name ending in {@code _seconds}
     * @param help help text
     * @param bounds bucket upper bounds in seconds, ascending (e.g. {@link #SHORT})
     * @param labelNames label names
     * @throws IllegalArgumentException if {@code name} does not end in {@code _seconds}
     */
    public Durations(String name, String help, List<Double> bounds, String... labelNames) {
        if (!name.endsWith("_seconds")) {
            throw new IllegalArgumentException("histogram name '" + name + "' does not end in _seconds");
        }
        this.name = name;
        this.help = help;
        this.bounds = List.copyOf(bounds);
        this.labelNames = List.of(labelNames);
    }

    /**
     * Records one observation; a negative duration counts as 0.
     *
     * @param d the duration
     * @param labelValues one value per label name
     * @throws IllegalArgumentException if the number of values differs from the number of label names
     */
    public synchronized void observe(Duration d, String... labelValues) {
        if (labelValues.length != labelNames.size()) {
            throw new IllegalArgumentException(name + ": " + labelValues.length + " label values for labels "
                    + labelNames);
        }
        double s = Math.max(0, d.toNanos() / 1e9);
        List<String> k = List.of(labelValues);
        long[] c = counts.computeIfAbsent(k, x -> new long[bounds.size() + 1]);
        int i = 0;
        while (i < bounds.size() && s > bounds.get(i)) {
            i++;
        }
        c[i]++;
        sums.computeIfAbsent(k, x -> new double[1])[0] += s;
    }

    /** @return the family now: cumulative buckets per label values seen */
    public synchronized MetricSource.Family family() {
        List<MetricSource.Series> out = new ArrayList<>();
        counts.forEach((k, c) -> {
            List<Long> cumulative = new ArrayList<>();
            long run = 0;
            for (long n : c) {
                run += n;
                cumulative.add(run);
            }
            out.add(new MetricSource.Series(k, sums.get(k)[0], bounds, cumulative));
        });
        return new MetricSource.Family(name, MetricSource.Type.HISTOGRAM, help, labelNames, out);
    }
}
