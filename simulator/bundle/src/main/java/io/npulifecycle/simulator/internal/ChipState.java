package io.npulifecycle.simulator.internal;

import java.util.Locale;

/**
 * What one emulated chip does when it is probed. The kinds follow what the field shows (DESIGN.md, the fixtures
 * README): a wedged chip is {@code dev_num=0} (modules loaded, device files present, every query refused).
 */
public enum ChipState {
    /** Answers, Health {@code OK}. */
    HEALTHY,
    /** Answers, Health {@code Warning} (a minor alarm: degraded, never a strike). */
    WARNING,
    /** {@code dev_num=0}: the driver does not enumerate it and refuses DCMI calls (-8005). */
    WEDGED,
    /** Held by another process: npu-smi and DCMI answer -8020 (a probe error, never a strike). */
    OCCUPIED,
    /** Every query hangs (npu-smi and DCMI never return). */
    HANGING,
    /** npu-smi prints unreadable output (a probe error). */
    GARBLED,
    /** Missing from the enumeration altogether. */
    ABSENT;

    /** @return the lower-case name users type, e.g. {@code wedged} */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param text a state name, any case
     * @return the state
     * @throws IllegalArgumentException naming the value and the accepted ones
     */
    public static ChipState parse(String text) {
        if (text != null) {
            for (ChipState s : values()) {
                if (s.id().equalsIgnoreCase(text.trim())) {
                    return s;
                }
            }
        }
        throw new IllegalArgumentException("chip state '" + text
                + "' is not one of healthy, warning, wedged, occupied, hanging, garbled, absent");
    }
}
