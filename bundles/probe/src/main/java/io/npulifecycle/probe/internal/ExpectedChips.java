package io.npulifecycle.probe.internal;

import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/**
 * The chips the health-watch expects in this boot: pinned by configuration ({@code expectedChips}), else learned from
 * the first good probe of the boot, i.e. the first that lists chips and has neither a whole-probe outcome nor a
 * {@code probe-error} chip (a chip missing later is then a strike). Also remembers the set last published to the Chip
 * MBeans, so the engine re-publishes only on a change.
 *
 * <p>Not thread-safe: guarded by the engine's lock.
 */
final class ExpectedChips {

    private final SortedSet<ChipId> learned = new TreeSet<>();
    private SortedSet<ChipId> published = new TreeSet<>();

    /**
     * @param cfg the configuration
     * @return the pinned chips, else the learned ones (empty while none are learned)
     */
    SortedSet<ChipId> of(WatchConfig cfg) {
        return Collections.unmodifiableSortedSet(cfg.pinnedChips().isEmpty() ? learned : cfg.pinnedChips());
    }

    /**
     * Learns the chips of {@code r} when none are expected yet and it is a good probe.
     *
     * @param r a probe result
     * @param cfg the configuration the probe ran with
     * @return whether the chips were learned from {@code r}
     */
    boolean learnFrom(ProbeResult r, WatchConfig cfg) {
        if (!of(cfg).isEmpty() || r.outcome() != null || r.chips().isEmpty()
                || r.chips().stream().anyMatch(c -> c.classification() == Classification.PROBE_ERROR)) {
            return false;
        }
        for (ChipResult c : r.chips()) {
            learned.add(c.id());
        }
        return true;
    }

    /** @return the learned chips (the part kept in the state file) */
    SortedSet<ChipId> learned() {
        return Collections.unmodifiableSortedSet(learned);
    }

    /** @param restored the learned chips of the state file */
    void restore(SortedSet<ChipId> restored) {
        learned.clear();
        learned.addAll(restored);
    }

    /**
     * @param cfg the configuration
     * @return the expected chips, now remembered as published
     */
    SortedSet<ChipId> publish(WatchConfig cfg) {
        published = new TreeSet<>(of(cfg));
        return published;
    }

    /**
     * @param cfg the configuration
     * @return whether the expected chips differ from the ones last published
     */
    boolean changedSincePublished(WatchConfig cfg) {
        return !of(cfg).equals(published);
    }
}
