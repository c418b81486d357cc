package io.npulifecycle.probe.internal;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

import io.npulifecycle.api.probe.ChipId;

/**
 * What the health-watch keeps across a bundle update or a runtime restart within one boot, and its one codec: the
 * content of the state file {@code health-watch.state} of the marker store (the store adds {@code bootId},
 * {@code writtenAt} and {@code writer} and discards the file at the next boot).
 *
 * <p>Keys, in this order: {@code expectedChips} ({@code 0:0,1:0}), {@code wedgeActive}, {@code wedgeSince} (ISO-8601
 * instant, empty when no wedge), {@code wedgeChips}, {@code driverReadyBeforeWedge}, {@code markersDirty},
 * {@code probeErrorsInRow}, {@code probeDegraded}, then per chip with a strike or wedged, in chip order,
 * {@code chip.N:M.failures} and {@code chip.N:M.wedged}. Reading is lenient where files of every version of this
 * format must still load: a missing key takes its default (empty, {@code false}, {@code 0}), unknown keys are ignored,
 * a boolean is {@code true} only for {@code true} in any case, and a {@code chip.N:M.wedged} without its
 * {@code failures} key is ignored.
 *
 * @param expectedChips chips learned from the first good probe of the boot; empty while unknown or when pinned by
 *        configuration
 * @param wedgeActive whether the wedge markers are written and not yet suppressed
 * @param wedgeSince when the wedge was declared, {@code null} when none
 * @param wedgeChips every chip wedged since the wedge was declared
 * @param driverReadyBeforeWedge whether {@code driver-ready} was present when the wedge was declared (restored on
 *        suppression)
 * @param markersDirty whether a marker write of the wedge failed and is retried at the next probe
 * @param probeErrorsInRow probe errors in a row
 * @param probeDegraded whether {@code probe-degraded} is raised
 * @param chips strikes per chip; the file holds only chips with a strike or wedged
 */
public record WatchState(SortedSet<ChipId> expectedChips, boolean wedgeActive, Instant wedgeSince,
        SortedSet<ChipId> wedgeChips, boolean driverReadyBeforeWedge, boolean markersDirty, int probeErrorsInRow,
        boolean probeDegraded, SortedMap<ChipId, Strikes> chips) {

    /**
     * The kept part of one chip's state.
     *
     * @param failures consecutive strikes
     * @param wedged whether the chip is wedged
     */
    public record Strikes(int failures, boolean wedged) {
    }

    /** Thrown by {@link #fromMap} with a message naming the key, its value and what was expected. */
    public static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String key, String value, String expected, Exception cause) {
            super("key " + key + ": '" + value + "' is not " + expected + " (" + cause.getMessage() + ")", cause);
        }
    }

    private static final String EXPECTED_CHIPS = "expectedChips";
    private static final String WEDGE_ACTIVE = "wedgeActive";
    private static final String WEDGE_SINCE = "wedgeSince";
    private static final String WEDGE_CHIPS = "wedgeChips";
    private static final String DRIVER_READY_BEFORE_WEDGE = "driverReadyBeforeWedge";
    private static final String MARKERS_DIRTY = "markersDirty";
    private static final String PROBE_ERRORS_IN_ROW = "probeErrorsInRow";
    private static final String PROBE_DEGRADED = "probeDegraded";
    private static final String CHIP_PREFIX = "chip.";
    private static final String FAILURES_SUFFIX = ".failures";
    private static final String WEDGED_SUFFIX = ".wedged";

    /** Copies the collections, unmodifiable; {@code null} collections become empty. */
    public WatchState {
        expectedChips = Collections.unmodifiableSortedSet(expectedChips == null ? new TreeSet<>() : new TreeSet<>(expectedChips));
        wedgeChips = Collections.unmodifiableSortedSet(wedgeChips == null ? new TreeSet<>() : new TreeSet<>(wedgeChips));
        chips = Collections.unmodifiableSortedMap(chips == null ? new TreeMap<>() : new TreeMap<>(chips));
    }

    /**
     * Encodes the state as the content of the state file.
     *
     * @return the keys in the order of the format, chips without a strike and not wedged left out
     */
    public Map<String, String> toMap() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put(EXPECTED_CHIPS, ChipId.format(expectedChips));
        s.put(WEDGE_ACTIVE, String.valueOf(wedgeActive));
        s.put(WEDGE_SINCE, wedgeSince == null ? "" : wedgeSince.toString());
        s.put(WEDGE_CHIPS, ChipId.format(wedgeChips));
        s.put(DRIVER_READY_BEFORE_WEDGE, String.valueOf(driverReadyBeforeWedge));
        s.put(MARKERS_DIRTY, String.valueOf(markersDirty));
        s.put(PROBE_ERRORS_IN_ROW, String.valueOf(probeErrorsInRow));
        s.put(PROBE_DEGRADED, String.valueOf(probeDegraded));
        for (Map.Entry<ChipId, Strikes> c : chips.entrySet()) {
            if (c.getValue().failures() > 0 || c.getValue().wedged()) {
                s.put(CHIP_PREFIX + c.getKey() + FAILURES_SUFFIX, String.valueOf(c.getValue().failures()));
                s.put(CHIP_PREFIX + c.getKey() + WEDGED_SUFFIX, String.valueOf(c.getValue().wedged()));
            }
        }
        return s;
    }

    /**
     * Decodes the content of a state file, leniently as described on the type.
     *
     * @param s the content (without the store's header keys)
     * @return the state
     * @throws Invalid naming a key whose value cannot be read: a chip list that is not {@code npu:chip,...},
     *         a {@code wedgeSince} that is not an ISO-8601 instant, a count that is not a whole number, a chip key
     *         whose middle is not {@code npu:chip}
     */
    public static WatchState fromMap(Map<String, String> s) throws Invalid {
        SortedMap<ChipId, Strikes> chips = new TreeMap<>();
        for (Map.Entry<String, String> e : s.entrySet()) {
            String k = e.getKey();
            if (k.startsWith(CHIP_PREFIX) && k.endsWith(FAILURES_SUFFIX)) {
                int end = k.length() - FAILURES_SUFFIX.length();
                String middle = end > CHIP_PREFIX.length() ? k.substring(CHIP_PREFIX.length(), end) : "";
                ChipId id = parse(k, middle, "a chip npu:chip", ChipId::parse);
                int failures = parse(k, e.getValue(), "a whole number", Integer::parseInt);
                chips.put(id, new Strikes(failures, Boolean.parseBoolean(s.get(CHIP_PREFIX + id + WEDGED_SUFFIX))));
            }
        }
        String since = s.getOrDefault(WEDGE_SINCE, "");
        return new WatchState(
                parse(EXPECTED_CHIPS, s.getOrDefault(EXPECTED_CHIPS, ""), "a chip list npu:chip,...", ChipId::parseList),
                Boolean.parseBoolean(s.get(WEDGE_ACTIVE)),
                since.isEmpty() ? null : parse(WEDGE_SINCE, since, "an ISO-8601 instant", Instant::parse),
                parse(WEDGE_CHIPS, s.getOrDefault(WEDGE_CHIPS, ""), "a chip list npu:chip,...", ChipId::parseList),
                Boolean.parseBoolean(s.get(DRIVER_READY_BEFORE_WEDGE)),
                Boolean.parseBoolean(s.get(MARKERS_DIRTY)),
                parse(PROBE_ERRORS_IN_ROW, s.getOrDefault(PROBE_ERRORS_IN_ROW, "0"), "a whole number", Integer::parseInt),
                Boolean.parseBoolean(s.get(PROBE_DEGRADED)),
                chips);
    }

    private interface Parser<T> {
        T parse(String text);
    }

    private static <T> T parse(String key, String value, String expected, Parser<T> parser) throws Invalid {
        try {
            return parser.parse(value);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new Invalid(key, value, expected, e);
        }
    }
}
