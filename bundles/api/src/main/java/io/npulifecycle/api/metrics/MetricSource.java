package io.npulifecycle.api.metrics;

import java.util.List;

/**
 * OSGi service: metric families a bundle keeps, read by the metrics bundle at every scrape (so calls come from the
 * scrape thread, concurrently with the owner's updates; implementations answer from memory, quickly, never from the
 * network). The metrics bundle does not depend on a source: one that is missing is simply not in the scrape, and a
 * source never depends on the metrics bundle.
 */
public interface MetricSource {

    /**
     * @return the families, each a snapshot taken now; a family with no series yet is still listed (its
     *         {@code # HELP} and {@code # TYPE} then appear with no sample)
     */
    List<Family> families();

    /** Metric type, as in the Prometheus data model. */
    enum Type {
        /** only goes up while the process lives (name ends in {@code _total}) */
        COUNTER,
        /** a value that goes up and down */
        GAUGE,
        /** observations counted in buckets (seconds), with their sum and count */
        HISTOGRAM
    }

    /**
     * One metric family.
     *
     * @param name the metric name, e.g. {@code npu_lifecycle_wedges_total} (for a counter with {@code _total})
     * @param type counter, gauge or histogram
     * @param help one line of help text
     * @param labelNames label names, in the order of every series' label values
     * @param series the series (counter and gauge: {@link Series#value()}; histogram: {@link Series#buckets()})
     */
    record Family(String name, Type type, String help, List<String> labelNames, List<Series> series) {
        /** @param labelNames copied @param series copied */
        public Family {
            labelNames = List.copyOf(labelNames);
            series = List.copyOf(series);
        }
    }

    /**
     * One series of a family.
     *
     * @param labelValues label values, in the order of the family's label names (never a user name or a secret)
     * @param value counter or gauge value; for a histogram the sum of the observations, seconds
     * @param upperBounds a histogram's bucket upper bounds in seconds, ascending, without {@code +Inf}; empty
     *        otherwise
     * @param buckets a histogram's cumulative counts, one per upper bound plus the {@code +Inf} bucket (the count
     *        of observations); empty otherwise
     */
    record Series(List<String> labelValues, double value, List<Double> upperBounds, List<Long> buckets) {
        /** copies the lists */
        public Series {
            labelValues = List.copyOf(labelValues);
            upperBounds = List.copyOf(upperBounds);
            buckets = List.copyOf(buckets);
        }

        /**
         * @param labelValues label values
         * @param value the value
         * @return a counter or gauge series
         */
        public static Series of(List<String> labelValues, double value) {
            return new Series(labelValues, value, List.of(), List.of());
        }
    }
}
