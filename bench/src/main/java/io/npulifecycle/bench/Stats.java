package io.npulifecycle.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Medians and percentiles of measurements (nearest rank). */
final class Stats {

    private Stats() {
    }

    /** @return the median of {@code values} (the mean of the two middle values for an even count), NaN if empty */
    static double median(List<? extends Number> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> v = sorted(values);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    /** @return the nearest-rank percentile {@code p} (0..100) of {@code values}, NaN if empty */
    static double percentile(List<? extends Number> values, double p) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> v = sorted(values);
        int rank = (int) Math.ceil(p / 100.0 * v.size());
        return v.get(Math.max(0, Math.min(v.size() - 1, rank - 1)));
    }

    private static List<Double> sorted(List<? extends Number> values) {
        List<Double> v = new ArrayList<>();
        for (Number x : values) {
            v.add(x.doubleValue());
        }
        Collections.sort(v);
        return v;
    }
}
