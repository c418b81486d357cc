package io.npulifecycle.probe.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.npulifecycle.api.probe.ChipId;
import io.npulifecycle.api.probe.ChipResult;
import io.npulifecycle.api.probe.Classification;
import io.npulifecycle.api.probe.ProbeResult;

/**
 * A probe result judged against the expected chips: one classification per chip (expected or found) and a verdict.
 *
 * @param verdict the worst chip classification, or the whole-probe outcome
 * @param chips per chip, sorted
 * @param driverVersion from the probe, or {@code null}
 * @param error why the verdict is not healthy when the output says so as a whole or chips are missing, else the first
 *        chip detail, or {@code null}
 */
public record Assessment(Classification verdict, Map<ChipId, ChipResult> chips, String driverVersion, String error) {

    /**
     * The classification rules: a whole-probe outcome applies to every expected chip; an expected chip
     * missing from a table is {@code failed}; a table with no chip at all while none are known is {@code failed}
     * ({@code dev_num=0}).
     *
     * @param r the probe result
     * @param expected expected chips (empty while unknown)
     * @return the assessment
     */
    public static Assessment of(ProbeResult r, Set<ChipId> expected) {
        Map<ChipId, ChipResult> out = new TreeMap<>();
        for (ChipResult c : r.chips()) {
            out.put(c.id(), c);
        }
        if (r.outcome() != null) {
            for (ChipId id : expected) {
                out.putIfAbsent(id, new ChipResult(id, null, r.outcome(), r.error()));
            }
            return new Assessment(r.outcome(), Collections.unmodifiableMap(out), r.driverVersion(), r.error());
        }
        List<ChipId> missing = new ArrayList<>();
        for (ChipId id : expected) {
            if (!out.containsKey(id)) {
                missing.add(id);
                out.put(id, new ChipResult(id, null, Classification.FAILED, "expected chip absent from the probe output"));
            }
        }
        if (out.isEmpty()) {
            return new Assessment(Classification.FAILED, Map.of(), r.driverVersion(),
                    "the driver lists no chip (dev_num=0)");
        }
        Classification verdict = Classification.HEALTHY;
        String error = null;
        for (ChipResult c : out.values()) {
            verdict = verdict.worst(c.classification());
        }
        if (!missing.isEmpty()) {
            error = "expected chips absent: " + ChipId.format(missing);
        } else {
            for (ChipResult c : out.values()) {
                if (c.classification() == verdict && c.detail() != null) {
                    error = "chip " + c.id() + ": " + c.detail();
                    break;
                }
            }
        }
        return new Assessment(verdict, Collections.unmodifiableMap(out), r.driverVersion(), error);
    }
}
