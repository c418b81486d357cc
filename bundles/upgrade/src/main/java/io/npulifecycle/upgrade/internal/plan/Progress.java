package io.npulifecycle.upgrade.internal.plan;

import io.npulifecycle.api.upgrade.spec.UpgradeState;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The value of annotation {@code npu.openfuyao.com/driver-upgrade-progress}:
 * {@code state=<state>,since=<RFC 3339>,target=<version>,fromBootId=<boot id>} (fromBootId may be empty).
 *
 * @param state the state it was written with
 * @param since when the node entered it
 * @param target the target version at that time
 * @param fromBootId the node's boot id when it got its slot ("" before)
 */
public record Progress(UpgradeState state, Instant since, String target, String fromBootId) {

    /**
     * @param v annotation value, may be null
     * @return the progress, or null when absent or malformed (a malformed value is treated as absent: the state's
     *         deadline restarts from now and the annotation is rewritten)
     */
    public static Progress parse(String v) {
        if (v == null || v.isBlank()) {
            return null;
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String part : v.split(",")) {
            int i = part.indexOf('=');
            if (i > 0) {
                m.put(part.substring(0, i).trim(), part.substring(i + 1).trim());
            }
        }
        UpgradeState s = UpgradeState.of(m.get("state"));
        if (s == null || m.get("since") == null) {
            return null;
        }
        try {
            return new Progress(s, Instant.parse(m.get("since")), m.getOrDefault("target", ""),
                    m.getOrDefault("fromBootId", ""));
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** @return the annotation value */
    public String format() {
        return "state=" + state.label() + ",since=" + since + ",target=" + target + ",fromBootId=" + fromBootId;
    }
}
