package io.npulifecycle.bench;

import java.util.Locale;

/** Number formats of {@code docs/benchmarks.md} (locale-independent). */
final class Fmt {

    private Fmt() {
    }

    /** @return {@code v} rounded to an integer, with thousands separators ({@code 1,234}) */
    static String f0(double v) {
        return String.format(Locale.ROOT, "%,.0f", v);
    }

    /** @return {@code v} with one decimal */
    static String f1(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    /** @return {@code v} with two decimals */
    static String f2(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
