package io.npulifecycle.api.probe;

import java.util.List;

/**
 * The raw outcome of one probe run, before expected chips are applied.
 *
 * <p>Either the output was a chip table ({@code outcome == null}: {@code chips} holds every chip found, each already
 * classified on its own health), or the probe as a whole ended in {@code outcome} ({@link Classification#FAILED}: the
 * driver refused to answer, a strike for every expected chip; {@link Classification#PROBE_ERROR}: no strike) with
 * {@code error} saying why, and {@code chips} holds whatever per-chip answers were obtained (often none).
 *
 * @param chips per-chip results found, sorted by chip
 * @param driverVersion the driver version from the npu-smi header ({@code Version: X}) or DCMI, or {@code null}
 * @param outcome whole-probe outcome, or {@code null} when the table was read
 * @param error human-readable error, or {@code null}
 * @param rawOutput the probe's output (npu-smi stdout and stderr) cut to 4 KiB, or a DCMI call summary
 */
public record ProbeResult(List<ChipResult> chips, String driverVersion, Classification outcome, String error,
        String rawOutput) {

    /** @param chips copied */
    public ProbeResult {
        chips = List.copyOf(chips);
    }

    /**
     * @param outcome {@link Classification#FAILED} or {@link Classification#PROBE_ERROR}
     * @param error why
     * @param raw raw output or {@code null}
     * @return a whole-probe result with no chips
     */
    public static ProbeResult whole(Classification outcome, String error, String raw) {
        return new ProbeResult(List.of(), null, outcome, error, raw);
    }
}
