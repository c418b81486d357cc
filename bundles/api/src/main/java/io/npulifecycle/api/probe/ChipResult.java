package io.npulifecycle.api.probe;

/**
 * One chip as seen by one probe.
 *
 * @param id the chip
 * @param health the raw health: the npu-smi Health cell ({@code OK}, {@code Warning}, {@code Alarm}, {@code Critical})
 *        or a DCMI health rendered the same way; {@code null} when the chip did not answer
 * @param classification the classification
 * @param detail why, when not healthy (e.g. {@code "expected chip absent from npu-smi output"}), else {@code null}
 */
public record ChipResult(ChipId id, String health, Classification classification, String detail) {
}
