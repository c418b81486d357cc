package io.npulifecycle.api.probe;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A chip, keyed by (NPU id, chip id) as printed by {@code npu-smi info} (first and second row of a chip block) or as
 * DCMI (card id, device id). Never keyed by row index or Bus-Id (fixtures README). Text form {@code npu:chip}, e.g.
 * {@code 2:1}.
 *
 * @param npu NPU id (DCMI card id), {@code >= 0}
 * @param chip chip id (DCMI device id), {@code >= 0}
 */
public record ChipId(int npu, int chip) implements Comparable<ChipId> {

    /**
     * @throws IllegalArgumentException if an id is negative
     */
    public ChipId {
        if (npu < 0 || chip < 0) {
            throw new IllegalArgumentException("negative chip id " + npu + ":" + chip);
        }
    }

    /**
     * Parses {@code npu:chip}.
     *
     * @param text e.g. {@code 0:1}, surrounding blanks allowed
     * @return the chip
     * @throws IllegalArgumentException if the text is not two non-negative integers separated by {@code :}
     */
    public static ChipId parse(String text) {
        String t = text.trim();
        int colon = t.indexOf(':');
        if (colon <= 0 || colon == t.length() - 1) {
            throw new IllegalArgumentException("not a chip 'npu:chip': '" + text + "'");
        }
        try {
            return new ChipId(Integer.parseInt(t.substring(0, colon).trim()), Integer.parseInt(t.substring(colon + 1).trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a chip 'npu:chip': '" + text + "'", e);
        }
    }

    /**
     * Parses a comma-separated list, e.g. {@code 0:0,1:0}; blank text gives an empty set.
     *
     * @param text the list
     * @return the chips, sorted
     * @throws IllegalArgumentException if an element is not a chip
     */
    public static SortedSet<ChipId> parseList(String text) {
        SortedSet<ChipId> out = new TreeSet<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                out.add(parse(part));
            }
        }
        return out;
    }

    /**
     * @param chips chips
     * @return them sorted, as {@code npu:chip} joined by commas
     */
    public static String format(Collection<ChipId> chips) {
        List<ChipId> sorted = new ArrayList<>(new TreeSet<>(chips));
        StringBuilder sb = new StringBuilder();
        for (ChipId c : sorted) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(c);
        }
        return sb.toString();
    }

    @Override
    public int compareTo(ChipId o) {
        int c = Integer.compare(npu, o.npu);
        return c != 0 ? c : Integer.compare(chip, o.chip);
    }

    @Override
    public String toString() {
        return npu + ":" + chip;
    }
}
