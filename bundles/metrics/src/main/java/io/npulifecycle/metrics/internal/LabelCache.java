package io.npulifecycle.metrics.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.prometheus.metrics.model.snapshots.Labels;

/**
 * The client's {@link Labels} of one collector's series, kept from one scrape to the next. The client checks every
 * label name each time it builds a {@code Labels} (with a new UTF-8 encoder per name), which made most of a scrape's
 * allocation and a large part of its CPU; a series' labels rarely change between scrapes. Holds the labels used in
 * the last two scrapes only: a series that went away (a chip, a node) is forgotten one scrape later, so the cache is
 * bounded by the series published. Thread-safe.
 */
final class LabelCache {

    private record Key(List<String> names, List<String> values) {
    }

    private Map<Key, Labels> current = new HashMap<>();
    private Map<Key, Labels> previous = new HashMap<>();

    /**
     * @param names label names
     * @param values label values, one per name
     * @return the labels, built by the client (which sorts and checks them) the first time
     * @throws IllegalArgumentException from the client when a name is invalid, a name repeats, or the counts differ
     */
    synchronized Labels of(List<String> names, List<String> values) {
        Key k = new Key(names, values);
        Labels l = current.get(k);
        if (l == null) {
            l = previous.get(k);
            if (l == null) {
                l = Labels.of(names, values);
            }
            current.put(k, l);
        }
        return l;
    }

    /** Ends a scrape: the labels it did not use are dropped at the end of the next one. */
    synchronized void endScrape() {
        previous = current;
        current = new HashMap<>(Math.max(16, previous.size() * 2));
    }
}
