package io.npulifecycle.metrics.internal;

import java.util.ArrayList;
import java.util.List;

import io.npulifecycle.api.metrics.MetricSource;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.Unit;

/**
 * Turns facts into the Prometheus client's snapshots; the client's writers produce the text and OpenMetrics formats
 * (and escape label values). Names follow the client's rules: a counter's snapshot name is without {@code _total}
 * (the writers add it), an info metric's without {@code _info}.
 */
final class Families {

    private Families() {
    }

    /**
     * @param cache the collector's labels
     * @param name gauge name
     * @param help help text
     * @param labels label names (an empty list for a gauge without labels)
     * @return a builder of one gauge family
     */
    static Gauge gauge(LabelCache cache, String name, String help, String... labels) {
        return new Gauge(cache, name, help, List.of(labels));
    }

    /** A gauge family being filled. */
    static final class Gauge {
        private final LabelCache cache;
        private final GaugeSnapshot.Builder b;
        private final List<String> labels;

        private Gauge(LabelCache cache, String name, String help, List<String> labels) {
            this.cache = cache;
            this.b = GaugeSnapshot.builder().name(name).help(help);
            this.labels = labels;
        }

        /**
         * @param value the value
         * @param values label values, one per label name
         * @return this
         */
        Gauge add(double value, String... values) {
            b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value)
                    .labels(cache.of(labels, List.of(values))).build());
            return this;
        }

        GaugeSnapshot build() {
            return b.build();
        }
    }

    /**
     * @param cache the collector's labels
     * @param name the info metric's name with {@code _info}, e.g. {@code npu_lifecycle_driver_info}
     * @param help help text
     * @param labelNames label names
     * @param labelValues label values
     * @return the info family with one series (value 1)
     */
    static InfoSnapshot info(LabelCache cache, String name, String help, List<String> labelNames,
            List<String> labelValues) {
        return InfoSnapshot.builder().name(name.substring(0, name.length() - "_info".length())).help(help)
                .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder()
                        .labels(cache.of(labelNames, labelValues)).build())
                .build();
    }

    /**
     * @param f a family from a {@link MetricSource}
     * @param cache the collector's labels
     * @return its snapshot
     * @throws IllegalArgumentException if the family breaks the client's naming rules (named in the message)
     */
    static MetricSnapshot of(MetricSource.Family f, LabelCache cache) {
        switch (f.type()) {
            case COUNTER: {
                String name = f.name().endsWith("_total") ? f.name().substring(0, f.name().length() - 6) : f.name();
                CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(f.help());
                for (MetricSource.Series s : f.series()) {
                    b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(s.value())
                            .labels(cache.of(f.labelNames(), s.labelValues())).build());
                }
                return b.build();
            }
            case GAUGE: {
                GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(f.name()).help(f.help());
                for (MetricSource.Series s : f.series()) {
                    b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(s.value())
                            .labels(cache.of(f.labelNames(), s.labelValues())).build());
                }
                return b.build();
            }
            default: {
                HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(f.name()).help(f.help())
                        .unit(Unit.SECONDS);
                for (MetricSource.Series s : f.series()) {
                    int n = s.upperBounds().size();
                    double[] bounds = new double[n + 1];
                    long[] counts = new long[n + 1];
                    long previous = 0;
                    for (int i = 0; i <= n; i++) {
                        bounds[i] = i < n ? s.upperBounds().get(i) : Double.POSITIVE_INFINITY;
                        long cumulative = s.buckets().get(i);
                        counts[i] = cumulative - previous; // the client takes the count of each bucket alone
                        previous = cumulative;
                    }
                    b.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                            .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, counts)).sum(s.value())
                            .labels(cache.of(f.labelNames(), s.labelValues())).build());
                }
                return b.build();
            }
        }
    }

    /** @return a mutable list for collectors */
    static List<MetricSnapshot> list() {
        return new ArrayList<>();
    }
}
